#!/usr/bin/env bash
# bench_run.sh: generation speed of `phikit run` against llama.cpp on the same random weights,
# same prompt tokens, same threads, engines alternated in one run (issues 8 and 10,
# "Benchmark"; ../shared/PERF.md has the anchors). See scripts/bench/README.md.
#
# Per model shape (Phi-3.5-mini: MHA, untied, LongRoPE; Phi-4-mini: GQA, 200k vocab, tied):
#   1. a full-size random bf16 checkpoint (make_random_checkpoint.py; cached)
#   2. phikit's model:    phikit convert CKPT -o DIR -q --bits 4 --group-size 64   (cached)
#   3. llama.cpp's model: make_gguf.py CKPT -> bf16 GGUF -> quantize_gguf.py Q4_0 (cached;
#      the bf16 GGUF is deleted once quantized)
#   4. per context C, a prompt of exactly C tokens for the shape's tokenizer (make_prompt.py)
#   5. the runs, each engine its own process under /usr/bin/time -v, REPEAT rounds: prefill of
#      the C-token prompt, then GEN tokens decoded at context C..C+GEN
#   6. the report: per shape and context, medians/best, bytes per token and share of the
#      bandwidth ceiling (membw.c), load, peak RSS, ratios; the largest context in 16 GiB
#
# Environment (all optional):
#   PHIKIT_BIN           phikit binary (default .build/release/phikit in the repo)
#   PHIKIT_BENCH_DIR     models, logs, results (default /tmp/phikit-bench; ~30 GB for both shapes)
#   LLAMA_CPP_BIN        upstream llama.cpp's bin folder, the anchor (issue 31): its llama-bench
#                        times llama.cpp when present (default /work/llama/build/bin;
#                        scripts/bench/build_llamacpp.sh builds it); else llama-cpp-python
#   PHIKIT_REF_VENV      venv with gguf, tokenizers, sentencepiece (+ llama-cpp-python without
#                        upstream) (default /opt/phikit-ref; missing packages are pip-installed;
#                        building llama-cpp-python compiles llama.cpp, 10+ minutes)
#   PHIKIT_FIXTURES      real config/tokenizer files (default: Tests/Fixtures, via scripts/fixtures.sh)
#   BENCH_REPEAT         rounds; the table shows median and best (default 3)
#   BENCH_ENGINES        "phikit llama.cpp" (default); one of them alone to iterate on it
#   BENCH_SHAPES         "phi35 phi4mini" (default); also phi4: Phi-4 (14B), a random Q4_0 GGUF
#                        converted exactly by phikit (prepare_phi4 below; ~17 GB of disk)
#   BENCH_LLAMA_FORMATS  llama.cpp quantizations: Q4_0 (default), Q4_K_M, Q8_0, Q4_0-pure
#   BENCH_FLASH_ATTN     llama.cpp flash attention settings to run: "off on" (default)
#   BENCH_THREADS        threads for both engines (default 2)
#   BENCH_CONTEXT        contexts: each is a prompt length (prefill) and the context decode runs
#                        at (default "512"; issue 22 asks for "512 4096")
#   BENCH_KV_BITS        phikit's KV cache widths to run, each its own engine row: "16"
#                        (default), "16 8", "32 16 8" (llama.cpp keeps its fp16 cache)
#   BENCH_ACT_BITS       phikit's activation widths, each its own engine row: "16 8" (default:
#                        the exact path and `--act-bits 8`, issue 31's goals) or "16" (exact only)
#   BENCH_GEN_TOKENS     generated tokens (default 128); BENCH_PROMPT_TOKENS: old name of a
#                        single BENCH_CONTEXT
#   BENCH_SMALL=1        2-layer models of both shapes, 1 round: checks the harness in a minute
#   BENCH_REBUILD=1      remake the converted models and GGUFs even if cached
#   BENCH_WAIT_QUIET     seconds to wait before each run (and bandwidth probe) for other jobs to
#                        use less than BENCH_QUIET_CPUS CPUs (default 0 = don't wait; 0.3 CPUs)
#
# Exit status: 0 when every run that was attempted succeeded (a phikit without `run` counts
# as "not available", not as a failure), 1 otherwise. Goals are reported, not enforced.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BENCH_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}
PHIKIT_BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
REF_VENV=${PHIKIT_REF_VENV:-/opt/phikit-ref}
FIXTURES=${PHIKIT_FIXTURES:-$("$REPO/scripts/fixtures.sh")}
SMALL=${BENCH_SMALL:-0}
REPEAT=${BENCH_REPEAT:-$([ "$SMALL" = 1 ] && echo 1 || echo 3)}
ENGINES=${BENCH_ENGINES:-phikit llama.cpp}
SHAPES=${BENCH_SHAPES:-phi35 phi4mini}
LLAMA_FORMATS=${BENCH_LLAMA_FORMATS:-Q4_0}
FLASH=${BENCH_FLASH_ATTN:-off on}
THREADS=${BENCH_THREADS:-2}
CONTEXTS=${BENCH_CONTEXT:-${BENCH_PROMPT_TOKENS:-512}}
KV_BITS=${BENCH_KV_BITS:-16}
ACT_BITS=${BENCH_ACT_BITS:-16 8}
GEN_TOKENS=${BENCH_GEN_TOKENS:-128}
REBUILD=${BENCH_REBUILD:-0}
WAIT_QUIET=${BENCH_WAIT_QUIET:-0}
QUIET_CPUS=${BENCH_QUIET_CPUS:-0.3}
LLAMA_BIN=${LLAMA_CPP_BIN:-$(python3 -c "import sys; sys.path.insert(0, '$HERE'); import llama_upstream; print(llama_upstream.bin_dir())")}
export LLAMA_CPP_BIN=$LLAMA_BIN
UPSTREAM=no; [ -x "$LLAMA_BIN/llama-bench" ] && UPSTREAM=yes
# Everything the venv must import; llama-cpp-python's pip name differs from its module name.
REF_PACKAGES="gguf tokenizers sentencepiece numpy"; REF_MODULES="gguf, tokenizers, sentencepiece, numpy"
if [ "$UPSTREAM" = no ]; then REF_PACKAGES="llama-cpp-python $REF_PACKAGES"; REF_MODULES="llama_cpp, $REF_MODULES"; fi

