#!/usr/bin/env bash
# bench_tokenizer.sh: encode a few MB of mixed text with `phikit tokenize` and with the
# `tokenizers` library (single-threaded) in the same run, for the Phi-3.5-mini and Phi-4-mini
# tokenizers: load time, encode MB/s, the speed ratio, and whether the token counts agree.
# Issue 6's "Benchmark" section is the spec; see scripts/bench/README.md.
#
# The text is the tokenizer test corpus (Tests/PhiTextTests/Fixtures/tokenizer/corpus.jsonl:
# English prose, code, ~60 languages, emoji, whitespace runs, special tokens) joined with
# newlines and repeated to BENCH_MB. Two modes, the same for both engines:
#   lines  every line is its own text (phikit --lines; tokenizers encode_batch), the usual case
#   whole  the file is one text (phikit --file; tokenizers encode)
# phikit reports load and encode times itself (--timings), so process start and file reading
# are not in the encode time; Python times Tokenizer.from_file and the encode calls.
#
# Environment (all optional):
#   PHIKIT_BIN        phikit binary (default .build/release/phikit in the repo)
#   PHIKIT_REF_VENV   Python venv with tokenizers 0.23.3 (default /opt/phikit-ref)
#   PHIKIT_BENCH_DIR  where the text and results go (default /tmp/phikit-bench)
#   BENCH_REPEAT      runs per engine and case, alternating engines; medians shown (default 3)
#   BENCH_MB          size of the text in MB (default 4)
#   BENCH_MODES       "lines whole" (default)
#
# Exit status: 0 when every run succeeded and phikit's token counts equal tokenizers'.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SHARED=$("$REPO/scripts/fixtures.sh")
PHIKIT_BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
REF_VENV=${PHIKIT_REF_VENV:-/opt/phikit-ref}
BENCH_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}/tokenizer
REPEAT=${BENCH_REPEAT:-3}
MB=${BENCH_MB:-4}
MODES=${BENCH_MODES:-lines whole}
PY=$REF_VENV/bin/python

die() { echo "error: $*" >&2; exit 1; }
[ -x "$PHIKIT_BIN" ] || die "no phikit binary at $PHIKIT_BIN: run 'make build' or set PHIKIT_BIN"
"$PY" -c 'import tokenizers' 2>/dev/null ||
  die "$PY cannot import tokenizers: pip install tokenizers==0.23.3 into \$PHIKIT_REF_VENV"
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT must be a positive integer"
mkdir -p "$BENCH_DIR"

TEXT=$BENCH_DIR/text-${MB}MB.txt
"$PY" - "$REPO/Tests/PhiTextTests/Fixtures/tokenizer/corpus.jsonl" "$TEXT" "$MB" <<'PY'
import json, sys
corpus, out, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
texts = [json.loads(l) for l in open(corpus, encoding="utf-8").read().split("\n")[:-1]]
one = "\n".join(texts) + "\n"
reps = max(1, int(mb * 1e6 / len(one.encode())) + 1)
data = (one * reps).encode()[: int(mb * 1e6)]
data = data[: data.rfind(b"\n") + 1]  # whole lines, valid UTF-8
open(out, "wb").write(data)
PY
BYTES=$(stat -c %s "$TEXT")

# tokenizers: prints "load_ms encode_ms tokens"
py_run() {  # tokenizer.json, mode
  RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=false "$PY" - "$1" "$TEXT" "$2" <<'PY'
import sys, time
from tokenizers import Tokenizer
path, text_path, mode = sys.argv[1:4]
text = open(text_path, encoding="utf-8", newline="").read()  # no newline translation
t0 = time.perf_counter(); tok = Tokenizer.from_file(path); t1 = time.perf_counter()
if mode == "lines":
    lines = text.split("\n")[:-1]
    t2 = time.perf_counter(); encs = tok.encode_batch(lines); t3 = time.perf_counter()
    n = sum(len(e.ids) for e in encs)
else:
    t2 = time.perf_counter(); n = len(tok.encode(text).ids); t3 = time.perf_counter()
print(f"{(t1 - t0) * 1e3:.1f} {(t3 - t2) * 1e3:.1f} {n}")
PY
}

