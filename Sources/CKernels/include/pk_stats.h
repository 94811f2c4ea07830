/* One pass over a tensor's elements for `phikit verify`: how many are NaN, Inf or zero, where
   the first non-finite one is, and the min, max and sum of the finite ones — enough to flag a
   corrupt (NaN/Inf), all-zero or constant tensor while the file streams by at disk speed.

   Contract (the `_ref` functions are the oracle; tests compare every field):
   - data may be unaligned; n elements, little-endian;
   - calls accumulate: feed a tensor in any number of pieces, in order, after pk_stats_init;
     `first_bad` counts from the first element of the first piece;
   - count, nan, inf, zeros, first_bad, min and max are exact and equal between `_ref` and the
     fast version; `sum` (finite elements, in double) may differ by rounding, because the fast
     version adds in lanes;
   - packed integer words (u32): min and max of the words, zeros; nan, inf and sum stay 0.
   Fast versions use AVX2/F16C when the CPU has them, else call the `_ref` ones. */
#ifndef PHIKIT_PK_STATS_H
#define PHIKIT_PK_STATS_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t count;     /* elements seen */
    uint64_t nan;       /* NaN elements */
    uint64_t inf;       /* +-Inf elements */
    uint64_t zeros;     /* elements equal to zero (+0 or -0) */
    int64_t first_bad;  /* index of the first NaN or Inf, -1 when there is none */
    double sum;         /* of the finite elements */
    double min, max;    /* of the finite elements; +HUGE_VAL / -HUGE_VAL when there are none */
} pk_stats;

void pk_stats_init(pk_stats *s);

void pk_stats_f32_ref(pk_stats *s, const void *data, size_t n);
void pk_stats_f16_ref(pk_stats *s, const void *data, size_t n);
void pk_stats_bf16_ref(pk_stats *s, const void *data, size_t n);
void pk_stats_u32_ref(pk_stats *s, const void *data, size_t n);

void pk_stats_f32(pk_stats *s, const void *data, size_t n);
void pk_stats_f16(pk_stats *s, const void *data, size_t n);
void pk_stats_bf16(pk_stats *s, const void *data, size_t n);
void pk_stats_u32(pk_stats *s, const void *data, size_t n);

/* 1 if the fast versions use AVX2 on this CPU. */
int pk_stats_has_simd(void);
#endif
