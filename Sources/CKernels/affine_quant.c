/* MLX affine quantization: a literal scalar port of mlx's CPU `quantize`
   (mlx/backend/cpu/quantized.cpp) and of `dequantize` as mlx computes it, plus fast
   AVX2 / AVX-512 versions. Shapes and the packed layout are described in
   include/pk_affine_quant.h.

   Bit-identity rules (each one checked against mlx 0.32.4 golden files):
   - Everything is float32 arithmetic: mlx widens each bf16/f16 element to float before
     min/max and before computing q.
   - q is computed with the fp32 scale and bias. Only afterwards are scales/biases rounded
     (to nearest even) to the output dtype.
   - No -ffast-math: the division (w - bias) / scale must stay a true IEEE division, not a
     multiplication by a reciprocal, or some q values land on the other side of a .5.
   - Dequantize never fuses s*q + b into an FMA (mlx does a multiply, then an add). The
     package builds C with -ffp-contract=fast, which ignores `#pragma clang fp contract`.
     So the product goes through an empty asm barrier that the compiler cannot fuse across.
   - Every group is independent and all reductions are min/max, which give the same result
     in any order. So the SIMD kernels give exactly the scalar reference's bits. */
#include "pk_affine_quant.h"

#include <math.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "pk_affine_quant assumes little-endian (mlx's packed words are little-endian bytes)"
#endif

#if defined(__x86_64__) || defined(__i386__)
#define PK_AQ_X86 1
#include <immintrin.h>
#endif

/* Keeps `v` in a register the compiler cannot see into, so `v = a*b; BARRIER(v); v + c`
   is never contracted into an FMA. */
#if defined(PK_AQ_X86)
#define PK_AQ_BARRIER(v) __asm__("" : "+x"(v))
#define PK_AQ_BARRIER512(v) __asm__("" : "+v"(v))
#elif defined(__aarch64__)
#define PK_AQ_BARRIER(v) __asm__("" : "+w"(v))
#else
#define PK_AQ_BARRIER(v) do { volatile float pk_aq_tmp_ = (v); (v) = pk_aq_tmp_; } while (0)
#endif

#define PK_AQ_INLINE static inline __attribute__((always_inline))

/* ------------------------------------------------------------------------------------- */
/* float32 <-> float16 / bfloat16, round to nearest even (what mlx's astype does).        */

PK_AQ_INLINE uint32_t aq_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
PK_AQ_INLINE float aq_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

PK_AQ_INLINE uint16_t aq_f32_to_bf16(float f) {
    uint32_t u = aq_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* quiet NaN */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
PK_AQ_INLINE float aq_bf16_to_f32(uint16_t h) { return aq_float((uint32_t)h << 16); }

PK_AQ_INLINE uint16_t aq_f32_to_f16(float f) {
    uint32_t u = aq_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00u;            /* NaN */
    if (a >= 0x477ff000u) return sign | 0x7c00u;           /* >= 65520 rounds to Inf */
    if (a >= 0x38800000u) {                                /* normal half: >= 2^-14 */
        uint32_t r = a - 0x38000000u;                      /* rebias exponent 127 -> 15 */
        return sign | (uint16_t)((r + 0x0fffu + ((r >> 13) & 1u)) >> 13);
    }
    /* Subnormal half (unit 2^-24): scaling by 2^24 is exact, rintf rounds half to even,
       and 1024 (a carry into the smallest normal) is that normal's encoding. */
    return sign | (uint16_t)rintf(aq_float(a) * 16777216.0f);
}
PK_AQ_INLINE float aq_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) { float v = (float)m * 0x1p-24f; return sign ? -v : v; }
    if (e == 31) return aq_float(sign | 0x7f800000u | (m << 13));
    return aq_float(sign | ((e + 112u) << 23) | (m << 13));
}

