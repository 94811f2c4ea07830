/* A float dot product that vectorises without -ffast-math (shared by ops.c and attention.c).
   Internal header: not part of the module. */
#ifndef PHIKIT_DOT_LANES_H
#define PHIKIT_DOT_LANES_H

/* Partial sums in 8 independent lanes let the compiler vectorise float reductions without
   -ffast-math (which we never use: it would break the -inf masks of attention). The order of
   the additions is fixed, so a result never depends on the instruction set it ran on. */
#define PK_LANES 8

static inline __attribute__((always_inline)) float pk_dot_lanes(const float *a, const float *b,
                                                                long n) {
    float acc[PK_LANES] = {0};
    long i = 0;
    for (; i + PK_LANES <= n; i += PK_LANES)
        for (int k = 0; k < PK_LANES; k++) acc[k] += a[i + k] * b[i + k];
    float s = 0;
    for (; i < n; i++) s += a[i] * b[i];
    for (int k = 0; k < PK_LANES; k++) s += acc[k];
    return s;
}
#endif
