/* Matrix-vector kernels in plain C: the scalar oracles every fast kernel is tested against,
   and the portable fast versions (what a CPU without AVX2 runs, and what the AVX2 / AVX-512
   files fall back to for the cases they leave out). Calls nothing in the ISA files or the
   dispatcher (matvec.c), so the picture is a tree: matvec.c → matvec_avx*.c → this file.
   See include/pk_matvec.h for the contract. */
#include "matvec_internal.h"
#include "pk_mxfp_matvec.h"

#include <math.h>

/* ---- the oracles ----------------------------------------------------------------------- */

/* Element c of row r as float32, straight from the definition. */
static double ref_weight(const pk_matrix *m, long r, long c) {
    if (pk_mx_is_kind(m->kind)) return pk_mx_weight_ref(m, r, c);
    if (m->kind == PK_W_F32) return ((const float *)m->w)[r * m->cols + c];
    if (m->kind == PK_W_F16 || m->kind == PK_W_BF16) {
        float v;
        const uint16_t *p = (const uint16_t *)m->w + r * m->cols + c;
        if (m->kind == PK_W_F16) pk_f16_to_f32_ref(&v, p, 1); else pk_bf16_to_f32_ref(&v, p, 1);
        return v;
    }
    const uint8_t *row = (const uint8_t *)m->w + r * pk_mv_row_bytes(m);
    long g = r * (m->cols / m->group) + c / m->group;
    float s, b;
    pk_mv_widen(m->scales, m->scale_dtype, g, 1, &s);
    pk_mv_widen(m->biases, m->scale_dtype, g, 1, &b);
    return (double)s * (double)pk_mv_q(row, c, m->bits) + (double)b;
}

void pk_matvec_ref(const pk_matrix *m, const float *x, float *y, long r0, long r1) {
    for (long r = r0; r < r1; r++) {
        double acc = 0;
        for (long c = 0; c < m->cols; c++) acc += ref_weight(m, r, c) * (double)x[c];
        y[r - r0] = (float)acc;
    }
}

void pk_dequantize_rows_ref(const pk_matrix *m, long r0, long r1, float *out) {
    for (long r = r0; r < r1; r++)
        for (long c = 0; c < m->cols; c++) out[(r - r0) * m->cols + c] = (float)ref_weight(m, r, c);
}

/* ---- portable fast versions (plain C the compiler vectorises) --------------------------- */

/* The portable kernel needs only the group sums (it multiplies float x directly). */
void pk_mv_prepare_portable(const pk_matrix *m, const float *x, float *prep) {
    if (m->kind == PK_W_AFFINE) pk_mv_group_sums(m, x, prep);
}

/* Float rows, widened 1024 columns at a time into `tmp` (f16/bf16) or read in place (f32). */
static void portable_float_rows(const pk_matrix *m, const float *x, float *y, long r0, long r1) {
    float tmp[1024];
    for (long r = r0; r < r1; r++) {
        float acc[8] = {0}, s = 0;
        for (long c0 = 0; c0 < m->cols; c0 += 1024) {
            long n = m->cols - c0 < 1024 ? m->cols - c0 : 1024;
            const float *w = tmp;
            long at = r * m->cols + c0;
            if (m->kind == PK_W_F32) w = (const float *)m->w + at;
            else if (m->kind == PK_W_BF16) pk_bf16_to_f32(tmp, (const uint16_t *)m->w + at, (size_t)n);
            else pk_f16_to_f32(tmp, (const uint16_t *)m->w + at, (size_t)n);
            long c = 0;
            for (; c + 8 <= n; c += 8)
                for (int k = 0; k < 8; k++) acc[k] += w[c + k] * x[c0 + c + k];
            for (; c < n; c++) s += w[c] * x[c0 + c];
        }
        for (int k = 0; k < 8; k++) s += acc[k];
        y[r - r0] = s;
    }
}

void pk_mv_matvec_portable(const pk_matrix *m, int tokens, const float *x, long ldx,
                           const float *prep, long prep_stride, float *y, long ldy, long r0,
                           long r1) {
    for (int t = 0; t < tokens; t++) {
        const float *xt = x + t * ldx;
        float *yt = y + t * ldy;
        if (m->kind != PK_W_AFFINE) {
            portable_float_rows(m, xt, yt, r0, r1);
            continue;
        }
        const float *pt = prep + t * prep_stride;
        const float *xsum = pk_mv_xsum(pt, m->cols);
        long groups = m->cols / m->group, row_bytes = pk_mv_row_bytes(m);
        float sc[PK_MV_GROUP_CHUNK], bi[PK_MV_GROUP_CHUNK];
        for (long r = r0; r < r1; r++) {
            const uint8_t *row = (const uint8_t *)m->w + r * row_bytes;
            float total = 0;
            for (long g0 = 0; g0 < groups; g0 += PK_MV_GROUP_CHUNK) {
                long n = pk_mv_group_chunk(m, r, g0, sc, bi);
                for (long g = 0; g < n; g++) {
                    long c0 = (g0 + g) * m->group;
                    float qx = 0;
                    for (long i = 0; i < m->group; i++)
                        qx += (float)pk_mv_q(row, c0 + i, m->bits) * xt[c0 + i];
                    total += sc[g] * qx + bi[g] * xsum[g0 + g];
                }
            }
            yt[r - r0] = total;
        }
    }
}

void pk_mv_dequant_portable(const pk_matrix *m, long r0, long r1, float *out) {
    long cols = m->cols;
    for (long r = r0; r < r1; r++) {
        float *o = out + (r - r0) * cols;
        if (m->kind == PK_W_F32) {
            memcpy(o, (const float *)m->w + r * cols, (size_t)cols * sizeof(float));
        } else if (m->kind == PK_W_BF16) {
            pk_bf16_to_f32(o, (const uint16_t *)m->w + r * cols, (size_t)cols);
        } else if (m->kind == PK_W_F16) {
            pk_f16_to_f32(o, (const uint16_t *)m->w + r * cols, (size_t)cols);
        } else {
            long groups = cols / m->group;
            const uint8_t *row = (const uint8_t *)m->w + r * pk_mv_row_bytes(m);
            for (long g = 0; g < groups; g++) {
                float s, b;
                pk_mv_widen(m->scales, m->scale_dtype, r * groups + g, 1, &s);
                pk_mv_widen(m->biases, m->scale_dtype, r * groups + g, 1, &b);
                for (long i = 0; i < m->group; i++) {
                    long c = g * m->group + i;
                    o[c] = __builtin_fmaf(s, (float)pk_mv_q(row, c, m->bits), b);
                }
            }
        }
    }
}
