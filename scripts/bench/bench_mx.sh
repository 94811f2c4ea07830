#!/usr/bin/env bash
# bench_mx.sh: decode / prompt speed of each MLX weight format's kernels on the full-size
# Phi-3.5-mini matrices (issue 18): affine 4-bit g64 next to mxfp4, nvfp4, mxfp8 and the
# mixed recipes' widths, with bytes per token and the fraction of the read-bandwidth ceiling
# (membw.c). See mx_kernel_bench.c for what is and is not timed.
#
# Environment (optional): BENCH_THREADS (2), BENCH_SECONDS per case (3), BENCH_GBS (measured
# with membw.c when unset), PHIKIT_BENCH_DIR (/tmp/phikit-bench, for the binaries).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BIN_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}/bin
THREADS=${BENCH_THREADS:-2}
SECONDS_PER_CASE=${BENCH_SECONDS:-3}
mkdir -p "$BIN_DIR"
KERNELS=$(ls "$REPO"/Sources/CKernels/*.c)
cc -O3 -fno-math-errno -ffp-contract=fast -pthread -I"$REPO/Sources/CKernels/include" \
  "$HERE/mx_kernel_bench.c" $KERNELS -lm -o "$BIN_DIR/mx_kernel_bench"
GBS=${BENCH_GBS:-}
if [ -z "$GBS" ]; then
  cc -O3 -march=native -pthread "$HERE/membw.c" -o "$BIN_DIR/membw"
  GBS=$("$BIN_DIR/membw" 2 3 "$THREADS" | python3 -c \
    'import json,sys; d=json.load(sys.stdin); print(max(v["best_gbps"] for v in d.values() if isinstance(v, dict)))')
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; bandwidth ${GBS} GB/s"
"$BIN_DIR/mx_kernel_bench" "$THREADS" "$SECONDS_PER_CASE" "$GBS"
