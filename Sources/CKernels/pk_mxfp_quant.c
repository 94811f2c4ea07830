/* MLX mxfp4 / nvfp4 / mxfp8 quantization and dequantization, scalar, bit-identical to mlx
   0.32's CPU path (layout and modes in include/pk_mxfp.h).

   On the CPU mlx quantizes these modes with a graph of array operations (ops.cpp
   fp_quantize), each computed in the weight's dtype T (f32, f16 or bf16) and rounded to it
   (round to nearest even) before the next one uses it:
     amax  = max |w| over the group                        (exact)
     s     = T(amax / M)         M = 6 (fp4) or 448 (fp8)
   mxfp4 / mxfp8 (E8M0 scale):
     k     = s == 0 ? 0 : ceil(log2(s)), exact   (the smallest 2^k >= s, so no value of the
                                              group clamps; not the round-to-nearest of
                                              older mlx, and not a float log2, which loses
                                              s = 2^k * (1 + 2^-23))
     p     = T(2^k)                  (0 when 2^k is below T's smallest subnormal)
     v     = T(w / p)
     byte  = uint8(k + 127)          (wraps modulo 256, as C++'s conversion does)
   nvfp4 (E4M3 scale):
     byte  = e4m3(float(s));  p = e4m3 value of byte;  v = float(T(w / p))
   values:
     fp4   code = argmin_i T(|v - E2M1[i]|)  (nvfp4: in float32, because mlx multiplies v by
           a float32 1.0 first); the first index wins ties (strict <), and a NaN or infinite
           distance (p == 0) leaves index 0
     fp8   code = e4m3(v)            (saturating at 448: mlx 0.32.4 never writes 0x7F)
   Dequantize (fp_dequantize) computes in the output dtype O: value and scale exactly,
   2^(byte-127) rounded to O, then O(value * scale). */
#include "pk_mxfp.h"

#include "pk_affine_quant.h"

#include <math.h>
#include <string.h>

#define PK_MX_INLINE static inline __attribute__((always_inline))

const float pk_mx_e2m1[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                              -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

int pk_mx_group(int mode) { return mode == PK_MX_NVFP4 ? 16 : 32; }
int pk_mx_bits(int mode) { return mode == PK_MX_MXFP8 ? 8 : 4; }

/* ---- rounding a float32 to the dtype mlx computes in (round to nearest even) ---------- */

PK_MX_INLINE uint32_t mx_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
PK_MX_INLINE float mx_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

PK_MX_INLINE float mx_round_bf16(float f) {
    uint32_t u = mx_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return f; /* NaN stays NaN */
    return mx_float(((u + 0x7fffu + ((u >> 16) & 1u)) >> 16) << 16);
}

PK_MX_INLINE float mx_round_f16(float f) {
    float a = fabsf(f);
    if (!(a == a)) return f;
    if (a >= 65520.0f) return copysignf(INFINITY, f);  /* half-way to 2^16 and beyond */
    if (a < 0x1p-14f) {                                /* subnormal half: unit 2^-24 */
        return copysignf(rintf(a * 0x1p24f) * 0x1p-24f, f);
    }
    /* Normal half: 11 significant bits. Adding and subtracting 1.5 * 2^(e+13) rounds to a
       multiple of 2^(e-10) in one IEEE operation (nearest even). */
    int e;
    frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1): unit in the last place is 2^(e-11) */
    float big = ldexpf(1.5f, e + 12);
    volatile float t = a + big;
    return copysignf(t - big, f);
}

PK_MX_INLINE float mx_round(float f, int dtype) {
    switch (dtype) {
    case PK_AQ_BF16: return mx_round_bf16(f);
    case PK_AQ_F16: return mx_round_f16(f);
    default: return f;
    }
}

/* ---- E4M3 ------------------------------------------------------------------------------ */

float pk_mx_e4m3_to_f32(uint8_t b) {
    if ((b & 0x7f) == 0x7f) return NAN; /* E4M3FN has no infinities; S.1111.111 is NaN */
    int e = (b >> 3) & 15, m = b & 7;
    float v = e == 0 ? (float)m * 0x1p-9f : ldexpf(1.0f + (float)m * 0.125f, e - 7);
    return (b & 0x80) ? -v : v;
}

uint8_t pk_mx_f32_to_e4m3(float x) {
    uint8_t sign = signbit(x) ? 0x80 : 0;
    float a = fabsf(x);
    if (a >= 448.0f) return sign | 0x7e;
    if (a < 0x1p-6f) return sign | (uint8_t)rintf(a * 0x1p9f); /* subnormal; 8 = 2^-6 */
    int e;
    frexpf(a, &e);                          /* a in [2^(e-1), 2^e) */
    int q = (int)rintf(ldexpf(a, 4 - e));   /* 3 mantissa bits + the leading one: [8, 16] */
    int exp = e - 1 + 7;
    if (q == 16) { q = 8; exp += 1; }
    return sign | (uint8_t)((exp << 3) | (q - 8));
}

