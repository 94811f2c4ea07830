#!/usr/bin/env bash
# bench_disk_cache.sh: the disk prefix cache after a restart (issue 30 §3). One `phikit serve`
# computes a BENCH_PROMPT_TOKENS-token prompt cold (time to first token: a /v1/completions
# request of token ids with max_tokens 1) and writes its KV cache to a fresh --cache-dir; it is
# stopped, a new process is started on the same folder and sends the same request. Prints both
# times, their ratio (the target: restored <= 5% of cold on the full-size Phi-3.5-mini shape),
# cached_tokens, and whether the first token and its top-5 logprobs are identical (they must
# be: a restored position holds the bytes a cold prefill computes).
#
# Model: the random full-size Phi-3.5-mini bf16 checkpoint bench_run.sh uses
# ($PHIKIT_BENCH_DIR/phi35-random-bf16, made by make_random_checkpoint.py when missing), or its
# 2-layer --small variant with BENCH_SMALL=1 (same vocabulary and head shape: a quick check);
# BENCH_WEIGHTS=q4 runs its 4-bit g64 conversion instead (bench_run.sh's phi35-mlx4, made by
# `phikit convert` when missing): the same restore against a prefill about 5x faster.
#
# BENCH_ROUNDS=N repeats the pair (a fresh cache folder, cold, restart, restored) N times,
# cold and restored alternating so both see the same load, and reports the medians.
#
# Environment (all optional):
#   PHIKIT_BIN           phikit binary (default .build/release/phikit in the repo)
#   PHIKIT_BENCH_DIR     cache of models (default /tmp/phikit-bench)
#   PHIKIT_REF_VENV      python with numpy for make_random_checkpoint.py (default: python3)
#   BENCH_PROMPT_TOKENS  prompt length (default 4000)    BENCH_THREADS  threads (default 2)
#   BENCH_KV_BITS        --kv-bits (default 16)          BENCH_SMALL=1  the 2-layer model
#   BENCH_WEIGHTS        bf16 (default) or q4            BENCH_ROUNDS   pairs to run (default 1)
#   BENCH_MODEL          any model directory instead of the random checkpoint
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BENCH_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}
PHIKIT_BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
PY=${PHIKIT_REF_VENV:+$PHIKIT_REF_VENV/bin/python}
PY=${PY:-python3}
TOKENS=${BENCH_PROMPT_TOKENS:-4000}
THREADS=${BENCH_THREADS:-2}
KV_BITS=${BENCH_KV_BITS:-16}
SMALL=${BENCH_SMALL:-0}
WEIGHTS=${BENCH_WEIGHTS:-bf16}
ROUNDS=${BENCH_ROUNDS:-1}

# shellcheck source=lib.sh
. "$HERE/lib.sh"
[ -x "$PHIKIT_BIN" ] || die "no phikit binary at $PHIKIT_BIN (make build)"

if [ -n "${BENCH_MODEL:-}" ]; then
  MODEL=$BENCH_MODEL
else
  FIXTURES=${PHIKIT_FIXTURES:-$("$REPO/scripts/fixtures.sh")}
  cfg=$FIXTURES/microsoft--Phi-3.5-mini-instruct/config.json
  if [ "$SMALL" = 1 ]; then CKPT=$BENCH_DIR/phi35-small-bf16; name=phi35-small; size=(--small)
  else CKPT=$BENCH_DIR/phi35-random-bf16; name=phi35; size=(); fi
  mkdir -p "$BENCH_DIR"
  note "checkpoint $CKPT"
  "$PY" "$HERE/make_random_checkpoint.py" "$CKPT" --config "$cfg" "${size[@]}" >&2 ||
    die "could not generate the checkpoint"
  case $WEIGHTS in
    bf16) MODEL=$CKPT ;;
    q4)
      MODEL=$BENCH_DIR/$name-mlx4  # bench_run.sh's conversion, shared with it
      if [ ! -e "$MODEL/config.json" ] || [ "$CKPT/.random-checkpoint.json" -nt "$MODEL/config.json" ]; then
        note "phikit convert -> $MODEL"
        rm -rf "$MODEL"
        "$PHIKIT_BIN" convert "$CKPT" -o "$MODEL" -q --bits 4 --group-size 64 >&2 ||
          { rm -rf "$MODEL"; die "phikit convert failed"; }
      fi ;;
    *) die "BENCH_WEIGHTS must be bf16 or q4, not '$WEIGHTS'" ;;
  esac
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/phikit-disk-cache.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
CACHE=$WORK/kv-cache
# token ids, not text: the prompt is exactly TOKENS positions whatever the tokenizer does
"$PY" - "$TOKENS" > "$WORK/request.json" <<'PYEOF'
import json, sys
n = int(sys.argv[1])
ids = [(i * 7919) % 30000 + 100 for i in range(n)]
print(json.dumps({"prompt": ids, "max_tokens": 1, "temperature": 0, "logprobs": 5}))
PYEOF

