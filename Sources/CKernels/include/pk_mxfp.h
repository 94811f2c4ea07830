/* MLX's floating-point micro-scaled quantization modes, bit-identical to mlx.core.quantize /
   mlx.core.dequantize of mlx 0.32 on the CPU (golden files: scripts/make_mx_golden.py →
   Tests/PhiFormatsTests/Fixtures/mxfp).

   mode        group  value (code)                    scale byte per group
   PK_MX_MXFP4   32   E2M1, 4 bits: 8 per uint32,     E8M0: 2^(byte-127)
                      element 0 in the low nibble
   PK_MX_NVFP4   16   E2M1, as mxfp4                   E4M3 (0x7F/0xFF are NaN)
   PK_MX_MXFP8   32   E4M3, 8 bits: 4 per uint32,     E8M0
                      element 0 in the low byte
   Layout (row-major): wq [rows][cols*bits/32] uint32, scales [rows][cols/group] uint8.
   weight = value(code) * scale. No biases, no global scale (mlx-lm never writes one for
   dense layers).

   mlx computes the CPU quantization as a graph of array ops in the source dtype, so every
   intermediate is rounded to that dtype (see pk_mxfp_quant.c for the steps). `dtype` is
   PK_AQ_F32 / PK_AQ_F16 / PK_AQ_BF16 (pk_affine_quant.h); inputs are float32 values exact in
   it. Inputs must be finite (the Swift wrapper refuses NaN/Inf). */
#ifndef PHIKIT_PK_MXFP_H
#define PHIKIT_PK_MXFP_H
#include <stdint.h>

enum { PK_MX_MXFP4 = 0, PK_MX_NVFP4 = 1, PK_MX_MXFP8 = 2 };

/* Group size and bits of a mode. */
int pk_mx_group(int mode);
int pk_mx_bits(int mode);

/* The E2M1 table mlx uses (code 8 is -0). */
extern const float pk_mx_e2m1[16];
/* E4M3 (FN) byte -> float as mlx's from_fp8 reads it: 0x7F/0xFF are NaN, no infinities. */
float pk_mx_e4m3_to_f32(uint8_t b);
/* float -> E4M3 as mlx's to_fp8: round to nearest even, |x| >= 448 saturates to 448 (0x7E);
   the sign bit is kept (so -0 is 0x80). */
uint8_t pk_mx_f32_to_e4m3(float x);
/* The float value of a scale byte (E8M0 for mxfp4/mxfp8, E4M3 for nvfp4), in float32. */
float pk_mx_scale_f32(int mode, uint8_t b);

/* Quantizes rows x cols values (cols % group == 0). The only kernel: a group is a handful of
   comparisons per value, and convert is bound by reading and writing files. */
void pk_mx_quantize_ref(const float *w, int dtype, long rows, long cols, int mode,
                        uint32_t *wq, uint8_t *scales);

/* out[rows][cols] = value * scale computed like mlx.core.dequantize(dtype=out_dtype): value
   and scale in out_dtype, the product rounded to it. out holds float32 values exact in
   out_dtype. */
void pk_mx_dequantize_ref(const uint32_t *wq, const uint8_t *scales, long rows, long cols,
                          int mode, int out_dtype, float *out);

#endif
