/* Task functions of the pool jobs. See include/pk_jobs.h. */
#include "pk_jobs.h"

#include "matvec_internal.h"
#include "pk_ops.h"

/* Rows per thread are multiples of 16 (a cache line of y), so threads never share one. */
#define ROW_ALIGN 16

void pk_matvec_task(void *raw, int thread, int nthreads) {
    const pk_matvec_job *job = raw;
    long r0, r1;
    pk_mv_split(job->m->rows, thread, nthreads, ROW_ALIGN, &r0, &r1);
    if (r0 < r1) pk_matvec_isa(job->isa, job->m, job->x, job->prep, job->y + r0, r0, r1);
}

void pk_matmul_task(void *raw, int thread, int nthreads) {
    const pk_matmul_job *job = raw;
    const pk_matrix *m = job->m;
    long r0, r1;
    pk_mv_split(m->rows, thread, nthreads, ROW_ALIGN, &r0, &r1);
    float *tile = job->tiles ? job->tiles + (long)thread * job->tile_rows * m->cols : 0;
    for (long r = r0; r < r1; r += job->tile_rows) {
        long n = r1 - r < job->tile_rows ? r1 - r : job->tile_rows;
        const float *b;
        if (m->kind == PK_W_F32) {
            b = (const float *)m->w + r * m->cols;
        } else {
            pk_dequantize_rows_isa(job->isa, m, r, r + n, tile);
            b = tile;
        }
        job->gemm(job->x, b, job->y + r, job->tokens, n, m->cols, m->rows);
    }
}

void pk_attention_task(void *raw, int thread, int nthreads) {
    const pk_attention_job *job = raw;
    long items = job->tokens * job->heads;
    long i0 = items * thread / nthreads, i1 = items * (thread + 1) / nthreads;
    int group = job->heads / job->kv_heads, hd = job->head_dim;
    long qdim = (long)job->heads * hd;
    float *scores = job->scores + (long)thread * job->max_ctx;
    for (long i = i0; i < i1; i++) {
        long t = i / job->heads;
        int h = (int)(i % job->heads);
        long pos = job->pos0 + t;
        long lo = job->window > 0 && pos - job->window + 1 > 0 ? pos - job->window + 1 : 0;
        long kv = (long)(h / group) * job->max_ctx * hd;
        pk_attention_isa(job->isa, job->out + t * qdim + (long)h * hd,
                         job->q + t * job->q_stride + (long)h * hd, job->k + kv, job->v + kv,
                         scores, lo, pos, hd, job->scale);
    }
}
