/* 8-bit activations (opt-in: `--act-bits 8`): 4-bit affine rows (groups of 32 or 64, at least
   128 wide) times x rounded to int8 per block of 8 values (groups of 32) or 16 (groups of 64),
   multiplied by AVX-512 VNNI vpdpbusd (u8 weights 0..15 x s8 x -> int32, 64 products per
   instruction where the 16-bit path's vpdpwssd does 32). See pk_matvec.h for the contract.

   Arithmetic (per row, per group g of weights w = s*q + b, 4 blocks k of x per group):
     row·x = U * sum_g [ s_g * I_g  +  (b_g + 8 s_g) * xsum_g / U ]
     I_g   = sum_{k in g} m_k * ((q - 8) · xq)_k            (exact int32)
   x's scale is one float per token, U = max|x| / (127 * 32767), times an integer m_k per block
   (1..32767, the smallest with |x in k| <= 127 * U * m_k), so each block keeps nearly its own
   step (d_k = U * m_k is at most U above max|x in k| / 127: llama.cpp's Q8_0 rounding on
   smaller blocks) while a group's four blocks still add up in integers. xq = rint(x / d_k) in
   [-127, 127]; xsum_g is the exact float sum of x over g. Weights enter as q - 8, so the
   rounding error left is s_g * sum (q - 8) * (x - d xq) and the bias term is exact whatever the
   bias is (as the 16-bit path's).

   Why this shape (issue 31 §2): vpdpbusd and the float multiply-adds share the same two pipes
   on Zen 4, and scaling every 16-value block in float (one convert, one multiply and one
   multiply-add per int32 lane every 16 values) cost a third of them. Here an int32 lane is a
   whole group: per 16 groups and (row, token) 16 vpdpbusd (8 for groups of 32), 2 vpdpwssd that
   weigh the blocks by m_k (two blocks' 16-bit dots packed into one int32, |dot| <= 16 * 15 *
   127 < 2^15: see bias16), and 2 float multiply-adds.

   Lanes of a group: a lane holds the same group across all of its instructions, which the
   rows as stored (32 consecutive bytes a group) do not give a 64-byte load, so the kernel
   first repacks the rows of its call (a few dozen, ~64 KB, kept in L2 for every token that
   goes over them): per row, per superblock of 16 groups, chunk k (of G/8) of 64 bytes holds
   in lane l bytes 4k..4k+3 of group l (values 8k..8k+7: low nibbles the even ones, high the
   odd). xq is stored to match: per superblock, per chunk k, per nibble n, per lane l, for e <
   4: x[(16 sb + l) G + 8k + 2e + n]. Block k of a group is chunks kG/32 .. (k+1)G/32 - 1.

   Float order: per lane (a group), per superblock, I converted then two fmaf (s * I, then
   (b + 8 s) * xsum / U), then the 16 lanes pairwise, halves first, then times U. The portable
   version below performs exactly those operations, so both levels give the same bits (tests
   hold them to it). Every multiply-add is an explicit fmaf / fmadd and no product feeds a
   plain add: the kernels build with -ffp-contract=fast. */

#include "matvec_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* ---- the prepared input ----------------------------------------------------------------- */

/* The largest block multiplier: |I_g| <= 4 * A8_M * 16 * 8 * 127 < 2^31, and m fits int16. */
#define A8_M 32767

/* Tokens whose largest |x| is at most this round to 0 (U = 0, y = 0): U stays a normal float
   (>= 2^-121) and 1 / (U m) finite. */
#define A8_TINY 0x1p-100f

/* In the prep scratch (pk_matvec_prep_floats(cols) floats, which leaves room for a last
   partial superblock), per superblock of 16 groups (a8_sb_bytes), then U:
     xq    16 G int8       kernel order (above), missing groups 0
     mult  2 x 16 int32    per lane, blocks 2p (low 16 bits) and 2p + 1 (high) of pair p
     negs  16 int32        -8 * sum_k m_k * sum(xq in k)
     xsumu 16 float        xsum_g / U (0 when U = 0) */
