/* Tensor statistics for `phikit verify` (see pk_stats.h): scalar references and AVX2/F16C
   versions. The fast versions must keep up with a disk (and with SHA-256 on the other core),
   so they classify 8 lanes at a time with integer compares on the float bits and never
   branch per element; the rare non-finite lanes are counted from movemasks. */
#include "pk_stats.h"

#include <math.h>
#include <string.h>

#include "pk_half.h"

void pk_stats_init(pk_stats *s) {
    memset(s, 0, sizeof *s);
    s->first_bad = -1;
    s->min = HUGE_VAL;
    s->max = -HUGE_VAL;
}

/* ---- scalar references ------------------------------------------------------------------ */

/* Elements are widened (exactly) to float32 this many at a time into a stack buffer. */
#define PK_STATS_BLOCK 256

/* x[0..n) are elements s->count … s->count + n - 1 of the tensor. */
static void floats_ref(pk_stats *s, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        if (isnan(v) || isinf(v)) {
            if (isnan(v)) s->nan++; else s->inf++;
            if (s->first_bad < 0) s->first_bad = (int64_t)(s->count + i);
            continue;
        }
        if (v == 0.0f) s->zeros++;
        s->sum += (double)v;
        if ((double)v < s->min) s->min = (double)v;
        if ((double)v > s->max) s->max = (double)v;
    }
    s->count += n;
}

void pk_stats_f32_ref(pk_stats *s, const void *data, size_t n) {
    const unsigned char *p = data;
    float block[PK_STATS_BLOCK];
    while (n > 0) {
        size_t k = n < PK_STATS_BLOCK ? n : PK_STATS_BLOCK;
        memcpy(block, p, k * sizeof(float));   /* the data may be unaligned */
        floats_ref(s, block, k);
        p += k * sizeof(float);
        n -= k;
    }
}

static void halves_ref(pk_stats *s, const void *data, size_t n, int bf16) {
    const unsigned char *p = data;
    uint16_t halves[PK_STATS_BLOCK];
    float block[PK_STATS_BLOCK];
    while (n > 0) {
        size_t k = n < PK_STATS_BLOCK ? n : PK_STATS_BLOCK;
        memcpy(halves, p, k * sizeof(uint16_t));
        if (bf16) pk_bf16_to_f32_ref(block, halves, k); else pk_f16_to_f32_ref(block, halves, k);
        floats_ref(s, block, k);
        p += k * sizeof(uint16_t);
        n -= k;
    }
}

void pk_stats_f16_ref(pk_stats *s, const void *data, size_t n) { halves_ref(s, data, n, 0); }
void pk_stats_bf16_ref(pk_stats *s, const void *data, size_t n) { halves_ref(s, data, n, 1); }

void pk_stats_u32_ref(pk_stats *s, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        uint32_t w;
        memcpy(&w, p + 4 * i, 4);
        if (w == 0) s->zeros++;
        if ((double)w < s->min) s->min = (double)w;
        if ((double)w > s->max) s->max = (double)w;
    }
    s->count += n;
}

/* ---- AVX2 / F16C ------------------------------------------------------------------------ */

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#define PK_STATS_X86 1
#define PK_AVX2 __attribute__((target("avx2,f16c,popcnt")))
#define PK_AVX2_INLINE static inline __attribute__((always_inline, target("avx2,f16c,popcnt")))

static int cpu_has_avx2(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")
        && __builtin_cpu_supports("popcnt");
}

/* Running state of one fast call: 8 lanes of min/max, 8 lanes of sums (as 2 x 4 doubles). */
typedef struct {
    __m256 min, max;
    __m256d sum_lo, sum_hi;
    uint64_t nan, inf, zeros;
} lanes;

PK_AVX2_INLINE void lanes_init(lanes *l) {
    l->min = _mm256_set1_ps(INFINITY);
    l->max = _mm256_set1_ps(-INFINITY);
    l->sum_lo = _mm256_setzero_pd();
    l->sum_hi = _mm256_setzero_pd();
    l->nan = l->inf = l->zeros = 0;
}

/* Eight float32 bit patterns; `index` is the tensor index of lane 0. */
PK_AVX2_INLINE void lanes_add(lanes *l, pk_stats *s, __m256i u, uint64_t index) {
    const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF);
    __m256i a = _mm256_and_si256(u, abs_mask);
    /* abs bits > 0x7F7FFFFF: exponent all ones (Inf or NaN); > 0x7F800000: NaN. */
    __m256i bad = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7F7FFFFF));
    int bad_bits = _mm256_movemask_ps(_mm256_castsi256_ps(bad));
    if (bad_bits) {
        __m256i nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7F800000));
        int nan_count =
            __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(nan)));
        l->nan += (uint64_t)nan_count;
        l->inf += (uint64_t)(__builtin_popcount((unsigned)bad_bits) - nan_count);
        if (s->first_bad < 0)
            s->first_bad = (int64_t)(index + (uint64_t)__builtin_ctz((unsigned)bad_bits));
    }
    __m256i zero = _mm256_cmpeq_epi32(a, _mm256_setzero_si256());
    l->zeros +=
        (uint64_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(zero)));
    __m256 v = _mm256_castsi256_ps(u);
    __m256 badf = _mm256_castsi256_ps(bad);
    l->min = _mm256_min_ps(l->min, _mm256_blendv_ps(v, _mm256_set1_ps(INFINITY), badf));
    l->max = _mm256_max_ps(l->max, _mm256_blendv_ps(v, _mm256_set1_ps(-INFINITY), badf));
    __m256 finite = _mm256_andnot_ps(badf, v);   /* non-finite lanes add 0 */
    l->sum_lo = _mm256_add_pd(l->sum_lo, _mm256_cvtps_pd(_mm256_castps256_ps128(finite)));
    l->sum_hi = _mm256_add_pd(l->sum_hi, _mm256_cvtps_pd(_mm256_extractf128_ps(finite, 1)));
}

