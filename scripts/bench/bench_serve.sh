#!/usr/bin/env bash
# bench_serve.sh: `phikit serve` against upstream llama.cpp's llama-server (continuous batching;
# or llama-cpp-python's OpenAI server) on the full-size
# random Phi-3.5-mini (issues 16 and 31): aggregate decode tok/s and time to first token with
# 1, 2, 4 and 8 concurrent streaming clients, engines alternated, medians of BENCH_REPEAT
# rounds (bench_serve.py does the runs). See scripts/bench/README.md.
#
# The models are bench_run.sh's, in its cache: $PHIKIT_BENCH_DIR/phi35-mlx4 (phikit) and
# phi35-Q4_0.gguf (the same weights for llama.cpp). If either is missing, bench_run.sh builds
# it (one short round of its own runs comes with that).
#
# Environment (all optional):
#   PHIKIT_BIN         phikit binary (default .build/release/phikit in the repo)
#   PHIKIT_BENCH_DIR   bench_run.sh's cache (default /tmp/phikit-bench)
#   LLAMA_CPP_BIN      upstream llama.cpp's bin folder (default /work/llama/build/bin;
#                      scripts/bench/build_llamacpp.sh builds it)
#   PHIKIT_REF_VENV    python with gguf (and llama-cpp-python's server extras for that engine;
#                      default /opt/phikit-ref)
#   BENCH_REPEAT       rounds (default 3)          BENCH_THREADS     threads each (default 2)
#   BENCH_CLIENTS      "1 2 4 8" (default)         BENCH_GEN_TOKENS  per request (default 64)
#   BENCH_ENGINES      "phikit phikit-act8 llama-server" (default when upstream is built, else
#                      "phikit llama-cpp-python"); one alone to iterate on it
#   BENCH_VARIANTS     configurations named in BENCH_ENGINES, ';'-separated NAME=ENGINE FLAGS
#                      (phikit@BINARY: another phikit build, e.g. "phikit-before=phikit@/tmp/old")
#                      (default "phikit-act8=phikit --act-bits 8; phikit-nospec=phikit
#                      --no-speculative; llama-server-ngram=llama-server --spec-type ngram-simple …")
#   BENCH_TASK         story (default: free prose), quote or edit (chat requests that repeat
#                      their input: where speculative decoding pays)
#   BENCH_MODEL        phi35 (default: the full-size random Phi-3.5-mini) or smollm2 (the real
#                      SmolLM2-135M-Instruct, scripts/smollm2/path.sh; PHIKIT_ASSETS)
#   BENCH_MLX, BENCH_GGUF  the two models, when not bench_run.sh's
#   BENCH_FLASH_ATTN   on: llama.cpp with flash attention (default off)
#   BENCH_SMALL=1      bench_run.sh's 2-layer phi35-small models: checks the harness quickly
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BENCH_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}
PHIKIT_BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
REF_VENV=${PHIKIT_REF_VENV:-/opt/phikit-ref}
SMALL=${BENCH_SMALL:-0}
REPEAT=${BENCH_REPEAT:-3}
THREADS=${BENCH_THREADS:-2}
CLIENTS=${BENCH_CLIENTS:-1 2 4 8}
GEN_TOKENS=${BENCH_GEN_TOKENS:-64}
LLAMA_BIN=${LLAMA_CPP_BIN:-$(python3 -c "import sys; sys.path.insert(0, '$HERE'); import llama_upstream; print(llama_upstream.bin_dir())")}
if [ -x "$LLAMA_BIN/llama-server" ]; then DEFAULT_ENGINES="phikit phikit-act8 llama-server"
else DEFAULT_ENGINES="phikit llama-cpp-python"; fi
ENGINES=${BENCH_ENGINES:-$DEFAULT_ENGINES}
FLASH=${BENCH_FLASH_ATTN:-off}
VARIANTS=${BENCH_VARIANTS:-phikit-act8=phikit --act-bits 8; phikit-nospec=phikit --no-speculative; llama-server-ngram=llama-server --spec-type ngram-simple --spec-ngram-simple-size-n 3 --spec-ngram-simple-size-m 8}
TASK=${BENCH_TASK:-story}
MODEL=${BENCH_MODEL:-phi35}
export LLAMA_CPP_BIN=$LLAMA_BIN

# shellcheck source=lib.sh
. "$HERE/lib.sh"

PY=$REF_VENV/bin/python
if [[ " $ENGINES " == *" llama-cpp-python "* ]]; then
  [ -x "$PY" ] || die "no python at $PY (set PHIKIT_REF_VENV)"
  "$PY" -c 'import llama_cpp.server' 2> /dev/null ||
    die "$PY cannot import llama_cpp.server; pip install 'llama-cpp-python[server]'"
