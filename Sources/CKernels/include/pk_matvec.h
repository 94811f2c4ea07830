/* Matrix-vector products on weights exactly as they lie in a memory-mapped model file:
   float32 / float16 / bfloat16 rows, or MLX affine-quantized rows (any of bits 2,3,4,5,6,8,
   group 32/64/128, scales and biases in f32/f16/bf16). Nothing is converted ahead of time;
   decode reads every weight byte once per token, so these loops are where decode time goes.

   Layout (row-major, as in safetensors):
     PK_W_F32/F16/BF16   w [rows][cols] elements
     PK_W_AFFINE         w [rows][cols*bits/32] uint32: the row's q values as one little-endian
                         bit stream, value i at bit i*bits (see pk_affine_quant.h);
                         scales, biases [rows][cols/group]; weight = scale*q + bias.
   y[r] = sum_c weight[r][c] * x[c] for r in [r0, r1) (callers split rows across threads).

   The fast affine kernels use  sum_c (s*q_c + b)*x_c = s * sum_c q_c*x_c + b * sum_c x_c  per
   group. Once per input vector (`pk_matvec_prepare`) x is summed per group and rounded to
   16-bit fixed point with one scale per group (|error| <= 2^-16 of the group's largest |x|,
   far below the weights' own 2-8-bit quantization); the inner loop then multiplies packed
   q values with x in integer multiply-adds (AVX-512 VNNI vpdpwssd / AVX2 vpmaddwd), exact,
   two integer ops per 16-32 weights instead of a conversion and an FMA per weight. Float
   kinds multiply float32 rows (widened from f16/bf16 on the fly) with float32 x.

   4-bit rows of whole 64-value segments (256-value quads, then up to three segments: every
   MLX Phi checkpoint, GGUF Q4_0 brought over as groups of 32, SmolLM2's 576-wide rows) take
   an AVX-512 tile kernel instead (matvec_avx512_q4.c), and so do 8-bit ones
   (matvec_avx512_q8.c: SmolLM2's tied head): 3 rows x up to 4 tokens per pass, x in its own
   order, several groups' integer sums converted and scaled together; same rounding of x.
   Each serves one token (decode) as well as many, so that each kernel level computes a
   token's row the same way whatever else is in the call: results never depend on how tokens
   were grouped.

   Every kernel has a scalar `_ref` (the oracle: double accumulation, no tricks) and a fast
   version (AVX-512 with VBMI, AVX2+FMA+F16C, or portable C, chosen at run time so the default
   build runs on any x86-64). Tests compare them on random shapes. Pointers need no alignment;
   shapes are validated by the Swift caller, not here. */
#ifndef PHIKIT_PK_MATVEC_H
#define PHIKIT_PK_MATVEC_H
#include <stdint.h>

enum { PK_W_F32 = 0, PK_W_F16 = 1, PK_W_BF16 = 2, PK_W_AFFINE = 3 };
/* MLX micro-scaled rows (pk_mxfp.h, kernels in pk_mxfp_matvec.h): packed codes + uint8
   scales, no biases. */
enum { PK_W_MXFP4 = 4, PK_W_NVFP4 = 5, PK_W_MXFP8 = 6 };

/* Instruction-set levels of the matvec kernels (tests pin each one). */
enum { PK_MV_ISA_SCALAR = 0, PK_MV_ISA_AVX2 = 1, PK_MV_ISA_AVX512 = 2 };

typedef struct {
    int kind;          /* PK_W_* */
    int bits;          /* affine: 2, 3, 4, 5, 6 or 8 */
    int group;         /* affine: 32, 64 or 128; cols % group == 0 */
    int scale_dtype;   /* affine: PK_AQ_F32 / PK_AQ_F16 / PK_AQ_BF16 (pk_affine_quant.h) */
    long rows, cols;
    const void *w;
    const void *scales;
    const void *biases;
} pk_matrix;

/* The best level this CPU runs: AVX-512 needs F+BW+VL+VBMI+VNNI, AVX2 needs AVX2+FMA+F16C. */
int pk_matvec_best_isa(void);

/* Floats of scratch `pk_matvec_prepare` needs for an input of `cols` (any kind, any isa). */
long pk_matvec_prep_floats(long cols);

/* Readies x for the fast kernel at `isa` (group sums; 16-bit x and its group scales, in the
   order that level's 4-bit kernel reads nibbles). Float kinds need nothing; prep may then be
   NULL. Call once per input vector, before any thread runs pk_matvec_isa on it. */
void pk_matvec_prepare(int isa, const pk_matrix *m, const float *x, float *prep);

/* y[r - r0] = row r · x, for r in [r0, r1). */
void pk_matvec_ref(const pk_matrix *m, const float *x, float *y, long r0, long r1);
void pk_matvec_isa(int isa, const pk_matrix *m, const float *x, const float *prep, float *y,
                   long r0, long r1);

/* The same for several inputs at once, each weight read once for all of them (prompt
   processing): y[t*ldy + (r - r0)] = row r · x_t for t < tokens, with x_t = x + t*ldx,
   prepared (pk_matvec_prepare) at prep + t*prep_stride. Any number of tokens; they are
   taken PK_MATVEC_TOKENS at a time per row range. */
#define PK_MATVEC_TOKENS 8
void pk_matvec_tokens_isa(int isa, const pk_matrix *m, long tokens, const float *x, long ldx,
                          const float *prep, long prep_stride, float *y, long ldy, long r0,
                          long r1);

/* 8-bit activations (opt-in; matvec_act8.c): x rounded to int8 per block of 8 values (rows
   with groups of 32) or 16 (groups of 64), each block's step a whole multiple of one unit per
   token and at most that unit above max|x in block|/127 (llama.cpp's Q8_0 rounding, whose
   blocks are 32), times 4-bit rows by AVX-512 VNNI vpdpbusd, twice the products per
   instruction of the 16-bit path; the bias term uses the exact group sums.
   Covers 4-bit affine rows with groups of 32 or 64, at least 128 values wide; other matrices
   keep the 16-bit path (the caller chooses per matrix). Lower fidelity than the 16-bit path
   (documented in scripts/bench/README.md), so never the default. Like the 16-bit kernels, a
   token's result does not depend on what else is in its call. Below AVX-512 the same
   arithmetic runs lane by lane in C (the oracle the tests hold the AVX-512 kernel to, bit for
   bit): correct but slow. */
int pk_matvec_act8_covers(const pk_matrix *m);
/* Readies x (int8 blocks, group sums) in prep (pk_matvec_prep_floats(cols) floats). */
void pk_matvec_prepare_act8(int isa, const pk_matrix *m, const float *x, float *prep);
/* As pk_matvec_tokens_isa, on inputs readied by pk_matvec_prepare_act8. */
void pk_matvec_tokens_act8_isa(int isa, const pk_matrix *m, long tokens, const float *prep,
                               long prep_stride, float *y, long ldy, long r0, long r1);

/* out[(r - r0)*cols + c] = weight[r][c] as float32, for r in [r0, r1) (an embedding
   lookup, a dequantized copy). Affine: scale*q + bias, rounded once (fused). */
void pk_dequantize_rows_ref(const pk_matrix *m, long r0, long r1, float *out);
void pk_dequantize_rows_isa(int isa, const pk_matrix *m, long r0, long r1, float *out);

#endif