/* Element i of a scales/biases buffer of dtype dt (buffers may be unaligned). */
PK_AQ_INLINE void aq_store(void *base, long i, int dt, float v) {
    if (dt == PK_AQ_F32) { memcpy((char *)base + 4 * i, &v, 4); return; }
    uint16_t h = dt == PK_AQ_F16 ? aq_f32_to_f16(v) : aq_f32_to_bf16(v);
    memcpy((char *)base + 2 * i, &h, 2);
}
PK_AQ_INLINE float aq_load(const void *base, long i, int dt) {
    if (dt == PK_AQ_F32) { float v; memcpy(&v, (const char *)base + 4 * i, 4); return v; }
    uint16_t h;
    memcpy(&h, (const char *)base + 2 * i, 2);
    return dt == PK_AQ_F16 ? aq_f16_to_f32(h) : aq_bf16_to_f32(h);
}
/* Rounds a float to the nearest value of dtype dt (mlx's float16/bfloat16 arithmetic
   computes in float and rounds each result). */
PK_AQ_INLINE float aq_round(float v, int dt) {
    if (dt == PK_AQ_F16) return aq_f16_to_f32(aq_f32_to_f16(v));
    if (dt == PK_AQ_BF16) return aq_bf16_to_f32(aq_f32_to_bf16(v));
    return v;
}

/* ------------------------------------------------------------------------------------- */
/* One group's scale and bias. Shared by every kernel, so they all agree by construction. */

/* mlx's rule, from the group's min and max (floats) and n_bins = 2^bits - 1:
     scale = max((max - min) / n_bins, 1e-7)
   The "edge" is the endpoint with the larger magnitude. On a tie (|min| == |max|) the
   comparison is strict, so the edge is max. When the edge is max, scale is negated, so q
   still counts up from the edge: q = (w - edge) / scale >= 0.
     q0 = rint(edge / scale)
     if q0 != 0:  scale = edge / q0, bias = edge
     else:        bias = 0 (the group sits within half a step of zero; scale is kept)
   Why the edge trick: with bias = edge and edge = q0*scale, both the extreme value (q = 0)
   and 0.0 (q = -q0, an integer) are exactly on the grid. A plain min/max affine map hits
   neither, and zeros matter in weights. Why rint: mlx uses std::rint, which rounds half to
   even in the default rounding mode. roundf (half away from zero) would differ on exact .5
   values, which are common in low-precision inputs. */
PK_AQ_INLINE void aq_group_params(float w_min, float w_max, float n_bins,
                                  float *scale_out, float *bias_out) {
    const float eps = 1e-7f;
    int mask = fabsf(w_min) > fabsf(w_max);
    float scale = (w_max - w_min) / n_bins;
    scale = scale < eps ? eps : scale;           /* std::max(scale, eps) */
    scale = mask ? scale : -scale;
    float edge = mask ? w_min : w_max;
    float q0 = rintf(edge / scale);
    float bias = 0.0f;
    if (q0 != 0.0f) {
        scale = edge / q0;
        bias = edge;
    }
    *scale_out = scale;
    *bias_out = bias;
}

/* q for one value: rint((w - bias) / scale) clamped to [0, n_bins], as mlx does with
   std::min(std::max(q, 0), n_bins). NaN becomes 0 (mlx's cast of NaN is undefined), so
   the packed word never gets stray bits. */
PK_AQ_INLINE uint32_t aq_q(float w, float scale, float bias, float n_bins) {
    float v = rintf((w - bias) / scale);
    v = v < 0.0f ? 0.0f : v;
    v = n_bins < v ? n_bins : v;
    if (v != v) v = 0.0f;
    return (uint32_t)v;
}

/* ------------------------------------------------------------------------------------- */
/* Reference: literally mlx's loop (groups over the flattened matrix, one "pack" of values
   OR-ed into a uint64 and written as one uint32 for 2/4/8 bits, or as 3/5 bytes for
   3/5/6 bits).                                                                           */

