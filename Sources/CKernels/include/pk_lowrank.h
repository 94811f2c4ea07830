/* A run-time LoRA/DoRA correction on the pool (PhiEngine's AppliedDelta):

       y[t] += (x[t] · A) · Bᵀ            then, for DoRA, y[t][o] *= row_scale[o]

   for the token rows t a job lists, with A [inputs][rank_pad] and B [rank_pad][outputs]
   (B transposed, so the second product runs along the outputs) and the rank padded with zeros
   to a multiple of 8. Each token is computed alone, in a fixed order that does not depend on
   the chunk it falls in or on the other rows of the job, so a token's row is the same bits in
   a prompt block, a decode step or a batch of sequences with other adapters. One chunk is a
   few tokens: a prompt block spreads over every thread, as the base product does. */
#ifndef PHIKIT_PK_LOWRANK_H
#define PHIKIT_PK_LOWRANK_H

typedef struct {
    const float *x;         /* [..][ldx], inputs used */
    long ldx;
    float *y;               /* [..][ldy], outputs used; holds x·Wᵀ already */
    long ldy;
    const long *rows;       /* the token rows to correct; NULL: rows 0 ..< count */
    long count;
    long inputs, outputs, rank_pad;
    const float *a;         /* [inputs][rank_pad] */
    const float *bt;        /* [rank_pad][outputs] */
    const float *row_scale; /* [outputs], DoRA's m / ‖W + B·Aᵀ‖ per row; NULL for LoRA */
    int isa;                /* PK_MV_ISA_*: AVX2 and above take the FMA path */
} pk_lowrank_job;

long pk_lowrank_chunks(const pk_lowrank_job *job);
void pk_lowrank_task(void *job, long chunk, int thread);

#endif
