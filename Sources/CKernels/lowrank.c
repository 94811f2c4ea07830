/* Run-time LoRA/DoRA corrections. See include/pk_lowrank.h. */
#include "pk_lowrank.h"

#include "pk_matvec.h"

/* Tokens per chunk: a chunk is then ~30 µs of a 576-wide rank-8 layer's work, well above
   the pool's cost of handing it out. */
enum { TOKENS_PER_CHUNK = 4, MAX_RANK_PAD = 512 };

long pk_lowrank_chunks(const pk_lowrank_job *job) {
    return (job->count + TOKENS_PER_CHUNK - 1) / TOKENS_PER_CHUNK;
}

/* One token: h = x·A (the rank in lanes of 8, four input rows in flight so the sums do not
   wait on each other, then added in a fixed order), then y[o..o+8] += Σ_k h[k]·Bᵀ[k][o..o+8]
   over the outputs. Written for the compiler to vectorize; inlined into a plain and an
   AVX2+FMA copy. */
static inline __attribute__((always_inline)) void correct_token(
    const pk_lowrank_job *job, const float *restrict x, float *restrict y) {
    const long n = job->inputs, outs = job->outputs, rp = job->rank_pad;
    const float *restrict a = job->a;
    const float *restrict bt = job->bt;
    float h[MAX_RANK_PAD];
    for (long k0 = 0; k0 < rp; k0 += 8) {
        float s[4][8] = {{0}};
        long i = 0;
        for (; i + 4 <= n; i += 4) {
            for (int u = 0; u < 4; u++) {
                const float xi = x[i + u];
                const float *ai = a + (i + u) * rp + k0;
                for (int k = 0; k < 8; k++) s[u][k] += xi * ai[k];
            }
        }
        for (; i < n; i++) {
            const float *ai = a + i * rp + k0;
            for (int k = 0; k < 8; k++) s[0][k] += x[i] * ai[k];
        }
        for (int k = 0; k < 8; k++) h[k0 + k] = (s[0][k] + s[1][k]) + (s[2][k] + s[3][k]);
    }
    long o = 0;
    for (; o + 8 <= outs; o += 8) {
        float z[8] = {0};
        for (long k = 0; k < rp; k++) {
            const float hk = h[k];
            const float *b = bt + k * outs + o;
            for (int j = 0; j < 8; j++) z[j] += hk * b[j];
        }
        for (int j = 0; j < 8; j++) y[o + j] += z[j];
    }
    for (; o < outs; o++) {
        float z = 0;
        for (long k = 0; k < rp; k++) z += h[k] * bt[k * outs + o];
        y[o] += z;
    }
    if (job->row_scale) {
        for (long r = 0; r < outs; r++) y[r] *= job->row_scale[r];
    }
}

static void correct_plain(const pk_lowrank_job *job, const float *x, float *y) {
    correct_token(job, x, y);
}

__attribute__((target("avx2,fma"))) static void correct_avx2(
    const pk_lowrank_job *job, const float *x, float *y) {
    correct_token(job, x, y);
}

void pk_lowrank_task(void *raw, long chunk, int thread) {
    (void)thread;
    const pk_lowrank_job *job = raw;
    long first = chunk * TOKENS_PER_CHUNK, last = first + TOKENS_PER_CHUNK;
    if (last > job->count) last = job->count;
    for (long i = first; i < last; i++) {
        long t = job->rows ? job->rows[i] : i;
        const float *x = job->x + t * job->ldx;
        float *y = job->y + t * job->ldy;
        if (job->isa >= PK_MV_ISA_AVX2) {
            correct_avx2(job, x, y);
        } else {
            correct_plain(job, x, y);
        }
    }
}
