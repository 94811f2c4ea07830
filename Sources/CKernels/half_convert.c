/* bf16 / f16 <-> f32 conversions: scalar references and AVX2/F16C versions.
   All bit manipulation, so the results do not depend on compiler flags or the FP environment
   (F16C's conversions ignore MXCSR rounding because the rounding mode is given explicitly). */
#include "pk_half.h"
#include <string.h>

/* ---- scalar references ------------------------------------------------------------------ */

static inline uint32_t f32_bits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float bits_f32(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

static inline float bf16_to_f32_one(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    if ((h & 0x7FFFu) > 0x7F80u) u |= 0x00400000u;            /* NaN: make it quiet */
    return bits_f32(u);
}

static inline uint16_t f32_to_bf16_one(float x) {
    uint32_t u = f32_bits(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x0040u);  /* quiet NaN */
    /* Round to nearest even: add 0x7FFF plus the lowest kept bit, then truncate.
       Overflow carries into the exponent and ends at Inf, as it should. */
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static inline float f16_to_f32_one(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    if (exp == 0x1F) {                                          /* Inf or NaN (made quiet) */
        return bits_f32(sign | 0x7F800000u | (mant << 13) | (mant ? 0x00400000u : 0u));
    }
    if (exp == 0) {
        if (mant == 0) return bits_f32(sign);
        /* Subnormal mant * 2^-24: shift until the implicit bit (bit 10) appears. */
        uint32_t shifts = 0;
        while (!(mant & 0x400u)) { mant <<= 1; shifts++; }
        return bits_f32(sign | ((113u - shifts) << 23) | ((mant & 0x3FFu) << 13));
    }
    return bits_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

static inline uint16_t f32_to_f16_one(float x) {
    uint32_t u = f32_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return sign | 0x7E00u | (uint16_t)((a >> 13) & 0x3FFu);  /* quiet NaN */
    if (a >= 0x477FF000u) return sign | 0x7C00u;   /* >= 65520 rounds (ties-to-even) to Inf */
    if (a < 0x38800000u) {                          /* below 2^-14: subnormal f16 or zero */
        if (a <= 0x33000000u) return sign;          /* <= 2^-25 rounds to 0 (tie goes to even) */
        uint32_t e = a >> 23, m = (a & 0x7FFFFFu) | 0x800000u;
        uint32_t shift = 126u - e;                  /* 14..24: m * 2^(e-150) in units of 2^-24 */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return sign | (uint16_t)r;                  /* r == 0x400 is the smallest normal */
    }
    uint32_t r = (a - 0x38000000u) >> 13, rem = a & 0x1FFFu;   /* rebias 127 -> 15 */
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return sign | (uint16_t)r;
}

void pk_bf16_to_f32_ref(float *dst, const uint16_t *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = bf16_to_f32_one(src[i]);
}
void pk_f32_to_bf16_ref(uint16_t *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = f32_to_bf16_one(src[i]);
}
void pk_f16_to_f32_ref(float *dst, const uint16_t *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = f16_to_f32_one(src[i]);
}
void pk_f32_to_f16_ref(uint16_t *dst, const float *src, size_t n) {
    for (size_t i = 0; i < n; i++) dst[i] = f32_to_f16_one(src[i]);
}

/* ---- AVX2 / F16C ----------------------------------------------------------------------- */

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#define PK_HALF_X86 1
#define PK_AVX2 __attribute__((target("avx2,f16c")))

static int has_simd(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}

PK_AVX2 static void bf16_to_f32_avx2(float *dst, const uint16_t *src, size_t n) {
    const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
    const __m256i quiet = _mm256_set1_epi32(0x00400000);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i u = _mm256_slli_epi32(
            _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(src + i))), 16);
        __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
        u = _mm256_or_si256(u, _mm256_and_si256(nan, quiet));
        _mm256_storeu_si256((__m256i *)(dst + i), u);
    }
    for (; i < n; i++) dst[i] = bf16_to_f32_one(src[i]);
}

PK_AVX2 static inline __m256i f32_to_bf16_lanes(__m256i u) {
    const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(0x7F800000);
    __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), lsb), 16);
    __m256i quieted = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x0040));
    return _mm256_blendv_epi8(rounded, quieted, nan);          /* 0..0xFFFF per lane */
}

PK_AVX2 static void f32_to_bf16_avx2(uint16_t *dst, const float *src, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = f32_to_bf16_lanes(_mm256_loadu_si256((const __m256i *)(src + i)));
        __m256i b = f32_to_bf16_lanes(_mm256_loadu_si256((const __m256i *)(src + i + 8)));
        /* packus works per 128-bit lane: [a0-3 b0-3 a4-7 b4-7]; reorder the 64-bit quarters. */
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
        _mm256_storeu_si256((__m256i *)(dst + i), packed);
    }
    for (; i < n; i++) dst[i] = f32_to_bf16_one(src[i]);
}

PK_AVX2 static void f16_to_f32_avx2(float *dst, const uint16_t *src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
    }
    for (; i < n; i++) dst[i] = f16_to_f32_one(src[i]);
}

PK_AVX2 static void f32_to_f16_avx2(uint16_t *dst, const float *src, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *)(dst + i), h);
    }
    for (; i < n; i++) dst[i] = f32_to_f16_one(src[i]);
}
#endif

/* ---- dispatch --------------------------------------------------------------------------- */

/* The AVX2/F16C version where the build and the CPU have it, else the scalar one. */
#ifdef PK_HALF_X86
#define PICK(name) (has_simd() ? name##_avx2 : pk_##name##_ref)
int pk_half_has_simd(void) { return has_simd(); }
#else
#define PICK(name) pk_##name##_ref
int pk_half_has_simd(void) { return 0; }
#endif

void pk_bf16_to_f32(float *dst, const uint16_t *src, size_t n) { PICK(bf16_to_f32)(dst, src, n); }
void pk_f32_to_bf16(uint16_t *dst, const float *src, size_t n) { PICK(f32_to_bf16)(dst, src, n); }
void pk_f16_to_f32(float *dst, const uint16_t *src, size_t n) { PICK(f16_to_f32)(dst, src, n); }
void pk_f32_to_f16(uint16_t *dst, const float *src, size_t n) { PICK(f32_to_f16)(dst, src, n); }
