#!/bin/sh
# Times the MLX affine quantizer on a 3072x8192 fp32 matrix (4/8/3 bits, group 64, bf16
# scales, 1 and 2 threads) in a release build and extrapolates to a 3.8B-parameter model.
# Usage: scripts/bench_quant.sh   (uses its own scratch path, .build-quant-release)
set -eu
cd "$(dirname "$0")/.."
PHIKIT_QUANT_BENCH=1 exec swift test -c release --scratch-path .build-quant-release \
    --filter 'AffineQuantizationTests/benchmark'
