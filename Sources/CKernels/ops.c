/* Per-token layer operations. See include/pk_ops.h. */
#include "pk_ops.h"

#include <math.h>

#include "dot_lanes.h"

void pk_rmsnorm(float *out, const float *x, const float *w, long n, float eps) {
    float inv = 1.0f / sqrtf(pk_dot_lanes(x, x, n) / (float)n + eps);
    for (long i = 0; i < n; i++) out[i] = w[i] * (x[i] * inv);
}

void pk_layernorm(float *out, const float *x, const float *w, const float *b, long n, float eps) {
    float acc[PK_LANES] = {0};
    long i = 0;
    for (; i + PK_LANES <= n; i += PK_LANES)
        for (int k = 0; k < PK_LANES; k++) acc[k] += x[i + k];
    float sum = 0;
    for (; i < n; i++) sum += x[i];
    for (int k = 0; k < PK_LANES; k++) sum += acc[k];
    float mean = sum / (float)n;
    float var[PK_LANES] = {0};
    i = 0;
    for (; i + PK_LANES <= n; i += PK_LANES)
        for (int k = 0; k < PK_LANES; k++) var[k] += (x[i + k] - mean) * (x[i + k] - mean);
    float sq = 0;
    for (; i < n; i++) sq += (x[i] - mean) * (x[i] - mean);
    for (int k = 0; k < PK_LANES; k++) sq += var[k];
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

/* The first index of the largest value (0 when none is above -inf: all -inf or NaN), as the
   plain loop `if (x[i] > top) { top = x[i]; best = i; }` gives it. That loop is one chain of
   compares, ~50 us over a 49,152-token vocabulary: a speculative block takes one per row, a
   few percent of a small model's step. Here the maximum comes from PK_LANES independent
   lanes (a select the compiler vectorises; NaN never wins a `>`), then the first position
   equal to it is looked for a lane group at a time. */
long pk_argmax(const float *x, long n) {
    float lanes[PK_LANES];
    for (int k = 0; k < PK_LANES; k++) lanes[k] = -INFINITY;
    long i = 0;
    for (; i + PK_LANES <= n; i += PK_LANES)
        for (int k = 0; k < PK_LANES; k++) lanes[k] = x[i + k] > lanes[k] ? x[i + k] : lanes[k];
    float top = -INFINITY;
    for (; i < n; i++) top = x[i] > top ? x[i] : top;
    for (int k = 0; k < PK_LANES; k++) top = lanes[k] > top ? lanes[k] : top;
    if (!(top > -INFINITY)) return 0;
    for (i = 0; i + PK_LANES <= n; i += PK_LANES) {
        int hit = 0;
        for (int k = 0; k < PK_LANES; k++) hit |= x[i + k] == top;
        if (hit) break;
    }
    for (; i < n; i++)
        if (x[i] == top) return i;
    return 0; /* not reached: top is one of x */
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