PK_MV_INLINE long a8_superblocks(const pk_matrix *m) { return (m->cols / m->group + 15) / 16; }
PK_MV_INLINE long a8_sb_bytes(int group) { return 16L * group + 256; }
PK_MV_INLINE uint8_t *a8_sb(const float *prep, int group, long sb) {
    return (uint8_t *)(uintptr_t)prep + sb * a8_sb_bytes(group);
}
PK_MV_INLINE int32_t *a8_mult(uint8_t *sb, int group) { return (int32_t *)(sb + 16 * group); }
PK_MV_INLINE int32_t *a8_negs(uint8_t *sb, int group) { return (int32_t *)(sb + 16 * group + 128); }
PK_MV_INLINE float *a8_xsumu(uint8_t *sb, int group) { return (float *)(sb + 16 * group + 192); }
PK_MV_INLINE float *a8_unit(const float *prep, const pk_matrix *m) {
    return (float *)a8_sb(prep, m->group, a8_superblocks(m));
}

int pk_matvec_act8_covers(const pk_matrix *m) {
    return m->kind == PK_W_AFFINE && m->bits == 4 && (m->group == 32 || m->group == 64)
        && m->cols % m->group == 0 && m->cols >= 128
        && a8_superblocks(m) * a8_sb_bytes(m->group) + 4
               <= (long)sizeof(float) * pk_matvec_prep_floats(m->cols);
}

/* The 16 float lanes of a sum, added halves first (the order both levels use). */
PK_MV_INLINE float a8_lanes_sum(const float lanes[16]) {
    float t8[8], t4[4], t2[2];
    for (int i = 0; i < 8; i++) t8[i] = lanes[i] + lanes[i + 8];
    for (int i = 0; i < 4; i++) t4[i] = t8[i] + t8[i + 4];
    for (int i = 0; i < 2; i++) t2[i] = t4[i] + t4[i + 2];
    return t2[0] + t2[1];
}

/* Byte of value j (0..G-1) of lane l in a superblock's xq (the layout above). */
PK_MV_INLINE long a8_xq_at(int l, int j) { return (2 * (j / 8) + j % 2) * 64 + 4 * l + (j % 8) / 2; }

/* The portable prepare, value by value (the AVX-512 one below performs the same operations 16
   values at a time). Every operation is exact or correctly rounded, so both give the same
   bits. */
