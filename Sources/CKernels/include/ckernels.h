/* phikit's hot loops in plain C99. Each kernel comes as a scalar `_ref` (the oracle) and a
   fast version tested against it. Every file here is self-contained; this umbrella header
   just includes them all. */
#ifndef PHIKIT_CKERNELS_H
#define PHIKIT_CKERNELS_H
#include "pk_affine_quant.h"
#include "pk_attention.h"
#include "pk_build_info.h"
#include "pk_crc32c.h"
#include "pk_half.h"
#include "pk_hash.h"
#include "pk_jobs.h"
#include "pk_lowrank.h"
#include "pk_matvec.h"
#include "pk_mxfp.h"
#include "pk_mxfp_matvec.h"
#include "pk_ops.h"
#include "pk_pool.h"
#include "pk_stats.h"
#endif
