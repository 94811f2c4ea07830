/* Task functions of the pool jobs. See include/pk_jobs.h. */
#include "pk_jobs.h"

#include <stdint.h>

#include "matvec_internal.h"
#include "pk_ops.h"

/* Rows per matvec chunk: a multiple of 16 (a cache line of y, so threads never share one),
   about 64 KB of weights: a few microseconds of work, enough chunks to balance threads, and
   small enough to stay in L2 while every token of a prompt block goes over it. */
long pk_matvec_chunks(pk_matvec_job *job) {
    const pk_matrix *m = job->m;
    long bytes = m->kind == PK_W_AFFINE ? m->cols * m->bits / 8
                                        : m->cols * (m->kind == PK_W_F32 ? 4 : 2);
    long rows = (65536 / (bytes > 0 ? bytes : 1) + 15) / 16 * 16;
    job->chunk_rows = rows < 16 ? 16 : rows;
    return (m->rows + job->chunk_rows - 1) / job->chunk_rows;
}

void pk_matvec_task(void *raw, long chunk, int thread) {
    (void)thread;
    const pk_matvec_job *job = raw;
    long r0 = chunk * job->chunk_rows, r1 = r0 + job->chunk_rows;
    if (r1 > job->m->rows) r1 = job->m->rows;
    pk_matvec_tokens_isa(job->isa, job->m, job->tokens, job->x, job->ldx, job->prep,
                         job->prep_stride, job->y + r0, job->ldy, r0, r1);
}

long pk_prepare_chunks(const pk_matvec_job *job) {
    return job->m->kind == PK_W_AFFINE ? job->tokens : 0;
}

void pk_prepare_task(void *raw, long token, int thread) {
    (void)thread;
    const pk_matvec_job *job = raw;
    float *prep = (float *)(uintptr_t)(job->prep + token * job->prep_stride);
    pk_matvec_prepare(job->isa, job->m, job->x + token * job->ldx, prep);
}

long pk_attention_chunks(const pk_attention_job *job) { return job->tokens * job->heads; }

void pk_attention_task(void *raw, long item, int thread) {
    const pk_attention_job *job = raw;
    int group = job->heads / job->kv_heads, hd = job->head_dim;
    long qdim = (long)job->heads * hd;
    float *scores = job->scores + (long)thread * job->max_ctx;
    long t = item / job->heads;
    int h = (int)(item % job->heads);
    long pos = job->pos0 + t;
    long lo = job->window > 0 && pos - job->window + 1 > 0 ? pos - job->window + 1 : 0;
    long kv = (long)(h / group) * job->max_ctx * hd;
    float *out = job->out + t * qdim + (long)h * hd;
    const float *q = job->q + t * job->q_stride + (long)h * hd;
    if (job->kv_f16)
        pk_attention_f16_isa(job->isa, out, q, (const uint16_t *)job->k + kv,
                             (const uint16_t *)job->v + kv, scores, lo, pos, hd, job->scale);
    else
        pk_attention_isa(job->isa, out, q, (const float *)job->k + kv, (const float *)job->v + kv,
                         scores, lo, pos, hd, job->scale);
}
