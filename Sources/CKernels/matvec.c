/* Matrix-vector kernels: the run-time dispatch to the AVX-512 / AVX2 files and the portable
   C ones (matvec_portable.c, which also holds the scalar oracles). See include/pk_matvec.h
   for the contract. */
#include "matvec_internal.h"
#include "pk_mxfp_matvec.h"

/* The 16-bit layout's floats, plus room for the 8-bit one's last partial superblock of 16
   groups (matvec_act8.c: 16 G + 256 bytes each). */
long pk_matvec_prep_floats(long cols) { return cols + 3 * (cols / 32) + cols / 16 + 96 + 320; }

/* ---- dispatch ---------------------------------------------------------------------------- */

static int detect_isa(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi")
        && __builtin_cpu_supports("avx512vnni"))
        return PK_MV_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
        && __builtin_cpu_supports("f16c"))
        return PK_MV_ISA_AVX2;
#endif
    return PK_MV_ISA_SCALAR;
}

int pk_matvec_best_isa(void) {
    static int best = -1;  /* first callers may race; they all store the same value */
    int isa = __atomic_load_n(&best, __ATOMIC_RELAXED);
    if (isa < 0) {
        isa = detect_isa();
        __atomic_store_n(&best, isa, __ATOMIC_RELAXED);
    }
    return isa;
}

/* A requested level the CPU lacks falls back to the best one it has. */
static int clamp_isa(int isa) {
    int best = pk_matvec_best_isa();
    return isa > best ? best : isa;
}

void pk_matvec_prepare(int isa, const pk_matrix *m, const float *x, float *prep) {
    if (pk_mx_is_kind(m->kind)) return; /* float x as it is */
    isa = clamp_isa(isa);
#if defined(__x86_64__)
    if (isa == PK_MV_ISA_AVX512) { pk_mv_prepare_avx512(m, x, prep); return; }
    if (isa == PK_MV_ISA_AVX2) { pk_mv_prepare_avx2(m, x, prep); return; }
#endif
    pk_mv_prepare_portable(m, x, prep);
}

void pk_matvec_tokens_isa(int isa, const pk_matrix *m, long tokens, const float *x, long ldx,
                          const float *prep, long prep_stride, float *y, long ldy, long r0,
                          long r1) {
    isa = clamp_isa(isa);
    if (pk_mx_is_kind(m->kind)) {
        for (long t0 = 0; t0 < tokens; t0 += PK_MV_TOKENS) {
            int n = tokens - t0 < PK_MV_TOKENS ? (int)(tokens - t0) : PK_MV_TOKENS;
            pk_mx_matvec_tokens(isa, m, n, x + t0 * ldx, ldx, y + t0 * ldy, ldy, r0, r1);
        }
        return;
    }
    for (long t0 = 0; t0 < tokens; t0 += PK_MV_TOKENS) {
        int n = tokens - t0 < PK_MV_TOKENS ? (int)(tokens - t0) : PK_MV_TOKENS;
        const float *xt = x + t0 * ldx, *pt = prep ? prep + t0 * prep_stride : prep;
        float *yt = y + t0 * ldy;
#if defined(__x86_64__)
        if (isa == PK_MV_ISA_AVX512) {
            pk_mv_matvec_avx512(m, n, xt, ldx, pt, prep_stride, yt, ldy, r0, r1);
            continue;
        }
        if (isa == PK_MV_ISA_AVX2) {
            pk_mv_matvec_avx2(m, n, xt, ldx, pt, prep_stride, yt, ldy, r0, r1);
            continue;
        }
#endif
        pk_mv_matvec_portable(m, n, xt, ldx, pt, prep_stride, yt, ldy, r0, r1);
    }
}

void pk_matvec_isa(int isa, const pk_matrix *m, const float *x, const float *prep, float *y,
                   long r0, long r1) {
    pk_matvec_tokens_isa(isa, m, 1, x, 0, prep, 0, y, 0, r0, r1);
}

void pk_dequantize_rows_isa(int isa, const pk_matrix *m, long r0, long r1, float *out) {
    isa = clamp_isa(isa);
    if (pk_mx_is_kind(m->kind)) { pk_mx_dequantize_rows(isa, m, r0, r1, out); return; }
#if defined(__x86_64__)
    if (isa == PK_MV_ISA_AVX512) { pk_mv_dequant_avx512(m, r0, r1, out); return; }
    if (isa == PK_MV_ISA_AVX2) { pk_mv_dequant_avx2(m, r0, r1, out); return; }
#endif
    pk_mv_dequant_portable(m, r0, r1, out);
}

/* ---- 8-bit activations (matvec_act8.c) ------------------------------------------------ */

void pk_matvec_prepare_act8(int isa, const pk_matrix *m, const float *x, float *prep) {
#if defined(__x86_64__)
    if (clamp_isa(isa) == PK_MV_ISA_AVX512) { pk_mv_prepare_act8_avx512(m, x, prep); return; }
#endif
    pk_mv_prepare_act8_portable(m, x, prep);
}

void pk_matvec_tokens_act8_isa(int isa, const pk_matrix *m, long tokens, const float *prep,
                               long prep_stride, float *y, long ldy, long r0, long r1) {
    isa = clamp_isa(isa);
#if defined(__x86_64__)
    if (isa == PK_MV_ISA_AVX512) {  /* all tokens at once: it repacks the rows once for them */
        pk_mv_matvec_act8_avx512(m, tokens, prep, prep_stride, y, ldy, r0, r1);
        return;
    }
#endif
    for (long t0 = 0; t0 < tokens; t0 += PK_MV_TOKENS) {
        int n = tokens - t0 < PK_MV_TOKENS ? (int)(tokens - t0) : PK_MV_TOKENS;
        pk_mv_matvec_act8_portable(m, n, prep + t0 * prep_stride, prep_stride, y + t0 * ldy,
                                   ldy, r0, r1);
    }
}
