/* Attention over the KV cache and the cache's row formats. See include/pk_attention.h. */
#include "pk_attention.h"

#include <math.h>
#include <string.h>

#include "dot_lanes.h"
#include "pk_half.h"
#include "pk_jobs.h"
#include "pk_matvec.h"

/* ---- row formats ---------------------------------------------------------------------- */

int pk_kv_q8_group(int head_dim) { return head_dim % 32 == 0 ? 32 : head_dim; }

static int q8_keys(int kind, int key) { return kind == PK_KV_Q8 && key; }

long pk_kv_row_bytes(int kind, int key, int head_dim) {
    long groups = head_dim / pk_kv_q8_group(head_dim);
    switch (kind) {
        case PK_KV_F32: return 4L * head_dim;
        case PK_KV_F16: return 2L * head_dim;
        default: return head_dim + (key ? 5 : 4) * groups;
    }
}

/* The header of 8-bit keys: calibration rows, centre, spread (pk_attention.h). */
static long header_floats(int kind, int key, int head_dim) {
    return q8_keys(kind, key) ? (PK_KV_CALIBRATION + 2L) * head_dim : 0;
}

/* Positions with a row in the rows area: 8-bit keys keep the first ones in the header. */
static long first_row(int kind, int key) { return q8_keys(kind, key) ? PK_KV_CALIBRATION : 0; }

long pk_kv_head_bytes(int kind, int key, int head_dim, long positions) {
    long rows = positions - first_row(kind, key);
    return 4 * header_floats(kind, key, head_dim) +
           (rows > 0 ? rows : 0) * pk_kv_row_bytes(kind, key, head_dim);
}

static unsigned char *row_at(int kind, int key, void *head, long position, int head_dim) {
    return (unsigned char *)head + 4 * header_floats(kind, key, head_dim) +
           (position - first_row(kind, key)) * pk_kv_row_bytes(kind, key, head_dim);
}

static void store_q8_value(int8_t *q, const float *x, int head_dim) {
    unsigned char *scales = (unsigned char *)q + head_dim;
    int group = pk_kv_q8_group(head_dim);
    for (int g = 0; g * group < head_dim; g++) {
        const float *xg = x + g * group;
        float top = 0;
        for (int d = 0; d < group; d++) top = fmaxf(top, fabsf(xg[d]));
        float scale = top / 127.0f;
        for (int d = 0; d < group; d++) {
            /* NaN and (with top infinite) every value land on a code in range */
            float r = scale > 0 ? nearbyintf(xg[d] / scale) : 0;
            q[g * group + d] = (int8_t)(r >= 127 ? 127 : r >= -127 ? r : -127);
        }
        memcpy(scales + 4 * g, &scale, 4);
    }
}

/* Centre and spread of each channel from the calibration rows (pk_attention.h). A channel
   that never moves keeps spread 1; a non-finite one gets centre 0, spread 1, so later keys
   still land on codes in range. */
static void calibrate_keys(float *header, int head_dim) {
    const float *rows = header;
    float *centre = header + PK_KV_CALIBRATION * head_dim, *spread = centre + head_dim;
    for (int d = 0; d < head_dim; d++) {
        double sum = 0;
        for (int j = 0; j < PK_KV_CALIBRATION; j++) sum += rows[j * head_dim + d];
        float c = (float)(sum / PK_KV_CALIBRATION), far = 0;
        for (int j = 0; j < PK_KV_CALIBRATION; j++)
            far = fmaxf(far, fabsf(rows[j * head_dim + d] - c));
        int exponent;
        frexpf(far, &exponent); /* far < 2^exponent */
        int ok = isfinite(c) && isfinite(far) && far > 0;
        centre[d] = isfinite(c) ? c : 0;
        spread[d] = ok ? ldexpf(1, exponent) : 1;
    }
}

static void store_q8_key(unsigned char *row, const float *header, const float *x, int head_dim) {
    const float *centre = header + PK_KV_CALIBRATION * head_dim, *spread = centre + head_dim;
    int group = pk_kv_q8_group(head_dim), groups = head_dim / group;
    unsigned char *scales = row + head_dim, *zeros = scales + 4 * groups;
    float n[PK_ATTENTION_MAX_HEAD_DIM];
    for (int d = 0; d < head_dim; d++) n[d] = (x[d] - centre[d]) / spread[d];
    for (int g = 0; g < groups; g++) {
        const float *ng = n + g * group;
        float lo = 0, hi = 0;
        for (int d = 0; d < group; d++) {
            lo = fminf(lo, ng[d]);
            hi = fmaxf(hi, ng[d]);
        }
        float scale = (hi - lo) / 255.0f;
        if (!(scale > 0 && isfinite(scale))) scale = 0;
        float zero = scale > 0 ? nearbyintf(-lo / scale) : 0; /* 0..255: lo <= 0 <= hi */
        for (int d = 0; d < group; d++) {
            float r = scale > 0 ? nearbyintf(ng[d] / scale) + zero : zero;
            row[g * group + d] = (unsigned char)(r >= 255 ? 255 : r >= 0 ? r : 0);
        }
        memcpy(scales + 4 * g, &scale, 4);
        zeros[g] = (unsigned char)zero;
    }
}

