#!/usr/bin/env bash
# `make demo-chat`: the real chat model, offline. Fetches and converts SmolLM2-135M-Instruct
# (fetch_and_convert.sh), has one chat turn with it, then starts `phikit serve` on a free
# local port and asks its OpenAI chat endpoint one question with curl, printing the answer.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${1:-$here/../../.build/release/phikit}
model=$("$here/fetch_and_convert.sh" "$bin" | tail -n 1)

echo
echo "$ phikit chat $model    (one turn, then /bye)"
printf 'Write one sentence about the sea.\n/bye\n' | "$bin" chat "$model"

log=$(mktemp)
"$bin" serve "$model" --port 0 --parallel 1 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -f "$log"' EXIT
url=""
for _ in $(seq 1 100); do
    url=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$log" | head -n 1 || true)
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$url" ] || { echo "error: phikit serve did not start" >&2; cat "$log" >&2; exit 1; }
echo
echo "$ phikit serve $model --port 0    ($url)"
echo "$ curl $url/v1/chat/completions    (\"What is the capital of France?\")"
id=$(curl -sS --fail-with-body "$url/v1/models" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
body='{"model":"'"$id"'","messages":[{"role":"user","content":"What is the capital of France?"}],"max_tokens":64,"temperature":0}'
response=$(curl -sS --fail-with-body "$url/v1/chat/completions" -H 'Content-Type: application/json' -d "$body")
python3 -c 'import json,sys; r=json.loads(sys.argv[1]); print(r["choices"][0]["message"]["content"]); print("(%d prompt + %d completion tokens, finish: %s)" % (r["usage"]["prompt_tokens"], r["usage"]["completion_tokens"], r["choices"][0]["finish_reason"]))' "$response"
