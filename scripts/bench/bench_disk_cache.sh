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
# 2-layer --small variant with BENCH_SMALL=1 (same vocabulary and head shape: a quick check).
#
# Environment (all optional):
#   PHIKIT_BIN           phikit binary (default .build/release/phikit in the repo)
#   PHIKIT_BENCH_DIR     cache of models (default /tmp/phikit-bench)
#   PHIKIT_REF_VENV      python with numpy for make_random_checkpoint.py (default: python3)
#   BENCH_PROMPT_TOKENS  prompt length (default 4000)    BENCH_THREADS  threads (default 2)
#   BENCH_KV_BITS        --kv-bits (default 16)          BENCH_SMALL=1  the 2-layer model
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

# shellcheck source=lib.sh
. "$HERE/lib.sh"
[ -x "$PHIKIT_BIN" ] || die "no phikit binary at $PHIKIT_BIN (make build)"

if [ -n "${BENCH_MODEL:-}" ]; then
  MODEL=$BENCH_MODEL
else
  FIXTURES=${PHIKIT_FIXTURES:-$("$REPO/scripts/fixtures.sh")}
  cfg=$FIXTURES/microsoft--Phi-3.5-mini-instruct/config.json
  if [ "$SMALL" = 1 ]; then MODEL=$BENCH_DIR/phi35-small-bf16; size=(--small)
  else MODEL=$BENCH_DIR/phi35-random-bf16; size=(); fi
  mkdir -p "$BENCH_DIR"
  note "checkpoint $MODEL"
  "$PY" "$HERE/make_random_checkpoint.py" "$MODEL" --config "$cfg" "${size[@]}" >&2 ||
    die "could not generate the checkpoint"
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

note "cold: $TOKENS-token prompt, kv-bits $KV_BITS, $THREADS threads (load $(loadavg))"
cold=$(round cold)
note "stored: $(du -sh "$CACHE" | cut -f1)"
note "restart: the same prompt from the disk cache (load $(loadavg))"
warm=$(round warm)
"$PY" - "$cold" "$warm" "$TOKENS" <<'PYEOF'
import json, sys
cold, warm, n = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
print(f"prompt tokens:        {n}")
print(f"cold TTFT:            {cold['seconds']:.2f} s (cached_tokens {cold['cached']})")
print(f"restored TTFT:        {warm['seconds']:.2f} s (cached_tokens {warm['cached']})")
print(f"restored / cold:      {100 * warm['seconds'] / cold['seconds']:.2f} %")
same = cold["text"] == warm["text"] and cold["logprobs"] == warm["logprobs"]
print(f"first token and top-5 logprobs identical: {'yes' if same else 'NO'}")
sys.exit(0 if same and warm["cached"] == n - 1 else 1)
PYEOF