void pk_kv_store(int kind, int key, void *head, long position, const float *x, int head_dim) {
    if (q8_keys(kind, key) && position < PK_KV_CALIBRATION) {
        float *header = head;
        memcpy(header + position * head_dim, x, 4 * (size_t)head_dim);
        if (position == PK_KV_CALIBRATION - 1) calibrate_keys(header, head_dim);
        return;
    }
    unsigned char *row = row_at(kind, key, head, position, head_dim);
    if (kind == PK_KV_F32) memcpy(row, x, 4 * (size_t)head_dim);
    else if (kind == PK_KV_F16) pk_f32_to_f16((uint16_t *)row, x, (size_t)head_dim);
    else if (key) store_q8_key(row, head, x, head_dim);
    else store_q8_value((int8_t *)row, x, head_dim);
}

/* Position j of a kv head widened to float32: a pointer into the cache for float32 rows (and
   8-bit keys' calibration rows), else `tmp` filled. The one place the formats differ;
   exactly pk_kv_load. */
static inline __attribute__((always_inline)) const float *kv_row(
    int kind, int key, const void *head, long j, int head_dim, float *tmp) {
    if (q8_keys(kind, key) && j < PK_KV_CALIBRATION) return (const float *)head + j * head_dim;
    const unsigned char *row = row_at(kind, key, (void *)head, j, head_dim);
    if (kind == PK_KV_F32) return (const float *)row;
    if (kind == PK_KV_F16) {
        const _Float16 *h = (const _Float16 *)row;
        for (int d = 0; d < head_dim; d++) tmp[d] = (float)h[d];
        return tmp;
    }
    int group = pk_kv_q8_group(head_dim), groups = head_dim / group;
    if (key) {
        const float *centre = (const float *)head + PK_KV_CALIBRATION * head_dim;
        const float *spread = centre + head_dim;
        const unsigned char *zeros = row + head_dim + 4 * groups;
        for (int g = 0; g < groups; g++) {
            float scale;
            memcpy(&scale, row + head_dim + 4 * g, 4);
            const int zero = zeros[g];
            for (int d = g * group; d < (g + 1) * group; d++)
                tmp[d] = centre[d] + spread[d] * (scale * (float)(row[d] - zero));
        }
        return tmp;
    }
    const int8_t *q = (const int8_t *)row;
    for (int g = 0; g < groups; g++) {
        float scale;
        memcpy(&scale, row + head_dim + 4 * g, 4);
        for (int d = 0; d < group; d++) tmp[g * group + d] = scale * (float)q[g * group + d];
    }
    return tmp;
}

void pk_kv_load(int kind, int key, float *out, const void *head, long position, int head_dim) {
    const float *r = kv_row(kind, key, head, position, head_dim, out);
    if (r != out) memcpy(out, r, 4 * (size_t)head_dim);
}

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

/* Written once in plain C; the wrappers below compile it for each instruction set and cache
   format (inlined, so each copy is vectorised for its target; F16C widens half rows in a few
   instructions). Each query goes through the positions in order with its own score, running
   maximum, softmax total and output: which other queries share the tile never changes one
   operation of its arithmetic. */
static inline __attribute__((always_inline)) void tile_core(
    int kind, const pk_attention_query *qs, int n, const void *k, const void *v, int head_dim,
    float scale) {
    float tmp[PK_ATTENTION_MAX_HEAD_DIM];
    float top[PK_ATTENTION_TILE], total[PK_ATTENTION_TILE];
    long first = qs[0].lo, last = qs[0].hi;
    for (int i = 0; i < n; i++) {
        top[i] = -INFINITY;
        total[i] = 0;
        first = qs[i].lo < first ? qs[i].lo : first;
        last = qs[i].hi > last ? qs[i].hi : last;
    }
    for (long j = first; j <= last; j++) {
        const float *kj = 0;
        for (int i = 0; i < n; i++) {
            if (j < qs[i].lo || j > qs[i].hi) continue;
            if (!kj) kj = kv_row(kind, 1, k, j, head_dim, tmp);
            float s = pk_dot_lanes(qs[i].q, kj, head_dim) * scale;
            qs[i].scores[j] = s;
            top[i] = s > top[i] ? s : top[i];
        }
    }
    for (int i = 0; i < n; i++) {
        float *sc = qs[i].scores;
        for (long j = qs[i].lo; j <= qs[i].hi; j++) {
            sc[j] = expf(sc[j] - top[i]);
            total[i] += sc[j];
        }
        for (int d = 0; d < head_dim; d++) qs[i].out[d] = 0;
    }
    for (long j = first; j <= last; j++) {
        const float *vj = 0;
        for (int i = 0; i < n; i++) {
            if (j < qs[i].lo || j > qs[i].hi) continue;
            if (!vj) vj = kv_row(kind, 0, v, j, head_dim, tmp);
            const float p = qs[i].scores[j];
            float *out = qs[i].out;
            for (int d = 0; d < head_dim; d++) out[d] += p * vj[d];
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
   for Phi-4-mini's 24:8 GQA, the group alone when decoding). */
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
    long head_tile = item % head_tiles, rest = item / head_tiles;
    int kvh = (int)(rest % job->kv_heads);
    long t0 = rest / job->kv_heads * tile_tokens;
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
