/* 8-bit activations (opt-in: `--act-bits 8`): 4-bit affine rows (groups of 32 or 64, at least
   128 wide) times x rounded to int8 per block of 8 or 16 values, multiplied by AVX-512 VNNI
   vpdpbusd (u8 weights 0..15 x s8 x -> int32, 64 products per instruction where the 16-bit
   path's vpdpwssd does 32). See pk_matvec.h for the contract.

   Arithmetic (per row, per group g of weights w = s*q + b, per block k of x):
     row·x = sum_g [ s_g * sum_{k in g} d_k * (q · xq)_k  +  b_g * xsum_g  +  8 s_g * xres_g ]
   with xq = rint(x / d_k) in [-127, 127], d_k = max|x in k| / 127 (llama.cpp's Q8_0 rounding
   on smaller blocks),
   xsum_g the exact float sum of x over g, and xres_g = xsum_g - sum_k d_k * sum(xq_k) what
   the rounding lost in that sum. The integer dots are exact; the rounding error left is
   s_g * sum (q - 8) * (x - d xq): the part of x's rounding that the middle q value carries is
   put back (as the 16-bit path does), so the bias term is exact whatever the bias is (using
   d*sum(xq) for the bias instead would leave (s q + b) * error: the same when b = -8s, worse
   for every other bias).

   Layout (the 16-bit tile kernel's, matvec_avx512_q4.c): a quad of 256 values is 128 bytes,
   chunks [A.0 A.1 B.0 B.1 | C.0 C.1 D.0 D.1] of 16 bytes, chunk s.h = values 32h..32h+31 of
   64-value segment s. A 128-bit lane shuffle gives Y_h = [A.h B.h C.h D.h]; its low nibbles
   and its high nibbles (one and, one shift) are 64 u8 q values each, and dword lane 4s + j
   holds values 64s + 32h + 8j + 2k + n (byte k, nibble n) in both. So after both halves lane
   4s + j has summed 16 values of segment s: lanes never mix groups, and no bytes move.
   xq is stored to match: per quad, for h, for n, for s, j, k: x[64s + 32h + 8j + 2k + n].
   A row that ends inside a quad (SmolLM2's 576) reads its last quad with masked loads, the
   missing weights and x values 0.

   Blocks of x: a block is what one int32 lane sums before it is converted and scaled, so a
   block's d costs the kernel nothing beyond the per-lane dexp it loads anyway. Groups of 32
   are converted after each half (as in the 16-bit kernel): lane 4s + j of half h sums the 8
   values 64s + 32h + 8j .. +7, one block. Groups of 64 are converted once per quad: lane
   4s + j sums values 8j .. 8j+7 and 32+8j .. 32+8j+7 of segment s, one block of 16. Smaller
   blocks than llama.cpp's 32 because SmolLM2-135M-Instruct's mean KL from float64 went
   3.07e-3 -> 0.86e-3 (issue 31's goal: 2e-3; scripts/bench/README.md): a block's scale is set
   by its largest value, and real activations have outliers that a block of 32 shares with
   31 others.

   Float order: everything is per 16 float lanes, added in one fixed order (bias terms of a
   16-group chunk, then each quad's converted dots; then the 16 lanes pairwise, halves first),
   and the portable version below performs exactly those operations lane by lane, so both
   levels give the same bits (tests hold them to it). Every multiply-add is an explicit fmaf /
   fmadd and no product feeds a plain add: the kernels build with -ffp-contract=fast, which
   would otherwise fuse a multiply and an add where the CPU has FMA and not where it has not. */

#include "matvec_internal.h"

#include <math.h>
#include <stdint.h>

/* ---- the prepared input ----------------------------------------------------------------- */

/* In the prep scratch (pk_matvec_prep_floats(cols) floats; the 16-bit layout's xsum and xres
   slots are shared, the rest is overlaid on its x16 and x16q; a last partial quad is stored
   whole, its missing values 0):
     xq   [cols rounded up to 256] int8   at 0, kernel order (above)
     dexp [16 or 32 per quad]             in x16q's place: d of each lane's block, per quad
                                          (per half for groups of 32)
     xsum, xres [groups]                  pk_mv_xsum / pk_mv_xres */
static inline int8_t *a8_xq(const float *prep) { return (int8_t *)(uintptr_t)prep; }
static inline float *a8_dexp(const float *prep, long cols) {
    return (float *)(uintptr_t)(prep + cols / 2 + 3 * (cols / 32) + cols / 16 + 80);
}

