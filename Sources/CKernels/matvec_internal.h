/* Helpers shared by the matvec kernels (matvec_*.c); not part of the public interface. */
#ifndef PHIKIT_MATVEC_INTERNAL_H
#define PHIKIT_MATVEC_INTERNAL_H
#include <math.h>
#include <string.h>

#include "pk_affine_quant.h"
#include "pk_half.h"
#include "pk_matvec.h"

#define PK_MV_INLINE static inline __attribute__((always_inline))

/* How far ahead of the weights being read the fast kernels prefetch. Rows lie back to back,
   so a thread streams through contiguous memory, but the hardware prefetchers stop at 4 KB
   boundaries (even inside the 2 MiB pages dense models' weights are mapped in where the
   kernel can: MappedFile's hugePages); prefetching 1 KB ahead keeps the stream going across
   them (measured: +20% on a mapped 2 GB model in 4 KiB pages). */
#define PK_MV_PREFETCH_BYTES 1024

/* The AVX-512 affine kernels prefetch further, into L2 (_MM_HINT_T1): one thread streaming a
   4-bit Phi-3.5 layer's matrices from memory went from 15-16 to 20-21 GB/s (8-bit rows 17 to
   20-22), while 1 KB into L1 or 8 KB into L1 gained nothing or lost. The AVX2 kernel lost
   two thirds with the same change, so it keeps the distance above. */
#define PK_MV_PREFETCH_L2_BYTES 8192

/* Tokens one kernel call multiplies at most (their accumulators live in registers). */
#define PK_MV_TOKENS PK_MATVEC_TOKENS

/* Groups converted to float32 at a time (bounds the stack arrays of the fast kernels). */
#define PK_MV_GROUP_CHUNK 256

/* Bytes of one packed affine row. cols*bits is a multiple of 32 (cols % group == 0). */
PK_MV_INLINE long pk_mv_row_bytes(const pk_matrix *m) { return m->cols * m->bits / 8; }

/* q value i of a packed row: bits [i*bits, i*bits + bits) of the little-endian stream.
   With bits <= 8 a value spans at most two bytes, and the second is read only when needed,
   so this never reads past the row (rows end on a 32-bit boundary). */
PK_MV_INLINE uint32_t pk_mv_q(const uint8_t *row, long i, int bits) {
    long bit = i * bits;
    long byte = bit >> 3;
    int shift = (int)(bit & 7);
    uint32_t v = row[byte];
    if (shift + bits > 8) v |= (uint32_t)row[byte + 1] << 8;
    return (v >> shift) & ((1u << bits) - 1u);
}

/* n consecutive scales (or biases) starting at element `first`, widened to float32. */
PK_MV_INLINE void pk_mv_widen(const void *base, int dtype, long first, long n, float *out) {
    if (dtype == PK_AQ_F32) {
        memcpy(out, (const float *)base + first, (size_t)n * sizeof(float));
    } else if (dtype == PK_AQ_BF16) {
        pk_bf16_to_f32(out, (const uint16_t *)base + first, (size_t)n);
    } else {
        pk_f16_to_f32(out, (const uint16_t *)base + first, (size_t)n);
    }
}

/* Widens the scales and biases of row r's groups [g0, g0 + n), n = the rest of the row but
   at most PK_MV_GROUP_CHUNK; returns n. */
PK_MV_INLINE long pk_mv_group_chunk(const pk_matrix *m, long r, long g0, float *sc, float *bi) {
    long groups = m->cols / m->group;
    long n = groups - g0 < PK_MV_GROUP_CHUNK ? groups - g0 : PK_MV_GROUP_CHUNK;
    pk_mv_widen(m->scales, m->scale_dtype, r * groups + g0, n, sc);
    pk_mv_widen(m->biases, m->scale_dtype, r * groups + g0, n, bi);
    return n;
}