# one server process: starts it, sends the request, prints "seconds cached_tokens token logprobs"
round() {
  local log=$WORK/serve-$1.log port
  "$PHIKIT_BIN" serve "$MODEL" --port 0 --threads "$THREADS" --kv-bits "$KV_BITS" \
    --max-kv-size $((TOKENS + 16)) --cache-dir "$CACHE" --cache-size 65536 --quiet \
    2> "$log" &
  local pid=$!
  for _ in $(seq 600); do
    port=$(sed -n 's/.*on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$log" | head -n 1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2> /dev/null || { cat "$log" >&2; die "serve exited"; }
    sleep 0.5
  done
  [ -n "$port" ] || die "serve did not start"
  "$PY" - "$port" "$WORK/request.json" <<'PYEOF'
import json, sys, time, urllib.request
port, path = sys.argv[1], sys.argv[2]
body = open(path, "rb").read()
start = time.monotonic()
req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body,
                             headers={"Content-Type": "application/json"})
reply = json.load(urllib.request.urlopen(req, timeout=7200))
seconds = time.monotonic() - start
choice = reply["choices"][0]
cached = reply["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0)
print(json.dumps({"seconds": seconds, "cached": cached, "text": choice["text"],
                  "logprobs": choice.get("logprobs")}))
PYEOF
  kill -TERM "$pid"
  wait "$pid" || true  # the server finishes writing the cache before it exits
}

results=()
for i in $(seq "$ROUNDS"); do
  rm -rf "$CACHE"
  note "round $i/$ROUNDS cold: $TOKENS-token prompt, $WEIGHTS weights, kv-bits $KV_BITS, $THREADS threads (load $(loadavg))"
  cold=$(round cold)
  note "stored: $(du -sh "$CACHE" | cut -f1)"
  note "round $i/$ROUNDS restart: the same prompt from the disk cache (load $(loadavg))"
  warm=$(round warm)
  results+=("$cold" "$warm")
done
note "done (load $(loadavg))"
"$PY" - "$TOKENS" "${results[@]}" <<'PYEOF'
import json, statistics, sys
n, runs = int(sys.argv[1]), [json.loads(r) for r in sys.argv[2:]]
colds, warms = runs[0::2], runs[1::2]
for i, (cold, warm) in enumerate(zip(colds, warms), 1):
    print(f"round {i}: cold {cold['seconds']:.2f} s, restored {warm['seconds']:.2f} s "
          f"({100 * warm['seconds'] / cold['seconds']:.2f} %), cached_tokens {warm['cached']}")
cold_s = statistics.median(r["seconds"] for r in colds)
warm_s = statistics.median(r["seconds"] for r in warms)
print(f"prompt tokens:        {n}")
print(f"cold TTFT:            {cold_s:.2f} s (median of {len(colds)})")
print(f"restored TTFT:        {warm_s:.2f} s (median of {len(warms)})")
print(f"restored / cold:      {100 * warm_s / cold_s:.2f} %")
same = all(c["text"] == w["text"] and c["logprobs"] == w["logprobs"] for c, w in zip(colds, warms))
print(f"first token and top-5 logprobs identical: {'yes' if same else 'NO'}")
sys.exit(0 if same and all(w["cached"] == n - 1 for w in warms) else 1)
PYEOF