/* Rows narrower than 128 would not leave the rounded-up xq room before xsum. */
int pk_matvec_act8_covers(const pk_matrix *m) {
    return m->kind == PK_W_AFFINE && m->bits == 4 && (m->group == 32 || m->group == 64)
        && m->cols % m->group == 0 && m->cols >= 128;
}

/* A block whose largest value is at most this rounds to 0 (its sum stays exact in xres):
   127/top would overflow to infinity below ~3.7e-37, and infinity times x converts to
   different integers at the two levels (and to nothing defined in C). */
#define A8_TINY 0x1p-120f

/* Blocks of a quad, and block of value v (0..255) of it: what one lane sums between two
   conversions (see the layout above), 8 values for groups of 32, 16 for groups of 64. */
PK_MV_INLINE int a8_blocks(int group) { return group == 32 ? 32 : 16; }
PK_MV_INLINE int a8_block(int group, int v) {
    return group == 32 ? v / 8 : 4 * (v / 64) + (v % 32) / 8;
}

/* The scales of quad c (its first value) from its blocks' d and sums of xq: each lane's d
   (dexp) and each group's xres. Shared by both levels' prepare (the group sums are in). */
PK_MV_INLINE void a8_quad_scales(const pk_matrix *m, long c, const float d[32],
                                 const int32_t total[32], float *prep) {
    const long cols = m->cols, groups = cols / m->group;
    float *dexp = a8_dexp(prep, cols), *xres = pk_mv_xres(prep, cols);
    const float *xsum = pk_mv_xsum(prep, cols);
    const int G = m->group;
    if (G == 64) {  /* block = lane */
        for (int lane = 0; lane < 16; lane++) dexp[c / 16 + lane] = d[lane];
    } else {  /* lane 4s + j of half h sums block 8s + 4h + j */
        for (int h = 0; h < 2; h++)
            for (int lane = 0; lane < 16; lane++)
                dexp[c / 8 + 16 * h + lane] = d[8 * (lane / 4) + 4 * h + lane % 4];
    }
    /* group k of the quad is blocks 4k .. 4k+3 either way (4 lanes of 16 values, or 4 of 8) */
    for (int k = 0; k < 256 / G && c / G + k < groups; k++) {
        const long g = c / G + k;
        float res = xsum[g];
        for (int b = 4 * k; b < 4 * k + 4; b++) res = fmaf(-d[b], (float)total[b], res);
        xres[g] = res;
    }
}

/* The portable prepare, value by value (the AVX-512 one below performs the same operations 16
   values at a time). Every operation is exact or correctly rounded, so both give the same
   bits. */
