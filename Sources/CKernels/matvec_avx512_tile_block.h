/* The opening of each 16-group block of the AVX-512 tile kernels (matvec_avx512_q4.c,
   matvec_avx512_q8.c), and the zeroed register arrays they keep per tile: one copy of the
   walk they share, beside matvec_avx512_tile.h's per-group terms and row walk.
   Both are declarations, so they are statements in the caller's scope, not do-while blocks;
   the caller names what they declare. x86-64 only; not part of the public interface. */
#ifndef PHIKIT_MATVEC_AVX512_TILE_BLOCK_H
#define PHIKIT_MATVEC_AVX512_TILE_BLOCK_H
#if defined(__x86_64__)
#include "matvec_avx512_tile.h"

/* Declares `type name[PK_MV_TILE_ROWS][PK_MV_TILE_TOKENS]` and sets its R x T used part to
   `zero` (the float accumulators of a tile, the int32 dots of a quad). */
#define PK_MV_TILE_ZEROED(type, name, R, T, zero)      \
    type name[PK_MV_TILE_ROWS][PK_MV_TILE_TOKENS];      \
    for (int i_ = 0; i_ < (R); i_++)                    \
        for (int t_ = 0; t_ < (T); t_++) name[i_][t_] = (zero)

/* Opens the block of up to 16 groups from g0 of a row of `groups` groups: declares n (the
   groups in it), kn (their lanes) and sv (each row's scales), and adds to acc the terms that
   do not depend on q (PK_MV_TILE_GROUP_TERMS). */
#define PK_MV_TILE_BLOCK(m, r, R, T, groups, g0, xv, n, kn, sv, acc)          \
    const long n = (groups) - (g0) < 16 ? (groups) - (g0) : 16;              \
    const __mmask16 kn = (__mmask16)((1u << n) - 1);                         \
    __m512 sv[PK_MV_TILE_ROWS];                                              \
    PK_MV_TILE_GROUP_TERMS(m, r, R, T, groups, g0, kn, xv, sv, acc)

#endif
#endif