void pk_affine_quantize_dt_ref(const float *w, long rows, long cols, int group, int bits,
                               int out_dtype, uint32_t *wq, void *scales, void *biases) {
    const float n_bins = (float)((1 << bits) - 1);
    const int pow2 = (bits & (bits - 1)) == 0;
    const int el_per_pack = pow2 ? 32 / bits : (bits == 6 ? 4 : 8);
    const int bytes_per_pack = pow2 ? 4 : (bits == 5 ? 5 : 3);
    const long n_groups = rows * cols / group;
    const long packs_per_group = group / el_per_pack;
    uint8_t *out8 = (uint8_t *)wq;

    for (long i = 0; i < n_groups; i++) {
        const float *x = w + i * group;
        float w_min = INFINITY, w_max = -INFINITY;
        for (int j = 0; j < group; j++) {
            w_max = w_max < x[j] ? x[j] : w_max;  /* std::max(w_max, x) */
            w_min = x[j] < w_min ? x[j] : w_min;  /* std::min(w_min, x) */
        }
        float scale, bias;
        aq_group_params(w_min, w_max, n_bins, &scale, &bias);

        uint8_t *out = out8 + i * (long)group * bits / 8;
        for (long j = 0; j < packs_per_group; j++) {
            uint64_t out_el = 0;
            for (int k = 0; k < el_per_pack; k++)
                out_el |= (uint64_t)aq_q(x[j * el_per_pack + k], scale, bias, n_bins) << (k * bits);
            for (int b = 0; b < bytes_per_pack; b++)
                out[j * bytes_per_pack + b] = (uint8_t)(out_el >> (8 * b));
        }
        aq_store(scales, i, out_dtype, scale);
        aq_store(biases, i, out_dtype, bias);
    }
}

void pk_affine_quantize_ref(const float *w, long rows, long cols, int group, int bits,
                            uint32_t *wq, float *scales, float *biases) {
    pk_affine_quantize_dt_ref(w, rows, cols, group, bits, PK_AQ_F32, wq, scales, biases);
}

/* ------------------------------------------------------------------------------------- */
/* Fast path. Per group: a SIMD min/max, the scalar parameters above, SIMD q to one byte
   per value (qb), then packing. Each 8 q bytes become exactly `bits` output bytes, which
   is the mlx bit stream for every width.                                               */

/* 8 bytes, each < 2^b, to 8*b bits (low value first), merging neighbours pairwise:
   bytes -> 2b-bit fields per 16-bit lane -> 4b-bit fields per 32 bits -> 8b bits.
   Each step is lo | hi << width with lo and hi masked apart (a plain x | x >> (8-b)
   would smear bits for b > 4). */
PK_AQ_INLINE uint64_t aq_compress8(uint64_t x, const int b) {
    if (b == 8) return x;
    x = (x & 0x00ff00ff00ff00ffull) | ((x >> 8) & 0x00ff00ff00ff00ffull) << b;
    x = (x & 0x0000ffff0000ffffull) | ((x >> 16) & 0x0000ffff0000ffffull) << (2 * b);
    x = (x & 0x00000000ffffffffull) | (x >> 32) << (4 * b);
    return x;
}
/* The inverse: 8*b bits (the rest zero) to 8 bytes. */
PK_AQ_INLINE uint64_t aq_expand8(uint64_t x, const int b) {
    if (b == 8) return x;
    const uint64_t f4 = (1ull << (4 * b)) - 1, f2 = (1ull << (2 * b)) - 1, f1 = (1ull << b) - 1;
    x = (x & f4) | (x >> (4 * b)) << 32;
    x = (x & (f2 * 0x0000000100000001ull)) | ((x >> (2 * b)) & (f2 * 0x0000000100000001ull)) << 16;
    x = (x & (f1 * 0x0001000100010001ull)) | ((x >> b) & (f1 * 0x0001000100010001ull)) << 8;
    return x;
}

/* Calls F(args..., b) with b the compile-time constant of each width mlx supports, so every
   width gets its own copy with the shifts and byte counts fixed (aq_pack_b, aq_unpack_b). */
