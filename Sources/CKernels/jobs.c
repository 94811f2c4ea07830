/* Task functions of the pool jobs. See include/pk_jobs.h. */
#include "pk_jobs.h"

#include <stdint.h>

#include "matvec_internal.h"
#include "pk_ops.h"

/* Rows per matvec chunk: a multiple of 16 (a cache line of y, so threads never share one),
   about 64 KB of weights: a few microseconds of work, enough chunks to balance threads, and
   small enough to stay in L2 while every token of a prompt block goes over it. */
static long chunk_count(const pk_matvec_job *job) {
    return (job->m->rows + job->chunk_rows - 1) / job->chunk_rows;
}

static int act8_job(const pk_matvec_job *job) {
    return job->act_bits == 8 && pk_matvec_act8_covers(job->m);
}

/* Tokens of a prompt block that go over a chunk of rows together, on the 8-bit-activation
   path: their prepared inputs (int8 x and its scales, ~1.1 bytes a value) stay in L2 while
   every chunk goes over them. A whole 512-token block's inputs (1.7 MB for 3,072 columns)
   did not: each chunk read them from L3 again, and the kernel lost ~20% (one thread, a
   Phi-3.5-mini layer: 93 GMAC/s for 64 tokens, 77 for 512). Each token block streams the
   weights once more instead (every 80 tokens: ~1/6 of the block's compute time in
   bandwidth, overlapped by the kernel's prefetch). A multiple of PK_MATVEC_TOKENS. */
static long token_block(const pk_matvec_job *job) {
    if (!act8_job(job) || job->tokens <= 2 * PK_MATVEC_TOKENS) return job->tokens;
    long fit = 327680 / (job->m->cols + job->m->cols / 8) / PK_MATVEC_TOKENS * PK_MATVEC_TOKENS;
    return fit < PK_MATVEC_TOKENS ? PK_MATVEC_TOKENS : fit;
}

static long token_blocks(const pk_matvec_job *job) {
    const long tb = token_block(job);
    return (job->tokens + tb - 1) / tb;
}

long pk_matvec_chunks(pk_matvec_job *job) {
    const pk_matrix *m = job->m;
    long bytes = m->kind == PK_W_AFFINE ? m->cols * m->bits / 8
                                        : m->cols * (m->kind == PK_W_F32 ? 4 : 2);
    long rows = (65536 / (bytes > 0 ? bytes : 1) + 15) / 16 * 16;
    if (rows < 16) rows = 16;
    /* An even number of equal chunks: a small model's matrices are a few chunks each (576
       rows of 4-bit SmolLM2 were 240 + 240 + 96, its 192-row k and v one chunk), and with
       two threads taking chunks in turn one did up to twice the other's work while the other
       waited. A matrix under 32 KB stays one chunk (run by the caller, no wake-up). */
    long n = (m->rows + rows - 1) / rows;
    if (n % 2 == 1 && m->rows >= 32 && m->rows * bytes >= 32768) {
        n += 1;
        rows = ((m->rows + n - 1) / n + 15) / 16 * 16;
    }
    job->chunk_rows = rows;
    return chunk_count(job) * token_blocks(job);
}

/* Which rows chunk `chunk` covers. Decode (one token) is bound by memory: chunk k goes to
   region k % 2 of the matrix, so two threads taking chunks in turn each stream one half in
   order, and each one's prefetch runs on into its own next chunk instead of the other's
   (the kernels prefetch two tiles ahead). Quiet machine, 2 threads, 6 layers of 4-bit
   Phi-3.5 matrices: 29.2 -> 31.1 GB/s (medians of 6, alternated; memory streams 32.0).
   Prompt blocks are bound by compute: in order. */
static long chunk_index(const pk_matvec_job *job, long chunk) {
    if (job->tokens != 1) return chunk;
    long half = (chunk_count(job) + 1) / 2;
    return (chunk % 2) * half + chunk / 2;
}

void pk_matvec_task(void *raw, long chunk, int thread) {
    (void)thread;
    const pk_matvec_job *job = raw;
    if (act8_job(job)) {  /* token blocks in turn, each over every chunk of rows */
        const long chunks = chunk_count(job), tb = token_block(job);
        const long t0 = chunk / chunks * tb, tokens = job->tokens - t0 < tb ? job->tokens - t0 : tb;
        long r0 = chunk_index(job, chunk % chunks) * job->chunk_rows, r1 = r0 + job->chunk_rows;
        if (r1 > job->m->rows) r1 = job->m->rows;
        pk_matvec_tokens_act8_isa(job->isa, job->m, tokens, job->prep + t0 * job->prep_stride,
                                  job->prep_stride, job->y + t0 * job->ldy + r0, job->ldy, r0, r1);
        return;
    }
    long r0 = chunk_index(job, chunk) * job->chunk_rows, r1 = r0 + job->chunk_rows;
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
    const float *x = job->x + token * job->ldx;
    if (job->act_bits == 8 && pk_matvec_act8_covers(job->m)) {
        pk_matvec_prepare_act8(job->isa, job->m, x, prep);
        return;
    }
    pk_matvec_prepare(job->isa, job->m, x, prep);
}

void pk_silu_mul_task(void *raw, long token, int thread) {
    (void)thread;
    const pk_silu_mul_job *job = raw;
    pk_silu_mul(job->out + token * job->n, job->gate_up + token * 2 * job->n, job->n);
}
