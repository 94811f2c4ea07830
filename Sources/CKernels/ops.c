/* Per-token layer operations and attention. See include/pk_ops.h. */
#include "pk_ops.h"

#include <math.h>

#include "pk_matvec.h"

/* Partial sums in 8 independent lanes let the compiler vectorise float reductions without
   -ffast-math (which we never use: it would break the -inf masks of attention). */
#define LANES 8

static inline __attribute__((always_inline)) float dot_lanes(const float *a, const float *b,
                                                             long n) {
    float acc[LANES] = {0};
    long i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) acc[k] += a[i + k] * b[i + k];
    float s = 0;
    for (; i < n; i++) s += a[i] * b[i];
    for (int k = 0; k < LANES; k++) s += acc[k];
    return s;
}

void pk_rmsnorm(float *out, const float *x, const float *w, long n, float eps) {
    float inv = 1.0f / sqrtf(dot_lanes(x, x, n) / (float)n + eps);
    for (long i = 0; i < n; i++) out[i] = w[i] * (x[i] * inv);
}

void pk_layernorm(float *out, const float *x, const float *w, const float *b, long n, float eps) {
    float acc[LANES] = {0};
    long i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) acc[k] += x[i + k];
    float sum = 0;
    for (; i < n; i++) sum += x[i];
    for (int k = 0; k < LANES; k++) sum += acc[k];
    float mean = sum / (float)n;
    float var[LANES] = {0};
    i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++) var[k] += (x[i + k] - mean) * (x[i + k] - mean);
    float sq = 0;
    for (; i < n; i++) sq += (x[i] - mean) * (x[i] - mean);
    for (int k = 0; k < LANES; k++) sq += var[k];
    float inv = 1.0f / sqrtf(sq / (float)n + eps);
    for (i = 0; i < n; i++) out[i] = w[i] * ((x[i] - mean) * inv) + b[i];
}

void pk_silu_mul_split(float *out, const float *gate, const float *up, long n) {
    for (long i = 0; i < n; i++) out[i] = up[i] * (gate[i] / (1.0f + expf(-gate[i])));
}

void pk_silu_mul(float *out, const float *gate_up, long n) {
    const float *up = gate_up + n;
    for (long i = 0; i < n; i++) {
        float g = gate_up[i];
        out[i] = up[i] * (g / (1.0f + expf(-g)));
    }
}

void pk_add(float *x, const float *y, long n) {
    for (long i = 0; i < n; i++) x[i] += y[i];
}

