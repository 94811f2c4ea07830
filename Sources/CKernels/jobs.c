/* Task functions of the pool jobs. See include/pk_jobs.h. */
#include "pk_jobs.h"

#include "matvec_internal.h"
#include "pk_ops.h"

/* Takes the next chunk of [0, total): returns its start, or total when all are taken. */
static long take(long *next, long chunk, long total) {
    long start = __atomic_fetch_add(next, chunk, __ATOMIC_RELAXED);
    return start < total ? start : total;
}

/* Rows per matvec chunk: a multiple of 16 (a cache line of y, so threads never share one),
   about 16-64 KB of weights: the counter is touched once per few microseconds of work. */
static long matvec_chunk(const pk_matrix *m) {
    long bytes = m->kind == PK_W_AFFINE ? m->cols * m->bits / 8 : m->cols * 4;
    long rows = (32768 / (bytes > 0 ? bytes : 1) + 15) / 16 * 16;
    return rows < 16 ? 16 : rows;
}

void pk_matvec_task(void *raw, int thread, int nthreads) {
    (void)thread, (void)nthreads;
    pk_matvec_job *job = raw;
    const long rows = job->m->rows, chunk = matvec_chunk(job->m);
    for (long r0; (r0 = take(&job->next, chunk, rows)) < rows;) {
        long r1 = r0 + chunk < rows ? r0 + chunk : rows;
        pk_matvec_isa(job->isa, job->m, job->x, job->prep, job->y + r0, r0, r1);
    }
}

void pk_matmul_task(void *raw, int thread, int nthreads) {
    (void)nthreads;
    pk_matmul_job *job = raw;
    const pk_matrix *m = job->m;
    float *tile = job->tiles ? job->tiles + (long)thread * job->tile_rows * m->cols : 0;
    for (long r; (r = take(&job->next, job->tile_rows, m->rows)) < m->rows;) {
        long n = m->rows - r < job->tile_rows ? m->rows - r : job->tile_rows;
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
    (void)nthreads;
    pk_attention_job *job = raw;
    const long items = job->tokens * job->heads;
    int group = job->heads / job->kv_heads, hd = job->head_dim;
    long qdim = (long)job->heads * hd;
    float *scores = job->scores + (long)thread * job->max_ctx;
    for (long i; (i = take(&job->next, 1, items)) < items;) {
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