# phikit: its --timings line is "load X ms, encode Y ms, B bytes, N tokens"
phikit_run() {  # model dir, mode
  local flags=(--file "$TEXT" --count --timings)
  [ "$2" = lines ] && flags+=(--lines)
  "$PHIKIT_BIN" tokenize "$1" "${flags[@]}" 2>&1 >/dev/null |
    sed -E 's/^load ([0-9.]+) ms, encode ([0-9.]+) ms, [0-9]+ bytes, ([0-9]+) tokens$/\1 \2 \3/'
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

RESULTS=$BENCH_DIR/runs-$(date +%Y%m%d-%H%M%S).tsv
status=0
{
  echo "# tokenizer benchmark: $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# text: $BYTES bytes ($TEXT); tokenizers $("$PY" -c 'import tokenizers; print(tokenizers.__version__)') single-threaded; medians of $REPEAT"
  echo
  echo "| tokenizer | mode | engine | load ms | encode ms | MB/s | tokens | phikit speed ratio |"
  echo "|---|---|---|---|---|---|---|---|"
} | tee "$BENCH_DIR/report.md"
for name in phi35 phi4mini; do
  case $name in
    phi35) dir=$SHARED/microsoft--Phi-3.5-mini-instruct ;;
    phi4mini) dir=$SHARED/_derived/microsoft--Phi-4-mini-instruct ;;
  esac
  for mode in $MODES; do
    : >"$BENCH_DIR/$name-$mode-py" ; : >"$BENCH_DIR/$name-$mode-phikit"
    for _ in $(seq "$REPEAT"); do
      py_run "$dir/tokenizer.json" "$mode" >>"$BENCH_DIR/$name-$mode-py"
      phikit_run "$dir" "$mode" >>"$BENCH_DIR/$name-$mode-phikit"
    done
    read -r py_load py_enc py_n < <(
      paste <(cut -d' ' -f1 "$BENCH_DIR/$name-$mode-py" | median) \
        <(cut -d' ' -f2 "$BENCH_DIR/$name-$mode-py" | median) \
        <(cut -d' ' -f3 "$BENCH_DIR/$name-$mode-py" | head -1))
    read -r pk_load pk_enc pk_n < <(
      paste <(cut -d' ' -f1 "$BENCH_DIR/$name-$mode-phikit" | median) \
        <(cut -d' ' -f2 "$BENCH_DIR/$name-$mode-phikit" | median) \
        <(cut -d' ' -f3 "$BENCH_DIR/$name-$mode-phikit" | head -1))
    [ "$py_n" = "$pk_n" ] || { echo "token counts differ: tokenizers $py_n, phikit $pk_n" >&2; status=1; }
    py_mbs=$(awk -v b="$BYTES" -v ms="$py_enc" 'BEGIN {printf "%.2f", b / 1e6 / (ms / 1e3)}')
    pk_mbs=$(awk -v b="$BYTES" -v ms="$pk_enc" 'BEGIN {printf "%.2f", b / 1e6 / (ms / 1e3)}')
    ratio=$(awk -v a="$pk_mbs" -v b="$py_mbs" 'BEGIN {printf "%.2f×", a / b}')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$mode" "$py_load" "$py_enc" \
      "$py_n" "$pk_load" "$pk_enc" "$pk_n" "$BYTES" "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RESULTS"
    echo "| $name | $mode | tokenizers | $py_load | $py_enc | $py_mbs | $py_n | |" | tee -a "$BENCH_DIR/report.md"
    echo "| $name | $mode | phikit | $pk_load | $pk_enc | $pk_mbs | $pk_n | $ratio |" | tee -a "$BENCH_DIR/report.md"
  done
done
echo
echo "report: $BENCH_DIR/report.md, runs: $RESULTS (load average after: $(cut -d' ' -f1-3 /proc/loadavg))"
exit $status
