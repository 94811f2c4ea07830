#!/usr/bin/env bash
# bench_chat.sh: what the KV cache kept between chat turns buys (issue 15, "Speed"). On a
# full-size random Phi-3.5-mini-shaped model (4-bit, as bench_run.sh converts it), the time to
# first token of a new message
#   - in `phikit chat` after 1,500 tokens of history (the cache holds the history: only the new
#     turn is prefilled), against the same message alone (goal: within 1.3x);
#   - and the same pair without reuse: `phikit run --chat` on history + message from scratch,
#     against the message alone.
# Time to first token is phikit's own figure (--stats): from the generate call to the first
# token, the prefill included; loading and template rendering are not in it.
#
# Environment (all optional):
#   PHIKIT_BIN         phikit binary (default .build/release/phikit in the repo)
#   PHIKIT_BENCH_DIR   models, logs (default /tmp/phikit-bench; shares bench_run.sh's models)
#   PHIKIT_FIXTURES    real config/tokenizer files (default: Tests/Fixtures, via scripts/fixtures.sh)
#   BENCH_REPEAT       rounds; medians are reported (default 3)
#   BENCH_THREADS      threads (default 2)
#   BENCH_HISTORY      tokens of history, at least (default 1500)
#   BENCH_SMALL=1      2-layer model: checks the harness in a minute or two
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BENCH_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}
PHIKIT_BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
FIXTURES=${PHIKIT_FIXTURES:-$("$REPO/scripts/fixtures.sh")}
REPEAT=${BENCH_REPEAT:-3}
THREADS=${BENCH_THREADS:-2}
HISTORY=${BENCH_HISTORY:-1500}
SMALL=${BENCH_SMALL:-0}

# shellcheck source=lib.sh
. "$HERE/lib.sh"

[ -x "$PHIKIT_BIN" ] || die "no phikit binary at $PHIKIT_BIN (make build)"
[ -d "$FIXTURES" ] || die "no fixtures at $FIXTURES (set PHIKIT_FIXTURES)"
mkdir -p "$BENCH_DIR/logs"
LOGS=$BENCH_DIR/logs/chat-$(date +%Y%m%d-%H%M%S)
mkdir -p "$LOGS"

# --- the model: bench_run.sh's random checkpoint, converted to 4-bit (both cached) -----------
if [ "$SMALL" = 1 ]; then name=phi35-small; sizeargs=(--small); else name=phi35; sizeargs=(); fi
CKPT=$BENCH_DIR/$name$([ "$SMALL" = 1 ] && echo -bf16 || echo -random-bf16)
MODEL=$BENCH_DIR/$name-mlx4
note "checkpoint $CKPT"
python3 "$HERE/make_random_checkpoint.py" "$CKPT" \
  --config "$FIXTURES/microsoft--Phi-3.5-mini-instruct/config.json" "${sizeargs[@]}" ||
  die "could not generate the checkpoint"
if [ ! -e "$MODEL/config.json" ] || [ "$CKPT/.random-checkpoint.json" -nt "$MODEL/config.json" ]; then
  note "phikit convert -> $MODEL"
  rm -rf "$MODEL"
  "$PHIKIT_BIN" convert "$CKPT" -o "$MODEL" -q --bits 4 --group-size 64 > "$LOGS/convert.log" 2>&1 ||
    { tail -n 5 "$LOGS/convert.log" >&2; die "phikit convert failed"; }
fi

# --- the conversation: turns of prose until the history holds HISTORY tokens -----------------
HISTORY_FILE=$LOGS/history.json
MESSAGE="What is the gravity on Mars and the moon?"
turns=1
while :; do
  python3 - "$turns" "$HISTORY_FILE" <<'EOF'
import json, sys
turns, path = int(sys.argv[1]), sys.argv[2]
prose = ("The committee met on a grey morning to weigh the harbour plans, the cost of the new "
         "locks, and the quarrel between the fishermen and the ferry company over the berths. ")
conversation = [{"role": "system", "content": "You are a careful assistant."}]
for i in range(turns):
    conversation.append({"role": "user", "content": f"Part {i + 1}: summarise this. " + prose * 2})
    conversation.append({"role": "assistant", "content": "In short: " + prose})
