/* AVX-512 matvec kernels (16 float lanes; F, BW, VL, VBMI and VNNI). Compiled for any
   x86-64 through target attributes; called only when the CPU has these extensions (matvec.c).

   Affine rows: q values are widened to 16-bit words and multiplied with the 16-bit x
   (pk_mv_prepare_x16) by vpdpwssd, 32 products per instruction, summed exactly in int32
   lanes; each group's integer sum is converted and scaled once. 4-bit rows split nibbles
   with a mask and a shift (x16 is stored in the matching order); other widths unpack 64
   values at a time: vpermb puts each 8-value chunk (`bits` bytes) into its own 64-bit lane,
   vpmultishiftqb cuts the eight bit fields of each lane into bytes, a mask keeps `bits`
   bits: 64 q values, one per byte, in natural order. */
#include "matvec_internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "matvec_avx512_tile.h"

#define AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512vbmi,avx512vnni,avx2,fma,f16c"
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

/* 64 q values as 32 + 32 words (zero-extended), natural order, for the dot with x16. */
AVX512_INLINE void unpack_words(const unpacker *u, const uint8_t *p, __mmask64 load,
                                __m512i *lo, __m512i *hi) {
    __m512i q = unpack(u, p, load);
    *lo = _mm512_cvtepu8_epi16(_mm512_castsi512_si256(q));
    *hi = _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(q, 1));
}

/* 4-bit rows: 64 values are 32 bytes; the low nibbles are the even values, the high nibbles
   the odd ones. x16 is stored to match (see pk_mv_prepare_avx512): per 64 values
   [evens of the first 32 | evens of the second 32 | odds of the first | odds of the second],
   so each 32-value half lands in its own 8 dword lanes after vpdpwssd. */
AVX512_INLINE void nibble_words(const uint8_t *p, __m512i *lo, __m512i *hi) {
    const __m256i low = _mm256_set1_epi8(0x0F);
    __m256i v = _mm256_loadu_si256((const __m256i *)p);
    *lo = _mm512_cvtepu8_epi16(_mm256_and_si256(v, low));
    *hi = _mm512_cvtepu8_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), low));
}

/* One token's prepared input (pk_matvec_prepare), as the kernel reads it. */
typedef struct {
    const int16_t *x16;
    const float *xscale, *xsum, *xres;
} xview;

/* One row against T token vectors: for each, the sum over groups of scale*xscale*(q · x16)
   + bias*(sum of x) + scale*middle*xres. Each 64-value block of the row is unpacked once
   and multiplied with every token's x16, so T tokens cost one pass over the weights. Groups
   go 16 at a time: their scales and biases are widened in three vector ops, and
   comb[t][g] = scale[g] * xscale_t[g] turns each group's exact integer dot into float.
   T is a compile-time constant at every call (see TOKEN_ROWS), so the per-token loops
   unroll and the accumulators stay in registers. */