void pk_gelu_tanh(float *x, long n) {
    const float k = 0.7978845608028654f; /* sqrt(2/pi) */
    for (long i = 0; i < n; i++) {
        const float v = x[i];
        x[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
    }
}

long pk_argmax(const float *x, long n) {
    long best = 0;
    float top = -INFINITY;
    for (long i = 0; i < n; i++)
        if (x[i] > top) { top = x[i]; best = i; }
    return best;
}

void pk_rope(float *v, int heads, int head_dim, int rot_dim, const float *cos, const float *sin) {
    int h = rot_dim / 2;
    for (int head = 0; head < heads; head++) {
        float *p = v + (long)head * head_dim;
        for (int i = 0; i < h; i++) {
            float a = p[i], b = p[i + h];
            p[i] = a * cos[i] - b * sin[i];
            p[i + h] = b * cos[i] + a * sin[i];
        }
    }
}

/* ---- attention ---------------------------------------------------------------------------- */

void pk_attention_ref(float *out, const float *q, const float *k, const float *v,
                      float *scores, long lo, long hi, int head_dim, float scale) {
    double top = -INFINITY;
    for (long j = lo; j <= hi; j++) {
        double s = 0;
        for (int d = 0; d < head_dim; d++) s += (double)q[d] * k[j * head_dim + d];
        scores[j] = (float)(s * scale);
        if (scores[j] > top) top = scores[j];
    }
    double total = 0;
    for (long j = lo; j <= hi; j++) total += exp(scores[j] - top);
    for (int d = 0; d < head_dim; d++) {
        double acc = 0;
        for (long j = lo; j <= hi; j++) acc += exp(scores[j] - top) / total * v[j * head_dim + d];
        out[d] = (float)acc;
    }
}

/* Row j of a cache (f32, or f16 widened exactly into `tmp`): the one place the two cache
   widths differ. */
static inline __attribute__((always_inline)) const float *cache_row(
    const void *base, int f16, long j, int head_dim, float *tmp) {
    if (!f16) return (const float *)base + j * head_dim;
    const _Float16 *h = (const _Float16 *)base + j * head_dim;
    for (int d = 0; d < head_dim; d++) tmp[d] = (float)h[d];
    return tmp;
}

/* Written once in plain C; the wrappers below compile it for each instruction set (the
   function is inlined into callers with wider targets, and vectorised there; F16C widens a
   16-bit cache row in a few instructions). */
static inline __attribute__((always_inline)) void attention_core(
    float *out, const float *q, const void *k, const void *v, int f16, float *scores, long lo,
    long hi, int head_dim, float scale) {
    float tmp[PK_ATTENTION_MAX_HEAD_DIM];
    float top = -INFINITY;
    for (long j = lo; j <= hi; j++) {
        float s = dot_lanes(q, cache_row(k, f16, j, head_dim, tmp), head_dim) * scale;
        scores[j] = s;
        top = s > top ? s : top;
    }
    float total = 0;
    for (long j = lo; j <= hi; j++) {
        scores[j] = expf(scores[j] - top);
        total += scores[j];
    }
    for (int d = 0; d < head_dim; d++) out[d] = 0;
    for (long j = lo; j <= hi; j++) {
        const float p = scores[j], *vj = cache_row(v, f16, j, head_dim, tmp);
        for (int d = 0; d < head_dim; d++) out[d] += p * vj[d];
    }
    const float inv = 1.0f / total;
    for (int d = 0; d < head_dim; d++) out[d] *= inv;
}

static void attention_portable(float *out, const float *q, const void *k, const void *v,
                               int f16, float *scores, long lo, long hi, int head_dim,
                               float scale) {
    attention_core(out, q, k, v, f16, scores, lo, hi, head_dim, scale);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma,f16c"))) static void attention_avx2(
    float *out, const float *q, const void *k, const void *v, int f16, float *scores, long lo,
    long hi, int head_dim, float scale) {
    attention_core(out, q, k, v, f16, scores, lo, hi, head_dim, scale);
}

__attribute__((target("avx512f,avx512vl,avx512bw,avx2,fma,f16c"))) static void attention_avx512(
    float *out, const float *q, const void *k, const void *v, int f16, float *scores, long lo,
    long hi, int head_dim, float scale) {
    attention_core(out, q, k, v, f16, scores, lo, hi, head_dim, scale);
}
#endif

static void attention_dispatch(int isa, float *out, const float *q, const void *k,
                               const void *v, int f16, float *scores, long lo, long hi,
                               int head_dim, float scale) {
    int best = pk_matvec_best_isa();
    if (isa > best) isa = best;
#if defined(__x86_64__)
    if (isa == PK_MV_ISA_AVX512) {
        attention_avx512(out, q, k, v, f16, scores, lo, hi, head_dim, scale);
        return;
    }
    if (isa == PK_MV_ISA_AVX2) {
        attention_avx2(out, q, k, v, f16, scores, lo, hi, head_dim, scale);
        return;
    }
#endif
    attention_portable(out, q, k, v, f16, scores, lo, hi, head_dim, scale);
}

void pk_attention_isa(int isa, float *out, const float *q, const float *k, const float *v,
                      float *scores, long lo, long hi, int head_dim, float scale) {
    attention_dispatch(isa, out, q, k, v, 0, scores, lo, hi, head_dim, scale);
}

void pk_attention_f16_isa(int isa, float *out, const float *q, const uint16_t *k,
                          const uint16_t *v, float *scores, long lo, long hi, int head_dim,
                          float scale) {
    attention_dispatch(isa, out, q, k, v, 1, scores, lo, hi, head_dim, scale);
}
