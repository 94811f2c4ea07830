#!/usr/bin/env bash
# bench_attention.sh: attention one query head at a time vs the GQA tiles (attention_bench.c),
# decode and a prompt block, Phi-3.5-mini and Phi-4-mini head shapes, each cache format.
# Ratios from the same process; BENCH_CALLGRIND=1 adds instruction counts (repeatable under
# load) for the Phi-4-mini decode case.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BIN_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}/bin
CONTEXT=${BENCH_CONTEXT:-4096}
mkdir -p "$BIN_DIR"
KERNELS=$(ls "$REPO"/Sources/CKernels/*.c)
# The compiler swift build uses (clang): gcc 12 leaves the half-row widening scalar.
CC=${CC:-$(command -v clang || echo cc)}
# shellcheck disable=SC2086  # the kernel list is meant to split
"$CC" -O3 -fno-math-errno -ffp-contract=fast -pthread -I"$REPO/Sources/CKernels/include" \
  "$HERE/attention_bench.c" $KERNELS -lm -o "$BIN_DIR/attention_bench"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; context $CONTEXT; 1 thread"
for shape in "phi35 96 32 32" "phi4mini 128 24 8"; do
  read -r name hd heads kv <<< "$shape"
  for tokens in 1 64; do
    echo "== $name (head_dim $hd, $heads/$kv heads), $tokens token(s)"
    "$BIN_DIR/attention_bench" "$hd" "$heads" "$kv" "$CONTEXT" "$tokens" 5
  done
done
if [ "${BENCH_CALLGRIND:-0}" = 1 ]; then
  for mode in setup heads tiles; do
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN_DIR/attention_bench" \
      128 24 8 "$CONTEXT" 1 1 "$mode" 2>&1 | awk -v m="$mode" '/Collected/ {print m ": " $4 " instructions"}'
  done
fi
