/* Work split over a pk_pool: each job is a struct the caller fills (with `next` = 0) and a
   task function that `pk_pool_run` calls on every thread. Threads take chunks of work (rows
   of a matrix, (token, head) pairs of attention) from the shared counter `next` until none
   is left, so a thread the OS preempts (other programs on the machine) does not hold up the
   others with its fixed share. Nothing here allocates. */
#ifndef PHIKIT_PK_JOBS_H
#define PHIKIT_PK_JOBS_H
#include "pk_matvec.h"

/* y = W x. `prep` is x readied by pk_matvec_prepare(isa, …) (NULL for float kinds). */
typedef struct {
    const pk_matrix *m;
    const float *x;      /* [cols] */
    const float *prep;   /* [pk_matvec_prep_floats(cols)] */
    float *y;            /* [rows] */
    int isa;
    long next;           /* first row not yet taken */
} pk_matvec_job;
void pk_matvec_task(void *job, int thread, int nthreads);

/* c[m×n] (row stride ldc) = a[m×k] · b[n×k]ᵀ, single-threaded; provided by the caller
   (phikit passes OpenBLAS's sgemm, which CKernels does not link). */
typedef void (*pk_gemm_fn)(const float *a, const float *b, float *c, long m, long n, long k,
                           long ldc);

/* y[t] = W x[t] for `tokens` inputs: each thread turns `tile_rows` rows of W at a time into
   float32 (in place for PK_W_F32, else into its own tile) and multiplies the tile with all
   inputs at once, so every weight is read once per block of tokens, not once per token. */
typedef struct {
    const pk_matrix *m;
    const float *x;      /* [tokens][cols] */
    float *y;            /* [tokens][rows] */
    long tokens;
    float *tiles;        /* [nthreads][tile_rows][cols] (unused for PK_W_F32) */
    long tile_rows;
    pk_gemm_fn gemm;
    int isa;
    long next;           /* first row not yet taken */
} pk_matmul_job;
void pk_matmul_task(void *job, int thread, int nthreads);

/* Causal attention for `tokens` queries at positions pos0, pos0+1, …: query t of head h sees
   cached positions [max(0, p - window + 1), p] of kv head h / (heads / kv_heads), where
   p = pos0 + t (window <= 0: no window). */
typedef struct {
    const float *q;         /* [tokens][heads*head_dim], rows q_stride floats apart */
    const float *k, *v;     /* this layer's cache: [kv_heads][max_ctx][head_dim] */
    float *out;             /* [tokens][heads*head_dim] */
    float *scores;          /* [nthreads][max_ctx] */
    long q_stride, tokens, pos0, max_ctx, window;
    int heads, kv_heads, head_dim;
    float scale;
    int isa;
    long next;              /* first (token, head) item not yet taken */
} pk_attention_job;
void pk_attention_task(void *job, int thread, int nthreads);

#endif
