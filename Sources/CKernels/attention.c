/* Attention over the KV cache (include/pk_attention.h); the row formats are kv_rows.c. */
#include "pk_attention.h"

#include <math.h>
#include <string.h>

#include "dot_lanes.h"
#include "kv_rows.h"
#include "pk_half.h"
#include "pk_jobs.h"
#include "pk_matvec.h"

/* ---- attention ------------------------------------------------------------------------ */

void pk_attention_ref(float *out, const float *q, const float *k, const float *v,
                      float *scores, long lo, long hi, int head_dim, float scale) {
    double top = -INFINITY;
    for (long j = lo; j <= hi; j++) {
        double s = 0;
        for (int d = 0; d < head_dim; d++) s += (double)q[d] * k[j * head_dim + d];
        scores[j] = (float)(s * scale);
        if (scores[j] > top) top = scores[j];
    }
    double total = 0;
    for (long j = lo; j <= hi; j++) total += exp(scores[j] - top);
    for (int d = 0; d < head_dim; d++) {
        double acc = 0;
        for (long j = lo; j <= hi; j++) acc += exp(scores[j] - top) / total * v[j * head_dim + d];
        out[d] = (float)acc;
    }
}

/* Positions go by blocks of BLOCK rows: each row is widened once (or pointed to in the
   cache) for every query of the tile, and the work on a block is small matrix work (queries
   x rows) that keeps a query, or a slice of its output, in registers across rows. */
#define BLOCK 16

/* e^x for a score minus its maximum (x <= 0), in a form the compiler vectorises (expf is a
   scalar call, and was a third of prefill attention): Cephes' expf, a degree-6 polynomial
   on x - n ln2 and 2^n from the exponent bits, about 1 ulp; 0 below -87.3 (and for -inf),
   NaN stays NaN. */
static inline __attribute__((always_inline)) float exp_nonpositive(float x) {
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    float n = (x * 1.44269504088896341f + magic) - magic;
    float r = x - n * 0.693359375f - n * -2.12194440e-4f;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * (r * r) + r + 1.0f;
    int e = (int)(x < -87.0f ? 0 : n) + 127; /* n >= -126 above -87 */
    uint32_t bits = (uint32_t)e << 23;
    float two_n;
    memcpy(&two_n, &bits, 4);
    return x < -87.0f ? 0.0f : y * two_n;
}

/* out[d..d+width) += p_j * row_j[d..d+width) for rows j in [a, b] of a block, in order,
   the slice held in registers across the rows (width is a constant once inlined). */
static inline __attribute__((always_inline)) void accumulate_slice(
    float *out, const float *p, const float *const *rows, int a, int b, int d, int width) {
    float acc[128];
    for (int k = 0; k < width; k++) acc[k] = out[d + k];
    for (int j = a; j <= b; j++) {
        const float pj = p[j], *r = rows[j] + d;
        for (int k = 0; k < width; k++) acc[k] += pj * r[k];
    }
    for (int k = 0; k < width; k++) out[d + k] = acc[k];
}

/* accumulate_slice for two queries over the same rows: each row slice is read once for
   both; each query's slice sees exactly accumulate_slice's operations. */
static inline __attribute__((always_inline)) void accumulate_slice2(
    float *out0, float *out1, const float *p0, const float *p1, const float *const *rows, int a,
    int b, int d, int width) {
    float acc0[128], acc1[128];
    for (int k = 0; k < width; k++) {
        acc0[k] = out0[d + k];
        acc1[k] = out1[d + k];
    }
    for (int j = a; j <= b; j++) {
        const float pj0 = p0[j], pj1 = p1[j], *r = rows[j] + d;
        for (int k = 0; k < width; k++) {
            acc0[k] += pj0 * r[k];
            acc1[k] += pj1 * r[k];
        }
    }
    for (int k = 0; k < width; k++) {
        out0[d + k] = acc0[k];
        out1[d + k] = acc1[k];
    }
}

/* out += sum_j p_j row_j over rows [a, b] of a block, by slices of 128, 96, 64, 32, 8 and 1
   floats: a whole Phi head's output held in registers, 6 or 8 independent sums of 16 floats
   per row instead of 4, so the multiply-adds do not wait on each other's latency.
   Each out[d] sees the same operations, in the same order, as one row at a time would give
   it, whatever slice it falls in. */
