/* Attention over the KV cache, and the cache's row formats.

   A cache row is one position of one kv head: head_dim values in one of three formats,
     PK_KV_F32  float32;
     PK_KV_F16  IEEE half, rounded to nearest even when stored, widened exactly when read;
     PK_KV_Q8   int8 with one float32 scale per group of pk_kv_q8_group(head_dim) values
                (32, or the whole row when 32 does not divide head_dim), symmetric:
                value = scale * q, scale = max|x| / 127 of the group, q = rint(x / scale);
                layout [head_dim int8][groups float32 scales].
   A row is written once (pk_kv_store) and read many times; attention widens each row it
   reads into a few floats of scratch, never the whole cache. */
#ifndef PHIKIT_PK_ATTENTION_H
#define PHIKIT_PK_ATTENTION_H
#include <stdint.h>

enum { PK_KV_F32 = 0, PK_KV_F16 = 1, PK_KV_Q8 = 2 };

/* Bytes of one cache row of `kind`. */
long pk_kv_row_bytes(int kind, int head_dim);
int pk_kv_q8_group(int head_dim);
/* Writes x[head_dim] as one row of `kind`; reads it back widened (the reference decoder). */
void pk_kv_store(int kind, void *row, const float *x, int head_dim);
void pk_kv_load(int kind, float *out, const void *row, int head_dim);

/* Attention of one query head over cached positions [lo, hi]:
     out[d] = sum_j softmax_j(scale * q·k_j) * v_j[d]
   k, v: [positions] rows of one kv head (row j at k + j*row_bytes); scores: scratch of at
   least hi+1 floats. The reference is in double over float32 rows. */
void pk_attention_ref(float *out, const float *q, const float *k, const float *v,
                      float *scores, long lo, long hi, int head_dim, float scale);
/* The fast version over rows of any kind: equal, bit for bit, to itself over the rows widened
   by pk_kv_load into float32 (the format only changes what is read). head_dim <=
   PK_ATTENTION_MAX_HEAD_DIM. */
#define PK_ATTENTION_MAX_HEAD_DIM 512
void pk_attention_isa(int isa, int kind, float *out, const float *q, const void *k,
                      const void *v, float *scores, long lo, long hi, int head_dim, float scale);

/* Several queries over the same kv head at once (the query heads of one GQA group, for a
   tile of consecutive tokens): each cache row is read and widened once for all of them.
   Each query's result is bit for bit what pk_attention_isa gives it alone: its arithmetic,
   position by position, does not depend on the others. */
#define PK_ATTENTION_TILE 16
typedef struct {
    const float *q;  /* [head_dim] */
    float *out;      /* [head_dim] */
    float *scores;   /* scratch, at least hi+1 floats */
    long lo, hi;
} pk_attention_query;
void pk_attention_tile_isa(int isa, int kind, const pk_attention_query *queries, int count,
                           const void *k, const void *v, int head_dim, float scale);
#endif
