/* Matrix-vector products on MLX micro-scaled rows (mxfp4, nvfp4, mxfp8; layout in
   include/pk_mxfp.h), as the engine reads them from the mapped file: the kinds PK_W_MXFP4 /
   PK_W_NVFP4 / PK_W_MXFP8 of pk_matvec.h, dispatched to from matvec.c.

   A group's weights are value * scale. The kernels decode a group's codes to float32 values
   (E2M1 through an 8- or 16-entry permute table, E4M3 through the F16C half-precision
   conversion: an E4M3 byte shifted into a half's bit layout is that half divided by 256),
   multiply them by the group's scale once, and FMA them with each token's x in float32. The
   scalar `_ref` accumulates value * scale * x in double and is the oracle the fast paths are
   tested against (PhiEngineTests MicroscaledMatvecTests).

   0x7F / 0xFF codes (E4M3 NaN, which mlx never writes) read as +-480 in the fast paths. */
#include "pk_mxfp_matvec.h"

#include "pk_mxfp.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---- scales and codes ----------------------------------------------------------------- */

/* Scale byte -> float32, for each mode (E8M0 for mxfp, E4M3 for nvfp4). Filled once. */
static float e8m0_table[256], e4m3_table[256];

__attribute__((constructor)) static void mx_tables_init(void) {
    for (int b = 0; b < 256; b++) {
        e8m0_table[b] = pk_mx_scale_f32(PK_MX_MXFP4, (uint8_t)b);
        e4m3_table[b] = pk_mx_scale_f32(PK_MX_NVFP4, (uint8_t)b);
    }
}

static inline int mx_mode(const pk_matrix *m) {
    return m->kind == PK_W_NVFP4 ? PK_MX_NVFP4 : m->kind == PK_W_MXFP8 ? PK_MX_MXFP8 : PK_MX_MXFP4;
}

static inline const float *mx_scale_table(const pk_matrix *m) {
    return m->kind == PK_W_NVFP4 ? e4m3_table : e8m0_table;
}

/* Code i of a packed row (4 or 8 bits, element 0 in the low bits of word 0). */
static inline uint32_t mx_code(const uint32_t *row, long i, int bits) {
    return bits == 8 ? (row[i / 4] >> (8 * (i % 4))) & 0xff : (row[i / 8] >> (4 * (i % 8))) & 15;
}

static inline float mx_value(uint32_t code, int bits) {
    return bits == 8 ? pk_mx_e4m3_to_f32((uint8_t)code) : pk_mx_e2m1[code];
}

int pk_mx_is_kind(int kind) {
    return kind == PK_W_MXFP4 || kind == PK_W_NVFP4 || kind == PK_W_MXFP8;
}

/* ---- the oracle ------------------------------------------------------------------------ */

double pk_mx_weight_ref(const pk_matrix *m, long r, long c) {
    long words = m->cols * m->bits / 32, groups = m->cols / m->group;
    const uint32_t *row = (const uint32_t *)m->w + r * words;
    uint8_t s = ((const uint8_t *)m->scales)[r * groups + c / m->group];
    return (double)mx_value(mx_code(row, c, m->bits), m->bits)
           * (double)pk_mx_scale_f32(mx_mode(m), s);
}

/* ---- portable -------------------------------------------------------------------------- */

/* Decodes group g of row r (m->group values, scaled) into w. */
static void mx_group_portable(const pk_matrix *m, const uint32_t *row, const uint8_t *sc,
                              long g, float *w) {
    float s = mx_scale_table(m)[sc[g]];
    for (int i = 0; i < m->group; i++) {
        long c = g * m->group + i;
        w[i] = mx_value(mx_code(row, c, m->bits), m->bits) * s;
    }
}

/* ---- AVX2 ------------------------------------------------------------------------------ */

#if defined(__x86_64__)
#define MX_AVX2 __attribute__((target("avx2,fma,f16c")))
#define MX_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

/* 8 E2M1 codes of one word -> 8 floats. */
MX_AVX2 static inline __m256 mx_fp4x8_avx2(uint32_t word) {
    const __m256 lut = _mm256_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f);
    const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
    __m256i idx = _mm256_srlv_epi32(_mm256_set1_epi32((int)word), shifts);
    __m256 mag = _mm256_permutevar8x32_ps(lut, idx); /* uses the low 3 bits */
    __m256i sign = _mm256_and_si256(_mm256_slli_epi32(idx, 28), _mm256_set1_epi32(INT32_MIN));
    return _mm256_xor_ps(mag, _mm256_castsi256_ps(sign));
}