# shellcheck source=lib.sh
. "$HERE/lib.sh"
has() { [[ " $1 " == *" $2 "* ]]; }

# CPUs kept busy by whatever runs now (2 s sample of /proc/stat; 0 = idle, 2 = both cores).
# The load average lags by minutes; this is what the next run will compete with.
busy_cpus() {
  local a b
  read -r -a a < <(awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat)
  sleep 2
  read -r -a b < <(awk '/^cpu / {print $2+$3+$4+$7+$8+$9, $5+$6}' /proc/stat)
  awk -v u=$((b[0] - a[0])) -v i=$((b[1] - a[1])) -v n="$(nproc)" \
    'BEGIN {printf "%.2f", (u + i > 0) ? n * u / (u + i) : 0}'
}

# Sets BUSY; with BENCH_WAIT_QUIET, first waits (bounded) until other jobs leave the CPUs.
wait_quiet() {
  local waited=0
  BUSY=$(busy_cpus)
  while (( WAIT_QUIET > 0 )) && awk -v b="$BUSY" -v m="$QUIET_CPUS" 'BEGIN {exit !(b > m)}'; do
    if (( waited >= WAIT_QUIET )); then
      note "still $BUSY CPUs busy after ${waited} s; running anyway"
      return
    fi
    (( waited == 0 )) && note "waiting up to $WAIT_QUIET s for other jobs to quiet down ($BUSY CPUs busy)"
    sleep 8
    waited=$((waited + 10))
    BUSY=$(busy_cpus)
  done
}