PK_AVX2_INLINE void lanes_finish(lanes *l, pk_stats *s, size_t n) {
    float mins[8], maxs[8];
    double sums[8];
    _mm256_storeu_ps(mins, l->min);
    _mm256_storeu_ps(maxs, l->max);
    _mm256_storeu_pd(sums, l->sum_lo);
    _mm256_storeu_pd(sums + 4, l->sum_hi);
    for (int i = 0; i < 8; i++) {
        if ((double)mins[i] < s->min) s->min = (double)mins[i];
        if ((double)maxs[i] > s->max) s->max = (double)maxs[i];
        s->sum += sums[i];
    }
    s->nan += l->nan;
    s->inf += l->inf;
    s->zeros += l->zeros;
    s->count += n;
}

/* Eight values as float32 bits, widened from each format (F16C widens exactly, Inf to Inf
   and NaN to NaN; bf16 is the top half of a float32). */
PK_AVX2_INLINE __m256i load_f32(const unsigned char *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}
PK_AVX2_INLINE __m256i load_f16(const unsigned char *p) {
    return _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)));
}
PK_AVX2_INLINE __m256i load_bf16(const unsigned char *p) {
    return _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16);
}

/* A float format's fast kernel: eight values at a time through `load`, the tail (fewer than
   eight) through the format's scalar kernel. Inlined into each caller with its own load. */
PK_AVX2_INLINE void float_stats_avx2(pk_stats *s, const unsigned char *p, size_t n, size_t width,
                                     __m256i (*load)(const unsigned char *),
                                     void (*tail)(pk_stats *, const void *, size_t)) {
    lanes l;
    lanes_init(&l);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) lanes_add(&l, s, load(p + width * i), s->count + i);
    lanes_finish(&l, s, i);
    tail(s, p + width * i, n - i);
}

PK_AVX2 static void f32_avx2(pk_stats *s, const void *data, size_t n) {
    float_stats_avx2(s, data, n, 4, load_f32, pk_stats_f32_ref);
}
PK_AVX2 static void f16_avx2(pk_stats *s, const void *data, size_t n) {
    float_stats_avx2(s, data, n, 2, load_f16, pk_stats_f16_ref);
}
PK_AVX2 static void bf16_avx2(pk_stats *s, const void *data, size_t n) {
    float_stats_avx2(s, data, n, 2, load_bf16, pk_stats_bf16_ref);
}

PK_AVX2 static void u32_avx2(pk_stats *s, const void *data, size_t n) {
    const unsigned char *p = data;
    __m256i lo = _mm256_set1_epi32(-1), hi = _mm256_setzero_si256();
    uint64_t zeros = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i u = _mm256_loadu_si256((const __m256i *)(p + 4 * i));
        lo = _mm256_min_epu32(lo, u);
        hi = _mm256_max_epu32(hi, u);
        __m256i zero = _mm256_cmpeq_epi32(u, _mm256_setzero_si256());
        zeros += (uint64_t)__builtin_popcount(
            (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(zero)));
    }
    if (i > 0) {
        uint32_t los[8], his[8];
        _mm256_storeu_si256((__m256i *)los, lo);
        _mm256_storeu_si256((__m256i *)his, hi);
        for (int k = 0; k < 8; k++) {
            if ((double)los[k] < s->min) s->min = (double)los[k];
            if ((double)his[k] > s->max) s->max = (double)his[k];
        }
        s->zeros += zeros;
        s->count += i;
    }
    pk_stats_u32_ref(s, p + 4 * i, n - i);
}
#endif

/* ---- dispatch --------------------------------------------------------------------------- */

/* The AVX2 version where the build and the CPU have it, else the scalar one. */
#ifdef PK_STATS_X86
#define PICK(name) (pk_stats_has_simd() ? name##_avx2 : pk_stats_##name##_ref)
int pk_stats_has_simd(void) { return cpu_has_avx2(); }
#else
#define PICK(name) pk_stats_##name##_ref
int pk_stats_has_simd(void) { return 0; }
#endif

void pk_stats_f32(pk_stats *s, const void *data, size_t n) { PICK(f32)(s, data, n); }
void pk_stats_f16(pk_stats *s, const void *data, size_t n) { PICK(f16)(s, data, n); }
void pk_stats_bf16(pk_stats *s, const void *data, size_t n) { PICK(bf16)(s, data, n); }
void pk_stats_u32(pk_stats *s, const void *data, size_t n) { PICK(u32)(s, data, n); }