static inline __attribute__((always_inline)) void accumulate_rows(
    float *out, const float *p, const float *const *rows, int a, int b, int head_dim) {
    int d = 0;
    for (; d + 128 <= head_dim; d += 128) accumulate_slice(out, p, rows, a, b, d, 128);
    for (; d + 96 <= head_dim; d += 96) accumulate_slice(out, p, rows, a, b, d, 96);
    for (; d + 64 <= head_dim; d += 64) accumulate_slice(out, p, rows, a, b, d, 64);
    for (; d + 32 <= head_dim; d += 32) accumulate_slice(out, p, rows, a, b, d, 32);
    for (; d + 8 <= head_dim; d += 8) accumulate_slice(out, p, rows, a, b, d, 8);
    for (; d < head_dim; d++) accumulate_slice(out, p, rows, a, b, d, 1);
}

/* accumulate_rows for two queries over the same rows [a, b], by slices of at most 64 floats
   (two queries' accumulators and a row slice in registers). */
static inline __attribute__((always_inline)) void accumulate_rows2(
    float *out0, float *out1, const float *p0, const float *p1, const float *const *rows, int a,
    int b, int head_dim) {
    int d = 0;
    for (; d + 64 <= head_dim; d += 64) accumulate_slice2(out0, out1, p0, p1, rows, a, b, d, 64);
    for (; d + 32 <= head_dim; d += 32) accumulate_slice2(out0, out1, p0, p1, rows, a, b, d, 32);
    for (; d + 8 <= head_dim; d += 8) accumulate_slice2(out0, out1, p0, p1, rows, a, b, d, 8);
    for (; d < head_dim; d++) accumulate_slice2(out0, out1, p0, p1, rows, a, b, d, 1);
}

/* The block of rows from j0 of a kv head, BLOCK of them but none past `last`, widened into
   `wide`, packed; returns how many. Float32 keys are read in
   place (each dot reads a whole row); float32 values are copied too, because the output pass
   reads each row a slice at a time and strided slices of the cache stream worse than one copy
   (MHA decode at 4,096 positions was 1.6x slower without). */
static inline __attribute__((always_inline)) int block_rows(
    int kind, int key, const void *head, long j0, long last, int head_dim,
    float *wide, const float **rows) {
    const int count = last - j0 + 1 < BLOCK ? (int)(last - j0 + 1) : BLOCK;
    for (int j = 0; j < count; j++) {
        rows[j] = kv_row(kind, key, head, j0 + j, head_dim, wide + j * head_dim);
        if (kind == PK_KV_F32 && !key) {
            memcpy(wide + j * head_dim, rows[j], 4 * (size_t)head_dim);
            rows[j] = wide + j * head_dim;
        }
    }
    return count;
}

/* The rows [*a, *b] of query q inside the block of `count` positions from j0 (empty when
   *a > *b). */
static inline __attribute__((always_inline)) void rows_in_block(
    const pk_attention_query *q, long j0, int count, long *a, long *b) {
    *a = q->lo > j0 ? q->lo : j0;
    *b = q->hi < j0 + count - 1 ? q->hi : j0 + count - 1;
}

/* Written once in plain C; the wrappers below compile it for each instruction set and cache
   format (inlined, so each copy is vectorised for its target; F16C widens half rows in a few
   instructions). Each query goes through the positions in order with its own scores,
   maximum, softmax total and output, and every score and output element is computed by the
   same operations whichever block or tile it falls in: which other queries share the tile
   never changes one operation of its arithmetic (decode is the tile of one GQA group). */
