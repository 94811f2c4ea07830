/* The KV cache's row formats, read side (pk_attention.h), shared by kv_rows.c (which writes
   them) and attention.c (whose inner loops inline kv_row). Internal header: not part of the
   module. */
#ifndef PHIKIT_KV_ROWS_H
#define PHIKIT_KV_ROWS_H
#include <string.h>

#include "pk_attention.h"

static inline int q8_keys(int kind, int key) { return kind == PK_KV_Q8 && key; }

/* pk_kv_q8_group and pk_kv_row_bytes, inlined into the loops that step through rows. */
static inline int q8_group(int head_dim) { return head_dim % 32 == 0 ? 32 : head_dim; }

static inline long row_bytes(int kind, int key, int head_dim) {
    long groups = head_dim / q8_group(head_dim);
    switch (kind) {
        case PK_KV_F32: return 4L * head_dim;
        case PK_KV_F16: return 2L * head_dim;
        default: return head_dim + (key ? 5 : 4) * groups;
    }
}

/* The header of 8-bit keys: calibration rows, centre, spread (pk_attention.h). */
static inline long header_floats(int kind, int key, int head_dim) {
    return q8_keys(kind, key) ? (PK_KV_CALIBRATION + 2L) * head_dim : 0;
}

/* Positions with a row in the rows area: 8-bit keys keep the first ones in the header. */
static inline long first_row(int kind, int key) { return q8_keys(kind, key) ? PK_KV_CALIBRATION : 0; }

static inline unsigned char *row_at(int kind, int key, void *head, long position, int head_dim) {
    return (unsigned char *)head + 4 * header_floats(kind, key, head_dim) +
           (position - first_row(kind, key)) * row_bytes(kind, key, head_dim);
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
    int group = q8_group(head_dim), groups = head_dim / group;
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
#endif