/* 8 E4M3 bytes -> 8 floats / 256 (as halves: sign to bit 15, the rest shifted by 7). */
MX_AVX2 static inline __m256 mx_fp8x8_avx2(const uint8_t *p) {
    __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)p));
    __m128i h = _mm_or_si128(_mm_and_si128(_mm_slli_epi16(b, 8), _mm_set1_epi16((short)0x8000)),
                             _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x7f)), 7));
    return _mm256_cvtph_ps(h);
}

/* Group g of row r, scaled, into w (16 or 32 floats). */
MX_AVX2 static void mx_group_avx2(const pk_matrix *m, const uint32_t *row, const uint8_t *sc,
                                  long g, float *w) {
    float s = mx_scale_table(m)[sc[g]];
    if (m->bits == 8) {
        __m256 vs = _mm256_set1_ps(s * 256.0f);
        const uint8_t *p = (const uint8_t *)row + g * m->group;
        for (int i = 0; i < m->group; i += 8)
            _mm256_storeu_ps(w + i, _mm256_mul_ps(mx_fp8x8_avx2(p + i), vs));
    } else {
        __m256 vs = _mm256_set1_ps(s);
        const uint32_t *q = row + g * m->group / 8;
        for (int i = 0; i < m->group; i += 8)
            _mm256_storeu_ps(w + i, _mm256_mul_ps(mx_fp4x8_avx2(q[i / 8]), vs));
    }
}

MX_AVX2 static void mx_rows_avx2(const pk_matrix *m, int tokens, const float *x, long ldx,
                                 float *y, long ldy, long r0, long r1) {
    long words = m->cols * m->bits / 32, groups = m->cols / m->group;
    float w[32];
    for (long r = r0; r < r1; r++) {
        const uint32_t *row = (const uint32_t *)m->w + r * words;
        const uint8_t *sc = (const uint8_t *)m->scales + r * groups;
        __m256 acc[PK_MATVEC_TOKENS];
        for (int t = 0; t < tokens; t++) acc[t] = _mm256_setzero_ps();
        for (long g = 0; g < groups; g++) {
            _mm_prefetch((const char *)row + g * m->group * m->bits / 8 + 1024, _MM_HINT_T0);
            mx_group_avx2(m, row, sc, g, w);
            const float *xg = x + g * m->group;
            for (int t = 0; t < tokens; t++) {
                __m256 a = acc[t];
                for (int i = 0; i < m->group; i += 8)
                    a = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(xg + t * ldx + i), a);
                acc[t] = a;
            }
        }
        for (int t = 0; t < tokens; t++) {
            __m128 v = _mm_add_ps(_mm256_castps256_ps128(acc[t]), _mm256_extractf128_ps(acc[t], 1));
            v = _mm_add_ps(v, _mm_movehl_ps(v, v));
            v = _mm_add_ss(v, _mm_movehdup_ps(v));
            y[t * ldy + (r - r0)] = _mm_cvtss_f32(v);
        }
    }
}

/* ---- AVX-512 ----------------------------------------------------------------------------- */

/* 16 E2M1 codes of two words -> 16 floats (the permute reads all 4 bits: sign included). */
MX_AVX512 static inline __m512 mx_fp4x16_avx512(const uint32_t *q) {
    const __m512 lut = _mm512_setr_ps(0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.0f,
                                      -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f);
    const __m512i shifts = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20,
                                             24, 28);
    __m512i words = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi32((int)q[0])),
                                       _mm256_set1_epi32((int)q[1]), 1);
    return _mm512_permutexvar_ps(_mm512_srlv_epi32(words, shifts), lut);
}

MX_AVX512 static inline __m512 mx_fp8x16_avx512(const uint8_t *p) {
    __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
    __m256i h = _mm256_or_si256(
        _mm256_and_si256(_mm256_slli_epi16(b, 8), _mm256_set1_epi16((short)0x8000)),
        _mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x7f)), 7));
    return _mm512_cvtph_ps(h);
}

