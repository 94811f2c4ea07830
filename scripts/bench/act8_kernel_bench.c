/* act8_kernel_bench.c: prompt compute of the 16-bit and the 8-bit-activation kernels on the
 * full-size matrices of one layer, 4-bit affine (group 64, as MLX converts; group 32, as a
 * GGUF Q4_0 comes over), one thread, the two alternated (issue 31 §2).
 *
 *   clang -O3 -fno-math-errno -ffp-contract=fast -ISources/CKernels/include \
 *      scripts/bench/act8_kernel_bench.c Sources/CKernels/*.c -lm -o /tmp/act8_kernel_bench
 *   /tmp/act8_kernel_bench [ROUNDS] [TOKENS] [WEIGHT_OFFSET]
 *
 * Per shape (Phi-3.5-mini: qkv 9216x3072, o 3072x3072, gate_up 16384x3072, down 3072x8192;
 * Phi-4-mini: qkv 5120x3072, the rest the same), TOKENS inputs (default 64; a prompt block
 * is 512) are prepared (timed: part of the cost) and multiplied by every matrix in the pool
 * tasks a prefill block is split into (jobs.c: row chunks of ~64 KB, and for 8 bits token
 * blocks), one after another. Weights sit WEIGHT_OFFSET (default 8) bytes past a cache line,
 * as the tensors of the benchmark models' safetensors files do when mapped (0: on a line, as
 * a resident copy places them); the prepared inputs are aligned, as the engine's page-aligned buffers are. Time is the process's CPU time, so a machine shared with
 * other jobs slows both kernels alike instead of adding its waits; medians of ROUNDS
 * (default 5) alternated rounds. Weights are random bytes, scales near 2^-6. */
#include "pk_affine_quant.h"
#include "kernel_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { long rows, cols; } shape_t;

static long weight_offset = 8;  /* bytes past a 64-byte line (argv[3]) */

static pk_matrix make(shape_t s, int group) {
    long bytes = s.rows * s.cols / 2, groups = s.rows * s.cols / group;
    unsigned char *w = (unsigned char *)aligned_alloc(64, (bytes + 127) / 64 * 64) + weight_offset;
    for (long i = 0; i < bytes; i++) w[i] = (unsigned char)next();
    unsigned short *sc = malloc(groups * 2), *bi = malloc(groups * 2);
    for (long i = 0; i < groups; i++) {
        sc[i] = 0x3C80 + (unsigned short)(next() % 64);  /* bf16 near 2^-6 */
        bi[i] = 0xBE00 + (unsigned short)(next() % 64);  /* bf16 near -0.125 */
    }
    pk_matrix m = {PK_W_AFFINE, 4, group, PK_AQ_BF16, s.rows, s.cols, w, sc, bi};
    return m;
}

static double prep_seconds;  /* of the last call of layer() */

/* CPU seconds to prepare `tokens` inputs and multiply them by every matrix of the layer. */
static double layer(const pk_matrix *ms, int count, int act8, long tokens, const float *x,
                    float *prep, float *y) {
    double t0 = cpu_seconds();
    prep_seconds = 0;
    for (int i = 0; i < count; i++) prep_seconds += block_product(&ms[i], tokens, act8, x, prep, y);
    return cpu_seconds() - t0;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    long tokens = argc > 2 ? atol(argv[2]) : 64;
    weight_offset = argc > 3 ? atol(argv[3]) : 8;
    if (rounds < 1 || rounds > 99 || tokens < 1 || weight_offset < 0 || weight_offset > 63)
        return 64;
    struct { const char *name; shape_t shapes[4]; } models[] = {
        {"Phi-3.5-mini", {{9216, 3072}, {3072, 3072}, {16384, 3072}, {3072, 8192}}},
        {"Phi-4-mini", {{5120, 3072}, {3072, 3072}, {16384, 3072}, {3072, 8192}}},
    };
    float *x = malloc(sizeof(float) * tokens * 8192);
    for (long i = 0; i < tokens * 8192; i++) x[i] = (float)((long)(next() % 2001) - 1000) / 400.0f;
    const long prep_bytes = (long)sizeof(float) * tokens * pk_matvec_prep_floats(8192);
    float *prep = aligned_alloc(4096, (prep_bytes + 4095) / 4096 * 4096);
    float *y = malloc(sizeof(float) * tokens * 16384);
    printf("isa %d, one thread, %ld tokens, weights %ld bytes past a line, medians of %d"
           " alternated rounds (CPU time)\n", pk_matvec_best_isa(), tokens, weight_offset, rounds);
    for (int k = 0; k < 2; k++)
        for (int group = 64; group >= 32; group /= 2) {
            pk_matrix ms[4];
            double macs = 0;
            for (int i = 0; i < 4; i++) {
                ms[i] = make(models[k].shapes[i], group);
                macs += (double)ms[i].rows * ms[i].cols * tokens;
            }
            double s16[99], s8[99], p16[99], p8[99];
            layer(ms, 4, 0, tokens, x, prep, y);  /* warm-up */
            for (int r = 0; r < rounds; r++) {
                s16[r] = layer(ms, 4, 0, tokens, x, prep, y);
                p16[r] = prep_seconds / s16[r];
                s8[r] = layer(ms, 4, 1, tokens, x, prep, y);
                p8[r] = prep_seconds / s8[r];
            }
            qsort(s16, rounds, sizeof(double), by_value);
            qsort(s8, rounds, sizeof(double), by_value);
            qsort(p16, rounds, sizeof(double), by_value);
            qsort(p8, rounds, sizeof(double), by_value);
            double a = s16[rounds / 2], b = s8[rounds / 2];
            printf("%-13s g%d: 16-bit %6.1f GMAC/s (%.1f ms/token/layer), 8-bit %6.1f GMAC/s"
                   " (%.1f ms): %.2fx; preparing x %.0f%% / %.0f%% of it\n",
                   models[k].name, group, macs / a / 1e9, a / tokens * 1e3, macs / b / 1e9,
                   b / tokens * 1e3, a / b, 100 * p16[rounds / 2], 100 * p8[rounds / 2]);
            for (int i = 0; i < 4; i++) {
                free((unsigned char *)ms[i].w - weight_offset);
                free((void *)ms[i].scales);
                free((void *)ms[i].biases);
            }
        }
    return 0;
}
