/* The small per-token operations of a Phi-3 layer, each O(hidden) per token: plain C with no
   ISA-specific twin (they are their own reference; the matrix products dwarf them). The one
   that grows with the context, attention, is in pk_attention.h.

   Shapes are in the comments; n, dims and positions are validated by the Swift caller. */
#ifndef PHIKIT_PK_OPS_H
#define PHIKIT_PK_OPS_H
#include <stdint.h>

/* out[i] = w[i] * x[i] / sqrt(mean(x^2) + eps), as transformers' Phi3RMSNorm in float32.
   out may equal x. */
void pk_rmsnorm(float *out, const float *x, const float *w, long n, float eps);

/* out[i] = w[i] * (x[i] - mean) / sqrt(var + eps) + b[i], mean and (biased) variance over the
   n values, as torch's LayerNorm in float32 (phi, phimoe). out may equal x. */
void pk_layernorm(float *out, const float *x, const float *w, const float *b, long n, float eps);

/* out[i] = up[i] * silu(gate[i]) with separate gate and up vectors (mlx's swiglu(gate, up)). */
void pk_silu_mul_split(float *out, const float *gate, const float *up, long n);

/* out[i] = up[i] * silu(gate[i]) with gate = gate_up[0..n), up = gate_up[n..2n) (the halves
   of the fused gate_up_proj output) and silu(g) = g / (1 + exp(-g)). */
void pk_silu_mul(float *out, const float *gate_up, long n);

/* x[i] += y[i] */
void pk_add(float *x, const float *y, long n);

/* x[i] = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) in place: transformers' gelu_new
   (NewGELUActivation), which mlx's gelu_approx also computes. */
void pk_gelu_tanh(float *x, long n);

/* Index of the largest element, the first one on ties (as argmax in torch, numpy and mlx);
   NaNs are never chosen unless all are NaN (then 0). */
long pk_argmax(const float *x, long n);

/* Rotates the first rot_dim dims of each of `heads` vectors of head_dim floats, in place,
   HF style ("rotate_half": dim i pairs with dim i + rot_dim/2):
     v[i]        = v[i]*cos[i] - v[i+h]*sin[i]
     v[i+h]      = v[i+h]*cos[i] + v[i]*sin[i]      for i < h = rot_dim/2.
   cos/sin [rot_dim/2] already include the attention scaling factor. */
void pk_rope(float *v, int heads, int head_dim, int rot_dim, const float *cos, const float *sin);

#endif
