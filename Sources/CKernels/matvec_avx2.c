/* AVX2 + FMA + F16C matvec kernels (8 float lanes). Compiled for any x86-64 through target
   attributes; called only when the CPU has these extensions (matvec.c checks).

   Affine rows: q values widened to 16-bit words meet the 16-bit x (pk_mv_prepare_x16) in
   vpmaddwd, 16 exact products per instruction. 4-bit rows split each 16 bytes into low and
   high nibbles (the even and the odd values), so x16 is reordered once per vector to match
   instead of shuffling every weight; 8-bit rows need no reordering; 2/3/5/6-bit rows are
   unpacked to bytes per group (they are rare: mixed-precision recipes only). */
#include "matvec_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2_FN __attribute__((target("avx2,fma,f16c")))
#define AVX2_INLINE static inline __attribute__((always_inline, target("avx2,fma,f16c")))

AVX2_INLINE float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* 8 packed bytes → 8 dwords. */
AVX2_INLINE __m256i bytes8(const uint8_t *p) {
    return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
}

/* The 8 values of a `bits`-wide row that sit in `bits` bytes, one per byte. */
static inline void unpack8(const uint8_t *p, int bits, uint8_t *out) {
    uint64_t v = 0;
    memcpy(&v, p, (size_t)bits);
    uint64_t mask = (1u << bits) - 1u;
    for (int k = 0; k < 8; k++) out[k] = (uint8_t)((v >> (k * bits)) & mask);
}

/* x16 in the order affine_row reads it: natural, except 4-bit rows, whose 16 bytes per 32
   values give the even values in the low nibbles and the odd ones in the high nibbles:
   stored per 32 values as [evens | odds]. */
AVX2_FN void pk_mv_prepare_avx2(const pk_matrix *m, const float *x, float *prep) {
    if (m->kind != PK_W_AFFINE) return;
    pk_mv_prepare_x16(m, x, prep);
    if (m->bits != 4) return;
    int16_t *x16 = pk_mv_x16(prep), tmp[32];
    for (long c = 0; c < m->cols; c += 32) {
        memcpy(tmp, x16 + c, sizeof tmp);
        for (int i = 0; i < 16; i++) {
            x16[c + i] = tmp[2 * i];
            x16[c + 16 + i] = tmp[2 * i + 1];
        }
    }
}

/* One group's q values as 16-bit words, in the order x16 is stored (pk_mv_prepare_avx2):
   4-bit rows per 32 values [low nibbles (the even values) | high nibbles (the odd ones)],
   other widths in natural order. */
AVX2_INLINE void group_words(const uint8_t *p, int bits, int group, int16_t *w) {
    if (bits == 4) {
        const __m128i low = _mm_set1_epi8(0x0F);
        for (int i = 0; i < group; i += 32, p += 16) {
            _mm_prefetch((const char *)p + PK_MV_PREFETCH_BYTES, _MM_HINT_T0);
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            _mm256_storeu_si256((__m256i *)(w + i), _mm256_cvtepu8_epi16(_mm_and_si128(v, low)));
            _mm256_storeu_si256((__m256i *)(w + i + 16),
                                _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), low)));
        }
        return;
    }
    uint8_t q[128];
    const uint8_t *bytes = p;
    if (bits != 8) {
        for (int i = 0; i < group / 8; i++) unpack8(p + i * bits, bits, q + 8 * i);
        bytes = q;
    } else {
        _mm_prefetch((const char *)p + PK_MV_PREFETCH_BYTES, _MM_HINT_T0);
    }
    for (int i = 0; i < group; i += 16)
        _mm256_storeu_si256((__m256i *)(w + i),
                            _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(bytes + i))));
}

/* Exact integer sum over one group of q * x16, in 8 int32 lanes. */
AVX2_INLINE __m256i group_dot(const int16_t *w, const int16_t *x16, int group) {
    __m256i acc = _mm256_setzero_si256();
    for (int i = 0; i < group; i += 16)
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(w + i)),
                                                      _mm256_loadu_si256((const __m256i *)(x16 + i))));
    return acc;
}

/* Rows [r0, r1) against `tokens` prepared vectors: each group is unpacked once, then
   multiplied with every token's x16. */
AVX2_FN static void affine_rows(const pk_matrix *m, int tokens, const float *prep,
                                long prep_stride, float *y, long ldy, long r0, long r1) {
    const int group = m->group, bits = m->bits;
    const long cols = m->cols, groups = cols / group, group_bytes = (long)group * bits / 8;
    const float middle = (float)(1 << (bits - 1));
    const int16_t *x16[PK_MV_TOKENS];
    const float *xscale[PK_MV_TOKENS], *xsum[PK_MV_TOKENS], *xres[PK_MV_TOKENS];
    for (int t = 0; t < tokens; t++) {
        const float *p = prep + t * prep_stride;
        x16[t] = pk_mv_x16(p);
        xscale[t] = pk_mv_xscale(p, cols);
        xsum[t] = pk_mv_xsum(p, cols);
        xres[t] = pk_mv_xres(p, cols);
    }
    float sc[PK_MV_GROUP_CHUNK], bi[PK_MV_GROUP_CHUNK];
    int16_t w[128];
    for (long r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)m->w + r * pk_mv_row_bytes(m);
        __m256 acc[PK_MV_TOKENS];
        float rest[PK_MV_TOKENS];
        for (int t = 0; t < tokens; t++) {
            acc[t] = _mm256_setzero_ps();
            rest[t] = 0;
        }
        for (long g0 = 0; g0 < groups; g0 += PK_MV_GROUP_CHUNK) {
            long n = pk_mv_group_chunk(m, r, g0, sc, bi);
            for (long g = 0; g < n; g++) {
                long c0 = (g0 + g) * group;
                group_words(row + (g0 + g) * group_bytes, bits, group, w);
                for (int t = 0; t < tokens; t++) {
                    __m256i d = group_dot(w, x16[t] + c0, group);
                    acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(sc[g] * xscale[t][g0 + g]),
                                             _mm256_cvtepi32_ps(d), acc[t]);
                    /* bias, and the rounding of x put back at the middle q value */
                    rest[t] += bi[g] * xsum[t][g0 + g] + sc[g] * middle * xres[t][g0 + g];
                }
            }
        }
        for (int t = 0; t < tokens; t++) y[t * ldy + (r - r0)] = hsum8(acc[t]) + rest[t];
    }
}