for v in REPEAT THREADS GEN_TOKENS; do
  [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "BENCH_$v must be a positive integer, got '${!v}'"
done
for c in $CONTEXTS; do [[ "$c" =~ ^[1-9][0-9]*$ ]] || die "BENCH_CONTEXT: '$c' is not a positive integer"; done
for b in $KV_BITS; do has "8 16 32" "$b" || die "BENCH_KV_BITS: '$b' is not 8, 16 or 32"; done
for b in $ACT_BITS; do has "8 16" "$b" || die "BENCH_ACT_BITS: '$b' is not 8 or 16"; done
[[ "$WAIT_QUIET" =~ ^[0-9]+$ ]] || die "BENCH_WAIT_QUIET must be a number of seconds, got '$WAIT_QUIET'"
[[ "$QUIET_CPUS" =~ ^[0-9]*\.?[0-9]+$ ]] || die "BENCH_QUIET_CPUS must be a number, got '$QUIET_CPUS'"
for e in $ENGINES; do has "phikit llama.cpp" "$e" || die "BENCH_ENGINES: unknown engine '$e' (phikit, llama.cpp)"; done
for s in $SHAPES; do has "phi35 phi4mini phi4" "$s" || die "BENCH_SHAPES: unknown shape '$s' (phi35, phi4mini, phi4)"; done
for f in $LLAMA_FORMATS; do has "Q4_0 Q4_K_M Q8_0 Q4_0-pure" "$f" || die "BENCH_LLAMA_FORMATS: unknown '$f'"; done
for f in $FLASH; do has "off on auto" "$f" || die "BENCH_FLASH_ATTN: '$f' is not off, on or auto"; done
[ -d "$FIXTURES" ] || die "no fixtures at $FIXTURES (set PHIKIT_FIXTURES)"

# --- tools -----------------------------------------------------------------------------------
ensure_gnu_time
command -v cc > /dev/null || die "no C compiler (cc) for the bandwidth probe; apt-get install gcc"

PY=$REF_VENV/bin/python
if ! "$PY" -c "import $REF_MODULES" 2>/dev/null; then
  [ -x "$PY" ] || python3 -m venv "$REF_VENV" ||
    die "python3 -m venv $REF_VENV failed (apt-get install python3-venv? or set PHIKIT_REF_VENV)"
  note "installing into $REF_VENV: $REF_PACKAGES (llama-cpp-python compiles llama.cpp: 10+ minutes)"
  # shellcheck disable=SC2086  # word splitting of the package list is intended
  "$REF_VENV/bin/pip" install -q $REF_PACKAGES || die "pip install into $REF_VENV failed (is PyPI reachable?)"
  "$PY" -c "import $REF_MODULES" || die "$REF_VENV: packages installed but do not import"
fi

PHIKIT_RUN=no  # becomes yes when the binary has a working `run` command
PHIKIT_WHY="not available: no phikit binary at $PHIKIT_BIN (make build)"
if has "$ENGINES" phikit && [ -x "$PHIKIT_BIN" ]; then
  if "$PHIKIT_BIN" help 2>&1 | grep -Eq '^ +run .*not yet available'; then
    PHIKIT_WHY="not available: this phikit has no 'run' yet"
  else
    PHIKIT_RUN=yes
  fi
fi

mkdir -p "$BENCH_DIR/logs" "$BENCH_DIR/results" "$BENCH_DIR/bin"
STAMP=$(date +%Y%m%d-%H%M%S)
TAG=$([ "$SMALL" = 1 ] && echo small || echo full)
RESULTS=$BENCH_DIR/results/gen-$TAG-$STAMP.tsv
LOGS=$BENCH_DIR/logs/gen-$TAG-$STAMP
mkdir -p "$LOGS"

# --- bandwidth -------------------------------------------------------------------------------
MEMBW=$BENCH_DIR/bin/membw
if [ ! -x "$MEMBW" ] || [ "$HERE/membw.c" -nt "$MEMBW" ]; then
  cc -O3 -march=native -pthread "$HERE/membw.c" -o "$MEMBW" || die "could not compile membw.c"
fi
avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
if [ "$SMALL" = 1 ]; then BW_GIB=1; BW_PASSES=3
elif (( avail_kb > 12 * 1024 * 1024 )); then BW_GIB=4; BW_PASSES=5
else BW_GIB=2; BW_PASSES=5; fi
measure_bandwidth() {  # output file; run at the start and at the end, the report takes the best
  wait_quiet
  note "memory bandwidth: streaming sum over $BW_GIB GiB, 1..$THREADS threads (load $(loadavg), $BUSY CPUs busy)"
  "$MEMBW" "$BW_GIB" "$BW_PASSES" "$THREADS" > "$1" || die "membw failed"
  cat "$1" >&2
}
measure_bandwidth "$LOGS/bandwidth-start.json"

# --- models ----------------------------------------------------------------------------------
# fresh TARGET SOURCE: true when TARGET exists, is newer than SOURCE and no rebuild is asked.
fresh() { [ "$REBUILD" != 1 ] && [ -e "$1" ] && [ "$1" -nt "$2" ]; }

need_disk() {  # bytes, what for
  local avail; avail=$(df -PB1 "$BENCH_DIR" | awk 'NR==2 {print $4}')
  (( avail > $1 )) || die "only $((avail >> 20)) MB free in $BENCH_DIR; $2 needs ~$(($1 >> 20)) MB"
}

declare -A CKPT MLX          # per shape
declare -A PROMPT            # per "shape context"
declare -A PHIKIT_FORMAT     # per shape, when not phikit's own 4-bit g64 conversion
declare -A GGUF              # per "shape format"
# Phi-4 (14B) has no bf16 checkpoint (28 GB, and as much again for its bf16 GGUF): a random
# GGUF is written directly with every matrix Q4_0 (scripts/gguf/make_random_gguf.py), llama.cpp
# runs it as it is, and phikit runs its conversion of it (`phikit convert FILE.gguf`: Q4_0 is
# exactly affine 4-bit g32), so both engines compute with the same weights. The vocabulary is
# phi4_tokenizer.py's stand-in (o200k cut to Phi-4's 100352 ids). SMALL: 2 layers.
prepare_phi4() {
  local name=phi4 layers=() tok=$BENCH_DIR/phi4-tokenizer
  [ "$SMALL" = 1 ] && { name=phi4-small; layers=(--layers 2); }
  local gguf=$BENCH_DIR/$name-Q4_0.gguf conf=$BENCH_DIR/$name-config
  [ -s "$tok/tokenizer.json" ] || "$PY" "$HERE/phi4_tokenizer.py" "$tok" >&2 || die "phi4_tokenizer.py failed"
  mkdir -p "$conf"
  "$PY" -c 'import json, sys; c = json.load(open(sys.argv[1])); c["num_hidden_layers"] = int(sys.argv[2] or c["num_hidden_layers"]); json.dump(c, open(sys.argv[3], "w"), indent=2)' \
    "$HERE/configs/phi4-config.json" "${layers[1]:-}" "$conf/config.json"
  CKPT[phi4]=$conf  # the report reads the shape from CKPT/config.json
  if [ "$REBUILD" = 1 ] || [ ! -s "$gguf" ]; then
    need_disk $((9 << 30)) "the phi4 Q4_0 GGUF"
    note "phi4: writing $gguf"
    "$PY" "$REPO/scripts/gguf/make_random_gguf.py" "$gguf" --config "$HERE/configs/phi4-config.json" \
      --tokenizer-dir "$tok" "${layers[@]}" > "$LOGS/$name-gguf.log" 2>&1 ||
      { tail -n 5 "$LOGS/$name-gguf.log" >&2; die "make_random_gguf.py failed"; }
  fi
  local fmt
  for fmt in $LLAMA_FORMATS; do
    if [ "$fmt" = Q4_0 ]; then GGUF["phi4 Q4_0"]=$gguf; else note "phi4: only Q4_0 is prepared; skipping $fmt"; fi
  done
  MLX[phi4]=$BENCH_DIR/$name-mlx4; PHIKIT_FORMAT[phi4]="MLX 4-bit g32 (= the Q4_0)"
  if has "$ENGINES" phikit && [ -x "$PHIKIT_BIN" ] && ! fresh "${MLX[phi4]}/config.json" "$gguf"; then
    need_disk $((10 << 30)) "phikit's phi4 model"
    note "phi4: phikit convert $gguf -> ${MLX[phi4]}"
    rm -rf "${MLX[phi4]}"
    "$PHIKIT_BIN" convert "$gguf" -o "${MLX[phi4]}" > "$LOGS/$name-convert.log" 2>&1 ||
      { tail -n 5 "$LOGS/$name-convert.log" >&2; note "phi4: phikit convert failed"; rm -rf "${MLX[phi4]}"; }
  fi
  local c
  for c in $CONTEXTS; do
    PROMPT["phi4 $c"]=$BENCH_DIR/$name-prompt$c
    "$PY" "$HERE/make_prompt.py" "$tok/tokenizer.json" "$c" "${PROMPT["phi4 $c"]}" >&2 ||
      die "could not build a $c-token prompt for phi4"
  done
}

prepare_shape() {  # shape
  local shape=$1 name cfg tokargs=() sizeargs=()
  [ "$shape" = phi4 ] && { prepare_phi4; return; }
  case $shape in
    phi35) cfg=$FIXTURES/microsoft--Phi-3.5-mini-instruct/config.json ;;
    phi4mini) cfg=$HERE/configs/phi4-mini-config.json
      tokargs=(--tokenizer-dir "$FIXTURES/_derived/microsoft--Phi-4-mini-instruct") ;;
  esac
  # phi35-random-bf16 is also bench_convert.sh's checkpoint: the two benchmarks share it.
  if [ "$SMALL" = 1 ]; then name=$shape-small; sizeargs=(--small); CKPT[$shape]=$BENCH_DIR/$shape-small-bf16
  else name=$shape; CKPT[$shape]=$BENCH_DIR/$shape-random-bf16; fi
  local ckpt=${CKPT[$shape]} stamp=${CKPT[$shape]}/.random-checkpoint.json
  [ -e "$stamp" ] || need_disk $((8 << 30)) "the $shape checkpoint"
  note "$shape: checkpoint $ckpt"
  "$PY" "$HERE/make_random_checkpoint.py" "$ckpt" --config "$cfg" "${tokargs[@]}" "${sizeargs[@]}" ||
    die "could not generate the $shape checkpoint"

  MLX[$shape]=$BENCH_DIR/$name-mlx4
  if has "$ENGINES" phikit && [ -x "$PHIKIT_BIN" ] && ! fresh "${MLX[$shape]}/config.json" "$stamp"; then
    note "$shape: phikit convert -> ${MLX[$shape]}"
    rm -rf "${MLX[$shape]}"
    "$PHIKIT_BIN" convert "$ckpt" -o "${MLX[$shape]}" -q --bits 4 --group-size 64 > "$LOGS/$name-convert.log" 2>&1 ||
      { tail -n 5 "$LOGS/$name-convert.log" >&2; note "$shape: phikit convert failed"; rm -rf "${MLX[$shape]}"; }
  fi

  if has "$ENGINES" llama.cpp; then
    local f16=$BENCH_DIR/$name-bf16.gguf fmt out
    for fmt in $LLAMA_FORMATS; do
      out=$BENCH_DIR/$name-$fmt.gguf; GGUF["$shape $fmt"]=$out
      fresh "$out" "$stamp" && continue
      if ! fresh "$f16" "$stamp"; then
        need_disk "$(du -sb "$ckpt" | cut -f1)" "the bf16 GGUF"
        note "$shape: writing $f16"
        "$PY" "$HERE/make_gguf.py" "$ckpt" "$f16" > "$LOGS/$name-gguf.log" 2>&1 ||
          { tail -n 5 "$LOGS/$name-gguf.log" >&2; die "make_gguf.py failed (log $LOGS/$name-gguf.log)"; }
      fi
      note "$shape: quantizing to $fmt -> $out"
      "$PY" "$HERE/quantize_gguf.py" "$f16" "$out" "$fmt" > "$LOGS/$name-$fmt-quantize.log" 2>&1 ||
        { tail -n 5 "$LOGS/$name-$fmt-quantize.log" >&2; die "quantize_gguf.py $fmt failed"; }
    done
    rm -f "$f16"  # 7.6 GB; only the quantized files are benchmarked
  fi

  local c
  for c in $CONTEXTS; do
    PROMPT["$shape $c"]=$BENCH_DIR/$name-prompt$c
    "$PY" "$HERE/make_prompt.py" "$ckpt/tokenizer.json" "$c" "${PROMPT["$shape $c"]}" >&2 ||
      die "could not build a $c-token prompt for $shape"
  done
}

