/* AVX-512 kernel for the common case of 4-bit rows with groups of 32, 64 or 128 (every MLX
   Phi checkpoint, and every GGUF Q4_0 brought over exactly): several rows times several tokens per pass, so one load of x serves every row
   of the tile and one unpacked weight vector serves every token, and the integer dot sums of
   four 64-value segments share one conversion to float and one multiply-add.

   Layout. The row is cut into quads of 256 values (128 bytes, 4 segments A-D of 64 values).
   A quad's bytes are [A.0 A.1 B.0 B.1 | C.0 C.1 D.0 D.1] in 16-byte chunks (chunk s.h holds
   values 32h..32h+31 of segment s); a 128-bit lane shuffle gives Y_h = [A.h B.h C.h D.h].
   Read as 16-bit words, word j = 8s + i of Y_h packs four values of segment s, 32h + 4i + k
   at bits 4k (k = 0..3): shifting and masking yields four word vectors with no byte
   shuffles, and vpdpwssd sums word pairs into dword lanes 4s..4s+3, so each lane only ever
   holds values of one segment, hence of one group. x16 is stored to match (prepare below):
   per quad, for h, for k, for s, for i: x[64s + 32h + 4i + k]. After the quad's eight
   products the int32 lanes are converted once and scaled by scale*xscale of their segment's
   group (one vector per quad and token: `xexp`, the token's xscale spread over lanes, times
   the row's scales spread the same way). Bias and rounding terms are as in the general
   kernel (pk_matvec.h, matvec_internal.h).

   Groups of 32: chunk s.h is then a whole group, (s, h), so the products of each half h are
   converted and scaled on their own, right after its four words: lane l's group is
   2*(l/4) + h within the quad, and its factor scale*xscale is spread from the 16-group chunk
   by a permutation (the same two floats multiplied as for the larger groups). */
#include "matvec_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "matvec_avx512_tile_block.h"

/* From the natural-order x16 and xscale (pk_mv_prepare_x16) to x16q and xexp. */
void pk_mv_prepare_q4(const pk_matrix *m, float *prep) {
    const long cols = m->cols;
    const int16_t *x16 = pk_mv_x16(prep);
    int16_t *out = pk_mv_x16q(prep, cols);
    const float *xscale = pk_mv_xscale(prep, cols);
    float *xexp = pk_mv_xexp(prep, cols);
    long c = 0;
    for (; c + 256 <= cols; c += 256) {
        const int16_t *in = x16 + c;
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < 4; k++)
                for (int s = 0; s < 4; s++)
                    for (int i = 0; i < 8; i++) *out++ = in[64 * s + 32 * h + 4 * i + k];
        for (int lane = 0; lane < 16; lane++)
            xexp[c / 16 + lane] = xscale[(c + 64 * (lane / 4)) / m->group];
    }
    for (; c < cols; c += 64)  /* the segments after the last quad (q4_segment) */
        for (int k = 0; k < 4; k++)
            for (int h = 0; h < 2; h++)
                for (int i = 0; i < 8; i++) *out++ = x16[c + 32 * h + 4 * i + k];
}

/* The word vector k of Y (values 4i + k of each segment chunk). */
PK_MV_TILE_INLINE __m512i q4_words(__m512i y, const int k) {
    const __m512i low = _mm512_set1_epi16(0x000F);
    if (k == 0) return _mm512_and_si512(y, low);
    if (k == 3) return _mm512_srli_epi16(y, 12);
    return _mm512_and_si512(_mm512_srli_epi16(y, 4 * k), low);
}

/* The same for the 16 words of one 64-value segment (q4_segment). */
PK_MV_TILE_INLINE __m256i q4_words256(__m256i y, const int k) {
    const __m256i low = _mm256_set1_epi16(0x000F);
    if (k == 0) return _mm256_and_si256(y, low);
    if (k == 3) return _mm256_srli_epi16(y, 12);
    return _mm256_and_si256(_mm256_srli_epi16(y, 4 * k), low);
}

typedef struct {
    const int16_t *x16;
    const float *xsum, *xres, *xexp, *xscale;
} q4_view;

/* One 64-value segment after a row's last whole quad (rows of 64·(4j + 1..3) values, such as
   SmolLM2's 576), for rows r .. r+R-1 and tokens xv[0..T-1], at value c of the rows, in the
   16-group block from g0 (kn, sv: PK_MV_TILE_BLOCK's). A quad's layout would leave three of
   its four segments empty and cost a whole quad; here the segment's 32 bytes are one 256-bit
   Y = [chunk 0 | chunk 1] (word 8h + i holds values 32h + 4i + k at bits 4k), whose four word
   vectors meet x16q's 16 words k of the segment (prepare above) in 256-bit vpdpwssd, half
   the width and a quarter of the instructions of a quad. Dword lanes 0-3 hold half 0, 4-7
   half 1: groups of 32 scale them apart. The products go into the low 8 lanes of acc[i][t]
   by one 256-bit multiply-add, whatever else is in the call. */