AVX512_INLINE void affine_row(const pk_matrix *m, long r, const int T, const xview *xv,
                              const unpacker *u, const int group, float *y, long ldy) {
    const int bits = m->bits, dt = m->scale_dtype;
    const long cols = m->cols, groups = cols / group;
    const uint8_t *row = (const uint8_t *)m->w + r * pk_mv_row_bytes(m);
    const __m512 middle = _mm512_set1_ps((float)(1 << (bits - 1)));
    float comb[PK_MV_TOKENS][16];
    __m512 acc[PK_MV_TOKENS], bacc[PK_MV_TOKENS];
    __m512i gacc[PK_MV_TOKENS];
    for (int t = 0; t < T; t++) {
        acc[t] = bacc[t] = _mm512_setzero_ps();
        gacc[t] = _mm512_setzero_si512();
    }
    for (long g0 = 0; g0 < groups; g0 += 16) {
        long n = groups - g0 < 16 ? groups - g0 : 16;
        __mmask16 k = (__mmask16)((1u << n) - 1);
        long at = r * groups + g0;
        __m512 sv = pk_mv_load16(m->scales, dt, at, k), bv = pk_mv_load16(m->biases, dt, at, k);
        __m512 svm = _mm512_mul_ps(sv, middle);
        for (int t = 0; t < T; t++) {
            _mm512_storeu_ps(comb[t], _mm512_mul_ps(sv, _mm512_maskz_loadu_ps(k, xv[t].xscale + g0)));
            /* bias * sum of x, and the rounding of x put back at the middle q value */
            bacc[t] = _mm512_fmadd_ps(bv, _mm512_maskz_loadu_ps(k, xv[t].xsum + g0), bacc[t]);
            bacc[t] = _mm512_fmadd_ps(svm, _mm512_maskz_loadu_ps(k, xv[t].xres + g0), bacc[t]);
        }
        long c = g0 * group, end = (g0 + n) * group;
        for (; c + 64 <= end; c += 64) {
            __m512i lo, hi;
            _mm_prefetch((const char *)row + c * bits / 8 + PK_MV_PREFETCH_L2_BYTES, _MM_HINT_T1);
            if (bits == 4) nibble_words(row + c / 2, &lo, &hi);
            else unpack_words(u, row + c * bits / 8, u->load, &lo, &hi);
            const long g = c / group - g0;  /* chunk-relative group of this block */
            for (int t = 0; t < T; t++) {
                const __m512i xa = _mm512_loadu_si512(xv[t].x16 + c);
                const __m512i xb = _mm512_loadu_si512(xv[t].x16 + c + 32);
                if (group == 32 && bits != 4) {  /* natural order: lo is group A, hi group B */
                    __m512i pa = _mm512_dpwssd_epi32(_mm512_setzero_si512(), lo, xa);
                    __m512i pb = _mm512_dpwssd_epi32(_mm512_setzero_si512(), hi, xb);
                    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pa), _mm512_set1_ps(comb[t][g]), acc[t]);
                    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(pb), _mm512_set1_ps(comb[t][g + 1]), acc[t]);
                    continue;
                }
                gacc[t] = _mm512_dpwssd_epi32(_mm512_dpwssd_epi32(gacc[t], lo, xa), hi, xb);
                if (group == 32) {  /* nibble order: lanes 0-7 group A, 8-15 group B */
                    __m512 sc = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(comb[t][g]),
                                                     _mm512_set1_ps(comb[t][g + 1]));
                    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(gacc[t]), sc, acc[t]);
                    gacc[t] = _mm512_setzero_si512();
                } else if ((c + 64) % group == 0) {
                    acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(gacc[t]), _mm512_set1_ps(comb[t][g]),
                                             acc[t]);
                    gacc[t] = _mm512_setzero_si512();
                }
            }
        }
        if (c < end) {  /* a last 32-value group (group 32, odd number of groups) */
            const long g = c / 32 - g0;
            __m256i lo4 = _mm256_setzero_si256(), hi4 = _mm256_setzero_si256();
            __m512i lo = _mm512_setzero_si512(), hi;
            if (bits == 4) {
                const __m128i low = _mm_set1_epi8(0x0F);
                __m128i v = _mm_loadu_si128((const __m128i *)(row + c / 2));
                lo4 = _mm256_cvtepu8_epi16(_mm_and_si128(v, low));
                hi4 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), low));
            } else {
                unpack_words(u, row + c * bits / 8, u->load_half, &lo, &hi);
            }
            for (int t = 0; t < T; t++) {
                __m256i p;
                if (bits == 4) {
                    p = _mm256_dpwssd_epi32(_mm256_setzero_si256(), lo4,
                                            _mm256_loadu_si256((const __m256i *)(xv[t].x16 + c)));
                    p = _mm256_dpwssd_epi32(p, hi4,
                                            _mm256_loadu_si256((const __m256i *)(xv[t].x16 + c + 16)));
                } else {
                    __m512i d = _mm512_dpwssd_epi32(_mm512_setzero_si512(), lo,
                                                    _mm512_loadu_si512(xv[t].x16 + c));
                    p = _mm256_add_epi32(_mm512_castsi512_si256(d), _mm512_extracti64x4_epi64(d, 1));
                }
                __m256 q = _mm256_mul_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(comb[t][g]));
                acc[t] = _mm512_add_ps(acc[t], _mm512_zextps256_ps512(q));
            }
        }
    }
    for (int t = 0; t < T; t++) y[t * ldy] = hsum16(_mm512_add_ps(acc[t], bacc[t]));
}

