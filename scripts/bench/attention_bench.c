/* Attention kernel: one query head at a time (how attention ran before the tiles of issue 22)
   against the tiles of pk_attention_task (each cache row read once per GQA group and few
   tokens), on one thread, for each cache format. Build and run with scripts/bench/bench_attention.sh.

     attention_bench HEAD_DIM HEADS KV_HEADS CONTEXT TOKENS REPS [MODE]

   TOKENS queries at the last positions of a CONTEXT-long cache (1: a decode step; 64: a
   prompt block). Without MODE it times both ways, in the same process, and prints the ratio;
   MODE (heads | tiles | setup) runs only that way once per format, for instruction counts
   under `valgrind --tool=callgrind` (subtract the setup run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pk_attention.h"
#include "pk_jobs.h"
#include "pk_matvec.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static float frand(unsigned long long *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((*s >> 40) * 0x1p-24 * 2 - 1);
}

/* One query head at a time: the per-(token, head) chunks attention used before. */
static void by_heads(const pk_attention_job *job) {
    int group = job->heads / job->kv_heads, hd = job->head_dim;
    long k_head = pk_kv_head_bytes(job->kv_kind, 1, hd, job->max_ctx);
    long v_head = pk_kv_head_bytes(job->kv_kind, 0, hd, job->max_ctx);
    for (long t = 0; t < job->tokens; t++)
        for (int h = 0; h < job->heads; h++) {
            pk_attention_isa(job->isa, job->kv_kind, job->out + (t * job->heads + h) * hd,
                             job->q + t * job->q_stride + (long)h * hd,
                             (const char *)job->k + h / group * k_head,
                             (const char *)job->v + h / group * v_head, job->scores, 0,
                             job->pos0 + t, hd, job->scale);
        }
}

static void by_tiles(pk_attention_job *job) {
    long chunks = pk_attention_chunks(job);
    for (long c = 0; c < chunks; c++) pk_attention_task(job, c, 0);
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: attention_bench HEAD_DIM HEADS KV_HEADS CONTEXT TOKENS REPS [heads|tiles|setup]\n");
        return 64;
    }
    int hd = atoi(argv[1]), heads = atoi(argv[2]), kvh = atoi(argv[3]);
    long ctx = atol(argv[4]), tokens = atol(argv[5]);
    int reps = atoi(argv[6]);
    const char *mode = argc > 7 ? argv[7] : NULL;
    unsigned long long seed = 7;
    float *q = malloc(sizeof(float) * tokens * heads * hd);
    float *out = malloc(sizeof(float) * tokens * heads * hd);
    float *x = malloc(sizeof(float) * hd);
    float *scores = malloc(sizeof(float) * PK_ATTENTION_TILE * ctx);
    for (long i = 0; i < tokens * heads * hd; i++) q[i] = frand(&seed);
    const char *names[] = {"f32", "f16", "q8"};
    for (int kind = PK_KV_F32; kind <= PK_KV_Q8; kind++) {
        long k_head = pk_kv_head_bytes(kind, 1, hd, ctx), v_head = pk_kv_head_bytes(kind, 0, hd, ctx);
        char *k = malloc(k_head * kvh), *v = malloc(v_head * kvh);
        for (int h = 0; h < kvh; h++)
            for (long r = 0; r < ctx; r++) {
                for (int d = 0; d < hd; d++) x[d] = 2 * frand(&seed);
                pk_kv_store(kind, 1, k + h * k_head, r, x, hd);
                for (int d = 0; d < hd; d++) x[d] = frand(&seed);
                pk_kv_store(kind, 0, v + h * v_head, r, x, hd);
            }
        pk_attention_job job = {q, k, v, out, scores, heads * hd, tokens, ctx - tokens, ctx, 0,
                                heads, kvh, hd, 1 / sqrtf((float)hd), pk_matvec_best_isa(), kind};
        if (mode) {
            if (!strcmp(mode, "heads")) by_heads(&job);
            if (!strcmp(mode, "tiles")) by_tiles(&job);
        } else {
            double a = 1e30, b = 1e30;
            for (int r = 0; r < reps; r++) {  /* alternated; best of reps for each */
                double t0 = now();
                by_heads(&job);
                double t1 = now();
                by_tiles(&job);
                double t2 = now();
                a = t1 - t0 < a ? t1 - t0 : a;
                b = t2 - t1 < b ? t2 - t1 : b;
            }
            double gb = (double)(k_head + v_head) * kvh / 1e9;
            printf("%s: one head at a time %.3f ms, tiles %.3f ms: %.2fx (cache %.1f MB)\n",
                   names[kind], a * 1e3, b * 1e3, a / b, gb * 1e3);
        }
        free(k);
        free(v);
    }
    return 0;
}