MX_AVX512 static void mx_rows_avx512(const pk_matrix *m, int tokens, const float *x, long ldx,
                                     float *y, long ldy, long r0, long r1) {
    long words = m->cols * m->bits / 32, groups = m->cols / m->group;
    const float *table = mx_scale_table(m);
    int vecs = m->group / 16; /* 1 or 2 */
    for (long r = r0; r < r1; r++) {
        const uint32_t *row = (const uint32_t *)m->w + r * words;
        const uint8_t *sc = (const uint8_t *)m->scales + r * groups;
        __m512 acc[PK_MATVEC_TOKENS];
        for (int t = 0; t < tokens; t++) acc[t] = _mm512_setzero_ps();
        for (long g = 0; g < groups; g++) {
            const uint8_t *gp = (const uint8_t *)row + g * m->group * m->bits / 8;
            _mm_prefetch((const char *)gp + 1024, _MM_HINT_T0);
            __m512 w[2];
            if (m->bits == 8) {
                __m512 vs = _mm512_set1_ps(table[sc[g]] * 256.0f);
                for (int v = 0; v < vecs; v++) w[v] = _mm512_mul_ps(mx_fp8x16_avx512(gp + 16 * v), vs);
            } else {
                __m512 vs = _mm512_set1_ps(table[sc[g]]);
                for (int v = 0; v < vecs; v++)
                    w[v] = _mm512_mul_ps(mx_fp4x16_avx512((const uint32_t *)gp + 2 * v), vs);
            }
            const float *xg = x + g * m->group;
            for (int t = 0; t < tokens; t++) {
                __m512 a = acc[t];
                for (int v = 0; v < vecs; v++)
                    a = _mm512_fmadd_ps(w[v], _mm512_loadu_ps(xg + t * ldx + 16 * v), a);
                acc[t] = a;
            }
        }
        for (int t = 0; t < tokens; t++) y[t * ldy + (r - r0)] = _mm512_reduce_add_ps(acc[t]);
    }
}
#endif

/* ---- entry points ------------------------------------------------------------------------- */

static void mx_rows_portable(const pk_matrix *m, int tokens, const float *x, long ldx, float *y,
                             long ldy, long r0, long r1) {
    long words = m->cols * m->bits / 32, groups = m->cols / m->group;
    float w[32];
    for (long r = r0; r < r1; r++) {
        const uint32_t *row = (const uint32_t *)m->w + r * words;
        const uint8_t *sc = (const uint8_t *)m->scales + r * groups;
        float acc[PK_MATVEC_TOKENS][8] = {{0}};
        for (long g = 0; g < groups; g++) {
            mx_group_portable(m, row, sc, g, w);
            for (int t = 0; t < tokens; t++)
                for (int i = 0; i < m->group; i++) acc[t][i % 8] += w[i] * x[t * ldx + g * m->group + i];
        }
        for (int t = 0; t < tokens; t++) {
            float s = 0;
            for (int k = 0; k < 8; k++) s += acc[t][k];
            y[t * ldy + (r - r0)] = s;
        }
    }
}

void pk_mx_matvec_tokens(int isa, const pk_matrix *m, int tokens, const float *x, long ldx,
                         float *y, long ldy, long r0, long r1) {
#if defined(__x86_64__)
    if (isa == PK_MV_ISA_AVX512) { mx_rows_avx512(m, tokens, x, ldx, y, ldy, r0, r1); return; }
    if (isa == PK_MV_ISA_AVX2) { mx_rows_avx2(m, tokens, x, ldx, y, ldy, r0, r1); return; }
#endif
    mx_rows_portable(m, tokens, x, ldx, y, ldy, r0, r1);
}

void pk_mx_dequantize_rows(int isa, const pk_matrix *m, long r0, long r1, float *out) {
    long words = m->cols * m->bits / 32, groups = m->cols / m->group;
    for (long r = r0; r < r1; r++) {
        const uint32_t *row = (const uint32_t *)m->w + r * words;
        const uint8_t *sc = (const uint8_t *)m->scales + r * groups;
        for (long g = 0; g < groups; g++) {
            float *o = out + (r - r0) * m->cols + g * m->group;
#if defined(__x86_64__)
            if (isa >= PK_MV_ISA_AVX2) { mx_group_avx2(m, row, sc, g, o); continue; }
#endif
            mx_group_portable(m, row, sc, g, o);
        }
    }
}
