/* Work for a pk_pool: each job is a struct the caller fills, a task function that does one
   chunk of it (rows of a matrix, (token, head) pairs of attention), and a chunk count to
   pass to `pk_pool_run` (`pk_*_chunks`). Nothing here allocates. */
#ifndef PHIKIT_PK_JOBS_H
#define PHIKIT_PK_JOBS_H
#include "pk_attention.h"
#include "pk_matvec.h"

/* y[t] = W x[t] for `tokens` inputs (1 when decoding): pk_matvec_tokens_isa (or
   pk_matvec_tokens_act8_isa, see act_bits) over chunks of rows, each chunk's weights read
   from memory once for all tokens. `prep` holds the inputs readied by pk_prepare_task
   (NULL for float kinds). */
typedef struct {
    const pk_matrix *m;
    long tokens;
    const float *x;      /* [tokens][ldx], cols used */
    long ldx;
    const float *prep;   /* [tokens][prep_stride] */
    long prep_stride;
    float *y;            /* [tokens][ldy], rows used */
    long ldy;
    int isa;
    long chunk_rows;     /* set by pk_matvec_chunks */
    int act_bits;        /* 8: matrices pk_matvec_act8_covers take the 8-bit-activation path
                            (prepare and multiply alike); anything else: the 16-bit one */
} pk_matvec_job;
/* Sets job->chunk_rows and returns the number of chunks. */
long pk_matvec_chunks(pk_matvec_job *job);
void pk_matvec_task(void *job, long chunk, int thread);

/* pk_matvec_prepare for each of the job's inputs, one chunk per token. */
long pk_prepare_chunks(const pk_matvec_job *job);
void pk_prepare_task(void *job, long chunk, int thread);

/* Causal attention for `tokens` queries at positions pos0, pos0+1, …: query t of head h sees
   cached positions [max(0, p - window + 1), p] of kv head h / (heads / kv_heads), where
   p = pos0 + t (window <= 0: no window). Chunks are tiles of one kv head (pk_attention.h):
   each cache row is read once for the query heads of its group and a few tokens. */
typedef struct {
    const float *q;         /* [tokens][heads*head_dim], rows q_stride floats apart */
    const void *k, *v;      /* this layer's cache: [kv_heads][max_ctx] rows of kv_kind */
    float *out;             /* [tokens][heads*head_dim] */
    float *scores;          /* [nthreads][PK_ATTENTION_TILE][max_ctx] */
    long q_stride, tokens, pos0, max_ctx, window;
    int heads, kv_heads, head_dim;
    float scale;
    int isa;
    int kv_kind;            /* PK_KV_F32, PK_KV_F16, PK_KV_Q8 */
} pk_attention_job;
long pk_attention_chunks(const pk_attention_job *job);
void pk_attention_task(void *job, long chunk, int thread);

#endif