/* 8 weights of a float row starting at element i, widened. */
AVX2_INLINE __m256 load_w8(const pk_matrix *m, const void *row, long i) {
    if (m->kind == PK_W_F32) return _mm256_loadu_ps((const float *)row + i);
    __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)row + i));
    if (m->kind == PK_W_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

AVX2_FN static float float_row(const pk_matrix *m, long r, const float *x) {
    const long cols = m->cols;
    const void *row = (const char *)m->w + r * cols * (m->kind == PK_W_F32 ? 4 : 2);
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    long c = 0;
    for (; c + 16 <= cols; c += 16) {
        a0 = _mm256_fmadd_ps(load_w8(m, row, c), _mm256_loadu_ps(x + c), a0);
        a1 = _mm256_fmadd_ps(load_w8(m, row, c + 8), _mm256_loadu_ps(x + c + 8), a1);
    }
    float s = hsum8(_mm256_add_ps(a0, a1));
    if (c < cols) {
        float tail[16];
        pk_matrix one = *m;
        one.rows = 1;
        one.cols = cols - c;
        one.w = (const char *)row + c * (m->kind == PK_W_F32 ? 4 : 2);
        pk_mv_dequant_portable(&one, 0, 1, tail);
        for (long i = 0; i < cols - c; i++) s += tail[i] * x[c + i];
    }
    return s;
}

AVX2_FN void pk_mv_matvec_avx2(const pk_matrix *m, int tokens, const float *x, long ldx,
                               const float *prep, long prep_stride, float *y, long ldy,
                               long r0, long r1) {
    if (m->kind == PK_W_AFFINE) {
        affine_rows(m, tokens, prep, prep_stride, y, ldy, r0, r1);
        return;
    }
    /* per row, every token: the row is read from memory once and then from cache */
    for (long r = r0; r < r1; r++)
        for (int t = 0; t < tokens; t++) y[t * ldy + (r - r0)] = float_row(m, r, x + t * ldx);
}

/* Dequantizes one group of a 4-bit row into natural order: unpacklo/hi interleave the low
   and high nibbles within 128-bit halves, permute2f128 puts the halves in order. */
AVX2_INLINE void dequant_group4(const uint8_t *p, int group, float s, float b, float *o) {
    const __m256 vs = _mm256_set1_ps(s), vb = _mm256_set1_ps(b);
    const __m256i low = _mm256_set1_epi32(0x0F);
    for (int i = 0; i < group; i += 16, p += 8, o += 16) {
        __m256i v = bytes8(p);
        __m256 lo = _mm256_fmadd_ps(vs, _mm256_cvtepi32_ps(_mm256_and_si256(v, low)), vb);
        __m256 hi = _mm256_fmadd_ps(vs, _mm256_cvtepi32_ps(_mm256_srli_epi32(v, 4)), vb);
        __m256 a = _mm256_unpacklo_ps(lo, hi), c = _mm256_unpackhi_ps(lo, hi);
        _mm256_storeu_ps(o, _mm256_permute2f128_ps(a, c, 0x20));
        _mm256_storeu_ps(o + 8, _mm256_permute2f128_ps(a, c, 0x31));
    }
}

AVX2_FN void pk_mv_dequant_avx2(const pk_matrix *m, long r0, long r1, float *out) {
    if (m->kind != PK_W_AFFINE) { pk_mv_dequant_portable(m, r0, r1, out); return; }
    const int group = m->group, bits = m->bits;
    const long cols = m->cols, groups = cols / group, group_bytes = (long)group * bits / 8;
    float sc[PK_MV_GROUP_CHUNK], bi[PK_MV_GROUP_CHUNK];
    uint8_t q[128];
    for (long r = r0; r < r1; r++) {
        const uint8_t *row = (const uint8_t *)m->w + r * pk_mv_row_bytes(m);
        float *o = out + (r - r0) * cols;
        for (long g0 = 0; g0 < groups; g0 += PK_MV_GROUP_CHUNK) {
            long n = pk_mv_group_chunk(m, r, g0, sc, bi);
            for (long g = 0; g < n; g++) {
                const uint8_t *p = row + (g0 + g) * group_bytes;
                float *og = o + (g0 + g) * group;
                if (bits == 4) { dequant_group4(p, group, sc[g], bi[g], og); continue; }
                const uint8_t *qs = p;
                if (bits != 8) {
                    for (int i = 0; i < group / 8; i++) unpack8(p + i * bits, bits, q + 8 * i);
                    qs = q;
                }
                const __m256 vs = _mm256_set1_ps(sc[g]), vb = _mm256_set1_ps(bi[g]);
                for (int i = 0; i < group; i += 8)
                    _mm256_storeu_ps(og + i, _mm256_fmadd_ps(vs, _mm256_cvtepi32_ps(bytes8(qs + i)), vb));
            }
        }
    }
}

#endif