void pk_mv_prepare_act8_portable(const pk_matrix *m, const float *x, float *prep) {
    const long cols = m->cols, groups = cols / m->group, sbs = a8_superblocks(m);
    const int G = m->group, B = G / 4;
    float tops[16] = {0};
    for (long i = 0; i < cols; i += 16)
        for (int k = 0; k < 16; k++) tops[k] = fmaxf(tops[k], fabsf(x[i + k]));
    float top = 0;
    for (int k = 0; k < 16; k++) top = fmaxf(top, tops[k]);
    const float unit = top > A8_TINY ? top / (127.0f * A8_M) : 0;
    *a8_unit(prep, m) = unit;
    for (long sb = 0; sb < sbs; sb++) {
        uint8_t *base = a8_sb(prep, G, sb);
        int8_t *xq = (int8_t *)base;
        int32_t *mult = a8_mult(base, G), *negs = a8_negs(base, G);
        float *xsumu = a8_xsumu(base, G);
        memset(base, 0, (size_t)a8_sb_bytes(G));
        for (int l = 0; l < 16 && 16 * sb + l < groups && unit > 0; l++) {
            const float *xg = x + (16 * sb + l) * G;
            float lanes[16] = {0};  /* the group sum: 16 lanes in order, then halves first */
            for (int i = 0; i < G; i += 16)
                for (int k = 0; k < 16; k++) lanes[k] += xg[i + k];
            xsumu[l] = a8_lanes_sum(lanes) / unit;
            int64_t s = 0;
            for (int k = 0; k < 4; k++) {
                float bt = 0;
                for (int v = 0; v < B; v++) bt = fmaxf(bt, fabsf(xg[k * B + v]));
                float mk = ceilf(bt / top * (float)A8_M);
                mk = mk < 1 ? 1 : mk > A8_M ? A8_M : mk;
                const float inverse = 1.0f / (unit * mk);
                int32_t total = 0;
                for (int v = 0; v < B; v++) {
                    const float r = rintf(xg[k * B + v] * inverse);
                    const int8_t q = (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
                    xq[a8_xq_at(l, k * B + v)] = q;
                    total += q;
                }
                s += (int64_t)mk * total;
                mult[16 * (k / 2) + l] |= (int32_t)((uint32_t)(int32_t)mk << (16 * (k % 2)));
            }
            negs[l] = (int32_t)(-8 * s);
        }
    }
}

/* ---- portable: the oracle, lane by lane ------------------------------------------------- */

/* Row r times one prepared token, performing the AVX-512 kernel's float operations lane by
   lane in its order (its integer sums are exact: |I| < 2^31). */
static float a8_row_portable(const pk_matrix *m, long r, const float *prep) {
    const long cols = m->cols, groups = cols / m->group, sbs = a8_superblocks(m);
    const int G = m->group, B = G / 4;
    const uint8_t *w = (const uint8_t *)m->w + r * (cols / 2);
    float acc[16] = {0};
    for (long sb = 0; sb < sbs; sb++) {
        const long n = groups - 16 * sb < 16 ? groups - 16 * sb : 16;
        uint8_t *base = a8_sb(prep, G, sb);
        const int8_t *xq = (const int8_t *)base;
        const int32_t *mult = a8_mult(base, G), *negs = a8_negs(base, G);
        const float *xsumu = a8_xsumu(base, G);
        float sv[16] = {0}, bv[16] = {0};
        pk_mv_widen(m->scales, m->scale_dtype, r * groups + 16 * sb, n, sv);
        pk_mv_widen(m->biases, m->scale_dtype, r * groups + 16 * sb, n, bv);
        for (int l = 0; l < 16; l++) {
            int64_t total = negs[l];
            for (int j = 0; l < n && j < G; j++) {
                const int byte = w[(16 * sb + l) * G / 2 + j / 2];
                const int q = j % 2 ? byte >> 4 : byte & 15;
                const int k = j / B;
                const int mk = (int16_t)(uint16_t)((uint32_t)mult[16 * (k / 2) + l] >> (16 * (k % 2)));
                total += (int64_t)mk * q * xq[a8_xq_at(l, j)];
            }
            acc[l] = fmaf((float)(int32_t)total, sv[l], acc[l]);
            acc[l] = fmaf(fmaf(sv[l], 8.0f, bv[l]), xsumu[l], acc[l]);
        }
    }
    return *a8_unit(prep, m) * a8_lanes_sum(acc);
}

void pk_mv_matvec_act8_portable(const pk_matrix *m, int tokens, const float *prep,
                                long prep_stride, float *y, long ldy, long r0, long r1) {
    for (long r = r0; r < r1; r++)
        for (int t = 0; t < tokens; t++)
            y[t * ldy + (r - r0)] = a8_row_portable(m, r, prep + t * prep_stride);
}

/* ---- AVX-512 VNNI ----------------------------------------------------------------------- */

#if defined(__x86_64__)
#include <immintrin.h>

#include "matvec_avx512_tile.h"

#define A8_TARGET "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c,sse4.1"
#define A8_FN __attribute__((target(A8_TARGET)))
#define A8_INLINE static inline __attribute__((always_inline, target(A8_TARGET)))

/* acc += a·b: u8 times s8 in fours (DPBUSD), s16 times s16 in pairs (DPWSSD). Assembly for
   the same reason as in matvec_avx512_q4.c: the compiler must not rewrite them. */
#define DPBUSD(acc, a, b) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))
#define DPWSSD(acc, a, b) __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))

/* a8_lanes_sum's order. */
A8_INLINE float a8_reduce(__m512 v) {
    const __m256 lo = _mm512_castps512_ps256(v);
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    const __m256 t8 = _mm256_add_ps(lo, hi);
    const __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(t8), _mm256_extractf128_ps(t8, 1));
    const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));
    return _mm_cvtss_f32(_mm_add_ss(t2, _mm_movehdup_ps(t2)));
}

/* a8_prepare 16 values at a time: the same operations (max and integer sums are exact in any
   order; the group sum adds its 16 lanes in the same order from 0; the scalar steps are the
   same scalar steps), so the same bits. */
