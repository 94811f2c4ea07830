/* MLX affine quantization (mode "affine"), bit-identical to mlx.core.quantize /
   mlx.core.dequantize (checked against mlx 0.32.4 golden files in
   Tests/PhiFormatsTests/Fixtures/quant).

   Layout (row-major, C order):
     w        [rows][cols]               float32 input (bf16/f16 sources are widened to f32
                                          first: mlx widens each element to float too, so this
                                          is exact, not an approximation)
     wq       [rows][cols*bits/32]       uint32, the row's q values as one little-endian bit
                                          stream, value i at bit i*bits (2/4/8 bits: 32/bits
                                          values per word, low bits first; 3/5/6 bits: values
                                          cross byte and word boundaries, 8 values = 3 or 5
                                          bytes, 4 six-bit values = 3 bytes, exactly as mlx)
     scales   [rows][cols/group]         see the variants below
     biases   [rows][cols/group]
   w ≈ scale*q + bias.   bits ∈ {2,3,4,5,6,8}, group ∈ {32,64,128}, cols % group == 0.
   Parameters are NOT validated here (the Swift wrapper does that); non-finite inputs give
   unspecified but in-bounds results (every q is clamped to [0, 2^bits-1]).

   Every kernel comes as a scalar `_ref` (a literal port of mlx, the oracle) and a fast
   version (AVX-512 / AVX2 chosen at run time, portable scalar fallback) that the tests
   compare with `_ref` bit for bit. The caller may split rows across threads: rows are
   independent. */
#ifndef PHIKIT_PK_AFFINE_QUANT_H
#define PHIKIT_PK_AFFINE_QUANT_H
#include <stdint.h>

/* Storage type of scales/biases (and of dequantize's arithmetic). Values match nothing
   outside this header. */
enum { PK_AQ_F32 = 0, PK_AQ_F16 = 1, PK_AQ_BF16 = 2 };

/* Instruction-set levels for pk_affine_*_isa (tests use them to check every path). */
enum { PK_AQ_ISA_SCALAR = 0, PK_AQ_ISA_AVX2 = 1, PK_AQ_ISA_AVX512 = 2, PK_AQ_ISA_AUTO = -1 };

/* The best level this CPU runs (AVX2 needs AVX2 + F16C; AVX-512 needs F + BW + VL). */
int pk_affine_quant_best_isa(void);

/* scales/biases as float32, before rounding to the output dtype. mlx computes q with this
   fp32 scale (not the rounded one) and only then rounds scales/biases to the input dtype,
   so rounding afterwards (RNE) gives mlx's bits. */
void pk_affine_quantize_ref(const float *w, long rows, long cols, int group, int bits,
                            uint32_t *wq, float *scales, float *biases);
void pk_affine_quantize(const float *w, long rows, long cols, int group, int bits,
                        uint32_t *wq, float *scales, float *biases);

/* Same, but scales/biases are written in `out_dtype` (PK_AQ_*) as raw little-endian
   values, rounded to nearest even like mlx's astype: exactly the safetensors bytes. */
void pk_affine_quantize_dt_ref(const float *w, long rows, long cols, int group, int bits,
                               int out_dtype, uint32_t *wq, void *scales, void *biases);
void pk_affine_quantize_dt(const float *w, long rows, long cols, int group, int bits,
                           int out_dtype, uint32_t *wq, void *scales, void *biases);
/* The fast kernel at a given level (clamped down to what the CPU supports). */
void pk_affine_quantize_dt_isa(int isa, const float *w, long rows, long cols, int group,
                               int bits, int out_dtype, uint32_t *wq, void *scales,
                               void *biases);

/* out[rows][cols] = scale*q + bias, computed like mlx.core.dequantize: in the scales dtype
   (f16/bf16: the product is rounded to that type, then the sum is), float32: product then
   sum, never fused. out holds float32 values that are exact in `scale_dtype`. */
void pk_affine_dequantize_ref(const uint32_t *wq, const void *scales, const void *biases,
                              int scale_dtype, long rows, long cols, int group, int bits,
                              float *out);
void pk_affine_dequantize(const uint32_t *wq, const void *scales, const void *biases,
                          int scale_dtype, long rows, long cols, int group, int bits,
                          float *out);
void pk_affine_dequantize_isa(int isa, const uint32_t *wq, const void *scales,
                              const void *biases, int scale_dtype, long rows, long cols,
                              int group, int bits, float *out);

#endif