void pk_mv_prepare_act8_portable(const pk_matrix *m, const float *x, float *prep) {
    const long cols = m->cols;
    const int group = m->group;
    pk_mv_group_sums(m, x, prep);
    int8_t *xq = a8_xq(prep);
    for (long c = 0; c < cols; c += 256) {
        const long here = cols - c < 256 ? cols - c : 256;  /* values of this quad */
        float xc[256] = {0};
        memcpy(xc, x + c, (size_t)here * sizeof(float));
        float top[32] = {0}, d[32], inverse[32];
        for (int v = 0; v < 256; v++) {
            const int b = a8_block(group, v);
            top[b] = fmaxf(top[b], fabsf(xc[v]));
        }
        for (int b = 0; b < a8_blocks(group); b++) {
            d[b] = top[b] / 127.0f;
            inverse[b] = top[b] > A8_TINY ? 127.0f / top[b] : 0;
        }
        int8_t q[256];
        int32_t total[32] = {0};
        for (int v = 0; v < 256; v++) {
            const int b = a8_block(group, v);
            const float r = rintf(xc[v] * inverse[b]);
            q[v] = (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
            total[b] += q[v];
        }
        int8_t *out = xq + c;
        for (int h = 0; h < 2; h++)
            for (int n = 0; n < 2; n++)
                for (int s = 0; s < 4; s++)
                    for (int j = 0; j < 4; j++)
                        for (int k = 0; k < 4; k++) *out++ = q[64 * s + 32 * h + 8 * j + 2 * k + n];
        a8_quad_scales(m, c, d, total, prep);
    }
}

/* The 16 float lanes of a row's sum, added halves first (the order both levels use). */
PK_MV_INLINE float a8_lanes_sum(const float lanes[16]) {
    float t8[8], t4[4], t2[2];
    for (int i = 0; i < 8; i++) t8[i] = lanes[i] + lanes[i + 8];
    for (int i = 0; i < 4; i++) t4[i] = t8[i] + t8[i + 4];
    for (int i = 0; i < 2; i++) t2[i] = t4[i] + t4[i + 2];
    return t2[0] + t2[1];
}

/* ---- portable: the oracle, lane by lane ------------------------------------------------- */

/* Row r times one prepared token, performing the AVX-512 kernel's float operations lane by
   lane in its order (its integer sums are exact in any order). */
static float a8_row_portable(const pk_matrix *m, long r, const float *prep) {
    const long cols = m->cols, G = m->group, groups = cols / G;
    const uint8_t *w = (const uint8_t *)m->w + r * (cols / 2);
    const int8_t *xq = a8_xq(prep);
    const float *dexp = a8_dexp(prep, cols), *xsum = pk_mv_xsum(prep, cols);
    const float *xres = pk_mv_xres(prep, cols);
    float acc[16] = {0};
    for (long g0 = 0; g0 < groups; g0 += 16) {
        const long n = groups - g0 < 16 ? groups - g0 : 16;
        float sv[16] = {0}, bv[16] = {0};
        pk_mv_widen(m->scales, m->scale_dtype, r * groups + g0, n, sv);
        pk_mv_widen(m->biases, m->scale_dtype, r * groups + g0, n, bv);
        for (int l = 0; l < 16; l++) {
            const float xs = l < n ? xsum[g0 + l] : 0, xr = l < n ? xres[g0 + l] : 0;
            acc[l] = fmaf(bv[l], xs, acc[l]);
            acc[l] = fmaf(sv[l] * 8.0f, xr, acc[l]);
        }
        for (long c = g0 * G; c < (g0 + n) * G; c += 256) {
            int32_t dot[16] = {0};
            for (int h = 0; h < 2; h++) {
                for (int lane = 0; lane < 16; lane++) {
                    const int s = lane / 4, j = lane % 4;
                    const long at = c / 2 + 32 * s + 16 * h + 4 * j;  /* byte in the row */
                    const int8_t *xl = xq + c + 128 * h + 16 * s + 4 * j;
                    for (int k = 0; k < 4; k++) {
                        const int byte = at + k < cols / 2 ? w[at + k] : 0;  /* a partial quad */
                        dot[lane] += (byte & 15) * xl[k] + (byte >> 4) * xl[64 + k];
                    }
                }
                if (G == 32) {  /* each half's lanes are whole groups: scale them now */
                    for (int lane = 0; lane < 16; lane++) {
                        const float comb = sv[(c - g0 * G) / 32 + 2 * (lane / 4) + h]
                                         * dexp[c / 8 + 16 * h + lane];
                        acc[lane] = fmaf((float)dot[lane], comb, acc[lane]);
                        dot[lane] = 0;
                    }
                }
            }
            if (G == 32) continue;
            for (int lane = 0; lane < 16; lane++) {
                const float comb = sv[(c - g0 * G) / 64 + lane / 4] * dexp[c / 16 + lane];
                acc[lane] = fmaf((float)dot[lane], comb, acc[lane]);
            }
        }
    }
    return a8_lanes_sum(acc);
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

#include "matvec_avx512_tile_block.h"

#define A8_TARGET "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c,sse4.1"
#define A8_FN __attribute__((target(A8_TARGET)))
#define A8_INLINE static inline __attribute__((always_inline, target(A8_TARGET)))

/* The maximum (A8_MAX) or sum (A8_SUM) of each 8-value half of a register, in all its lanes. */
A8_INLINE __m512 a8_half_max(__m512 a) {
    a = _mm512_max_ps(a, _mm512_permute_ps(a, 0xB1));
    a = _mm512_max_ps(a, _mm512_permute_ps(a, 0x4E));
    return _mm512_max_ps(a, _mm512_shuffle_f32x4(a, a, 0xB1));
}
A8_INLINE __m512i a8_half_sum(__m512i a) {
    a = _mm512_add_epi32(a, _mm512_shuffle_epi32(a, (_MM_PERM_ENUM)0xB1));
    a = _mm512_add_epi32(a, _mm512_shuffle_epi32(a, (_MM_PERM_ENUM)0x4E));
    return _mm512_add_epi32(a, _mm512_shuffle_i32x4(a, a, 0xB1));
}

/* rint(v * inverse) within [-127, 127], as int32. */
A8_INLINE __m512i a8_round(__m512 v, __m512 inverse) {
    const __m512i r = _mm512_cvt_roundps_epi32(_mm512_mul_ps(v, inverse),
                                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm512_max_epi32(_mm512_min_epi32(r, _mm512_set1_epi32(127)), _mm512_set1_epi32(-127));
}

/* pk_mv_prepare_act8_portable 16 values at a time. Value i of a quad is in register i / 16 and
   block (8 values) 2i + e of a group of 32 is half e of register i; block 4s + 2j + e of a group
   of 64 (16 values) is half e of registers 4s + j and 4s + j + 2. Max and integer sums are
   exact in any order; d, 127/top, times x and the rounding are the same correctly rounded
   operations as the portable one's, so the bits are the same. */
A8_FN void pk_mv_prepare_act8_avx512(const pk_matrix *m, const float *x, float *prep) {
    const long cols = m->cols;
    const int group = m->group;
    pk_mv_group_sums(m, x, prep);
    int8_t *xq = a8_xq(prep);
    const __m512 full = _mm512_set1_ps(127.0f);
    /* the even and the odd values of a 32-value half (two registers): nibble n of the layout */
    const __m512i evens =
        _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i odds = _mm512_add_epi32(evens, _mm512_set1_epi32(1));
    for (long c = 0; c < cols; c += 256) {
        const long here = cols - c < 256 ? cols - c : 256;
        __m512 v[16];
        __m512i q[16];
        for (int i = 0; i < 16; i++) {
            const long left = here - 16 * i;  /* a last partial quad: its missing values 0 */
            v[i] = left >= 16 ? _mm512_loadu_ps(x + c + 16 * i)
                              : _mm512_maskz_loadu_ps(left > 0 ? (__mmask16)((1u << left) - 1) : 0,
                                                      x + c + 16 * i);
        }
        float d[32];
        int32_t total[32];
        /* register pairs sharing blocks: (i, i) for groups of 32, (4s + j, 4s + j + 2) for 64 */
        for (int p = 0; p < (group == 32 ? 16 : 8); p++) {
            const int i0 = group == 32 ? p : 4 * (p / 2) + p % 2, i1 = group == 32 ? i0 : i0 + 2;
            const __m512 top = a8_half_max(_mm512_max_ps(_mm512_abs_ps(v[i0]), _mm512_abs_ps(v[i1])));
            const __m512 inverse = _mm512_maskz_div_ps(
                _mm512_cmp_ps_mask(top, _mm512_set1_ps(A8_TINY), _CMP_GT_OQ), full, top);
            q[i0] = a8_round(v[i0], inverse);
            q[i1] = a8_round(v[i1], inverse);
            float dl[16];
            int32_t tl[16];
            _mm512_storeu_ps(dl, _mm512_div_ps(top, full));
            _mm512_storeu_si512(tl, a8_half_sum(i1 == i0 ? q[i0] : _mm512_add_epi32(q[i0], q[i1])));
            const int b = group == 32 ? 2 * p : 4 * (p / 2) + 2 * (p % 2);  /* half 0's block */
            d[b] = dl[0], d[b + 1] = dl[8];
            total[b] = tl[0], total[b + 1] = tl[8];
        }
        for (int s = 0; s < 4; s++)
            for (int h = 0; h < 2; h++) {
                const __m512i lo = q[4 * s + 2 * h], hi = q[4 * s + 2 * h + 1];
                int8_t *out = xq + c + 128 * h + 16 * s;
                _mm_storeu_si128((__m128i *)out,
                                 _mm512_cvtepi32_epi8(_mm512_permutex2var_epi32(lo, evens, hi)));
                _mm_storeu_si128((__m128i *)(out + 64),
                                 _mm512_cvtepi32_epi8(_mm512_permutex2var_epi32(lo, odds, hi)));
            }
        a8_quad_scales(m, c, d, total, prep);
    }
}

/* acc += a·b, u8 times s8 in groups of four. Assembly for the same reason as DPWSSD in
   matvec_avx512_q4.c: the compiler must not rewrite it. */
#define DPBUSD(acc, a, b) __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))

/* a8_lanes_sum's order. */
A8_INLINE float a8_reduce(__m512 v) {
    const __m256 lo = _mm512_castps512_ps256(v);
    const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    const __m256 t8 = _mm256_add_ps(lo, hi);
    const __m128 t4 = _mm_add_ps(_mm256_castps256_ps128(t8), _mm256_extractf128_ps(t8, 1));
    const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));
    return _mm_cvtss_f32(_mm_add_ss(t2, _mm_movehdup_ps(t2)));
}

/* One token's prepared input. xexp is its dexp (the field is named as the 16-bit kernel's,
   whose role it has, for PK_MV_TILE_SCALE_QUAD). */
typedef struct {
    const int8_t *xq;
    const float *xexp, *xsum, *xres;
} a8_view;

/* Rows r .. r+R-1 against tokens xv[0..T-1] (R, T, G constants at every call). */
A8_INLINE void a8_tile(const pk_matrix *m, long r, const int R, const int T, const int G,
                       const a8_view *xv, float *y, long ldy) {
    const long cols = m->cols, groups = cols / G, row_bytes = cols / 2;
    const uint8_t *w = (const uint8_t *)m->w + r * row_bytes;
    const __m512i low = _mm512_set1_epi8(0x0F);
    const __m512i lane_seg = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    PK_MV_TILE_ZEROED(__m512, acc, R, T, _mm512_setzero_ps());
    for (long g0 = 0; g0 < groups; g0 += 16) {
        PK_MV_TILE_BLOCK(m, r, R, T, groups, g0, xv, n, kn, sv, acc);
        for (long c = g0 * G; c < (g0 + n) * G; c += 256) {
            PK_MV_TILE_ZEROED(__m512i, dot, R, T, _mm512_setzero_si512());
            for (int h = 0; h < 2; h++) {
                __m512i yv[PK_MV_TILE_ROWS];
                for (int i = 0; i < R; i++) {
                    const uint8_t *p = w + i * row_bytes + c / 2;
                    /* the tile after next into L2, as the 16-bit tile kernel does */
                    _mm_prefetch((const char *)w + R * (2 * row_bytes + c / 2) + 64 * (2 * i + h),
                                 _MM_HINT_T1);
                    __m512i a, b;
                    if (c + 256 <= cols) {
                        a = _mm512_loadu_si512(p);
                        b = _mm512_loadu_si512(p + 64);
                    } else {  /* a last partial quad: its missing bytes read as 0 */
                        const long bytes = (cols - c) / 2;
                        a = _mm512_maskz_loadu_epi8(bytes >= 64 ? ~0ull : (1ull << bytes) - 1, p);
                        b = _mm512_maskz_loadu_epi8(
                            bytes <= 64 ? 0 : bytes >= 128 ? ~0ull : (1ull << (bytes - 64)) - 1, p + 64);
                    }
                    yv[i] = h ? _mm512_shuffle_i64x2(a, b, 0xDD) : _mm512_shuffle_i64x2(a, b, 0x88);
                }
                for (int n2 = 0; n2 < 2; n2++) {
                    __m512i wv[PK_MV_TILE_ROWS];
                    for (int i = 0; i < R; i++)
                        wv[i] = n2 ? _mm512_and_si512(_mm512_srli_epi16(yv[i], 4), low)
                                   : _mm512_and_si512(yv[i], low);
                    for (int t = 0; t < T; t++) {
                        const __m512i xk = _mm512_loadu_si512(xv[t].xq + c + 128 * h + 64 * n2);
                        for (int i = 0; i < R; i++) DPBUSD(dot[i][t], wv[i], xk);
                    }
                }
                if (G == 32) {
                    const __m512i gh = _mm512_add_epi32(
                        _mm512_set1_epi32((int)(c - g0 * G) / 32 + h), _mm512_slli_epi32(lane_seg, 1));
                    for (int i = 0; i < R; i++) {
                        const __m512 sexp = _mm512_permutexvar_ps(gh, sv[i]);
                        for (int t = 0; t < T; t++) {
                            const __m512 comb =
                                _mm512_mul_ps(sexp, _mm512_loadu_ps(xv[t].xexp + c / 8 + 16 * h));
                            acc[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[i][t]), comb, acc[i][t]);
                            dot[i][t] = _mm512_setzero_si512();
                        }
                    }
                }
            }
            if (G == 32) continue;
            const __m512i gidx =
                _mm512_add_epi32(_mm512_set1_epi32((int)(c - g0 * G) / 64), lane_seg);
            PK_MV_TILE_SCALE_QUAD(R, T, gidx, sv, xv, c, dot, acc);
        }
    }
    for (int i = 0; i < R; i++)
        for (int t = 0; t < T; t++) y[t * ldy + i] = a8_reduce(acc[i][t]);
}

A8_FN void pk_mv_matvec_act8_avx512(const pk_matrix *m, int tokens, const float *prep,
                                    long prep_stride, float *y, long ldy, long r0, long r1) {
    a8_view xv[PK_MV_TOKENS];
    for (int t = 0; t < tokens; t++) {
        const float *p = prep + t * prep_stride;
        xv[t] = (a8_view){a8_xq(p), a8_dexp(p, m->cols), pk_mv_xsum(p, m->cols),
                          pk_mv_xres(p, m->cols)};
    }
    if (m->group == 32) PK_MV_ROW_TILES(a8_tile, 32);
    else PK_MV_ROW_TILES(a8_tile, 64);
}

#endif
