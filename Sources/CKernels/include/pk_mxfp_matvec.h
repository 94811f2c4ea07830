/* The matvec kernels of the micro-scaled kinds (PK_W_MXFP4, PK_W_NVFP4, PK_W_MXFP8 in
   pk_matvec.h): matvec.c dispatches to these, so callers use pk_matvec_* as for any kind.
   For these kinds pk_matrix.bits is 4 or 8, .group 32 or 16, .w the packed uint32 rows,
   .scales the uint8 scale bytes; .biases and .scale_dtype are unused. No preparation of x. */
#ifndef PHIKIT_PK_MXFP_MATVEC_H
#define PHIKIT_PK_MXFP_MATVEC_H
#include "pk_matvec.h"

/* 1 for the micro-scaled kinds. */
int pk_mx_is_kind(int kind);
/* Weight (r, c) exactly (value * scale), for pk_matvec_ref. */
double pk_mx_weight_ref(const pk_matrix *m, long r, long c);
/* y[t*ldy + (r - r0)] = row r . x_t for t < tokens (<= PK_MATVEC_TOKENS), at `isa`. */
void pk_mx_matvec_tokens(int isa, const pk_matrix *m, int tokens, const float *x, long ldx,
                         float *y, long ldy, long r0, long r1);
/* Rows [r0, r1) as float32 (value * scale, one rounding). */
void pk_mx_dequantize_rows(int isa, const pk_matrix *m, long r0, long r1, float *out);
#endif
