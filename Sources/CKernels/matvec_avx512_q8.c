/* AVX-512 tile kernel for 8-bit affine rows of whole 64-value segments (the tied 8-bit LM head
   of SmolLM2, 49,152 x 576, as scripts/smollm2 converts it; MLX 8-bit checkpoints): several
   rows times several tokens per pass, as the 4-bit tile (matvec_avx512_q4.c), so that a
   speculative verify block of k tokens unpacks each weight once for all of them, where the
   general kernel (matvec_avx512.c's affine_row) took one row at a time and converted and
   scaled every 32-value group of every (row, token) on its own.

   Layout. The row is cut into blocks of 128 values (128 bytes, 4 parts of 32 values, one part
   inside one group for every group size). Word vector k (k = 0..3) of a block holds in word
   w (0..31) value 32(w/8) + 8k + w%8, zero-extended from its byte by one two-source byte
   permutation (vpermt2b, odd bytes zeroed), so dword lane l of vpdpwssd only ever sums
   values of part l/4: the four products of a block leave each part's integer dot in lanes
   4j..4j+3, converted and scaled once per block (the row's scale and the token's x scale of
   each lane's group, spread by a permutation). x16 is stored to match (prepare below): per
   block, for k, for w: x[32(w/8) + 8k + w%8]. A last 64 values (rows of 64(2j + 1), such as
   576) are half a block, words 0..15 of each vector, multiplied in 256-bit vpdpwssd. Bias
   and rounding terms are as in the general kernel (pk_matvec.h, matvec_internal.h), with the
   middle q value 128. */
#include "matvec_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "matvec_avx512_tile_block.h"

/* x16 into the order above, in the x16q slot (the natural x16 stays for the other levels). */
void pk_mv_prepare_q8(const pk_matrix *m, float *prep) {
    const long cols = m->cols;
    const int16_t *x16 = pk_mv_x16(prep);
    int16_t *out = pk_mv_x16q(prep, cols);
    for (long c = 0; c < cols; c += 128) {
        const int words = cols - c >= 128 ? 32 : 16;
        for (int k = 0; k < 4; k++)
            for (int w = 0; w < words; w++) *out++ = x16[c + 32 * (w / 8) + 8 * k + w % 8];
    }
}

/* The vpermt2b index of word vector k: word w's low byte from byte 32(w/8) + 8k + w%8 of the
   block's 128 (bit 6 picks the second source). */
PK_MV_TILE_INLINE __m512i q8_index(const int k) {
    uint8_t idx[64];
    for (int b = 0; b < 64; b++) idx[b] = (uint8_t)(32 * (b / 16) + 8 * k + (b / 2) % 8);
    return _mm512_loadu_si512(idx);
}

#define Q8_WORD_BYTES 0x5555555555555555ull  /* the low byte of every word */

typedef struct {
    const int16_t *x16;
    const float *xsum, *xres, *xscale;
} q8_view;

/* The last 64 values of rows r .. r+R-1 (w: their start) at value c, in the 16-group block
   from g0 (kn, sv: PK_MV_TILE_BLOCK's): words 0..15 of the block layout from one 64-byte load
   and a one-source permutation, in 256-bit vpdpwssd; lanes 0-3 hold part 0, 4-7 part 1. The
   products go into the low 8 lanes of acc[i][t]. */
PK_MV_TILE_INLINE void q8_half_block(const uint8_t *w, long row_bytes, long c, long g0, const int R,
                             const int T, const int G, const q8_view *xv, __mmask16 kn,
                             const __m512 *sv, const __m512i *idx,
                             __m512 acc[][PK_MV_TILE_TOKENS]) {
    const int part = (int)(c - g0 * G) / 32, shift = G == 32 ? 0 : G == 64 ? 1 : 2;
    const int ga = part >> shift, gb = (part + 1) >> shift;
    const __m512i gidx = _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, gb, gb, gb, gb, ga, ga, ga, ga);
    __m256i dot[PK_MV_TILE_ROWS][PK_MV_TILE_TOKENS];
    for (int i = 0; i < R; i++)
        for (int t = 0; t < T; t++) dot[i][t] = _mm256_setzero_si256();
    for (int k = 0; k < 4; k++) {
        __m256i wv[PK_MV_TILE_ROWS];
        for (int i = 0; i < R; i++)
            wv[i] = _mm512_castsi512_si256(_mm512_maskz_permutexvar_epi8(
                Q8_WORD_BYTES, idx[k], _mm512_loadu_si512(w + i * row_bytes + c)));
        for (int t = 0; t < T; t++) {
            const __m256i xk = _mm256_loadu_si256((const __m256i *)(xv[t].x16 + c + 16 * k));
            for (int i = 0; i < R; i++) PK_MV_DPWSSD(dot[i][t], wv[i], xk);
        }
    }
    PK_MV_TILE_SCALE_LOW8(R, T, gidx, kn, g0, sv, xv, dot, acc);
}

