/* The KV cache's row formats: sizes, the writer, and the reference reader (pk_attention.h). */
#include <math.h>
#include <string.h>

#include "kv_rows.h"
#include "pk_half.h"

int pk_kv_q8_group(int head_dim) { return q8_group(head_dim); }

long pk_kv_row_bytes(int kind, int key, int head_dim) { return row_bytes(kind, key, head_dim); }

long pk_kv_head_bytes(int kind, int key, int head_dim, long positions) {
    long rows = positions - first_row(kind, key);
    return 4 * header_floats(kind, key, head_dim) +
           (rows > 0 ? rows : 0) * pk_kv_row_bytes(kind, key, head_dim);
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

void pk_kv_load(int kind, int key, float *out, const void *head, long position, int head_dim) {
    const float *r = kv_row(kind, key, head, position, head_dim, out);
    if (r != out) memcpy(out, r, 4 * (size_t)head_dim);
}
