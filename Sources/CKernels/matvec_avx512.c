/* AVX-512 matvec kernels (16 float lanes; F, BW, VL and VBMI). Compiled for any x86-64
   through target attributes; called only when the CPU has these extensions (matvec.c).

   Affine rows of every bit width take one path. 64 values occupy 8*bits bytes: vpermb puts
   each 8-value chunk (`bits` bytes) into its own 64-bit lane, vpmultishiftqb cuts the eight
   bit fields of each lane into bytes, and a mask keeps `bits` bits: 64 q values, one per byte,
   in natural order. A zero-masking vpermb then widens 16 of them at a time to dwords for the
   float conversion and the FMA with x, which therefore needs no reordering. */
#include "matvec_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512vbmi,avx2,fma,f16c"
#define AVX512_FN __attribute__((target(AVX512_TARGET)))
#define AVX512_INLINE static inline __attribute__((always_inline, target(AVX512_TARGET)))

/* Byte-permutation and shift tables for the unpacking, per bit width. */
typedef struct {
    __m512i gather;   /* vpermb index: lane j byte i ← packed byte j*bits + i */
    __m512i shifts;   /* vpmultishiftqb control: byte i of each lane ← bits from i*bits */
    __m512i mask;     /* (1 << bits) - 1 in every byte */
    __mmask64 load;   /* the 8*bits bytes of a 64-value block */
    __mmask64 load_half; /* the 4*bits bytes of a 32-value half block */
} unpacker;

AVX512_INLINE unpacker make_unpacker(int bits) {
    unpacker u;
    uint8_t gather[64], shifts[64];
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 8; i++) {
            gather[8 * j + i] = (uint8_t)(j * bits + i);
            shifts[8 * j + i] = (uint8_t)(i * bits);
        }
    u.gather = _mm512_loadu_si512(gather);
    u.shifts = _mm512_loadu_si512(shifts);
    u.mask = _mm512_set1_epi8((char)((1 << bits) - 1));
    u.load = bits == 8 ? ~(__mmask64)0 : (((__mmask64)1 << (8 * bits)) - 1);
    u.load_half = ((__mmask64)1 << (4 * bits)) - 1;
    return u;
}

/* 64 (or, with `load_half`, 32) q values, one per byte, in order. */
AVX512_INLINE __m512i unpack(const unpacker *u, const uint8_t *p, __mmask64 load) {
    __m512i raw = _mm512_maskz_loadu_epi8(load, p);
    __m512i lanes = _mm512_permutexvar_epi8(u->gather, raw);
    return _mm512_and_si512(_mm512_multishift_epi64_epi8(u->shifts, lanes), u->mask);
}

/* Bytes 16k..16k+15 of q as 16 floats (zero-masked vpermb widens bytes to dwords). */
AVX512_INLINE __m512 widen16(__m512i q, __m512i index) {
    return _mm512_cvtepi32_ps(_mm512_maskz_permutexvar_epi8(0x1111111111111111ull, index, q));
}

AVX512_INLINE __m512i widen_index(int k) {
    uint8_t idx[64];
    for (int i = 0; i < 64; i++) idx[i] = (uint8_t)(16 * k + i / 4);
    return _mm512_loadu_si512(idx);
}

AVX512_INLINE float hsum16(__m512 v) { return _mm512_reduce_add_ps(v); }

/* One row: sum over groups of scale * (q · x) + bias * (sum of x over the group). */
AVX512_INLINE float affine_row(const pk_matrix *m, long r, const float *x, const float *xsum,
                               const unpacker *u, const __m512i *wi, int group) {
    const int bits = m->bits;
    const long cols = m->cols, groups = cols / group;
    const uint8_t *row = (const uint8_t *)m->w + r * pk_mv_row_bytes(m);
    float sc[PK_MV_GROUP_CHUNK], bi[PK_MV_GROUP_CHUNK];
    __m512 acc = _mm512_setzero_ps(), bacc = _mm512_setzero_ps(), gacc = _mm512_setzero_ps();
    for (long g0 = 0; g0 < groups; g0 += PK_MV_GROUP_CHUNK) {
        long n = groups - g0 < PK_MV_GROUP_CHUNK ? groups - g0 : PK_MV_GROUP_CHUNK;
        pk_mv_widen(m->scales, m->scale_dtype, r * groups + g0, n, sc);
        pk_mv_widen(m->biases, m->scale_dtype, r * groups + g0, n, bi);
        long c = g0 * group, end = (g0 + n) * group;
        const float *s = sc - g0;  /* indexed by absolute group */
        for (; c + 64 <= end; c += 64) {
            __m512i q = unpack(u, row + c * bits / 8, u->load);
            const float *xc = x + c;
            __m512 p01 = _mm512_fmadd_ps(widen16(q, wi[1]), _mm512_loadu_ps(xc + 16),
                                         _mm512_mul_ps(widen16(q, wi[0]), _mm512_loadu_ps(xc)));
            __m512 p23 = _mm512_fmadd_ps(widen16(q, wi[3]), _mm512_loadu_ps(xc + 48),
                                         _mm512_mul_ps(widen16(q, wi[2]), _mm512_loadu_ps(xc + 32)));
            if (group == 32) {
                acc = _mm512_fmadd_ps(_mm512_set1_ps(s[c / 32]), p01, acc);
                acc = _mm512_fmadd_ps(_mm512_set1_ps(s[c / 32 + 1]), p23, acc);
            } else if (group == 64) {
                acc = _mm512_fmadd_ps(_mm512_set1_ps(s[c / 64]), _mm512_add_ps(p01, p23), acc);
            } else {
                gacc = _mm512_add_ps(gacc, _mm512_add_ps(p01, p23));
                if ((c + 64) % group == 0) {
                    acc = _mm512_fmadd_ps(_mm512_set1_ps(s[c / group]), gacc, acc);
                    gacc = _mm512_setzero_ps();
                }
            }
        }
        if (c < end) {  /* a last 32-value group (group 32, odd number of groups) */
            __m512i q = unpack(u, row + c * bits / 8, u->load_half);
            __m512 p01 = _mm512_fmadd_ps(widen16(q, wi[1]), _mm512_loadu_ps(x + c + 16),
                                         _mm512_mul_ps(widen16(q, wi[0]), _mm512_loadu_ps(x + c)));
            acc = _mm512_fmadd_ps(_mm512_set1_ps(s[c / 32]), p01, acc);
        }
        long g = 0;
        for (; g + 16 <= n; g += 16)
            bacc = _mm512_fmadd_ps(_mm512_loadu_ps(bi + g), _mm512_loadu_ps(xsum + g0 + g), bacc);
        if (g < n) {
            __mmask16 k = (__mmask16)((1u << (n - g)) - 1);
            bacc = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k, bi + g),
                                   _mm512_maskz_loadu_ps(k, xsum + g0 + g), bacc);
        }
    }
    return hsum16(_mm512_add_ps(acc, bacc));
}