/* x16 in the order affine_row reads it: natural, except 4-bit rows (see nibble_words). */
AVX512_FN void pk_mv_prepare_avx512(const pk_matrix *m, const float *x, float *prep) {
    if (m->kind != PK_W_AFFINE) return;
    pk_mv_prepare_x16(m, x, prep);
    /* Tiled rows are never read by affine_row at this level: their x16 stays natural. The
       prepare runs on one thread while the others wait (decode), so skipping matters. */
    if (pk_mv_q4_tiled(m)) { pk_mv_prepare_q4(m, prep); return; }
    if (pk_mv_q8_tiled(m)) { pk_mv_prepare_q8(m, prep); return; }
    if (m->bits != 4) return;
    int16_t *x16 = pk_mv_x16(prep), tmp[64];
    long c = 0;
    for (; c + 64 <= m->cols; c += 64) {
        memcpy(tmp, x16 + c, sizeof tmp);
        for (int half = 0; half < 2; half++)
            for (int i = 0; i < 16; i++) {
                x16[c + 16 * half + i] = tmp[32 * half + 2 * i];
                x16[c + 32 + 16 * half + i] = tmp[32 * half + 2 * i + 1];
            }
    }
    if (c < m->cols) {  /* trailing 32 values: [evens | odds] */
        memcpy(tmp, x16 + c, 32 * sizeof(int16_t));
        for (int i = 0; i < 16; i++) {
            x16[c + i] = tmp[2 * i];
            x16[c + 16 + i] = tmp[2 * i + 1];
        }
    }
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
    const int size = kind == PK_W_F32 ? 4 : 2;
    for (; c + 64 <= cols; c += 64) {
        for (int line = 0; line < 64 * size; line += 64)
            _mm_prefetch((const char *)row + c * size + line + PK_MV_PREFETCH_BYTES, _MM_HINT_T0);
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

/* Token count and group size become compile-time constants for the affine loop. */
#define AFFINE_ROWS(T, G)                                                                     \
    for (long r = r0; r < r1; r++) affine_row(m, r, T, xv, &u, G, y + (r - r0), ldy)
#define AFFINE_GROUPS(T)                                                                      \
    case T:                                                                                   \
        if (m->group == 32) AFFINE_ROWS(T, 32);                                               \
        else if (m->group == 64) AFFINE_ROWS(T, 64);                                          \
        else AFFINE_ROWS(T, 128);                                                             \
        break

AVX512_FN void pk_mv_matvec_avx512(const pk_matrix *m, int tokens, const float *x, long ldx,
                                   const float *prep, long prep_stride, float *y, long ldy,
                                   long r0, long r1) {
    if (m->kind != PK_W_AFFINE) {
        /* per row, every token: the row is read from memory once and then from cache */
        for (long r = r0; r < r1; r++)
            for (int t = 0; t < tokens; t++) y[t * ldy + (r - r0)] = float_row(m, r, x + t * ldx);
        return;
    }
    /* Every token count, one alone (decode) included, so that a token's result never depends
       on what else was in its block: a session's cached prefix, a batch of requests and a
       lone run all compute bit for bit the same. See matvec_avx512_q4.c. */
    if (pk_mv_q4_tiled(m)) {
        pk_mv_matvec_q4_avx512(m, tokens, prep, prep_stride, y, ldy, r0, r1);
        return;
    }
    if (pk_mv_q8_tiled(m)) {  /* the same for 8-bit rows (matvec_avx512_q8.c) */
        pk_mv_matvec_q8_avx512(m, tokens, prep, prep_stride, y, ldy, r0, r1);
        return;
    }
    xview xv[PK_MV_TOKENS];
    for (int t = 0; t < tokens; t++) {
        const float *p = prep + t * prep_stride;
        xv[t] = (xview){pk_mv_x16(p), pk_mv_xscale(p, m->cols), pk_mv_xsum(p, m->cols),
                        pk_mv_xres(p, m->cols)};
    }
    unpacker u = make_unpacker(m->bits);
    switch (tokens) {
        AFFINE_GROUPS(1);
        AFFINE_GROUPS(2);
        AFFINE_GROUPS(3);
        AFFINE_GROUPS(4);
        AFFINE_GROUPS(5);
        AFFINE_GROUPS(6);
        AFFINE_GROUPS(7);
        default: AFFINE_GROUPS(8);
    }
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
            long n = pk_mv_group_chunk(m, r, g0, sc, bi);
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
