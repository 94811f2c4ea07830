/* Attention over the KV cache, and the cache's row formats.

   A cache row is one position of one kv head: head_dim values in one of three formats,
     PK_KV_F32  float32;
     PK_KV_F16  IEEE half, rounded to nearest even when stored, widened exactly when read;
     PK_KV_Q8   8 bits, with keys and values stored differently (below).
   Rows live in a kv head's region (`head`): [header][positions rows]; only 8-bit keys have a
   header. A row is written once (pk_kv_store, in position order) and read many times;
   attention widens each row it reads into a few floats of scratch, never the whole cache.

   8-bit values: int8 with one float32 scale per group of pk_kv_q8_group(head_dim) values (32,
   or the whole row when 32 does not divide head_dim), symmetric: value = scale * q,
   scale = max|x| / 127 of the group, q = rint(x / scale); row [head_dim int8][groups scales].

   8-bit keys: keys have outlier channels, nearly constant from one position to the next (on
   stories-260k two of 8 channels hold most of each key, at a mean of ~15 against ~2 for the
   rest), so one scale per row spends its codes on them. The first PK_KV_CALIBRATION
   positions are kept as float32 in the header; when the last of them is stored, each channel
   gets a centre (the mean over them) and a spread (their max |x - centre|, rounded up to a
   power of two). Every later key is stored once, as
     n = (x - centre) / spread,  n ≈ scale * (code - zero), code in 0..255,
   with one float32 scale and one integer zero (0..255) per group, the range [min n, max n]
   widened to include 0; row [head_dim uint8 codes][groups scales][groups zeros]. Read back as
   centre + spread * (scale * (code - zero)): the product with a power of two is exact, so the
   value is the same with or without fused multiply-add (every instruction set widens alike).
   q·centre is the same for every position, so the centre costs softmax nothing.
   Header: [PK_KV_CALIBRATION][head_dim] float32 rows, then centre[head_dim], spread[head_dim]. */
#ifndef PHIKIT_PK_ATTENTION_H
#define PHIKIT_PK_ATTENTION_H
#include <stdint.h>

enum { PK_KV_F32 = 0, PK_KV_F16 = 1, PK_KV_Q8 = 2 };
enum { PK_KV_CALIBRATION = 32 };

/* Bytes of one cache row of `kind` (key: 1 for keys, 0 for values), of a kv head's region
   for `positions` positions, header included. */
long pk_kv_row_bytes(int kind, int key, int head_dim);
long pk_kv_head_bytes(int kind, int key, int head_dim, long positions);
int pk_kv_q8_group(int head_dim);
/* Writes x[head_dim] as position `position` of a kv head's region (positions in order: the
   8-bit keys calibrate on the first ones); reads it back widened (the reference decoder). */
void pk_kv_store(int kind, int key, void *head, long position, const float *x, int head_dim);
void pk_kv_load(int kind, int key, float *out, const void *head, long position, int head_dim);

/* Attention of one query head over cached positions [lo, hi]:
     out[d] = sum_j softmax_j(scale * q·k_j) * v_j[d]
   k, v: [positions] float32 rows of one kv head; scores: scratch of at least hi+1 floats. The reference is in double over float32 rows. */
void pk_attention_ref(float *out, const float *q, const float *k, const float *v,
                      float *scores, long lo, long hi, int head_dim, float scale);
/* The fast version over kv head regions of any kind: equal, bit for bit, to itself over the
   rows widened by pk_kv_load into float32 (the format only changes what is read). head_dim <=
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
