#!/usr/bin/env bash
# bench_chat_load.sh: `phikit chat --load` of a long conversation (issue 27: 2,000 messages took
# 14.6 s and 8,000 over two minutes, the oldest turns being dropped one at a time with the
# whole rest rendered and tokenized after each). Loads 500 / 2,000 / 8,000 / 32,000 short
# messages into the bundled stories-260k with a ChatML template (context 256 tokens, so almost
# all of each conversation is dropped), answers one message of one token, and prints phikit's
# own CPU time (user + sys) for each: linear means 4x the messages costs about 4x the time.
# Goal: 8,000 messages under a second.
#
# Environment (optional): PHIKIT_BIN (default .build/release/phikit), BENCH_SIZES.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PHIKIT_BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
SIZES=${BENCH_SIZES:-500 2000 8000 32000}

# shellcheck source=lib.sh
. "$HERE/lib.sh"
[ -x "$PHIKIT_BIN" ] || die "no phikit binary at $PHIKIT_BIN (make build)"
ensure_gnu_time

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
MODEL=$WORK/chat-stories
mkdir -p "$MODEL"
cp "$REPO"/models/stories-260k/* "$MODEL"/
cat > "$MODEL/chat_template.jinja" <<'JINJA'
{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}
JINJA

printf '%-10s %-12s %s\n' messages "cpu seconds" "dropped"
for n in $SIZES; do
  python3 - "$n" "$WORK/chat-$n.json" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"short message {i}"}
            for i in range(n)]
json.dump(messages, open(path, "w"))
PY
  echo "Hi" | /usr/bin/time -f '%U %S' -o "$WORK/time" \
    "$PHIKIT_BIN" chat "$MODEL" --load "$WORK/chat-$n.json" --max-kv-size 256 -m 1 --temp 0 \
    > /dev/null 2> "$WORK/stderr" || { cat "$WORK/stderr" >&2; die "chat failed at $n messages"; }
  cpu=$(awk '{ printf "%.2f", $1 + $2 }' "$WORK/time")
  dropped=$(grep -o 'dropped the [0-9]* oldest' "$WORK/stderr" | grep -o '[0-9]*' || echo 0)
  printf '%-10s %-12s %s\n' "$n" "$cpu" "$dropped"
done