PK_MV_TILE_INLINE void q4_segment(const uint8_t *w, long row_bytes, long c, long g0, const int R,
                          const int T, const int G, const q4_view *xv, __mmask16 kn,
                          const __m512 *sv, __m512 acc[][PK_MV_TILE_TOKENS]) {
    const int first = (int)(c - g0 * G) / G;  /* block-relative group of the segment */
    const __m512i gidx = G == 32 ? _mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, first + 1, first + 1,
                                                    first + 1, first + 1, first, first, first, first)
                                 : _mm512_set1_epi32(first);
    __m256i dot[PK_MV_TILE_ROWS][PK_MV_TILE_TOKENS], yv[PK_MV_TILE_ROWS];
    for (int i = 0; i < R; i++) {
        yv[i] = _mm256_loadu_si256((const __m256i *)(w + i * row_bytes + c / 2));
        for (int t = 0; t < T; t++) dot[i][t] = _mm256_setzero_si256();
    }
    for (int k = 0; k < 4; k++) {
        __m256i wv[PK_MV_TILE_ROWS];
        for (int i = 0; i < R; i++) wv[i] = q4_words256(yv[i], k);
        for (int t = 0; t < T; t++) {
            const __m256i xk = _mm256_loadu_si256((const __m256i *)(xv[t].x16 + c + 16 * k));
            for (int i = 0; i < R; i++) PK_MV_DPWSSD(dot[i][t], wv[i], xk);
        }
    }
    PK_MV_TILE_SCALE_LOW8(R, T, gidx, kn, g0, sv, xv, dot, acc);
}

/* Rows r .. r+R-1 against tokens xv[0..T-1], G the group size (32, 64 or 128): the row sums go
   to y[t*ldy + (row - r)]. R and T are constants at every call, so loops unroll. */
PK_MV_TILE_INLINE void q4_tile(const pk_matrix *m, long r, const int R, const int T, const int G,
                       const q4_view *xv, float *y, long ldy) {
    const long cols = m->cols, groups = cols / G, row_bytes = cols / 2;
    const uint8_t *w = (const uint8_t *)m->w + r * row_bytes;
    /* lane l of a quad belongs to segment l/4: 64-value offset of each lane */
    const __m512i lane_seg = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    PK_MV_TILE_ZEROED(__m512, acc, R, T, _mm512_setzero_ps());
    for (long g0 = 0; g0 < groups; g0 += 16) {
        PK_MV_TILE_BLOCK(m, r, R, T, groups, g0, xv, n, kn, sv, acc);
        long c = g0 * G;
        for (; c + 256 <= (g0 + n) * G; c += 256) {
            /* chunk-relative group of each lane's segment */
            const __m512i gidx = _mm512_srli_epi32(
                _mm512_add_epi32(_mm512_set1_epi32((int)(c - g0 * G) / 64), lane_seg),
                G == 128 ? 1 : 0);
            PK_MV_TILE_ZEROED(__m512i, dot, R, T, _mm512_setzero_si512());
            for (int h = 0; h < 2; h++) {
                __m512i yv[PK_MV_TILE_ROWS];
                for (int i = 0; i < R; i++) {
                    const uint8_t *p = w + i * row_bytes + c / 2;
                    /* the tile after next's rows, R*128 bytes per quad of this one */
                    pk_mv_tile_prefetch(w + R * (2 * row_bytes + c / 2) + 64 * (2 * i + h),
                                        row_bytes);
                    const __m512i a = _mm512_loadu_si512(p), b = _mm512_loadu_si512(p + 64);
                    yv[i] = h ? _mm512_shuffle_i64x2(a, b, 0xDD) : _mm512_shuffle_i64x2(a, b, 0x88);
                }
                for (int k = 0; k < 4; k++) {
                    __m512i wv[PK_MV_TILE_ROWS];
                    for (int i = 0; i < R; i++) wv[i] = q4_words(yv[i], k);
                    for (int t = 0; t < T; t++) {
                        const __m512i xk = _mm512_loadu_si512(xv[t].x16 + c + 32 * (4 * h + k));
                        for (int i = 0; i < R; i++)
                            PK_MV_DPWSSD(dot[i][t], wv[i], xk);
                    }
                }
                if (G == 32) {  /* half h holds whole groups: scale them now */
                    const __m512i gh = _mm512_add_epi32(
                        _mm512_set1_epi32((int)(c - g0 * G) / 32 + h), _mm512_slli_epi32(lane_seg, 1));
                    for (int i = 0; i < R; i++) {
                        const __m512 sexp = _mm512_permutexvar_ps(gh, sv[i]);
                        for (int t = 0; t < T; t++) {
                            const __m512 xexp = _mm512_permutexvar_ps(
                                gh, _mm512_maskz_loadu_ps(kn, xv[t].xscale + g0));
                            acc[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[i][t]),
                                                        _mm512_mul_ps(sexp, xexp), acc[i][t]);
                            dot[i][t] = _mm512_setzero_si512();
                        }
                    }
                }
            }
            if (G == 32) continue;
            PK_MV_TILE_SCALE_QUAD(R, T, gidx, sv, xv, c, dot, acc);
        }
        for (; c < (g0 + n) * G; c += 64) q4_segment(w, row_bytes, c, g0, R, T, G, xv, kn, sv, acc);
    }
    for (int i = 0; i < R; i++)
        for (int t = 0; t < T; t++) y[t * ldy + i] = _mm512_reduce_add_ps(acc[i][t]);
}

PK_MV_TILE_FN void pk_mv_matvec_q4_avx512(const pk_matrix *m, int tokens, const float *prep,
                                  long prep_stride, float *y, long ldy, long r0, long r1) {
    q4_view xv[PK_MV_TOKENS];
    for (int t = 0; t < tokens; t++) {
        const float *p = prep + t * prep_stride;
        xv[t] = (q4_view){pk_mv_x16q(p, m->cols), pk_mv_xsum(p, m->cols), pk_mv_xres(p, m->cols),
                          pk_mv_xexp(p, m->cols), pk_mv_xscale(p, m->cols)};
    }
    if (m->group == 32) PK_MV_ROW_TILES(q4_tile, 32);
    else if (m->group == 64) PK_MV_ROW_TILES(q4_tile, 64);
    else PK_MV_ROW_TILES(q4_tile, 128);
}

#endif
