#!/usr/bin/env bash
# bench_gguf_convert.sh: `phikit convert FILE.gguf` against `cat FILE.gguf > /dev/null` (issue 19,
# "Done when"): how close converting a GGUF comes to merely reading it.
#
#   scripts/bench/bench_gguf_convert.sh [FILE.gguf]
#
# Default file: the full-size Phi-3.5-mini-shaped Q4_0 GGUF that bench_run.sh benchmarks
# llama.cpp on ($PHIKIT_BENCH_DIR/phi35-Q4_0.gguf: llama.cpp's own Q4_0 mix, so 128 Q4_0
# matrices transcoded exactly and the Q6_K output matrix re-quantized to 8-bit); made as
# bench_run.sh makes it when missing (from its random bf16 checkpoint, through a bf16 GGUF).
# Both commands run with a warm page cache (the file is read once first), alternated, REPEAT
# rounds, each under GNU time (wall, CPU, peak RSS); the output directory is deleted between
# runs and lives beside the file (same disk). The report gives medians and the ratio.
#
# Environment: PHIKIT_BIN (default .build/release/phikit), PHIKIT_BENCH_DIR (/tmp/phikit-bench),
# PHIKIT_REF_VENV (/opt/phikit-ref), BENCH_REPEAT (3), BENCH_THREADS (phikit --threads; default
# all cores).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BENCH_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}
PHIKIT_BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
PY=${PHIKIT_REF_VENV:-/opt/phikit-ref}/bin/python
REPEAT=${BENCH_REPEAT:-3}
THREADS=${BENCH_THREADS:-}
# shellcheck source=lib.sh
. "$HERE/lib.sh"
ensure_gnu_time
[ -x "$PHIKIT_BIN" ] || die "no phikit binary at $PHIKIT_BIN (make build)"
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT must be a positive integer, got '$REPEAT'"

FILE=${1:-$BENCH_DIR/phi35-Q4_0.gguf}
if [ ! -s "$FILE" ]; then
  [ $# = 0 ] || die "$FILE not found"
  ckpt=$BENCH_DIR/phi35-random-bf16
  [ -d "$ckpt" ] || die "no $ckpt: run scripts/bench/bench_run.sh (BENCH_SHAPES=phi35) once to make it"
  note "making $FILE from $ckpt (bf16 GGUF, then llama.cpp's Q4_0)"
  "$PY" "$HERE/make_gguf.py" "$ckpt" "$BENCH_DIR/phi35-bf16.gguf" >&2 || die "make_gguf.py failed"
  "$PY" "$HERE/quantize_gguf.py" "$BENCH_DIR/phi35-bf16.gguf" "$FILE" Q4_0 >&2 || die "quantize_gguf.py failed"
  rm -f "$BENCH_DIR/phi35-bf16.gguf"
fi

OUT=$(dirname "$FILE")/.bench-gguf-convert-out
LOGS=$BENCH_DIR/logs/gguf-convert-$(date +%Y%m%d-%H%M%S)
mkdir -p "$LOGS"
threads=(); [ -n "$THREADS" ] && threads=(--threads "$THREADS")
note "warming the page cache: $FILE ($(du -h "$FILE" | cut -f1))"
cat "$FILE" > /dev/null

for ((i = 1; i <= REPEAT; i++)); do
  note "round $i/$REPEAT (load $(loadavg))"
  /usr/bin/time -v -o "$LOGS/cat-$i.time" cat "$FILE" > /dev/null
  rm -rf "$OUT"
  /usr/bin/time -v -o "$LOGS/convert-$i.time" "$PHIKIT_BIN" convert "$FILE" -o "$OUT" "${threads[@]}" \
    --json > "$LOGS/convert-$i.json" 2> "$LOGS/convert-$i.err" ||
    { tail -n 3 "$LOGS/convert-$i.err" >&2; die "phikit convert failed (log $LOGS)"; }
  du -sb "$OUT" | cut -f1 > "$LOGS/convert-$i.bytes"
  rm -rf "$OUT"
done

python3 - "$LOGS" "$REPEAT" "$FILE" <<'EOF'
import json, os, re, statistics, sys
logs, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def gnu(p):
    t = open(p).read()
    wall = re.search(r"Elapsed \(wall clock\) time.*: (.+)", t).group(1).split(":")
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    cpu = float(re.search(r"User time.*: (.+)", t).group(1)) + float(re.search(r"System time.*: (.+)", t).group(1))
    rss = int(re.search(r"Maximum resident set size.*: (\d+)", t).group(1)) / 1e6
    return secs, cpu, rss
rows = {k: [gnu(f"{logs}/{k}-{i}.time") for i in range(1, n + 1)] for k in ("cat", "convert")}
size = os.path.getsize(path)
s = json.load(open(f"{logs}/convert-1.json"))
print(f"GGUF convert vs cat: {path} ({size / 1e9:.2f} GB), {n} rounds, warm page cache, medians")
for k, r in rows.items():
    wall = statistics.median(x[0] for x in r)
    print(f"  {k:8s} wall {wall:7.2f} s ({size / 1e9 / wall:5.2f} GB/s read)  cpu "
          f"{statistics.median(x[1] for x in r):7.2f} s  peak RSS {statistics.median(x[2] for x in r):.2f} GB")
ratio = statistics.median(x[0] for x in rows["convert"]) / statistics.median(x[0] for x in rows["cat"])
print(f"  convert / cat = {ratio:.2f}x; convert wrote {int(open(f'{logs}/convert-1.bytes').read()) / 1e9:.2f} GB; "
      f"exact types {s['exact_types']}, {len(s['inexact'])} re-quantized tensor(s)"
      + (f" (max abs error {max(t['max_abs_error'] for t in s['inexact']):.3g})" if s["inexact"] else ""))
print(f"  logs: {logs}")
EOF
