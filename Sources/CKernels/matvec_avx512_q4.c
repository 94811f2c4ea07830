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

#define Q4_TARGET "avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c"
#define Q4_FN __attribute__((target(Q4_TARGET)))
#define Q4_INLINE static inline __attribute__((always_inline, target(Q4_TARGET)))

/* Rows and tokens of one tile: R*T int32 and R*T float accumulators stay in registers
   (measured on Zen 4, 64 tokens over one layer's matrices, one thread: 3x4 70 GMAC/s,
   4x3 68, 2x5 64, 3x3 64, 2x6 62, 4x4 60 (spills), 2x8 58). */
#define Q4_ROWS 3
#define Q4_TOKENS 4

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

/* Up to 16 scales (or biases) of a row from group g, widened; lanes past n are 0. */
Q4_INLINE __m512 q4_load16(const void *base, int dt, long i, __mmask16 k) {
    if (dt == PK_AQ_F32) return _mm512_maskz_loadu_ps(k, (const float *)base + i);
    __m256i h = _mm256_maskz_loadu_epi16(k, (const uint16_t *)base + i);
    if (dt == PK_AQ_F16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
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
    const int dt = m->scale_dtype;
    const uint8_t *w = (const uint8_t *)m->w + r * row_bytes;
    const __m512 middle = _mm512_set1_ps(8.0f);
    /* lane l of a quad belongs to segment l/4: 64-value offset of each lane */
    const __m512i lane_seg = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    __m512 acc[Q4_ROWS][Q4_TOKENS];
    for (int i = 0; i < R; i++)
        for (int t = 0; t < T; t++) acc[i][t] = _mm512_setzero_ps();
    for (long g0 = 0; g0 < groups; g0 += 16) {
        const long n = groups - g0 < 16 ? groups - g0 : 16;
        const __mmask16 kn = (__mmask16)((1u << n) - 1);
        __m512 sv[Q4_ROWS];
        for (int i = 0; i < R; i++) {
            const long at = (r + i) * groups + g0;
            sv[i] = q4_load16(m->scales, dt, at, kn);
            const __m512 bv = q4_load16(m->biases, dt, at, kn);
            const __m512 svm = _mm512_mul_ps(sv[i], middle);
            for (int t = 0; t < T; t++) {
                /* bias * sum of x, and the rounding of x put back at the middle q value */
                acc[i][t] = _mm512_fmadd_ps(bv, _mm512_maskz_loadu_ps(kn, xv[t].xsum + g0),
                                            acc[i][t]);
                acc[i][t] = _mm512_fmadd_ps(svm, _mm512_maskz_loadu_ps(kn, xv[t].xres + g0),
                                            acc[i][t]);
            }
        }
        for (long c = g0 * G; c < (g0 + n) * G; c += 256) {
            /* chunk-relative group of each lane's segment */
            const __m512i gidx = _mm512_srli_epi32(
                _mm512_add_epi32(_mm512_set1_epi32((int)(c - g0 * G) / 64), lane_seg),
                G == 128 ? 1 : 0);
            __m512i dot[Q4_ROWS][Q4_TOKENS];
            for (int i = 0; i < R; i++)
                for (int t = 0; t < T; t++) dot[i][t] = _mm512_setzero_si512();
            for (int h = 0; h < 2; h++) {
                __m512i yv[Q4_ROWS];
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
                    __m512i wv[Q4_ROWS];
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
            for (int i = 0; i < R; i++) {
                const __m512 sexp = _mm512_permutexvar_ps(gidx, sv[i]);
                for (int t = 0; t < T; t++) {
                    const __m512 comb = _mm512_mul_ps(sexp, _mm512_loadu_ps(xv[t].xexp + c / 16));
                    acc[i][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[i][t]), comb, acc[i][t]);
                }
            }
        }
    }
    for (int i = 0; i < R; i++)
        for (int t = 0; t < T; t++) y[t * ldy + i] = _mm512_reduce_add_ps(acc[i][t]);
}

/* Rows in tiles of Q4_ROWS (then one at a time), tokens in tiles of Q4_TOKENS; a tile's
   rows stay in L1 while the next tokens go over them. Every tile prefetches the next one
   (see q4_tile), so tiles go in order. */
#define Q4_TOKEN_TILES(R, G)                                                                  \
    for (int t0 = 0; t0 < tokens; t0 += Q4_TOKENS) {                                          \
        float *yt = y + t0 * ldy + (r - r0);                                                  \
        switch (tokens - t0 < Q4_TOKENS ? tokens - t0 : Q4_TOKENS) {                          \
            case 1: q4_tile(m, r, R, 1, G, xv + t0, yt, ldy); break;                          \
            case 2: q4_tile(m, r, R, 2, G, xv + t0, yt, ldy); break;                          \
            case 3: q4_tile(m, r, R, 3, G, xv + t0, yt, ldy); break;                          \
            case 4: q4_tile(m, r, R, 4, G, xv + t0, yt, ldy); break;                          \
            default: q4_tile(m, r, R, 4, G, xv + t0, yt, ldy); break;                         \
        }                                                                                     \
    }

#define Q4_ROW_TILES(G)                                                                       \
    do {                                                                                      \
        long r = r0;                                                                          \
        for (; r + Q4_ROWS <= r1; r += Q4_ROWS) Q4_TOKEN_TILES(Q4_ROWS, G)                    \
        if (r1 - r == 2) Q4_TOKEN_TILES(2, G)                                                 \
        else if (r1 - r == 1) Q4_TOKEN_TILES(1, G)                                            \
    } while (0)

Q4_FN void pk_mv_matvec_q4_avx512(const pk_matrix *m, int tokens, const float *prep,
                                  long prep_stride, float *y, long ldy, long r0, long r1) {
    q4_view xv[PK_MV_TOKENS];
    for (int t = 0; t < tokens; t++) {
        const float *p = prep + t * prep_stride;
        xv[t] = (q4_view){pk_mv_x16q(p, m->cols), pk_mv_xsum(p, m->cols), pk_mv_xres(p, m->cols),
                          pk_mv_xexp(p, m->cols), pk_mv_xscale(p, m->cols)};
    }
    if (m->group == 32) Q4_ROW_TILES(32);
    else if (m->group == 64) Q4_ROW_TILES(64);
    else Q4_ROW_TILES(128);
}

#endif