A8_FN void pk_mv_prepare_act8_avx512(const pk_matrix *m, const float *x, float *prep) {
    const long cols = m->cols, groups = cols / m->group, sbs = a8_superblocks(m);
    const int G = m->group, B = G / 4;
    __m512 tops = _mm512_setzero_ps();
    for (long i = 0; i < cols; i += 16) tops = _mm512_max_ps(tops, _mm512_abs_ps(_mm512_loadu_ps(x + i)));
    const float top = _mm512_reduce_max_ps(tops);
    const float unit = top > A8_TINY ? top / (127.0f * A8_M) : 0;
    *a8_unit(prep, m) = unit;
    /* bytes of 16 values 8k..8k+15 of a group: chunk k's even values, its odd, then k+1's */
    const __m128i split = _mm_set_epi8(15, 13, 11, 9, 14, 12, 10, 8, 7, 5, 3, 1, 6, 4, 2, 0);
    for (long sb = 0; sb < sbs; sb++) {
        uint8_t *base = a8_sb(prep, G, sb);
        int32_t *mult = a8_mult(base, G), *negs = a8_negs(base, G);
        float *xsumu = a8_xsumu(base, G);
        memset(base, 0, (size_t)a8_sb_bytes(G));
        for (int l = 0; l < 16 && 16 * sb + l < groups && unit > 0; l++) {
            const float *xg = x + (16 * sb + l) * G;
            __m512 v[4], lanes = _mm512_setzero_ps();
            for (int i = 0; i < G / 16; i++) {
                v[i] = _mm512_loadu_ps(xg + 16 * i);
                lanes = _mm512_add_ps(lanes, v[i]);
            }
            xsumu[l] = a8_reduce(lanes) / unit;
            int64_t s = 0;
            float inverse[4];
            for (int k = 0; k < 4; k++) {
                const __m512 a = _mm512_abs_ps(v[k * B / 16]);
                const float bt = B == 16 ? _mm512_reduce_max_ps(a)
                                         : _mm512_mask_reduce_max_ps((__mmask16)(0xFF << (8 * (k % 2))), a);
                float mk = ceilf(bt / top * (float)A8_M);
                mk = mk < 1 ? 1 : mk > A8_M ? A8_M : mk;
                inverse[k] = 1.0f / (unit * mk);
                mult[16 * (k / 2) + l] |= (int32_t)((uint32_t)(int32_t)mk << (16 * (k % 2)));
            }
            for (int i = 0; i < G / 16; i++) {
                /* the blocks of these 16 values: one (16-value blocks) or two halves */
                const __m512 inv = B == 16 ? _mm512_set1_ps(inverse[i])
                    : _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(inverse[2 * i]), _mm512_set1_ps(inverse[2 * i + 1]));
                __m512i q = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v[i], inv),
                                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                q = _mm512_max_epi32(_mm512_min_epi32(q, _mm512_set1_epi32(127)), _mm512_set1_epi32(-127));
                /* s += m_k * sum(q in block k) */
                if (B == 16) {
                    s += (int64_t)(int16_t)(mult[16 * (i / 2) + l] >> (16 * (i % 2))) * _mm512_reduce_add_epi32(q);
                } else {
                    for (int h = 0; h < 2; h++) {
                        const int k = 2 * i + h;
                        s += (int64_t)(int16_t)(mult[16 * (k / 2) + l] >> (16 * (k % 2)))
                           * _mm512_mask_reduce_add_epi32((__mmask16)(0xFF << (8 * h)), q);
                    }
                }
                const __m128i bytes = _mm_shuffle_epi8(_mm512_cvtepi32_epi8(q), split);
                int8_t *out = (int8_t *)base + 4 * l + 256 * i;  /* chunk 2i, nibble 0 */
                _mm_storeu_si32(out, bytes);
                _mm_storeu_si32(out + 64, _mm_srli_si128(bytes, 4));
                _mm_storeu_si32(out + 128, _mm_srli_si128(bytes, 8));
                _mm_storeu_si32(out + 192, _mm_srli_si128(bytes, 12));
            }
            negs[l] = (int32_t)(-8 * s);
        }
    }
}

/* Rows r0 .. r1-1 into the kernel's layout at out (a8_row_bytes each): per superblock, the 16
   groups' G/8 dwords transposed (lane = group) by log2(G/8) rounds of unzipping register pairs
   into their even and odd dwords; a last partial superblock's missing groups are 0. */