#define AQ_WITH_CONSTANT_BITS(bits, F, ...)        \
    do {                                           \
        switch (bits) {                            \
        case 2: F(__VA_ARGS__, 2); break;          \
        case 3: F(__VA_ARGS__, 3); break;          \
        case 4: F(__VA_ARGS__, 4); break;          \
        case 5: F(__VA_ARGS__, 5); break;          \
        case 6: F(__VA_ARGS__, 6); break;          \
        default: F(__VA_ARGS__, 8); break;         \
        }                                          \
    } while (0)

PK_AQ_INLINE void aq_pack_b(const uint8_t *qb, int n, uint8_t *out, const int b) {
    for (int k = 0; k < n / 8; k++) {
        uint64_t x;
        memcpy(&x, qb + 8 * k, 8);
        x = aq_compress8(x, b);
        memcpy(out + (long)k * b, &x, (size_t)b);  /* b is a constant after inlining */
    }
}
/* n q bytes (n % 8 == 0) to n*bits/8 packed bytes. */
PK_AQ_INLINE void aq_pack(const uint8_t *qb, int n, uint8_t *out, int bits) {
    AQ_WITH_CONSTANT_BITS(bits, aq_pack_b, qb, n, out);
}

/* Portable version of the fast structure (non-x86 or pre-AVX2 CPUs). */
static void aq_quantize_scalar(const float *w, long n_groups, int group, int bits,
                               int dt, uint32_t *wq, void *scales, void *biases) {
    const float n_bins = (float)((1 << bits) - 1);
    uint8_t qb[128];
    for (long i = 0; i < n_groups; i++) {
        const float *x = w + i * group;
        float w_min = INFINITY, w_max = -INFINITY;
        for (int j = 0; j < group; j++) {
            w_max = w_max < x[j] ? x[j] : w_max;
            w_min = x[j] < w_min ? x[j] : w_min;
        }
        float scale, bias;
        aq_group_params(w_min, w_max, n_bins, &scale, &bias);
        for (int j = 0; j < group; j++) qb[j] = (uint8_t)aq_q(x[j], scale, bias, n_bins);
        aq_pack(qb, group, (uint8_t *)wq + i * (long)group * bits / 8, bits);
        aq_store(scales, i, dt, scale);
        aq_store(biases, i, dt, bias);
    }
}

#if defined(PK_AQ_X86)
#define PK_AQ_AVX2 __attribute__((target("avx2,f16c")))
#define PK_AQ_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,f16c")))

/* min/max ignore order: a SIMD reduction gives the sequential loop's result (NaN aside). */
PK_AQ_AVX2 static inline float aq_hmin8(__m256 v) {
    __m128 a = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_min_ps(a, _mm_movehl_ps(a, a));
    a = _mm_min_ss(a, _mm_shuffle_ps(a, a, 1));
    return _mm_cvtss_f32(a);
}
PK_AQ_AVX2 static inline float aq_hmax8(__m256 v) {
    __m128 a = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_max_ps(a, _mm_movehl_ps(a, a));
    a = _mm_max_ss(a, _mm_shuffle_ps(a, a, 1));
    return _mm_cvtss_f32(a);
}

/* 8 q values as int32. max_ps(v, 0) returns 0 for NaN (second operand), like aq_q. */
PK_AQ_AVX2 static inline __m256i aq_q8_avx2(const float *x, __m256 vs, __m256 vb, __m256 vnb) {
    __m256 v = _mm256_div_ps(_mm256_sub_ps(_mm256_loadu_ps(x), vb), vs);
    v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), vnb);
    return _mm256_cvttps_epi32(v);
}