/* 16 weights of a float row from element i (k masks a tail), widened to float32. */
AVX512_INLINE __m512 load_w16(int kind, const void *row, long i, __mmask16 k) {
    if (kind == PK_W_F32) return _mm512_maskz_loadu_ps(k, (const float *)row + i);
    __m256i h = _mm256_maskz_loadu_epi16(k, (const uint16_t *)row + i);
    if (kind == PK_W_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

AVX512_INLINE float float_row(const pk_matrix *m, long r, const float *x) {
    const long cols = m->cols;
    const int kind = m->kind;
    const void *row = (const char *)m->w + r * cols * (kind == PK_W_F32 ? 4 : 2);
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    __m512 a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    long c = 0;
    for (; c + 64 <= cols; c += 64) {
        a0 = _mm512_fmadd_ps(load_w16(kind, row, c, 0xFFFF), _mm512_loadu_ps(x + c), a0);
        a1 = _mm512_fmadd_ps(load_w16(kind, row, c + 16, 0xFFFF), _mm512_loadu_ps(x + c + 16), a1);
        a2 = _mm512_fmadd_ps(load_w16(kind, row, c + 32, 0xFFFF), _mm512_loadu_ps(x + c + 32), a2);
        a3 = _mm512_fmadd_ps(load_w16(kind, row, c + 48, 0xFFFF), _mm512_loadu_ps(x + c + 48), a3);
    }
    for (; c < cols; c += 16) {
        __mmask16 k = cols - c >= 16 ? 0xFFFF : (__mmask16)((1u << (cols - c)) - 1);
        a0 = _mm512_fmadd_ps(load_w16(kind, row, c, k), _mm512_maskz_loadu_ps(k, x + c), a0);
    }
    return hsum16(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

/* The group size is made a compile-time constant for the affine loop. */
#define AFFINE_ROWS(G)                                                                        \
    for (long r = r0; r < r1; r++) y[r - r0] = affine_row(m, r, x, xsum, &u, wi, G)

AVX512_FN void pk_mv_matvec_avx512(const pk_matrix *m, const float *x, const float *prep,
                                   float *y, long r0, long r1) {
    if (m->kind != PK_W_AFFINE) {
        for (long r = r0; r < r1; r++) y[r - r0] = float_row(m, r, x);
        return;
    }
    const float *xsum = prep + m->cols;
    unpacker u = make_unpacker(m->bits);
    __m512i wi[4] = {widen_index(0), widen_index(1), widen_index(2), widen_index(3)};
    if (m->group == 32) AFFINE_ROWS(32);
    else if (m->group == 64) AFFINE_ROWS(64);
    else AFFINE_ROWS(128);
}

AVX512_FN void pk_mv_dequant_avx512(const pk_matrix *m, long r0, long r1, float *out) {
    if (m->kind != PK_W_AFFINE) { pk_mv_dequant_portable(m, r0, r1, out); return; }
    const int group = m->group, bits = m->bits;
    const long cols = m->cols, groups = cols / group;
    unpacker u = make_unpacker(bits);
    __m512i wi[4] = {widen_index(0), widen_index(1), widen_index(2), widen_index(3)};
    float sc[PK_MV_GROUP_CHUNK], bi[PK_MV_GROUP_CHUNK];
    for (long r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)m->w + r * pk_mv_row_bytes(m);
        float *o = out + (r - r0) * cols;
        for (long g0 = 0; g0 < groups; g0 += PK_MV_GROUP_CHUNK) {
            long n = groups - g0 < PK_MV_GROUP_CHUNK ? groups - g0 : PK_MV_GROUP_CHUNK;
            pk_mv_widen(m->scales, m->scale_dtype, r * groups + g0, n, sc);
            pk_mv_widen(m->biases, m->scale_dtype, r * groups + g0, n, bi);
            for (long c = g0 * group; c < (g0 + n) * group; c += 64) {
                int half = (g0 + n) * group - c < 64;
                __m512i q = unpack(&u, row + c * bits / 8, half ? u.load_half : u.load);
                for (int k = 0; k < (half ? 2 : 4); k++) {
                    long g = (c + 16 * k) / group - g0;
                    __m512 w = _mm512_fmadd_ps(_mm512_set1_ps(sc[g]), widen16(q, wi[k]),
                                               _mm512_set1_ps(bi[g]));
                    _mm512_storeu_ps(o + c + 16 * k, w);
                }
            }
        }
    }
}

#endif