A8_INLINE void a8_repack(const pk_matrix *m, const int G, long r0, long r1, uint8_t *out) {
    const int D = G / 8;  /* dwords per group, registers per superblock */
    const long row_bytes = m->cols / 2, sbs = a8_superblocks(m), sb_bytes = 8L * G;
    const __m512i even =
        _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (long r = r0; r < r1; r++) {
        const uint8_t *src = (const uint8_t *)m->w + r * row_bytes;
        for (long sb = 0; sb < sbs; sb++) {
            const long bytes = row_bytes - sb * sb_bytes;
            __m512i v[8], u[8];
            for (int j = 0; j < D; j++) {
                const long left = bytes - 64 * j;
                v[j] = left >= 64 ? _mm512_loadu_si512(src + sb * sb_bytes + 64 * j)
                                  : _mm512_maskz_loadu_epi8(left > 0 ? (1ull << left) - 1 : 0,
                                                            src + sb * sb_bytes + 64 * j);
            }
            for (int round = 1; round < D; round *= 2) {
                for (int i = 0; i < D / 2; i++) {
                    u[i] = _mm512_permutex2var_epi32(v[2 * i], even, v[2 * i + 1]);
                    u[i + D / 2] = _mm512_permutex2var_epi32(v[2 * i], odd, v[2 * i + 1]);
                }
                for (int i = 0; i < D; i++) v[i] = u[i];
            }
            uint8_t *dst = out + ((r - r0) * sbs + sb) * sb_bytes;
            for (int j = 0; j < D; j++) _mm512_storeu_si512(dst + 64 * j, v[j]);
        }
    }
}

/* Rows and tokens of a tile: R*T float sums, R*T int32 sums and R*T packed dots in registers. */
#ifndef A8_ROWS
#define A8_ROWS 2
#endif
#ifndef A8_TOKENS
#define A8_TOKENS 4
#endif

/* Rows r .. r+R-1 (repacked at wp) against tokens xp[0..T-1] (R, T, G constants at every
   call). */
A8_INLINE void a8_tile(const pk_matrix *m, long r, const uint8_t *wp, const int R, const int T,
                       const int G, const float *const *xp, float *y, long ldy) {
    const long groups = m->cols / G, sbs = a8_superblocks(m), sb_bytes = 8L * G;
    const long row_stride = sbs * sb_bytes;
    const int L = G / 32;  /* chunks per block */
    const __m512i low = _mm512_set1_epi8(0x0F);
    /* The even block's dot goes into the low word 2^15 up, so it never borrows from the odd
       one above it, then back (flipping bit 15 of a word is subtracting 2^15 from it read as
       signed): the words vpdpwssd reads are then exactly the two dots. */
    const __m512i bias16 = _mm512_set1_epi32(0x8000);
    const int dt = m->scale_dtype;
    __m512 out[A8_ROWS][A8_TOKENS];
    for (int i = 0; i < R; i++)
        for (int t = 0; t < T; t++) out[i][t] = _mm512_setzero_ps();
    for (long sb = 0; sb < sbs; sb++) {
        const long n = groups - 16 * sb < 16 ? groups - 16 * sb : 16;
        const __mmask16 kn = (__mmask16)((1u << n) - 1);
        const uint8_t *xs[A8_TOKENS];
        for (int t = 0; t < T; t++) xs[t] = a8_sb(xp[t], G, sb);
        __m512i acc[A8_ROWS][A8_TOKENS];
#pragma clang loop unroll(full)
        for (int p = 1; p >= 0; p--) {
            __m512i pk[A8_ROWS][A8_TOKENS];
            for (int i = 0; i < R; i++)
                for (int t = 0; t < T; t++) pk[i][t] = _mm512_setzero_si512();
#pragma clang loop unroll(full)
            for (int half = 1; half >= 0; half--) {
                for (int c = 0; c < L; c++) {
                    const int k = (2 * p + half) * L + c;
                    __m512i lo[A8_ROWS], hi[A8_ROWS];
                    for (int i = 0; i < R; i++) {
                        const __m512i wv =
                            _mm512_loadu_si512(wp + i * row_stride + sb * sb_bytes + 64 * k);
                        lo[i] = _mm512_and_si512(wv, low);
                        hi[i] = _mm512_and_si512(_mm512_srli_epi16(wv, 4), low);
                    }
                    for (int t = 0; t < T; t++) {
                        const __m512i xl = _mm512_loadu_si512(xs[t] + 128 * k);
                        for (int i = 0; i < R; i++) DPBUSD(pk[i][t], lo[i], xl);
                        const __m512i xh = _mm512_loadu_si512(xs[t] + 128 * k + 64);
                        for (int i = 0; i < R; i++) DPBUSD(pk[i][t], hi[i], xh);
                    }
                }
                for (int i = 0; i < R; i++)
                    for (int t = 0; t < T; t++)
                        pk[i][t] = half ? _mm512_or_si512(_mm512_slli_epi32(pk[i][t], 16), bias16)
                                        : _mm512_xor_si512(pk[i][t], bias16);
            }
            for (int t = 0; t < T; t++) {
                const __m512i mk = _mm512_loadu_si512(a8_mult((uint8_t *)(uintptr_t)xs[t], G) + 16 * p);
                for (int i = 0; i < R; i++) {
                    if (p == 1) acc[i][t] = _mm512_loadu_si512(a8_negs((uint8_t *)(uintptr_t)xs[t], G));
                    DPWSSD(acc[i][t], pk[i][t], mk);
                }
            }
        }
        for (int i = 0; i < R; i++) {
            const long at = (r + i) * groups + 16 * sb;
            const __m512 sv = pk_mv_load16(m->scales, dt, at, kn);
            const __m512 bb = _mm512_fmadd_ps(sv, _mm512_set1_ps(8.0f), pk_mv_load16(m->biases, dt, at, kn));
            for (int t = 0; t < T; t++) {
                out[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[i][t]), sv, out[i][t]);
                out[i][t] = _mm512_fmadd_ps(
                    bb, _mm512_loadu_ps(a8_xsumu((uint8_t *)(uintptr_t)xs[t], G)), out[i][t]);
            }
        }
    }
    for (int i = 0; i < R; i++)
        for (int t = 0; t < T; t++) y[t * ldy + i] = *a8_unit(xp[t], m) * a8_reduce(out[i][t]);
}