PK_AQ_AVX2 static void aq_quantize_avx2(const float *w, long n_groups, int group, int bits,
                                        int dt, uint32_t *wq, void *scales, void *biases) {
    const float n_bins = (float)((1 << bits) - 1);
    const __m256 vnb = _mm256_set1_ps(n_bins);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    _Alignas(32) uint8_t qb[128];
    for (long i = 0; i < n_groups; i++) {
        const float *x = w + i * group;
        /* group >= 32: four independent accumulator pairs */
        __m256 mn0 = _mm256_loadu_ps(x), mn1 = _mm256_loadu_ps(x + 8);
        __m256 mn2 = _mm256_loadu_ps(x + 16), mn3 = _mm256_loadu_ps(x + 24);
        __m256 mx0 = mn0, mx1 = mn1, mx2 = mn2, mx3 = mn3;
        for (int j = 32; j < group; j += 32) {
            __m256 a = _mm256_loadu_ps(x + j), b = _mm256_loadu_ps(x + j + 8);
            __m256 c = _mm256_loadu_ps(x + j + 16), d = _mm256_loadu_ps(x + j + 24);
            mn0 = _mm256_min_ps(a, mn0); mx0 = _mm256_max_ps(a, mx0);
            mn1 = _mm256_min_ps(b, mn1); mx1 = _mm256_max_ps(b, mx1);
            mn2 = _mm256_min_ps(c, mn2); mx2 = _mm256_max_ps(c, mx2);
            mn3 = _mm256_min_ps(d, mn3); mx3 = _mm256_max_ps(d, mx3);
        }
        float w_min = aq_hmin8(_mm256_min_ps(_mm256_min_ps(mn0, mn1), _mm256_min_ps(mn2, mn3)));
        float w_max = aq_hmax8(_mm256_max_ps(_mm256_max_ps(mx0, mx1), _mm256_max_ps(mx2, mx3)));
        float scale, bias;
        aq_group_params(w_min, w_max, n_bins, &scale, &bias);

        const __m256 vs = _mm256_set1_ps(scale), vb = _mm256_set1_ps(bias);
        for (int j = 0; j < group; j += 32) {
            __m256i a = aq_q8_avx2(x + j, vs, vb, vnb), b = aq_q8_avx2(x + j + 8, vs, vb, vnb);
            __m256i c = aq_q8_avx2(x + j + 16, vs, vb, vnb), d = aq_q8_avx2(x + j + 24, vs, vb, vnb);
            /* packs work per 128-bit lane; the permute restores value order */
            __m256i ab = _mm256_packus_epi32(a, b), cd = _mm256_packus_epi32(c, d);
            __m256i abcd = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(ab, cd), order);
            _mm256_store_si256((__m256i *)(qb + j), abcd);
        }
        aq_pack(qb, group, (uint8_t *)wq + i * (long)group * bits / 8, bits);
        aq_store(scales, i, dt, scale);
        aq_store(biases, i, dt, bias);
    }
}

PK_AQ_AVX512 static inline __m128i aq_q16_avx512(const float *x, __m512 vs, __m512 vb, __m512 vnb) {
    __m512 v = _mm512_div_ps(_mm512_sub_ps(_mm512_loadu_ps(x), vb), vs);
    v = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_setzero_ps()), vnb);
    return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(v));
}

PK_AQ_AVX512 static void aq_quantize_avx512(const float *w, long n_groups, int group, int bits,
                                            int dt, uint32_t *wq, void *scales, void *biases) {
    const float n_bins = (float)((1 << bits) - 1);
    const __m512 vnb = _mm512_set1_ps(n_bins);
    _Alignas(64) uint8_t qb[128];
    for (long i = 0; i < n_groups; i++) {
        const float *x = w + i * group;
        __m512 mn0 = _mm512_loadu_ps(x), mn1 = _mm512_loadu_ps(x + 16);
        __m512 mx0 = mn0, mx1 = mn1;
        for (int j = 32; j < group; j += 32) {
            __m512 a = _mm512_loadu_ps(x + j), b = _mm512_loadu_ps(x + j + 16);
            mn0 = _mm512_min_ps(a, mn0); mx0 = _mm512_max_ps(a, mx0);
            mn1 = _mm512_min_ps(b, mn1); mx1 = _mm512_max_ps(b, mx1);
        }
        float w_min = _mm512_reduce_min_ps(_mm512_min_ps(mn0, mn1));
        float w_max = _mm512_reduce_max_ps(_mm512_max_ps(mx0, mx1));
        float scale, bias;
        aq_group_params(w_min, w_max, n_bins, &scale, &bias);

        const __m512 vs = _mm512_set1_ps(scale), vb = _mm512_set1_ps(bias);
        for (int j = 0; j < group; j += 32) {
            __m128i a = aq_q16_avx512(x + j, vs, vb, vnb);
            __m128i b = aq_q16_avx512(x + j + 16, vs, vb, vnb);
            _mm256_store_si256((__m256i *)(qb + j), _mm256_set_m128i(b, a));
        }
        aq_pack(qb, group, (uint8_t *)wq + i * (long)group * bits / 8, bits);
        aq_store(scales, i, dt, scale);
        aq_store(biases, i, dt, bias);
    }
}
#endif /* PK_AQ_X86 */

