/* bf16 / f16 <-> f32 conversions over arrays of n elements.
   Contract (the Swift scalar functions in PhiFormats/Tensors/HalfFloat.swift are the oracle, and the
   tests check every 16-bit input and a large float set bit for bit):
   - widening (bf16/f16 -> f32) is exact; a NaN stays NaN with its payload and the quiet bit set;
   - narrowing (f32 -> bf16/f16) rounds to nearest, ties to even; overflow gives +-Inf;
     f16 subnormals are produced exactly; a NaN keeps its sign and top payload bits and becomes
     quiet.
   `_ref` functions are the plain scalar versions; the others dispatch at run time to AVX2/F16C
   when the CPU has them. Buffers may not overlap. */
#ifndef PHIKIT_PK_HALF_H
#define PHIKIT_PK_HALF_H
#include <stddef.h>
#include <stdint.h>

void pk_bf16_to_f32(float *dst, const uint16_t *src, size_t n);
void pk_f32_to_bf16(uint16_t *dst, const float *src, size_t n);
void pk_f16_to_f32(float *dst, const uint16_t *src, size_t n);
void pk_f32_to_f16(uint16_t *dst, const float *src, size_t n);

void pk_bf16_to_f32_ref(float *dst, const uint16_t *src, size_t n);
void pk_f32_to_bf16_ref(uint16_t *dst, const float *src, size_t n);
void pk_f16_to_f32_ref(float *dst, const uint16_t *src, size_t n);
void pk_f32_to_f16_ref(uint16_t *dst, const float *src, size_t n);

/* 1 if the AVX2/F16C paths are in use on this CPU (for tests and --stats). */
int pk_half_has_simd(void);
#endif