json.dump(conversation, open(path, "w"), indent=1)
EOF
  count=$("$PHIKIT_BIN" tokenize "$MODEL" --chat "$HISTORY_FILE" --count)
  (( count >= HISTORY )) && break
  turns=$((turns + 1))
done
note "history: $turns turns, $count tokens with the template"
python3 - "$HISTORY_FILE" "$MESSAGE" "$LOGS/with-message.json" "$LOGS/alone.json" <<'EOF'
import json, sys
history, message = json.load(open(sys.argv[1])), sys.argv[2]
json.dump(history + [{"role": "user", "content": message}], open(sys.argv[3], "w"))
json.dump([{"role": "user", "content": message}], open(sys.argv[4], "w"))
EOF

# --- the runs -----------------------------------------------------------------------------------
ttft_chat() {  # stderr of a chat with --stats -> the last turn's time to first token
  grep '^prompt ' "$1" | tail -n 1 | sed -E 's/.*first token ([0-9.]+) s.*/\1/'
}
ttft_run() { grep '^Time to first token' "$1" | sed -E 's/.*: ([0-9.]+) s/\1/'; }
reused() { grep '^prompt ' "$1" | tail -n 1 | sed -E 's/.*new, ([0-9]+) reused.*/\1/'; }

declare -a CHAT_HISTORY CHAT_ALONE RUN_HISTORY RUN_ALONE
for round in $(seq 1 "$REPEAT"); do
  note "round $round/$REPEAT (load $(loadavg))"
  # Turn N-1 (a short message) fills the cache with the history; turn N is measured.
  log=$LOGS/chat-history-$round.log
  printf 'Thanks.\n%s\n' "$MESSAGE" |
    "$PHIKIT_BIN" chat "$MODEL" --load "$HISTORY_FILE" --temp 0 -m 1 --threads "$THREADS" --stats \
      > /dev/null 2> "$log" || { cat "$log" >&2; die "chat failed"; }
  CHAT_HISTORY+=("$(ttft_chat "$log")"); REUSED=$(reused "$log")
  log=$LOGS/chat-alone-$round.log
  printf '%s\n' "$MESSAGE" |
    "$PHIKIT_BIN" chat "$MODEL" --temp 0 -m 1 --threads "$THREADS" --stats > /dev/null 2> "$log" ||
    { cat "$log" >&2; die "chat failed"; }
  CHAT_ALONE+=("$(ttft_chat "$log")")
  log=$LOGS/run-history-$round.log
  "$PHIKIT_BIN" run "$MODEL" --chat "$LOGS/with-message.json" --temp 0 -m 1 --threads "$THREADS" \
    --stats > /dev/null 2> "$log" || { cat "$log" >&2; die "run failed"; }
  RUN_HISTORY+=("$(ttft_run "$log")")
  log=$LOGS/run-alone-$round.log
  "$PHIKIT_BIN" run "$MODEL" --chat "$LOGS/alone.json" --temp 0 -m 1 --threads "$THREADS" \
    --stats > /dev/null 2> "$log" || { cat "$log" >&2; die "run failed"; }
  RUN_ALONE+=("$(ttft_run "$log")")
done

# --- the report ---------------------------------------------------------------------------------
python3 - "$count" "$REUSED" "$THREADS" "$(loadavg)" \
  "${CHAT_HISTORY[*]}" "${CHAT_ALONE[*]}" "${RUN_HISTORY[*]}" "${RUN_ALONE[*]}" <<'EOF'
import statistics, sys
count, reused, threads, load = sys.argv[1:5]
series = [[float(x) for x in s.split()] for s in sys.argv[5:9]]
ch, ca, rh, ra = (statistics.median(s) for s in series)
print(f"phikit chat: time to first token, {count} tokens of history, {threads} threads "
      f"(medians of {len(series[0])}; load at the end {load})")
print(f"| | after the history | message alone | ratio |")
print(f"|---|---:|---:|---:|")
print(f"| chat (cache reused: {reused} tokens) | {ch:.3f} s | {ca:.3f} s | {ch / ca:.2f}x |")
print(f"| run --chat (no reuse) | {rh:.3f} s | {ra:.3f} s | {rh / ra:.2f}x |")
print(f"goal: chat within 1.3x of the message alone: {'met' if ch / ca <= 1.3 else 'NOT met'}")
EOF