int pk_affine_quant_best_isa(void) {
#if defined(PK_AQ_X86)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vl"))
        return PK_AQ_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c"))
        return PK_AQ_ISA_AVX2;
#endif
    return PK_AQ_ISA_SCALAR;
}

static int aq_pick_isa(int isa) {
    int best = pk_affine_quant_best_isa();
    return (isa < 0 || isa > best) ? best : isa;
}

void pk_affine_quantize_dt_isa(int isa, const float *w, long rows, long cols, int group,
                               int bits, int out_dtype, uint32_t *wq, void *scales,
                               void *biases) {
    const long n_groups = rows * cols / group;
    switch (aq_pick_isa(isa)) {
#if defined(PK_AQ_X86)
    case PK_AQ_ISA_AVX512:
        aq_quantize_avx512(w, n_groups, group, bits, out_dtype, wq, scales, biases);
        return;
    case PK_AQ_ISA_AVX2:
        aq_quantize_avx2(w, n_groups, group, bits, out_dtype, wq, scales, biases);
        return;
#endif
    default:
        aq_quantize_scalar(w, n_groups, group, bits, out_dtype, wq, scales, biases);
    }
}

void pk_affine_quantize_dt(const float *w, long rows, long cols, int group, int bits,
                           int out_dtype, uint32_t *wq, void *scales, void *biases) {
    pk_affine_quantize_dt_isa(PK_AQ_ISA_AUTO, w, rows, cols, group, bits, out_dtype, wq,
                              scales, biases);
}

void pk_affine_quantize(const float *w, long rows, long cols, int group, int bits,
                        uint32_t *wq, float *scales, float *biases) {
    pk_affine_quantize_dt(w, rows, cols, group, bits, PK_AQ_F32, wq, scales, biases);
}

/* ------------------------------------------------------------------------------------- */
/* Dequantize. mlx computes scales*q + biases with the result type of the scales dtype:
   float16/bfloat16 arithmetic is float arithmetic rounded after each operation (the
   product s*q is exact in float, then rounded to the dtype; the sum is rounded to float
   and then to the dtype, like mlx does). float32 is a multiply, then an add, not an FMA. */

void pk_affine_dequantize_ref(const uint32_t *wq, const void *scales, const void *biases,
                              int scale_dtype, long rows, long cols, int group, int bits,
                              float *out) {
    const uint8_t *in8 = (const uint8_t *)wq;
    const uint32_t mask = (1u << bits) - 1;
    for (long r = 0; r < rows; r++) {
        const uint8_t *row = in8 + r * cols * bits / 8;
        for (long c = 0; c < cols; c++) {
            long bit = c * bits;                  /* value c sits at bit c*bits of the row */
            uint32_t window = 0;
            for (int b = 0; b < 3 && (bit >> 3) + b < cols * bits / 8; b++)
                window |= (uint32_t)row[(bit >> 3) + b] << (8 * b);
            uint32_t q = (window >> (bit & 7)) & mask;
            long gi = r * (cols / group) + c / group;
            float s = aq_load(scales, gi, scale_dtype), bias = aq_load(biases, gi, scale_dtype);
            float p = aq_round(s * (float)q, scale_dtype);
            PK_AQ_BARRIER(p);
            out[r * cols + c] = aq_round(p + bias, scale_dtype);
        }
    }
}