/* Tokens t0.. (up to A8_TOKENS) against every row, A8_ROWS rows at a time (R, T constant in
   every a8_tile call, so that its loops unroll). */
#define A8_K(k, most) ((k) <= (most) ? (k) : 1)
#define A8_ROW_TILES(T, G)                                                                     \
    do {                                                                                       \
        long r = r0;                                                                           \
        for (; r + A8_ROWS <= r1; r += A8_ROWS)                                                \
            a8_tile(m, r, wp + (r - r0) * row_stride, A8_ROWS, T, G, xp, yt + (r - r0), ldy);  \
        switch (r1 - r) {                                                                      \
            case 0: break;                                                                     \
            case 1: A8_TILE_REST(1, T, G); break;                                              \
            case 2: A8_TILE_REST(A8_K(2, A8_ROWS - 1), T, G); break;                           \
            default: A8_TILE_REST(A8_K(3, A8_ROWS - 1), T, G); break;                          \
        }                                                                                      \
    } while (0)
#define A8_TILE_REST(R, T, G) a8_tile(m, r, wp + (r - r0) * row_stride, R, T, G, xp, yt + (r - r0), ldy)
_Static_assert(A8_ROWS <= 4 && A8_TOKENS <= 8, "A8_ROW_TILES and A8_TOKEN_TILES have a case each");

#define A8_TOKEN_TILES(G)                                                                      \
    for (long t0 = 0; t0 < tokens; t0 += A8_TOKENS) {                                          \
        const float *xp[A8_TOKENS];                                                            \
        const long nt = tokens - t0 < A8_TOKENS ? tokens - t0 : A8_TOKENS;                     \
        for (int t = 0; t < nt; t++) xp[t] = prep + (t0 + t) * prep_stride;                    \
        float *yt = y + t0 * ldy;                                                              \
        switch (nt) {                                                                          \
            case 1: A8_ROW_TILES(1, G); break;                                                 \
            case 2: A8_ROW_TILES(A8_K(2, A8_TOKENS), G); break;                                \
            case 3: A8_ROW_TILES(A8_K(3, A8_TOKENS), G); break;                                \
            case 4: A8_ROW_TILES(A8_K(4, A8_TOKENS), G); break;                                \
            case 5: A8_ROW_TILES(A8_K(5, A8_TOKENS), G); break;                                \
            case 6: A8_ROW_TILES(A8_K(6, A8_TOKENS), G); break;                                \
            case 7: A8_ROW_TILES(A8_K(7, A8_TOKENS), G); break;                                \
            default: A8_ROW_TILES(A8_K(8, A8_TOKENS), G); break;                               \
        }                                                                                      \
    }