static inline __attribute__((always_inline)) void tile_core(
    int kind, const pk_attention_query *qs, int n, const void *k, const void *v, int head_dim,
    float scale) {
    float wide[BLOCK * PK_ATTENTION_MAX_HEAD_DIM]; /* [BLOCK][head_dim], rows packed */
    const float *rows[BLOCK];
    float top[PK_ATTENTION_TILE], total[PK_ATTENTION_TILE];
    long first = qs[0].lo, last = qs[0].hi;
    for (int i = 0; i < n; i++) {
        top[i] = -INFINITY;
        total[i] = 0;
        first = qs[i].lo < first ? qs[i].lo : first;
        last = qs[i].hi > last ? qs[i].hi : last;
    }
    /* scores: q·k_j * scale */
    for (long j0 = first; j0 <= last; j0 += BLOCK) {
        const int count = block_rows(kind, 1, k, j0, last, head_dim, wide, rows);
        int paired = 0;
        for (int i = 0; i < n; i++) {
            long a, b;
            rows_in_block(qs + i, j0, count, &a, &b);
            float *sc = qs[i].scores, t = top[i];
            long j = a;
            if (head_dim % PK_LANES == 0) { /* 8 rows at a time, the same arithmetic */
                long a1, b1;
                if (i + 1 < n) rows_in_block(qs + i + 1, j0, count, &a1, &b1);
                if (i + 1 < n && a1 == a && b1 == b) { /* and two queries, if they can */
                    float *sc1 = qs[i + 1].scores;
                    for (; j + 8 <= b + 1; j += 8)
                        pk_dots8x2_lanes(qs[i].q, qs[i + 1].q, rows + (j - j0), head_dim,
                                         scale, sc + j, sc1 + j);
                    for (long r = j; r <= b; r++)
                        sc1[r] = pk_dot_lanes(qs[i + 1].q, rows[r - j0], head_dim) * scale;
                    float t1 = top[i + 1];
                    for (long r = a; r <= b; r++) t1 = sc1[r] > t1 ? sc1[r] : t1;
                    top[i + 1] = t1;
                    paired = 1;
                }
                for (; j + 8 <= b + 1; j += 8)
                    pk_dots8_lanes(qs[i].q, rows + (j - j0), head_dim, scale, sc + j);
            }
            for (; j <= b; j++) sc[j] = pk_dot_lanes(qs[i].q, rows[j - j0], head_dim) * scale;
            for (j = a; j <= b; j++) t = sc[j] > t ? sc[j] : t;
            top[i] = t;
            if (paired) { paired = 0; i++; }
        }
    }
    /* softmax numerators and their total (in PK_LANES lanes, a fixed order) */
    for (int i = 0; i < n; i++) {
        float *sc = qs[i].scores, lanes[PK_LANES] = {0}, sum = 0;
        const float t = top[i];
        long j = qs[i].lo;
        for (; j + PK_LANES - 1 <= qs[i].hi; j += PK_LANES)
            for (int l = 0; l < PK_LANES; l++) {
                sc[j + l] = exp_nonpositive(sc[j + l] - t);
                lanes[l] += sc[j + l];
            }
        for (; j <= qs[i].hi; j++) {
            sc[j] = exp_nonpositive(sc[j] - t);
            sum += sc[j];
        }
        for (int l = 0; l < PK_LANES; l++) sum += lanes[l];
        total[i] = sum;
        for (int d = 0; d < head_dim; d++) qs[i].out[d] = 0;
    }
    /* out = sum_j p_j v_j, a block of rows at a time */
    for (long j0 = first; j0 <= last; j0 += BLOCK) {
        const int count = block_rows(kind, 0, v, j0, last, head_dim, wide, rows);
        for (int i = 0; i < n; i++) {
            long a, b, a1 = 0, b1 = -1;
            rows_in_block(qs + i, j0, count, &a, &b);
            if (i + 1 < n) rows_in_block(qs + i + 1, j0, count, &a1, &b1);
            if (a <= b && a1 == a && b1 == b) { /* two queries over the same rows */
                accumulate_rows2(qs[i].out, qs[i + 1].out, qs[i].scores + j0,
                                 qs[i + 1].scores + j0, rows, (int)(a - j0), (int)(b - j0),
                                 head_dim);
                i++;
            } else if (a <= b)
                accumulate_rows(qs[i].out, qs[i].scores + j0, rows, (int)(a - j0),
                                (int)(b - j0), head_dim);
        }
    }
    for (int i = 0; i < n; i++) {
        const float inv = 1.0f / total[i];
        for (int d = 0; d < head_dim; d++) qs[i].out[d] *= inv;
    }
}

/* One copy per format, so each inner loop is specialised (kind is a constant inside). */
#define TILE_BY_KIND(kind, qs, n, k, v, head_dim, scale)                                 \
    do {                                                                                 \
        if ((kind) == PK_KV_F32) tile_core(PK_KV_F32, qs, n, k, v, head_dim, scale);     \
        else if ((kind) == PK_KV_F16) tile_core(PK_KV_F16, qs, n, k, v, head_dim, scale); \
        else tile_core(PK_KV_Q8, qs, n, k, v, head_dim, scale);                          \
    } while (0)

static void tile_portable(int kind, const pk_attention_query *qs, int n, const void *k,
                          const void *v, int head_dim, float scale) {
    TILE_BY_KIND(kind, qs, n, k, v, head_dim, scale);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma,f16c"))) static void tile_avx2(
    int kind, const pk_attention_query *qs, int n, const void *k, const void *v, int head_dim,
    float scale) {
    TILE_BY_KIND(kind, qs, n, k, v, head_dim, scale);
}

