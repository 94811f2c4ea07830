/* verify_kernel_bench.c: what a speculative verify block of T = 1..9 tokens costs in the
 * matrix kernels alone, on SmolLM2-135M-Instruct's shapes (issue 31 §1: a block of k tokens
 * should cost little more than one decode step).
 *
 *   clang -O3 -fno-math-errno -ffp-contract=fast -ISources/CKernels/include \
 *      scripts/bench/verify_kernel_bench.c Sources/CKernels/*.c -lm -o /tmp/verify_kernel_bench
 *   /tmp/verify_kernel_bench [ROUNDS] [LAYERS]
 *
 * The matrices of LAYERS (default 30) layers, as scripts/smollm2 converts the Q4_1 GGUF:
 * q and o 576x576, k and v 192x576, gate and up 1536x576, down 576x1536, all 4-bit affine
 * with groups of 32 and f16 scales, and the tied LM head 49152x576 8-bit g32; random bytes,
 * so one pass streams ~100 MB from memory, as a decode step does. T inputs are prepared
 * (timed) and multiplied by every matrix through the engine's own pool tasks (jobs.c), run in
 * order on one thread. Time is the process's CPU time (a shared machine slows every T alike
 * instead of adding its waits); medians of ROUNDS (default 5) rounds that each go over
 * T = 1..9. Printed per T: milliseconds of the layers' matrices, of the LM head, and the
 * whole in decode steps (T = 1's whole). */
#include "pk_affine_quant.h"
#include "kernel_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_T 9

static pk_matrix make(long rows, long cols, int bits) {
    long bytes = rows * cols * bits / 8, groups = rows * cols / 32;
    unsigned char *w = aligned_alloc(64, (bytes + 63) / 64 * 64);
    for (long i = 0; i < bytes; i++) w[i] = (unsigned char)next();
    unsigned short *sc = malloc(groups * 2), *bi = malloc(groups * 2);
    for (long i = 0; i < groups; i++) {
        sc[i] = 0x2000 + (unsigned short)(next() % 256);  /* f16 near 2^-7 */
        bi[i] = 0xA800 + (unsigned short)(next() % 256);  /* f16 near -2^-5 */
    }
    pk_matrix m = {PK_W_AFFINE, bits, 32, PK_AQ_F16, rows, cols, w, sc, bi};
    return m;
}

/* CPU seconds to prepare `tokens` inputs and multiply them by m. */
static double product(const pk_matrix *m, long tokens, const float *x, float *prep, float *y) {
    double t0 = cpu_seconds();
    block_product(m, tokens, 0, x, prep, y);
    return cpu_seconds() - t0;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    int layers = argc > 2 ? atoi(argv[2]) : 30;
    if (rounds < 1 || rounds > 99 || layers < 1 || layers > 64) return 64;
    const long shapes[7][2] = {{576, 576}, {192, 576}, {192, 576}, {576, 576},
                               {1536, 576}, {1536, 576}, {576, 1536}};
    pk_matrix *ms = malloc(sizeof(pk_matrix) * 7 * layers);
    for (int l = 0; l < layers; l++)
        for (int i = 0; i < 7; i++) ms[7 * l + i] = make(shapes[i][0], shapes[i][1], 4);
    pk_matrix head = make(49152, 576, 8);
    float *x = malloc(sizeof(float) * MAX_T * 1536);
    for (long i = 0; i < MAX_T * 1536; i++) x[i] = (float)((long)(next() % 2001) - 1000) / 400.0f;
    float *prep = aligned_alloc(4096, (sizeof(float) * MAX_T * pk_matvec_prep_floats(1536) + 4095)
                                          / 4096 * 4096);
    float *y = malloc(sizeof(float) * MAX_T * 49152);
    static double body[MAX_T][99], lm[MAX_T][99];
    for (int r = -1; r < rounds; r++)  /* round -1 warms up */
        for (int t = 1; t <= MAX_T; t++) {
            double b = 0;
            for (int i = 0; i < 7 * layers; i++) b += product(&ms[i], t, x, prep, y);
            double h = product(&head, t, x, prep, y);
            if (r >= 0) { body[t - 1][r] = b; lm[t - 1][r] = h; }
        }
    printf("isa %d, one thread, SmolLM2 shapes, %d layers, medians of %d rounds (CPU time)\n",
           pk_matvec_best_isa(), layers, rounds);
    printf("  T  layers ms  head ms  total ms  steps\n");
    double step = 0;
    for (int t = 1; t <= MAX_T; t++) {
        qsort(body[t - 1], rounds, sizeof(double), by_value);
        qsort(lm[t - 1], rounds, sizeof(double), by_value);
        double b = body[t - 1][rounds / 2], h = lm[t - 1][rounds / 2];
        if (t == 1) step = b + h;
        printf("%3d  %9.2f  %7.2f  %8.2f  %5.2f\n", t, b * 1e3, h * 1e3, (b + h) * 1e3,
               (b + h) / step);
    }
    return 0;
}
