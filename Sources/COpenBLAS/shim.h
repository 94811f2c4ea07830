/* OpenBLAS for Swift: fp32 GEMM/GEMV and the thread-count control (pinned so it does not
   oversubscribe the cores our own kernels use). */
#ifndef PHIKIT_COPENBLAS_SHIM_H
#define PHIKIT_COPENBLAS_SHIM_H
#include <cblas.h>
#endif