__attribute__((target("avx512f,avx512vl,avx512bw,avx2,fma,f16c"))) static void tile_avx512(
    int kind, const pk_attention_query *qs, int n, const void *k, const void *v, int head_dim,
    float scale) {
    TILE_BY_KIND(kind, qs, n, k, v, head_dim, scale);
}
#endif

void pk_attention_tile_isa(int isa, int kind, const pk_attention_query *qs, int count,
                           const void *k, const void *v, int head_dim, float scale) {
    int best = pk_matvec_best_isa();
    if (isa > best) isa = best;
#if defined(__x86_64__)
    if (isa == PK_MV_ISA_AVX512) {
        tile_avx512(kind, qs, count, k, v, head_dim, scale);
        return;
    }
    if (isa == PK_MV_ISA_AVX2) {
        tile_avx2(kind, qs, count, k, v, head_dim, scale);
        return;
    }
#endif
    tile_portable(kind, qs, count, k, v, head_dim, scale);
}

void pk_attention_isa(int isa, int kind, float *out, const float *q, const void *k,
                      const void *v, float *scores, long lo, long hi, int head_dim, float scale) {
    pk_attention_query one = {q, out, scores, lo, hi};
    pk_attention_tile_isa(isa, kind, &one, 1, k, v, head_dim, scale);
}

/* ---- the pool job --------------------------------------------------------------------- */

/* A chunk: one kv head, up to PK_ATTENTION_TILE of its query heads, and as many consecutive
   tokens as keep the tile at PK_ATTENTION_TILE queries (1 head x 16 tokens for MHA, 3 x 5
   for Phi-4-mini's 24:8 GQA, the group alone when decoding).
   Chunks go kv head by kv head (pk_attention_task), so the threads taking them in turn read
   the same head's rows at about the same time: at 4,096 positions a layer's 16-bit cache is
   16 MB (Phi-4-mini) to 48 MB (Phi-3.5-mini), and tiles taken head after head read every
   row from memory again. Within a head the last tokens (the longest rows of the causal
   triangle) go first, so the chunks left at the end, when a thread may wait, are short. */
static void tile_shape(const pk_attention_job *job, int *heads, long *tokens, long *head_tiles) {
    int group = job->heads / job->kv_heads;
    *heads = group < PK_ATTENTION_TILE ? group : PK_ATTENTION_TILE;
    *head_tiles = (group + *heads - 1) / *heads;
    *tokens = PK_ATTENTION_TILE / *heads;
}

long pk_attention_chunks(const pk_attention_job *job) {
    int heads;
    long tokens, head_tiles;
    tile_shape(job, &heads, &tokens, &head_tiles);
    return (job->tokens + tokens - 1) / tokens * job->kv_heads * head_tiles;
}

void pk_attention_task(void *raw, long item, int thread) {
    const pk_attention_job *job = raw;
    int tile_heads;
    long tile_tokens, head_tiles;
    tile_shape(job, &tile_heads, &tile_tokens, &head_tiles);
    int group = job->heads / job->kv_heads, hd = job->head_dim;
    long token_tiles = (job->tokens + tile_tokens - 1) / tile_tokens;
    long head_tile = item / token_tiles % head_tiles;
    int kvh = (int)(item / token_tiles / head_tiles);
    long t0 = (token_tiles - 1 - item % token_tiles) * tile_tokens;
    long t1 = t0 + tile_tokens < job->tokens ? t0 + tile_tokens : job->tokens;
    int h0 = kvh * group + (int)head_tile * tile_heads;
    int h1 = h0 + tile_heads < (kvh + 1) * group ? h0 + tile_heads : (kvh + 1) * group;
    float *scores = job->scores + (long)thread * PK_ATTENTION_TILE * job->max_ctx;
    pk_attention_query qs[PK_ATTENTION_TILE];
    int n = 0;
    for (long t = t0; t < t1; t++) {
        long pos = job->pos0 + t;
        long lo = job->window > 0 && pos - job->window + 1 > 0 ? pos - job->window + 1 : 0;
        for (int h = h0; h < h1; h++, n++) {
            qs[n] = (pk_attention_query){
                job->q + t * job->q_stride + (long)h * hd,
                job->out + t * (long)job->heads * hd + (long)h * hd,
                scores + (long)n * job->max_ctx, lo, pos};
        }
    }
    long k_head = pk_kv_head_bytes(job->kv_kind, 1, hd, job->max_ctx);
    long v_head = pk_kv_head_bytes(job->kv_kind, 0, hd, job->max_ctx);
    pk_attention_tile_isa(job->isa, job->kv_kind, qs, n, (const char *)job->k + kvh * k_head,
                          (const char *)job->v + kvh * v_head, hd, job->scale);
}