PK_AQ_INLINE void aq_unpack_b(const uint8_t *in, int n, uint8_t *qb, const int b) {
    for (int k = 0; k < n / 8; k++) {
        uint64_t x = 0;
        memcpy(&x, in + (long)k * b, (size_t)b);
        x = aq_expand8(x, b);
        memcpy(qb + 8 * k, &x, 8);
    }
}
/* n*bits/8 packed bytes to n q bytes (n % 8 == 0). */
PK_AQ_INLINE void aq_unpack(const uint8_t *in, int n, uint8_t *qb, int bits) {
    AQ_WITH_CONSTANT_BITS(bits, aq_unpack_b, in, n, qb);
}

static void aq_dequantize_scalar(const uint32_t *wq, const void *scales, const void *biases,
                                 int dt, long n_groups, int group, int bits, float *out) {
    uint8_t qb[128];
    for (long i = 0; i < n_groups; i++) {
        aq_unpack((const uint8_t *)wq + i * (long)group * bits / 8, group, qb, bits);
        float s = aq_load(scales, i, dt), b = aq_load(biases, i, dt);
        float *o = out + i * group;
        for (int j = 0; j < group; j++) {
            float p = aq_round(s * (float)qb[j], dt);
            PK_AQ_BARRIER(p);
            o[j] = aq_round(p + b, dt);
        }
    }
}

#if defined(PK_AQ_X86)
PK_AQ_AVX2 static inline __m256 aq_round8(__m256 v, int dt) {
    if (dt == PK_AQ_F16)
        return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    if (dt == PK_AQ_BF16) {   /* finite values: the same RNE as aq_f32_to_bf16 */
        __m256i u = _mm256_castps_si256(v);
        __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        u = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb));
        return _mm256_castsi256_ps(_mm256_and_si256(u, _mm256_set1_epi32((int)0xffff0000u)));
    }
    return v;
}

PK_AQ_AVX2 static void aq_dequantize_avx2(const uint32_t *wq, const void *scales,
                                          const void *biases, int dt, long n_groups,
                                          int group, int bits, float *out) {
    _Alignas(32) uint8_t qb[128];
    for (long i = 0; i < n_groups; i++) {
        aq_unpack((const uint8_t *)wq + i * (long)group * bits / 8, group, qb, bits);
        const __m256 vs = _mm256_set1_ps(aq_load(scales, i, dt));
        const __m256 vb = _mm256_set1_ps(aq_load(biases, i, dt));
        float *o = out + i * group;
        for (int j = 0; j < group; j += 8) {
            __m256 q = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(qb + j))));
            __m256 p = aq_round8(_mm256_mul_ps(vs, q), dt);
            PK_AQ_BARRIER(p);
            _mm256_storeu_ps(o + j, aq_round8(_mm256_add_ps(p, vb), dt));
        }
    }
}
#endif

void pk_affine_dequantize_isa(int isa, const uint32_t *wq, const void *scales,
                              const void *biases, int scale_dtype, long rows, long cols,
                              int group, int bits, float *out) {
    const long n_groups = rows * cols / group;
#if defined(PK_AQ_X86)
    if (aq_pick_isa(isa) >= PK_AQ_ISA_AVX2) {
        aq_dequantize_avx2(wq, scales, biases, scale_dtype, n_groups, group, bits, out);
        return;
    }
#endif
    (void)isa;
    aq_dequantize_scalar(wq, scales, biases, scale_dtype, n_groups, group, bits, out);
}

void pk_affine_dequantize(const uint32_t *wq, const void *scales, const void *biases,
                          int scale_dtype, long rows, long cols, int group, int bits,
                          float *out) {
    pk_affine_dequantize_isa(PK_AQ_ISA_AUTO, wq, scales, biases, scale_dtype, rows, cols,
                             group, bits, out);
}
