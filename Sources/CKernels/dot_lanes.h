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
typedef float pk_lanes8 __attribute__((vector_size(4 * PK_LANES)));

/* The 8 x 8 block of lane sums acc[row][lane] -> out[row] = (lane 0 + ... + lane 7) * scale,
   the lanes added in order as pk_dot_lanes adds them. */
static inline __attribute__((always_inline)) void pk_lanes8_finish(const pk_lanes8 *acc,
                                                                   float scale, float *out) {
    /* transpose: lanes[k] = lane k of every row's sums */
    const pk_lanes8 t0 = __builtin_shufflevector(acc[0], acc[1], 0, 8, 1, 9, 4, 12, 5, 13);
    const pk_lanes8 t1 = __builtin_shufflevector(acc[0], acc[1], 2, 10, 3, 11, 6, 14, 7, 15);
    const pk_lanes8 t2 = __builtin_shufflevector(acc[2], acc[3], 0, 8, 1, 9, 4, 12, 5, 13);
    const pk_lanes8 t3 = __builtin_shufflevector(acc[2], acc[3], 2, 10, 3, 11, 6, 14, 7, 15);
    const pk_lanes8 t4 = __builtin_shufflevector(acc[4], acc[5], 0, 8, 1, 9, 4, 12, 5, 13);
    const pk_lanes8 t5 = __builtin_shufflevector(acc[4], acc[5], 2, 10, 3, 11, 6, 14, 7, 15);
    const pk_lanes8 t6 = __builtin_shufflevector(acc[6], acc[7], 0, 8, 1, 9, 4, 12, 5, 13);
    const pk_lanes8 t7 = __builtin_shufflevector(acc[6], acc[7], 2, 10, 3, 11, 6, 14, 7, 15);
    /* t0 = r0k0 r1k0 r0k1 r1k1 | r0k4 r1k4 r0k5 r1k5, t1 the same for k2 k3 | k6 k7 */
    const pk_lanes8 u0 = __builtin_shufflevector(t0, t2, 0, 1, 8, 9, 4, 5, 12, 13);   /* k0 | k4: r0-3 */
    const pk_lanes8 u1 = __builtin_shufflevector(t0, t2, 2, 3, 10, 11, 6, 7, 14, 15); /* k1 | k5 */
    const pk_lanes8 u2 = __builtin_shufflevector(t1, t3, 0, 1, 8, 9, 4, 5, 12, 13);   /* k2 | k6 */
    const pk_lanes8 u3 = __builtin_shufflevector(t1, t3, 2, 3, 10, 11, 6, 7, 14, 15); /* k3 | k7 */
    const pk_lanes8 u4 = __builtin_shufflevector(t4, t6, 0, 1, 8, 9, 4, 5, 12, 13);   /* r4-7 */
    const pk_lanes8 u5 = __builtin_shufflevector(t4, t6, 2, 3, 10, 11, 6, 7, 14, 15);
    const pk_lanes8 u6 = __builtin_shufflevector(t5, t7, 0, 1, 8, 9, 4, 5, 12, 13);
    const pk_lanes8 u7 = __builtin_shufflevector(t5, t7, 2, 3, 10, 11, 6, 7, 14, 15);
    const pk_lanes8 lanes[8] = {
        __builtin_shufflevector(u0, u4, 0, 1, 2, 3, 8, 9, 10, 11),
        __builtin_shufflevector(u1, u5, 0, 1, 2, 3, 8, 9, 10, 11),
        __builtin_shufflevector(u2, u6, 0, 1, 2, 3, 8, 9, 10, 11),
        __builtin_shufflevector(u3, u7, 0, 1, 2, 3, 8, 9, 10, 11),
        __builtin_shufflevector(u0, u4, 4, 5, 6, 7, 12, 13, 14, 15),
        __builtin_shufflevector(u1, u5, 4, 5, 6, 7, 12, 13, 14, 15),
        __builtin_shufflevector(u2, u6, 4, 5, 6, 7, 12, 13, 14, 15),
        __builtin_shufflevector(u3, u7, 4, 5, 6, 7, 12, 13, 14, 15)};
    pk_lanes8 s = {0};
    for (int k = 0; k < PK_LANES; k++) s += lanes[k];
    s *= scale;
    __builtin_memcpy(out, &s, sizeof s);
}

/* pk_dot_lanes of one vector a against 8 rows b[0..7] at once (n a multiple of PK_LANES),
   each times `scale`, into out[0..7]: bit for bit what 8 calls of pk_dot_lanes(a, b[r], n) *
   scale give. Each row's 8 lane sums go in a vector of their own, exactly as pk_dot_lanes
   keeps them; then the 8 x 8 block of lane sums is transposed so that the final additions,
   lane 0 to lane 7 in order, run for the 8 rows in one vector each instead of one score at
   a time (that scalar reduction, with the scaling and the store, was most of the time of
   prompt attention's scores). Clang vector types: the same code for every instruction set. */
static inline __attribute__((always_inline)) void pk_dots8_lanes(const float *a,
                                                                 const float *const *b, long n,
                                                                 float scale, float *out) {
    pk_lanes8 acc[8] = {{0}};
    for (long i = 0; i < n; i += PK_LANES) {
        pk_lanes8 x, y;
        __builtin_memcpy(&x, a + i, sizeof x);
        for (int r = 0; r < 8; r++) {
            __builtin_memcpy(&y, b[r] + i, sizeof y);
            acc[r] += x * y;
        }
    }
    pk_lanes8_finish(acc, scale, out);
}

/* pk_dots8_lanes for two vectors a0, a1 against the same 8 rows: each row slice is loaded
   once for both (the loads, not the multiply-adds, bounded one vector at a time); each
   result is bit for bit pk_dots8_lanes' (the same accumulators, the same order). */
static inline __attribute__((always_inline)) void pk_dots8x2_lanes(
    const float *a0, const float *a1, const float *const *b, long n, float scale, float *out0,
    float *out1) {
    pk_lanes8 acc0[8] = {{0}}, acc1[8] = {{0}};
    for (long i = 0; i < n; i += PK_LANES) {
        pk_lanes8 x0, x1, y;
        __builtin_memcpy(&x0, a0 + i, sizeof x0);
        __builtin_memcpy(&x1, a1 + i, sizeof x1);
        for (int r = 0; r < 8; r++) {
            __builtin_memcpy(&y, b[r] + i, sizeof y);
            acc0[r] += x0 * y;
            acc1[r] += x1 * y;
        }
    }
    pk_lanes8_finish(acc0, scale, out0);
    pk_lanes8_finish(acc1, scale, out1);
}

#endif