/* One token (a decode step): the rows as stored, x moved instead. Repacking the rows costs
   more than the products when each row meets one token (decode took ~1.5x the CPU of the
   grouped kernel's first version), so here the weights keep their order (a 64-byte load holds
   64/(G/2) groups, D = G/8 dwords each, chunk c = values 8c..8c+7) and x's int8 values and
   the block multipliers are laid out to match, once per call for all of its rows: the inverse
   of a8_repack's transposition (log2(D) rounds of interleaving register pairs) applied to the
   prepared input, whose chunk-major lanes become group-major. Per row and superblock, each
   dword lane's 8 products (u8 q times s8 x) are multiplied by its block's m_k and the D lanes of
   a group are added pairwise (a8_repack's unzip, on sums) into one lane per group: the same
   integers I_g as a8_tile's (exact, mod 2^32, and the true value fits), then the same float
   operations in the same order, so the same bits as the token computed in any tile. */
A8_INLINE void a8_group_major(__m512i *v, int D) {
    const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi = _mm512_add_epi32(lo, _mm512_set1_epi32(8));
    __m512i u[8];
    for (int round = 1; round < D; round *= 2) {
        for (int i = 0; i < D / 2; i++) {
            u[2 * i] = _mm512_permutex2var_epi32(v[i], lo, v[i + D / 2]);
            u[2 * i + 1] = _mm512_permutex2var_epi32(v[i], hi, v[i + D / 2]);
        }
        for (int i = 0; i < D; i++) v[i] = u[i];
    }
}

/* Per superblock, 3 * D registers at out: x's low-nibble partners, its high-nibble partners,
   and each lane's block multiplier, all group-major. */
A8_INLINE void a8_single_input(const pk_matrix *m, const int G, const float *prep, __m512i *out) {
    const int D = G / 8;
    for (long sb = 0; sb < a8_superblocks(m); sb++, out += 3 * D) {
        const uint8_t *xs = a8_sb(prep, G, sb);
        const int32_t *mult = a8_mult((uint8_t *)(uintptr_t)xs, G);
        __m512i lo[8], hi[8], mk[8];
        for (int c = 0; c < D; c++) {
            lo[c] = _mm512_loadu_si512(xs + 128 * c);
            hi[c] = _mm512_loadu_si512(xs + 128 * c + 64);
            const int b = c * 4 / D;  /* chunk c's block */
            const __m512i pair = _mm512_loadu_si512(mult + 16 * (b / 2));
            mk[c] = b % 2 ? _mm512_srai_epi32(pair, 16)
                          : _mm512_srai_epi32(_mm512_slli_epi32(pair, 16), 16);
        }
        a8_group_major(lo, D);
        a8_group_major(hi, D);
        a8_group_major(mk, D);
        for (int j = 0; j < D; j++) {
            out[j] = lo[j];
            out[D + j] = hi[j];
            out[2 * D + j] = mk[j];
        }
    }
}