/* Rows r .. r+R-1 against tokens xv[0..T-1], G the group size (32, 64 or 128): the row sums go
   to y[t*ldy + (row - r)]. R and T are constants at every call, so loops unroll. */
PK_MV_TILE_INLINE void q8_tile(const pk_matrix *m, long r, const int R, const int T, const int G,
                       const q8_view *xv, float *y, long ldy) {
    const long cols = m->cols, groups = cols / G, row_bytes = cols;
    const uint8_t *w = (const uint8_t *)m->w + r * row_bytes;
    const __m512i lane_part = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    const __m512i idx[4] = {q8_index(0), q8_index(1), q8_index(2), q8_index(3)};
    PK_MV_TILE_ZEROED(__m512, acc, R, T, _mm512_setzero_ps());
    for (long g0 = 0; g0 < groups; g0 += 16) {
        PK_MV_TILE_BLOCK(m, r, R, T, groups, g0, xv, n, kn, sv, acc);
        long c = g0 * G;
        for (; c + 128 <= (g0 + n) * G; c += 128) {
            /* block-relative group of each lane's part */
            const __m512i gidx = _mm512_srli_epi32(
                _mm512_add_epi32(_mm512_set1_epi32((int)(c - g0 * G) / 32), lane_part),
                G == 32 ? 0 : G == 64 ? 1 : 2);
            PK_MV_TILE_ZEROED(__m512i, dot, R, T, _mm512_setzero_si512());
            for (int i = 0; i < R; i++)  /* the tile after next, as the 4-bit tile does */
                for (int h = 0; h < 2; h++)
                    pk_mv_tile_prefetch(w + R * (2 * row_bytes + c) + 64 * (2 * i + h), row_bytes);
            for (int k = 0; k < 4; k++) {
                __m512i wv[PK_MV_TILE_ROWS];
                for (int i = 0; i < R; i++) {
                    const uint8_t *p = w + i * row_bytes + c;
                    wv[i] = _mm512_maskz_permutex2var_epi8(Q8_WORD_BYTES, _mm512_loadu_si512(p),
                                                           idx[k], _mm512_loadu_si512(p + 64));
                }
                for (int t = 0; t < T; t++) {
                    const __m512i xk = _mm512_loadu_si512(xv[t].x16 + c + 32 * k);
                    for (int i = 0; i < R; i++) PK_MV_DPWSSD(dot[i][t], wv[i], xk);
                }
            }
            for (int i = 0; i < R; i++) {
                const __m512 sexp = _mm512_permutexvar_ps(gidx, sv[i]);
                for (int t = 0; t < T; t++) {
                    const __m512 xexp =
                        _mm512_permutexvar_ps(gidx, _mm512_maskz_loadu_ps(kn, xv[t].xscale + g0));
                    acc[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[i][t]),
                                                _mm512_mul_ps(sexp, xexp), acc[i][t]);
                }
            }
        }
        if (c < (g0 + n) * G) q8_half_block(w, row_bytes, c, g0, R, T, G, xv, kn, sv, idx, acc);
    }
    for (int i = 0; i < R; i++)
        for (int t = 0; t < T; t++) y[t * ldy + i] = _mm512_reduce_add_ps(acc[i][t]);
}

PK_MV_TILE_FN void pk_mv_matvec_q8_avx512(const pk_matrix *m, int tokens, const float *prep,
                                  long prep_stride, float *y, long ldy, long r0, long r1) {
    q8_view xv[PK_MV_TOKENS];
    for (int t = 0; t < tokens; t++) {
        const float *p = prep + t * prep_stride;
        xv[t] = (q8_view){pk_mv_x16q(p, m->cols), pk_mv_xsum(p, m->cols), pk_mv_xres(p, m->cols),
                          pk_mv_xscale(p, m->cols)};
    }
    if (m->group == 32) PK_MV_ROW_TILES(q8_tile, 32);
    else if (m->group == 64) PK_MV_ROW_TILES(q8_tile, 64);
    else PK_MV_ROW_TILES(q8_tile, 128);
}

#endif
