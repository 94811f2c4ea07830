/* kernel_bench.h: what the kernel benchmarks (act8_kernel_bench.c, verify_kernel_bench.c)
 * share: the process's CPU time (a shared machine slows every variant alike instead of adding
 * its waits), a seeded random stream for weights, a comparison for medians, and one product
 * as a prefill or verify block runs it: `tokens` inputs prepared, then multiplied by m in the
 * engine's own pool tasks (jobs.c), run in order on one thread. */
#ifndef PK_KERNEL_BENCH_H
#define PK_KERNEL_BENCH_H

#include "pk_jobs.h"
#include "pk_matvec.h"

#include <time.h>

static double cpu_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static unsigned long long random_state = 88172645463325252ull;
static unsigned long long next(void) {  /* xorshift64 */
    random_state ^= random_state << 13;
    random_state ^= random_state >> 7;
    random_state ^= random_state << 17;
    return random_state;
}

static int by_value(const void *a, const void *b) {
    double d = *(const double *)a - *(const double *)b;
    return (d > 0) - (d < 0);
}

/* Prepares `tokens` rows of x (8-bit activations when act8) into prep and multiplies them by
   m into y; returns the CPU seconds the preparing took. */
static double block_product(const pk_matrix *m, long tokens, int act8, const float *x,
                            float *prep, float *y) {
    const int isa = pk_matvec_best_isa();
    const long stride = pk_matvec_prep_floats(m->cols);
    const double p0 = cpu_seconds();
    for (long t = 0; t < tokens; t++) {
        if (act8) pk_matvec_prepare_act8(isa, m, x + t * m->cols, prep + t * stride);
        else pk_matvec_prepare(isa, m, x + t * m->cols, prep + t * stride);
    }
    const double prepared = cpu_seconds() - p0;
    pk_matvec_job job = {.m = m, .tokens = tokens, .x = x, .ldx = m->cols, .prep = prep,
                         .prep_stride = stride, .y = y, .ldy = m->rows, .isa = isa,
                         .act_bits = act8 ? 8 : 16};
    const long chunks = pk_matvec_chunks(&job);
    for (long c = 0; c < chunks; c++) pk_matvec_task(&job, c, 0);
    return prepared;
}

#endif