A8_INLINE void a8_single(const pk_matrix *m, const int G, const __m512i *xin, const float *prep,
                         float *y, long r0, long r1) {
    const int D = G / 8;
    const long groups = m->cols / G, sbs = a8_superblocks(m), row_bytes = m->cols / 2;
    const __m512i low = _mm512_set1_epi8(0x0F);
    const __m512i even =
        _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    const int dt = m->scale_dtype;
    for (long r = r0; r < r1; r++) {
        const uint8_t *w = (const uint8_t *)m->w + r * row_bytes;
        __m512 out = _mm512_setzero_ps();
        for (long sb = 0; sb < sbs; sb++) {
            const __m512i *x = xin + 3 * D * sb;
            const long n = groups - 16 * sb < 16 ? groups - 16 * sb : 16;
            const __mmask16 kn = (__mmask16)((1u << n) - 1);
            const long bytes = row_bytes - sb * 8L * G;
            __m512i part[8];
            for (int j = 0; j < D; j++) {
                const long left = bytes - 64 * j;
                const uint8_t *at = w + sb * 8L * G + 64 * j;
                const __m512i wv = left >= 64 ? _mm512_loadu_si512(at)
                    : _mm512_maskz_loadu_epi8(left > 0 ? (1ull << left) - 1 : 0, at);
                __m512i p = _mm512_setzero_si512();
                DPBUSD(p, _mm512_and_si512(wv, low), x[j]);
                DPBUSD(p, _mm512_and_si512(_mm512_srli_epi16(wv, 4), low), x[D + j]);
                part[j] = _mm512_mullo_epi32(p, x[2 * D + j]);
            }
            for (int k = D; k > 1; k /= 2)
                for (int i = 0; i < k / 2; i++)
                    part[i] = _mm512_add_epi32(_mm512_permutex2var_epi32(part[2 * i], even, part[2 * i + 1]),
                                               _mm512_permutex2var_epi32(part[2 * i], odd, part[2 * i + 1]));
            const uint8_t *xs = a8_sb(prep, G, sb);
            const __m512i acc = _mm512_add_epi32(part[0], _mm512_loadu_si512(a8_negs((uint8_t *)(uintptr_t)xs, G)));
            const long at = r * groups + 16 * sb;
            const __m512 sv = pk_mv_load16(m->scales, dt, at, kn);
            const __m512 bb = _mm512_fmadd_ps(sv, _mm512_set1_ps(8.0f), pk_mv_load16(m->biases, dt, at, kn));
            out = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc), sv, out);
            out = _mm512_fmadd_ps(bb, _mm512_loadu_ps(a8_xsumu((uint8_t *)(uintptr_t)xs, G)), out);
        }
        y[r - r0] = *a8_unit(prep, m) * a8_reduce(out);
    }
}

/* The repacked rows of this thread's last call: a few dozen rows a call (jobs.c's ~64 KB
   chunks), so the buffer stays small and in L2 while every token of the call goes over it. */
static _Thread_local uint8_t *a8_scratch;
static _Thread_local size_t a8_scratch_size;

A8_FN void pk_mv_matvec_act8_avx512(const pk_matrix *m, long tokens, const float *prep,
                                    long prep_stride, float *y, long ldy, long r0, long r1) {
    const long row_stride = a8_superblocks(m) * 8L * m->group;
    const size_t need = tokens == 1 ? (size_t)(a8_superblocks(m) * 24L * m->group)
                                    : (size_t)((r1 - r0) * row_stride);
    if (need > a8_scratch_size) {
        free(a8_scratch);
        a8_scratch_size = 0;
        a8_scratch = aligned_alloc(64, (need + 4095) / 4096 * 4096);
        if (!a8_scratch) {  /* the same bits, slowly */
            for (long t0 = 0; t0 < tokens; t0 += PK_MV_TOKENS) {
                const int n = tokens - t0 < PK_MV_TOKENS ? (int)(tokens - t0) : PK_MV_TOKENS;
                pk_mv_matvec_act8_portable(m, n, prep + t0 * prep_stride, prep_stride,
                                           y + t0 * ldy, ldy, r0, r1);
            }
            return;
        }
        a8_scratch_size = (need + 4095) / 4096 * 4096;
    }
    uint8_t *wp = a8_scratch;
    if (tokens == 1) {
        __m512i *xin = (__m512i *)(void *)wp;
        if (m->group == 32) {
            a8_single_input(m, 32, prep, xin);
            a8_single(m, 32, xin, prep, y, r0, r1);
        } else {
            a8_single_input(m, 64, prep, xin);
            a8_single(m, 64, xin, prep, y, r0, r1);
        }
        return;
    }
    if (m->group == 32) {
        a8_repack(m, 32, r0, r1, wp);
        A8_TOKEN_TILES(32)
    } else {
        a8_repack(m, 64, r0, r1, wp);
        A8_TOKEN_TILES(64)
    }
}

#endif
