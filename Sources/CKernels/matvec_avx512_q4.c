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

#define Q4_TARGET "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c"
#define Q4_FN __attribute__((target(Q4_TARGET)))
#define Q4_INLINE static inline __attribute__((always_inline, target(Q4_TARGET)))

/* From the natural-order x16 and xscale (pk_mv_prepare_x16) to x16q and xexp. */
void pk_mv_prepare_q4(const pk_matrix *m, float *prep) {
    const long cols = m->cols;
    const int16_t *x16 = pk_mv_x16(prep);
    int16_t *out = pk_mv_x16q(prep, cols);
    const float *xscale = pk_mv_xscale(prep, cols);
    float *xexp = pk_mv_xexp(prep, cols);
    for (long c = 0; c < cols; c += 256) {
        const int16_t *in = x16 + c;
        for (int h = 0; h < 2; h++)
            for (int k = 0; k < 4; k++)
                for (int s = 0; s < 4; s++)
                    for (int i = 0; i < 8; i++) *out++ = in[64 * s + 32 * h + 4 * i + k];
        for (int lane = 0; lane < 16; lane++)
            xexp[c / 16 + lane] = xscale[(c + 64 * (lane / 4)) / m->group];
    }
}

/* The word vector k of Y (values 4i + k of each segment chunk). */
Q4_INLINE __m512i q4_words(__m512i y, const int k) {
    const __m512i low = _mm512_set1_epi16(0x000F);
    if (k == 0) return _mm512_and_si512(y, low);
    if (k == 3) return _mm512_srli_epi16(y, 12);
    return _mm512_and_si512(_mm512_srli_epi16(y, 4 * k), low);
}

/* acc += a·b in int32 pairs. Written as assembly because clang rewrites chains of
   _mm512_dpwssd_epi32 into vpmaddwd + vpaddd, twice the instructions and registers (the
   tile ran at 45 GMAC/s that way, 70 with the single instruction). */
#define DPWSSD(acc, a, b) __asm__("vpdpwssd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b))

typedef struct {
    const int16_t *x16;
    const float *xsum, *xres, *xexp, *xscale;
} q4_view;

/* Rows r .. r+R-1 against tokens xv[0..T-1], G the group size (32, 64 or 128): the row sums go
   to y[t*ldy + (row - r)]. R and T are constants at every call, so loops unroll. */
Q4_INLINE void q4_tile(const pk_matrix *m, long r, const int R, const int T, const int G,
                       const q4_view *xv, float *y, long ldy) {
    const long cols = m->cols, groups = cols / G, row_bytes = cols / 2;
    const uint8_t *w = (const uint8_t *)m->w + r * row_bytes;
    /* lane l of a quad belongs to segment l/4: 64-value offset of each lane */
    const __m512i lane_seg = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    PK_MV_TILE_ZEROED(__m512, acc, R, T, _mm512_setzero_ps());
    for (long g0 = 0; g0 < groups; g0 += 16) {
        PK_MV_TILE_BLOCK(m, r, R, T, groups, g0, xv, n, kn, sv, acc);
        for (long c = g0 * G; c < (g0 + n) * G; c += 256) {
            /* chunk-relative group of each lane's segment */
            const __m512i gidx = _mm512_srli_epi32(
                _mm512_add_epi32(_mm512_set1_epi32((int)(c - g0 * G) / 64), lane_seg),
                G == 128 ? 1 : 0);
            PK_MV_TILE_ZEROED(__m512i, dot, R, T, _mm512_setzero_si512());
            for (int h = 0; h < 2; h++) {
                __m512i yv[PK_MV_TILE_ROWS];
                for (int i = 0; i < R; i++) {
                    const uint8_t *p = w + i * row_bytes + c / 2;
                    /* the tile after next's rows, R*128 bytes per quad of this one, into L2:
                       a tile reads R rows side by side, which the hardware prefetchers do not
                       follow. One thread streaming 4-bit Phi-3.5 layers from memory: no
                       prefetch 9 GB/s, the next tile into L1 15-16, the next into L2 17, the
                       one after into L2 20-21 (three or more ahead: no better). */
                    _mm_prefetch((const char *)w + R * (2 * row_bytes + c / 2) + 64 * (2 * i + h),
                                 _MM_HINT_T1);
                    const __m512i a = _mm512_loadu_si512(p), b = _mm512_loadu_si512(p + 64);
                    yv[i] = h ? _mm512_shuffle_i64x2(a, b, 0xDD) : _mm512_shuffle_i64x2(a, b, 0x88);
                }
                for (int k = 0; k < 4; k++) {
                    __m512i wv[PK_MV_TILE_ROWS];
                    for (int i = 0; i < R; i++) wv[i] = q4_words(yv[i], k);
                    for (int t = 0; t < T; t++) {
                        const __m512i xk = _mm512_loadu_si512(xv[t].x16 + c + 32 * (4 * h + k));
                        for (int i = 0; i < R; i++)
                            DPWSSD(dot[i][t], wv[i], xk);
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
    }
    for (int i = 0; i < R; i++)
        for (int t = 0; t < T; t++) y[t * ldy + i] = _mm512_reduce_add_ps(acc[i][t]);
}

Q4_FN void pk_mv_matvec_q4_avx512(const pk_matrix *m, int tokens, const float *prep,
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
