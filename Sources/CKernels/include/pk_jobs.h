/* Work for a pk_pool: each job is a struct the caller fills, a task function that does one
   chunk of it (rows of a matrix, (token, head) pairs of attention), and a chunk count to
   pass to `pk_pool_run` (`pk_*_chunks`). Nothing here allocates. */
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
    long chunk_rows;     /* set by pk_matvec_chunks */
} pk_matvec_job;
/* Sets job->chunk_rows and returns the number of chunks. */
long pk_matvec_chunks(pk_matvec_job *job);
void pk_matvec_task(void *job, long chunk, int thread);

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
} pk_matmul_job;
/* One chunk is one tile of rows. */
long pk_matmul_chunks(const pk_matmul_job *job);
void pk_matmul_task(void *job, long chunk, int thread);

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
} pk_attention_job;
/* One chunk is one (token, head) pair. */
long pk_attention_chunks(const pk_attention_job *job);
void pk_attention_task(void *job, long chunk, int thread);

#endif
