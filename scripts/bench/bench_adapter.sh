#!/usr/bin/env bash
# bench_adapter.sh: what a run-time LoRA/DoRA adapter (`--adapter-path`) costs `phikit run`:
# prompt and generation tokens per second of SmolLM2-135M-Instruct (Q4_1, converted by
# scripts/smollm2/fetch_and_convert.sh) with and without a rank-R adapter on all 210 of its
# Linear layers (make_adapter.py), the two runs alternated ROUNDS times so the machine's load
# hits both alike, each under /usr/bin/time for its CPU seconds. Prints one line per run and
# the medians.
#
# Environment (all optional):
#   PHIKIT_BIN        phikit binary (default .build/release/phikit)
#   PHIKIT_ASSETS     where fetch_and_convert.sh put the model (default .build/assets)
#   BENCH_ROUNDS      alternated pairs (default 5)
#   BENCH_RANK        adapter rank (default 8); BENCH_DORA=1 for DoRA
#   BENCH_PROMPT      prompt length in words (default 400, ~500 tokens); BENCH_GEN (default 64)
#   BENCH_THREADS     threads (default 2)
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
ASSETS=${PHIKIT_ASSETS:-$REPO/.build/assets}
MODEL=$ASSETS/smollm2/SmolLM2-135M-Instruct-Q4_1
ROUNDS=${BENCH_ROUNDS:-5}
RANK=${BENCH_RANK:-8}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
[ -d "$MODEL" ] || { echo "error: no $MODEL: run scripts/smollm2/fetch_and_convert.sh" >&2; exit 66; }
python3 "$HERE/make_adapter.py" "$MODEL" "$WORK/adapter" --rank "$RANK" ${BENCH_DORA:+--dora}
python3 - "$WORK/prompt.txt" "${BENCH_PROMPT:-400}" <<'PY'
import random, sys
words = "the a river stone light went over under quiet morning city garden told asked".split()
rng = random.Random(3)
open(sys.argv[1], "w").write(" ".join(rng.choice(words) for _ in range(int(sys.argv[2]))))
PY
run() {  # label, extra args
    local label=$1; shift
    /usr/bin/time -f "cpu %U+%S" "$BIN" run "$MODEL" -f "$WORK/prompt.txt" -m "${BENCH_GEN:-64}" \
        --threads "${BENCH_THREADS:-2}" --stats --ignore-eos "$@" >/dev/null 2>"$WORK/err" || {
        cat "$WORK/err" >&2; exit 1; }
    local prompt gen cpu
    prompt=$(sed -n 's/^Prompt: \([0-9]*\) tokens, \([0-9.]*\) tokens-per-sec/\2 (\1 tokens)/p' "$WORK/err")
    gen=$(sed -n 's/^Generation: [0-9]* tokens, \([0-9.]*\) tokens-per-sec/\1/p' "$WORK/err")
    cpu=$(sed -n 's/^cpu \([0-9.]*\)+\([0-9.]*\)/\1 \2/p' "$WORK/err" | awk '{print $1 + $2}')
    echo "$label prompt_tps=${prompt%% *} gen_tps=$gen cpu_s=$cpu"
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); rank $RANK${BENCH_DORA:+ DoRA} on 210 Linears"
for _ in $(seq "$ROUNDS"); do
    run base
    run adapter --adapter-path "$WORK/adapter"
done | tee "$WORK/runs"
for label in base adapter; do
    for key in prompt_tps gen_tps cpu_s; do
        grep "^$label " "$WORK/runs" | sed -n "s/.*$key=\([0-9.]*\).*/\1/p" | sort -g |
            awk -v l="$label" -v k="$key" '{v[NR]=$1} END {printf "%s median %s %s\n", l, k, v[int((NR+1)/2)]}'
    done
done