float pk_mx_scale_f32(int mode, uint8_t b) {
    return mode == PK_MX_NVFP4 ? pk_mx_e4m3_to_f32(b) : ldexpf(1.0f, (int)b - 127);
}

/* ---- quantize ---------------------------------------------------------------------------- */

/* argmin over the E2M1 table of the distance rounded to `dtype` (first index wins). */
PK_MX_INLINE uint32_t mx_e2m1_code(float v, int dtype) {
    float best = mx_round(fabsf(v - pk_mx_e2m1[0]), dtype);
    uint32_t code = 0;
    for (uint32_t i = 1; i < 16; i++) {
        float d = mx_round(fabsf(v - pk_mx_e2m1[i]), dtype);
        if (d < best) { best = d; code = i; }
    }
    return code;
}

/* One group: scale byte and the divisor p every value is divided by. */
PK_MX_INLINE uint8_t mx_group_scale(const float *w, int group, int mode, int dtype, float *p) {
    float amax = 0.0f;
    for (int j = 0; j < group; j++) amax = fmaxf(amax, fabsf(w[j]));
    float s = mx_round(amax / (mode == PK_MX_MXFP8 ? 448.0f : 6.0f), dtype);
    if (mode == PK_MX_NVFP4) {
        uint8_t b = pk_mx_f32_to_e4m3(s);
        *p = pk_mx_e4m3_to_f32(b);
        return b;
    }
    int k = 0;
    if (s != 0.0f) {
        int e;
        float m = frexpf(s, &e);  /* s = m * 2^e, m in [0.5, 1) */
        k = m == 0.5f ? e - 1 : e;
    }
    *p = mx_round(ldexpf(1.0f, k), dtype);
    return (uint8_t)(k + 127);
}

void pk_mx_quantize_ref(const float *w, int dtype, long rows, long cols, int mode,
                        uint32_t *wq, uint8_t *scales) {
    int group = pk_mx_group(mode);
    long groups = cols / group;
    long words = cols * pk_mx_bits(mode) / 32;
    for (long r = 0; r < rows; r++) {
        const float *wr = w + r * cols;
        uint32_t *qr = wq + r * words;
        uint8_t *sr = scales + r * groups;
        for (long g = 0; g < groups; g++) {
            const float *wg = wr + g * group;
            float p;
            sr[g] = mx_group_scale(wg, group, mode, dtype, &p);
            for (int j = 0; j < group; j++) {
                long i = g * group + j;  /* element index in the row */
                float v = mx_round(wg[j] / p, dtype);
                uint32_t code;
                if (mode == PK_MX_MXFP8) {
                    code = pk_mx_f32_to_e4m3(v);
                    if (i % 4 == 0) qr[i / 4] = 0;
                    qr[i / 4] |= code << (8 * (i % 4));
                } else {
                    /* p == 0 gives an infinite or NaN v: every distance is, and mlx's argmin
                       keeps index 0. */
                    code = isfinite(v) ? mx_e2m1_code(v, mode == PK_MX_NVFP4 ? PK_AQ_F32 : dtype)
                                       : 0;
                    if (i % 8 == 0) qr[i / 8] = 0;
                    qr[i / 8] |= code << (4 * (i % 8));
                }
            }
        }
    }
}

/* ---- dequantize -------------------------------------------------------------------------- */

void pk_mx_dequantize_ref(const uint32_t *wq, const uint8_t *scales, long rows, long cols,
                          int mode, int out_dtype, float *out) {
    int group = pk_mx_group(mode);
    long groups = cols / group;
    long words = cols * pk_mx_bits(mode) / 32;
    for (long r = 0; r < rows; r++) {
        const uint32_t *qr = wq + r * words;
        for (long g = 0; g < groups; g++) {
            uint8_t b = scales[r * groups + g];
            float scale = mode == PK_MX_NVFP4 ? pk_mx_e4m3_to_f32(b)
                                              : mx_round(ldexpf(1.0f, (int)b - 127), out_dtype);
            for (int j = 0; j < group; j++) {
                long i = g * group + j;
                float v = mode == PK_MX_MXFP8
                              ? pk_mx_e4m3_to_f32((uint8_t)(qr[i / 4] >> (8 * (i % 4))))
                              : pk_mx_e2m1[(qr[i / 8] >> (4 * (i % 8))) & 15];
                out[r * cols + i] = mx_round(v * scale, out_dtype);
            }
        }
    }
}