else
  [ -x "$PY" ] || PY=python3  # the serve harness needs only the standard library
fi
[ -x "$PHIKIT_BIN" ] || die "no phikit binary at $PHIKIT_BIN (make build)"

if [ "$MODEL" = smollm2 ]; then
  name=smollm2
  MLX=$("$REPO/scripts/smollm2/path.sh")
  GGUF=$("$REPO/scripts/smollm2/path.sh" --gguf)
  [ -f "$MLX/config.json" ] && [ -f "$GGUF" ] ||
    die "no SmolLM2 at $MLX and $GGUF (scripts/smollm2/fetch_and_convert.sh; PHIKIT_ASSETS)"
else
name=$([ "$SMALL" = 1 ] && echo phi35-small || echo phi35)
MLX=${BENCH_MLX:-$BENCH_DIR/$name-mlx4}
GGUF=${BENCH_GGUF:-$BENCH_DIR/$name-Q4_0.gguf}
if [ ! -f "$MLX/config.json" ] || [ ! -f "$GGUF" ]; then
  note "building $MLX and $GGUF with bench_run.sh"
  mkdir -p "$BENCH_DIR/logs"
  PHIKIT_BIN=$PHIKIT_BIN PHIKIT_BENCH_DIR=$BENCH_DIR PHIKIT_REF_VENV=$REF_VENV BENCH_SMALL=$SMALL \
    BENCH_SHAPES=phi35 BENCH_REPEAT=1 BENCH_LLAMA_FORMATS=Q4_0 BENCH_FLASH_ATTN=off \
    BENCH_PROMPT_TOKENS=16 BENCH_GEN_TOKENS=4 BENCH_THREADS="$THREADS" \
    "$HERE/bench_run.sh" > "$BENCH_DIR/logs/serve-models.log" 2>&1 ||
    { tail -n 5 "$BENCH_DIR/logs/serve-models.log" >&2; die "bench_run.sh could not build the models"; }
  [ -f "$MLX/config.json" ] && [ -f "$GGUF" ] || die "bench_run.sh left no $MLX or $GGUF"
fi
fi

STAMP=$(date +%Y%m%d-%H%M%S)
TAG=$([ "$SMALL" = 1 ] && echo small || echo full)-$name-$TASK
mkdir -p "$BENCH_DIR/results"
RESULTS=$BENCH_DIR/results/serve-$TAG-$STAMP
for f in "$MLX"/*.safetensors "$GGUF"; do cat "$f" > /dev/null; done  # warm page cache
flash=(); [ "$FLASH" = on ] && flash=(--flash-attn)
variants=()
IFS=';' read -ra specs <<< "$VARIANTS"
for spec in "${specs[@]}"; do
  spec=$(echo "$spec" | xargs)
  [ -n "$spec" ] && variants+=(--variant "$spec")
done
rev=$(git -C "$REPO" describe --always --dirty 2> /dev/null || echo unknown)
if [[ " $ENGINES " == *" llama-server "* ]]; then
  llv="upstream llama-server $("$LLAMA_BIN/llama-server" --version 2>&1 | grep -m1 version || true)"
elif [[ " $ENGINES " == *" llama-cpp-python "* ]]; then
  llv="llama-cpp-python $("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')"
else
  llv="no llama.cpp engine"
fi
cpu="$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), CPU family $(awk -F': ' '/cpu family/ {print $2; exit}' /proc/cpuinfo)"
note "phikit serve vs $ENGINES on $name, task $TASK ($REPEAT rounds, load $(loadavg))"
"$PY" "$HERE/bench_serve.py" --phikit "$PHIKIT_BIN" --phikit-model "$MLX" --gguf "$GGUF" \
  --python "$PY" --engines "$ENGINES" --clients "$CLIENTS" --rounds "$REPEAT" \
  --tokens "$GEN_TOKENS" --threads "$THREADS" "${flash[@]}" "${variants[@]}" --task "$TASK" \
  --logs "$RESULTS-logs" --turn-logs \
  --results "$RESULTS.tsv" \
  --label "$(date '+%Y-%m-%d %H:%M'), $name ($MLX vs $GGUF), $(nproc) CPUs ($cpu), load before \
$(loadavg); phikit $rev, $llv." | tee "$RESULTS.md"
status=${PIPESTATUS[0]}
note "report: $RESULTS.md; per-measurement numbers: $RESULTS.tsv; load after $(loadavg)"
exit "$status"
