/* mx_kernel_bench.c: decode and prompt speed of the weight kernels on the full-size
 * Phi-3.5-mini matrices, per format: affine 4-bit g64 (what every MLX Phi checkpoint is)
 * next to mxfp4, nvfp4, mxfp8 and the mixed_3_6 recipe's widths (affine 3 and 6 bits).
 *
 *   make bench-mx       (builds with the CKernels sources, runs, prints a table)
 *   mx_kernel_bench [THREADS] [SECONDS_PER_CASE] [GBS] [WEIGHT_OFFSET]
 *
 * One "token" multiplies every Linear of the 32 layers (qkv 9216x3072, o 3072x3072,
 * gate_up 16384x3072, down 3072x8192) and lm_head (32064x3072) once, as decode does; rows
 * are split over THREADS threads. Attention, norms and the rest of a forward pass are left
 * out (they are the same for every format), so this is the part the format decides. Weights
 * are random bytes of the right layout (the kernels do the same work for any bytes; scale
 * bytes are kept near 2^0 so no float turns subnormal). "prompt" runs 8 tokens per call
 * (pk_matvec_tokens_isa), as prefill does. GBS is the machine's read bandwidth (membw.c) for
 * the ceiling column: bytes per token / GBS is the fastest a decode could be. WEIGHT_OFFSET
 * (default 0) puts every matrix's packed weights that many bytes past a 64-byte line: 8 and
 * 40 are where the benchmark models' mapped tensors lie (scripts/bench/README.md, Alignment).
 */
#include "pk_affine_quant.h"
#include "pk_matvec.h"
#include "pk_mxfp_matvec.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { long rows, cols; } shape_t;
static const shape_t layer_shapes[] = {{9216, 3072}, {3072, 3072}, {16384, 3072}, {3072, 8192}};
static const shape_t head_shape = {32064, 3072};
enum { LAYERS = 32, TOKENS = 8 };

typedef struct { const char *name; int kind, bits, group; } format_t;
static const format_t formats[] = {
    {"affine q4 g64", PK_W_AFFINE, 4, 64}, {"mxfp4", PK_W_MXFP4, 4, 32},
    {"nvfp4", PK_W_NVFP4, 4, 16},          {"mxfp8", PK_W_MXFP8, 8, 32},
    {"affine q3 g64", PK_W_AFFINE, 3, 64}, {"affine q6 g64", PK_W_AFFINE, 6, 64},
};

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static long weight_offset;  /* bytes past a 64-byte line (argv[4]) */

static pk_matrix make(const format_t *f, shape_t s, unsigned *seed) {
    pk_matrix m = {0};
    m.kind = f->kind; m.bits = f->bits; m.group = f->group; m.rows = s.rows; m.cols = s.cols;
    m.scale_dtype = PK_AQ_BF16;
    size_t wbytes = (size_t)s.rows * s.cols * f->bits / 8, groups = (size_t)s.rows * s.cols / f->group;
    size_t words64 = (wbytes + 63) / 64 * 8;
    uint64_t *w = aligned_alloc(64, words64 * 8 + 64), z = 0x9e3779b97f4a7c15ull ^ *seed;
    for (size_t i = 0; i < words64; i++) {  /* xorshift64: 2 GB of random bytes quickly */
        z ^= z << 13; z ^= z >> 7; z ^= z << 17;
        w[i] = z;
    }
    *seed += 1;
    m.w = (const uint8_t *)w + weight_offset;
    if (f->kind == PK_W_AFFINE) {
        uint16_t *sc = malloc(groups * 2), *bi = malloc(groups * 2);
        for (size_t i = 0; i < groups; i++) { sc[i] = 0x3c00 + (rand_r(seed) & 0xff); bi[i] = 0xbc00; }
        m.scales = sc; m.biases = bi;
    } else {
        uint8_t *sc = malloc(groups);
        int base = f->kind == PK_W_NVFP4 ? 0x30 : 120;
        for (size_t i = 0; i < groups; i++) sc[i] = (uint8_t)(base + (rand_r(seed) & 7));
        m.scales = sc;
    }
    return m;
}

typedef struct {
    pk_matrix *mats; int count; int tokens; const float *x; float *prep[2]; float *y;
    int part, parts; int isa; pthread_barrier_t *bar; volatile int *stop; long done;
} work_t;