for shape in $SHAPES; do prepare_shape "$shape"; done

# --- runs ------------------------------------------------------------------------------------
FAILED=0
record() {  # shape engine format run model status json time before [note]; uses BUSY, CTX, BITS
  local extra=(); [ -n "${10:-}" ] && extra=(--note "${10}")
  "$PY" "$HERE/bench_results.py" add "$RESULTS" --shape "$1" --engine "$2" --format "$3" \
    --context "$CTX" --kv-bits "$BITS" \
    --run "$4" --model "$5" --config "${CKPT[$1]}/config.json" --status "$6" --json "$7" \
    --time "$8" --load-before "$9" --load-after "$(loadavg)" --busy-before "${BUSY:-}" "${extra[@]}"
}

warm() {  # read a model (file or directory) into the page cache, so the disk is not timed
  if [ -d "$1" ]; then cat "$1"/*.safetensors > /dev/null; else cat "$1" > /dev/null; fi
}

run_one() {  # shape engine(phikit|llama.cpp) format flash run; uses CTX, BITS and ACT
  local shape=$1 engine=$2 fmt=$3 fa=$4 i=$5 model label cmd prompt=${PROMPT["$1 $CTX"]}
  if [ "$engine" = phikit ]; then
    model=${MLX[$shape]}; label="phikit kv$BITS"; [ "$ACT" = 16 ] || label+=" act$ACT"
    if [ "$PHIKIT_RUN" != yes ] || [ ! -d "$model" ]; then
      local why=$PHIKIT_WHY; [ "$PHIKIT_RUN" = yes ] && why="not available: phikit convert failed"
      record "$shape" "$label" "$fmt" "$i" "${model:-none}" n/a "" "" "$(loadavg)" "$why"
      return
    fi
    # --no-speculative: plain decode, as llama-bench's tg measures it. `run` drafts by default,
    # and the random model's repetitive text accepts most drafts (above the bandwidth ceiling);
    # what drafting gains on real text is bench_speculative.py's table.
    cmd=("$PHIKIT_BIN" run "$model" --no-chat-template -p "$(cat "$prompt.txt")"
         -m "$GEN_TOKENS" --temp 0 --ignore-eos --no-speculative --threads "$THREADS"
         --kv-bits "$BITS" --act-bits "$ACT" --stats --json)
  else
    model=${GGUF["$shape $fmt"]}; label="llama.cpp fa-$fa"
    if [ "$UPSTREAM" = yes ]; then
      cmd=(python3 "$HERE/run_llamabench.py" "$model" --context "$CTX"
           -m "$GEN_TOKENS" --threads "$THREADS" --flash-attn "$fa")
    else
      cmd=("$PY" "$HERE/run_llamacpp.py" "$model" --prompt-ids "$prompt.ids.json"
           -m "$GEN_TOKENS" --threads "$THREADS" --flash-attn "$fa")
    fi
  fi
  local log=$LOGS/$shape-ctx$CTX-${label// /_}-$fmt-run$i
  warm "$model"
  wait_quiet
  local before; before=$(loadavg)
  note "$shape context $CTX run $i/$REPEAT: $label $fmt (load $before, $BUSY CPUs busy)"
  if /usr/bin/time -v -o "$log.time" "${cmd[@]}" > "$log.json" 2> "$log.err"; then
    record "$shape" "$label" "$fmt" "$i" "$model" ok "$log.json" "$log.time" "$before"
  else
    tail -n 5 "$log.err" >&2
    note "$label failed (log $log.err)"
    FAILED=1
    record "$shape" "$label" "$fmt" "$i" "$model" failed "" "" "$before" "exit status $(tail -n 1 "$log.err" | head -c 200)"
  fi
}

# Rounds of all engines in turn, so background load drifting over the run hits all alike.
for shape in $SHAPES; do
  for CTX in $CONTEXTS; do
    for ((i = 1; i <= REPEAT; i++)); do
      for engine in $ENGINES; do
        if [ "$engine" = phikit ]; then
          for BITS in $KV_BITS; do
            for ACT in $ACT_BITS; do
              run_one "$shape" phikit "${PHIKIT_FORMAT[$shape]:-MLX 4-bit g64}" - "$i"
            done
          done
        else
          BITS=16  # llama.cpp's default f16 cache
          for fmt in $LLAMA_FORMATS; do
            [ -n "${GGUF["$shape $fmt"]:-}" ] || continue
            for fa in $FLASH; do run_one "$shape" llama.cpp "$fmt" "$fa" "$i"; done
          done
        fi
      done
    done
  done
done

# --- report ----------------------------------------------------------------------------------
measure_bandwidth "$LOGS/bandwidth-end.json"
REPORT=${RESULTS%.tsv}.md
cpu="$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), CPU family $(awk -F': ' '/cpu family/ {print $2; exit}' /proc/cpuinfo)"
rev=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)
if [ "$UPSTREAM" = yes ]; then
  llv="upstream llama.cpp llama-bench ($("$LLAMA_BIN/llama-bench" --version 2>&1 | grep -m1 version || echo "$LLAMA_BIN"); pp from an empty cache, tg at depth C)"
else
  llv="llama-cpp-python $("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')"
fi
header="Generation benchmark $(date '+%Y-%m-%d %H:%M'), $([ "$SMALL" = 1 ] && echo 'SMALL smoke models' || echo 'full-size random-weight models'); \
$REPEAT round(s), engines alternated; $THREADS threads; per context C: a prompt of C tokens (one batch), then $GEN_TOKENS generated tokens \
(greedy, EOS ignored); warm page cache. $(nproc) CPUs ($cpu). phikit $rev; $llv \
(native build). Peak RSS: GNU time, each engine its own process (llama.cpp's includes the Python interpreter, ~0.05 GB)."
"$PY" "$HERE/bench_results.py" report "$RESULTS" "$LOGS"/bandwidth-*.json --threads "$THREADS" \
  --gen-tokens "$GEN_TOKENS" --header "$header" > "$REPORT" || die "report failed"
echo
cat "$REPORT"
note "report: $REPORT; per-run numbers: $RESULTS; logs: $LOGS"
exit "$FAILED"