/* The prepared input vector (pk_matvec_prepare) of an affine matrix, in the float scratch:
     x16    [cols] int16  x / xscale[g] rounded (|x16| <= 32767), in the kernel's order
     xscale [groups]      max |x| over group g / 32767 (0 for an all-zero group)
     xsum   [groups]      sum of x over group g (float32, from the exact x)
     xres   [groups]      xsum - xscale * (sum of x16 over g): what the rounding lost in sum
   The SIMD kernels compute sum q*x16 per group in integers, exactly. The only rounding is
   x's to 16 bits (d = x - xscale*x16, |d| <= xscale/2), and most of its effect is put back:
   sum q*d = m * sum d + sum (q - m)*d with m = 2^(bits-1), and sum d = xres is known, so
   only sum (q - m)*d remains, q - m being small and of either sign. */
PK_MV_INLINE int16_t *pk_mv_x16(const float *prep) { return (int16_t *)(uintptr_t)prep; }
PK_MV_INLINE float *pk_mv_xscale(const float *prep, long cols) {
    return (float *)(uintptr_t)(prep + cols / 2 + 16);
}
PK_MV_INLINE float *pk_mv_xsum(const float *prep, long cols) {
    return (float *)(uintptr_t)(prep + cols / 2 + cols / 32 + 32);
}
PK_MV_INLINE float *pk_mv_xres(const float *prep, long cols) {
    return (float *)(uintptr_t)(prep + cols / 2 + 2 * (cols / 32) + 48);
}
/* For the AVX-512 4-bit tile kernel (matvec_avx512_q4.c); the scratch holds both layouts
   (x16 for the other kernels and levels, these for the tile):
     xexp [cols/16]  xscale spread over the tile kernel's lanes (whole quads only)
     x16q [cols]     int16 x in the tile kernel's order (quads, then 64-value segments)
   pk_matvec_prep_floats counts them for every matrix. */
PK_MV_INLINE float *pk_mv_xexp(const float *prep, long cols) {
    return (float *)(uintptr_t)(prep + cols / 2 + 3 * (cols / 32) + 64);
}
PK_MV_INLINE int16_t *pk_mv_x16q(const float *prep, long cols) {
    return (int16_t *)(uintptr_t)(prep + cols / 2 + 3 * (cols / 32) + cols / 16 + 80);
}

/* Rows the AVX-512 tile kernel takes: 4-bit, 256-value quads and after them up to three
   64-value segments (any group size; SmolLM2's 576-wide rows are 2 quads and a segment). */
PK_MV_INLINE int pk_mv_q4_tiled(const pk_matrix *m) {
    return m->kind == PK_W_AFFINE && m->bits == 4 && m->cols % 64 == 0;
}

/* Rows the AVX-512 8-bit tile kernel takes (matvec_avx512_q8.c): 8-bit, whole 64-value
   segments (any group size), narrower than 1,024 values (SmolLM2's tied 49,152x576 head).
   Wider rows keep the row-at-a-time kernel: on Phi-3.5-mini at 8 bits the tile made prefill
   1.38x faster but decode 0.80x (5.15 -> 4.1 tok/s, engine-bench ABBA 2026-11-29), and a
   model's tokens must take one path whether alone or in a block. Its x16 order goes in the
   x16q slot. */
PK_MV_INLINE int pk_mv_q8_tiled(const pk_matrix *m) {
    return m->kind == PK_W_AFFINE && m->bits == 8 && m->cols % 64 == 0 && m->cols < 1024;
}

/* xsum: the sum of x over each group, in 8 interleaved partial sums (value i into sum i % 8;
   groups are multiples of 8) added in order at the end: one sequential chain of float adds
   per input was most of the time of preparing it (4 cycles a value; decode prepares ~130
   inputs per token while the other threads wait), while 8 lanes vectorise without
   -ffast-math and give the same result at every SIMD level. */
PK_MV_INLINE void pk_mv_group_sums(const pk_matrix *m, const float *x, float *prep) {
    float *xsum = pk_mv_xsum(prep, m->cols);
    for (long g = 0; g < m->cols / m->group; g++) {
        float lanes[8] = {0};
        for (long i = 0; i < m->group; i += 8)
            for (int k = 0; k < 8; k++) lanes[k] += x[g * m->group + i + k];
        float s = 0;
        for (int k = 0; k < 8; k++) s += lanes[k];
        xsum[g] = s;
    }
}