static void *worker(void *arg) {
    work_t *w = arg;
    while (1) {
        pthread_barrier_wait(w->bar);
        if (*w->stop) return NULL;
        for (int i = 0; i < w->count; i++) {
            pk_matrix *m = &w->mats[i];
            long r0 = m->rows * w->part / w->parts, r1 = m->rows * (w->part + 1) / w->parts;
            pk_matvec_tokens_isa(w->isa, m, w->tokens, w->x, m->cols, w->prep[m->cols == 8192],
                                 pk_matvec_prep_floats(8192), w->y, m->rows, r0, r1);
        }
        pthread_barrier_wait(w->bar);
    }
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    double seconds = argc > 2 ? atof(argv[2]) : 3;
    double gbs = argc > 3 ? atof(argv[3]) : 0;
    weight_offset = argc > 4 ? atol(argv[4]) : 0;
    if (weight_offset < 0 || weight_offset > 63) return 64;
    int isa = pk_matvec_best_isa();
    printf("isa %d, %d threads, %.0f s per case, weights %ld bytes past a line%s\n", isa,
           threads, seconds, weight_offset,
           gbs > 0 ? "" : " (no bandwidth given: no ceiling column)");
    printf("%-15s %10s %12s %12s %10s\n", "format", "MB/token", "decode tok/s", "prompt tok/s",
           "of ceiling");
    long maxcols = 8192;
    float *x = malloc(sizeof(float) * TOKENS * maxcols), *y = malloc(sizeof(float) * TOKENS * 32064);
    /* x prepared for each width (3072, 8192) at each token (the engine does this per token,
       a small serial cost left out here). */
    float *prep[2];
    for (int i = 0; i < 2; i++) prep[i] = malloc(sizeof(float) * TOKENS * pk_matvec_prep_floats(maxcols));
    unsigned seed = 1;
    for (long i = 0; i < TOKENS * maxcols; i++) x[i] = (float)rand_r(&seed) / RAND_MAX - 0.5f;
    for (size_t f = 0; f < sizeof formats / sizeof *formats; f++) {
        /* One set of the four layer matrices reused 32 times would sit in cache; allocate all. */
        int count = LAYERS * 4 + 1;
        pk_matrix *mats = malloc(sizeof(pk_matrix) * count);
        double bytes = 0;
        for (int i = 0; i < count; i++) {
            shape_t s = i == count - 1 ? head_shape : layer_shapes[i % 4];
            mats[i] = make(&formats[f], s, &seed);
            bytes += (double)s.rows * s.cols * formats[f].bits / 8
                     + (double)s.rows * s.cols / formats[f].group
                           * (formats[f].kind == PK_W_AFFINE ? 4 : 1);
        }
        for (int i = 0; i < 4; i++)
            for (int t = 0; t < TOKENS; t++)
                pk_matvec_prepare(isa, &mats[i], x + t * mats[i].cols,
                                  prep[mats[i].cols == 8192] + t * pk_matvec_prep_floats(maxcols));
        double rate[2];
        for (int mode = 0; mode < 2; mode++) {
            int tokens = mode == 0 ? 1 : TOKENS;
            pthread_barrier_t bar;
            pthread_barrier_init(&bar, NULL, threads + 1);
            volatile int stop = 0;
            pthread_t tid[16];
            work_t w[16];
            for (int p = 0; p < threads; p++) {
                w[p] = (work_t){mats, count, tokens, x, {prep[0], prep[1]}, y, p, threads, isa,
                                &bar, &stop, 0};
                pthread_create(&tid[p], NULL, worker, &w[p]);
            }
            long passes = 0;
            double t0 = now(), t;
            do {
                pthread_barrier_wait(&bar);
                pthread_barrier_wait(&bar);
                passes++;
            } while ((t = now()) - t0 < seconds);
            stop = 1;
            pthread_barrier_wait(&bar);
            for (int p = 0; p < threads; p++) pthread_join(tid[p], NULL);
            rate[mode] = passes * tokens / (t - t0);
        }
        char ceiling[32] = "-";
        if (gbs > 0) snprintf(ceiling, sizeof ceiling, "%.0f%%", 100 * rate[0] * bytes / (gbs * 1e9));
        printf("%-15s %10.0f %12.2f %12.2f %10s\n", formats[f].name, bytes / 1e6, rate[0],
               rate[1], ceiling);
        fflush(stdout);
        for (int i = 0; i < count; i++) {
            free((void *)((const uint8_t *)mats[i].w - weight_offset));
            free((void *)mats[i].scales); free((void *)mats[i].biases);
        }
        free(mats);
    }
    return 0;
}
