/* What the AVX-512 affine kernels share: the scale loader (matvec_avx512.c, matvec_act8.c
   and the tile kernels) and the tile kernels' per-group prologue and tile walk (16-bit x and
   vpdpwssd: matvec_avx512_q4.c for 4-bit rows, matvec_avx512_q8.c for 8-bit ones). One copy,
   so the tile kernels cannot drift apart in the parts that must agree. x86-64 only; not part
   of the public interface. */
#ifndef PHIKIT_MATVEC_AVX512_TILE_H
#define PHIKIT_MATVEC_AVX512_TILE_H
#if defined(__x86_64__)
#include <immintrin.h>

#include "matvec_internal.h"

/* The extensions the helpers below use: a subset of every caller's target, so they inline
   into each kernel and compile for its level. */
#define PK_MV_AVX512_INLINE \
    static inline __attribute__((always_inline, target("avx512f,avx512bw,avx512vl,f16c")))

/* Up to 16 scales (or biases) from element i of a buffer of dtype dt, widened to float32;
   lanes outside k are 0. */
PK_MV_AVX512_INLINE __m512 pk_mv_load16(const void *base, int dt, long i, __mmask16 k) {
    if (dt == PK_AQ_F32) return _mm512_maskz_loadu_ps(k, (const float *)base + i);
    __m256i h = _mm256_maskz_loadu_epi16(k, (const uint16_t *)base + i);
    if (dt == PK_AQ_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* The extensions of the tile kernels (the AVX-512 level, matvec.c's detect_isa). */
#define PK_MV_TILE_TARGET "avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni,avx2,fma,f16c"
#define PK_MV_TILE_FN __attribute__((target(PK_MV_TILE_TARGET)))
#define PK_MV_TILE_INLINE static inline __attribute__((always_inline, target(PK_MV_TILE_TARGET)))

/* acc += a·b in int32 pairs (512- or 256-bit). Written as assembly because clang rewrites
   chains of _mm512_dpwssd_epi32 into vpmaddwd + vpaddd, twice the instructions and registers
   (the 4-bit tile ran at 45 GMAC/s that way, 70 with the single instruction). */
#define PK_MV_DPWSSD(acc, a, b) __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))

/* Prefetches line p of the tile after next (the tile kernels' rows lie back to back, so that
   is p's row's bytes 2 R row_bytes further on): a tile reads R rows side by side, which the
   hardware prefetchers do not follow. Rows of 1 KB and more into L2: one thread streaming
   4-bit Phi-3.5 layers from memory: no prefetch 9 GB/s, the next tile into L1 15-16, the next
   into L2 17, the one after into L2 20-21 (three or more ahead: no better). Narrower rows into
   L1, the tile after next being then only a few KB ahead: SmolLM2's tied 8-bit head (49,152
   rows of 576 bytes), one thread, decode 1.0 ms into L1, 2.4-3.0 into L2 whether 2 or 6
   tiles ahead (the general kernel 1.8); its 4-bit layers 5.5 ms vs 6.3 (scripts/bench/
   verify_kernel_bench.c, load average 4-6). */
PK_MV_AVX512_INLINE void pk_mv_tile_prefetch(const uint8_t *p, long row_bytes) {
    if (row_bytes < 1024) _mm_prefetch((const char *)p, _MM_HINT_T0);
    else _mm_prefetch((const char *)p, _MM_HINT_T1);
}

/* Rows and tokens of one tile: R*T int32 and R*T float accumulators stay in registers
   (measured with the 16-bit kernel on Zen 4, 64 tokens over one layer's matrices, one
   thread: 3x4 70 GMAC/s, 4x3 68, 2x5 64, 3x3 64, 2x6 62, 4x4 60 (spills), 2x8 58). */
#define PK_MV_TILE_ROWS 3
#define PK_MV_TILE_TOKENS 4
_Static_assert(PK_MV_TILE_TOKENS == 4, "PK_MV_TOKEN_TILES has a case for each tile width");

/* The part of a tile's 16 groups from g0 (lanes in kn) that does not depend on q, for rows
   r .. r+R-1 and tokens xv[0..T-1]: each row's scales widened into sv[i], and added to
   acc[i][t] bias * sum of x, then the rounding of x put back at the middle q value 2^(bits-1)
   (pk_matvec.h, matvec_internal.h). A macro because the kernels' token views are different
   types that all have xsum and xres. */
#define PK_MV_TILE_GROUP_TERMS(m, r, R, T, groups, g0, kn, xv, sv, acc)                        \
    do {                                                                                      \
        const __m512 middle_ = _mm512_set1_ps((float)(1 << ((m)->bits - 1)));                 \
        const int dt_ = (m)->scale_dtype;                                                     \
        for (int i_ = 0; i_ < (R); i_++) {                                                    \
            const long at_ = ((r) + i_) * (groups) + (g0);                                    \
            (sv)[i_] = pk_mv_load16((m)->scales, dt_, at_, (kn));                                  \
            const __m512 bv_ = pk_mv_load16((m)->biases, dt_, at_, (kn));                        \
            const __m512 svm_ = _mm512_mul_ps((sv)[i_], middle_);                             \
            for (int t_ = 0; t_ < (T); t_++) {                                                \
                (acc)[i_][t_] = _mm512_fmadd_ps(                                              \
                    bv_, _mm512_maskz_loadu_ps((kn), (xv)[t_].xsum + (g0)), (acc)[i_][t_]);   \
                (acc)[i_][t_] = _mm512_fmadd_ps(                                              \
                    svm_, _mm512_maskz_loadu_ps((kn), (xv)[t_].xres + (g0)), (acc)[i_][t_]);  \
            }                                                                                 \
        }                                                                                     \
    } while (0)

/* A quad's integer dots (dot[i][t], lanes of 64-value segments) added to acc[i][t] in float,
   times the row's scale (sv[i] permuted by gidx, each lane's group) and the token's x scale
   of each lane (xv[t].xexp, 16 floats a quad). For groups of 64 and more: groups of 32 are
   scaled half by half. */
#define PK_MV_TILE_SCALE_QUAD(R, T, gidx, sv, xv, c, dot, acc)                                 \
    do {                                                                                      \
        for (int i_ = 0; i_ < (R); i_++) {                                                    \
            const __m512 sexp_ = _mm512_permutexvar_ps((gidx), (sv)[i_]);                     \
            for (int t_ = 0; t_ < (T); t_++) {                                                \
                const __m512 comb_ =                                                          \
                    _mm512_mul_ps(sexp_, _mm512_loadu_ps((xv)[t_].xexp + (c) / 16));          \
                (acc)[i_][t_] =                                                               \
                    _mm512_fmadd_ps(_mm512_cvtepi32_ps((dot)[i_][t_]), comb_, (acc)[i_][t_]); \
            }                                                                                 \
        }                                                                                     \
    } while (0)

/* The 256-bit int32 dots of a row's last segment (dot[i][t], lanes 0-3 and 4-7 each of one
   group, gidx their block-relative groups in lanes 0-7) added to the low 8 lanes of acc[i][t]
   in float, times the row's scale and the token's x scale of each lane's group (the 4-bit
   tile's q4_segment, the 8-bit tile's q8_half_block). */
#define PK_MV_TILE_SCALE_LOW8(R, T, gidx, kn, g0, sv, xv, dot, acc)                            \
    do {                                                                                      \
        for (int i_ = 0; i_ < (R); i_++) {                                                    \
            const __m256 sexp_ = _mm512_castps512_ps256(_mm512_permutexvar_ps((gidx), (sv)[i_])); \
            for (int t_ = 0; t_ < (T); t_++) {                                                \
                const __m256 xexp_ = _mm512_castps512_ps256(_mm512_permutexvar_ps(            \
                    (gidx), _mm512_maskz_loadu_ps((kn), (xv)[t_].xscale + (g0))));            \
                const __m256 low_ = _mm256_fmadd_ps(_mm256_cvtepi32_ps((dot)[i_][t_]),        \
                                                    _mm256_mul_ps(sexp_, xexp_),              \
                                                    _mm512_castps512_ps256((acc)[i_][t_]));   \
                (acc)[i_][t_] = _mm512_mask_mov_ps((acc)[i_][t_], 0x00FF,                     \
                                                   _mm512_castps256_ps512(low_));             \
            }                                                                                 \
        }                                                                                     \
    } while (0)

/* Rows r0 .. r1-1 in tiles of PK_MV_TILE_ROWS (then a last 2 or 1), tokens in tiles of
   PK_MV_TILE_TOKENS, each done by TILE(m, r, R, T, G, xv + t0, y, ldy) with R, T and G
   constants so that its loops unroll. Expects m, tokens, xv, y, ldy, r0 and r1 in scope. A
   tile's rows stay in L1 while the next tokens go over them; every tile prefetches the next
   one, so tiles go in order. */
#define PK_MV_TOKEN_TILES(TILE, R, G)                                                         \
    for (int t0 = 0; t0 < tokens; t0 += PK_MV_TILE_TOKENS) {                                  \
        float *yt = y + t0 * ldy + (r - r0);                                                  \
        switch (tokens - t0 < PK_MV_TILE_TOKENS ? tokens - t0 : PK_MV_TILE_TOKENS) {          \
            case 1: TILE(m, r, R, 1, G, xv + t0, yt, ldy); break;                             \
            case 2: TILE(m, r, R, 2, G, xv + t0, yt, ldy); break;                             \
            case 3: TILE(m, r, R, 3, G, xv + t0, yt, ldy); break;                             \
            default: TILE(m, r, R, 4, G, xv + t0, yt, ldy); break;                            \
        }                                                                                     \
    }

#define PK_MV_ROW_TILES(TILE, G)                                                              \
    do {                                                                                      \
        long r = r0;                                                                          \
        for (; r + PK_MV_TILE_ROWS <= r1; r += PK_MV_TILE_ROWS)                               \
            PK_MV_TOKEN_TILES(TILE, PK_MV_TILE_ROWS, G)                                       \
        if (r1 - r == 2) PK_MV_TOKEN_TILES(TILE, 2, G)                                        \
        else if (r1 - r == 1) PK_MV_TOKEN_TILES(TILE, 1, G)                                   \
    } while (0)

#endif
#endif