/* Fills xscale, xsum and a natural-order x16 (kernels needing another order permute after).
   Inline so that each SIMD file compiles it for its own level (rintf then becomes one
   rounding instruction instead of a libm call per value: 3% of prompt time). */
PK_MV_INLINE void pk_mv_prepare_x16(const pk_matrix *m, const float *x, float *prep) {
    pk_mv_group_sums(m, x, prep);
    int16_t *x16 = pk_mv_x16(prep);
    float *xscale = pk_mv_xscale(prep, m->cols), *xsum = pk_mv_xsum(prep, m->cols);
    float *xres = pk_mv_xres(prep, m->cols);
    for (long g = 0; g < m->cols / m->group; g++) {
        const float *xg = x + g * m->group;
        float top = 0;
        for (long i = 0; i < m->group; i++) top = fmaxf(top, fabsf(xg[i]));
        float inverse = top > 0 ? 32767.0f / top : 0;
        xscale[g] = top / 32767.0f;
        int32_t total = 0;
        for (long i = 0; i < m->group; i++) {
            float v = rintf(xg[i] * inverse);  /* |v| <= 32767 (+1 ulp of rounding at most) */
            int16_t q = (int16_t)(v > 32767 ? 32767 : v < -32767 ? -32767 : v);
            x16[g * m->group + i] = q;
            total += q;
        }
        xres[g] = xsum[g] - xscale[g] * (float)total;
    }
}

/* Portable fast versions (also the fallback off x86). */
void pk_mv_prepare_portable(const pk_matrix *m, const float *x, float *prep);
/* y[t*ldy + (r - r0)] = row r · x_t for t < tokens (<= PK_MV_TOKENS), x_t = x + t*ldx
   prepared at prep + t*prep_stride. */
void pk_mv_matvec_portable(const pk_matrix *m, int tokens, const float *x, long ldx,
                           const float *prep, long prep_stride, float *y, long ldy, long r0,
                           long r1);
void pk_mv_dequant_portable(const pk_matrix *m, long r0, long r1, float *out);

/* 8-bit activations (matvec_act8.c): the portable version is the AVX-512 kernel's arithmetic
   lane by lane. */
void pk_mv_prepare_act8_portable(const pk_matrix *m, const float *x, float *prep);
void pk_mv_matvec_act8_portable(const pk_matrix *m, int tokens, const float *prep,
                                long prep_stride, float *y, long ldy, long r0, long r1);

#if defined(__x86_64__)
void pk_mv_prepare_act8_avx512(const pk_matrix *m, const float *x, float *prep);
void pk_mv_matvec_act8_avx512(const pk_matrix *m, long tokens, const float *prep,
                              long prep_stride, float *y, long ldy, long r0, long r1);
void pk_mv_prepare_avx2(const pk_matrix *m, const float *x, float *prep);
void pk_mv_prepare_avx512(const pk_matrix *m, const float *x, float *prep);
void pk_mv_matvec_avx2(const pk_matrix *m, int tokens, const float *x, long ldx,
                       const float *prep, long prep_stride, float *y, long ldy, long r0, long r1);
void pk_mv_dequant_avx2(const pk_matrix *m, long r0, long r1, float *out);
void pk_mv_matvec_avx512(const pk_matrix *m, int tokens, const float *x, long ldx,
                         const float *prep, long prep_stride, float *y, long ldy, long r0,
                         long r1);
void pk_mv_dequant_avx512(const pk_matrix *m, long r0, long r1, float *out);
void pk_mv_prepare_q4(const pk_matrix *m, float *prep);
void pk_mv_matvec_q4_avx512(const pk_matrix *m, int tokens, const float *prep, long prep_stride,
                            float *y, long ldy, long r0, long r1);
void pk_mv_prepare_q8(const pk_matrix *m, float *prep);
void pk_mv_matvec_q8_avx512(const pk_matrix *m, int tokens, const float *prep, long prep_stride,
                            float *y, long ldy, long r0, long r1);
#endif

#endif
