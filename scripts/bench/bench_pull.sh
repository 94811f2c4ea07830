#!/usr/bin/env bash
# bench_pull.sh: time `phikit pull` against `huggingface_hub.snapshot_download` on a generated
# multi-GB repo served by the local Hub look-alike (Tests/PhiHubTests/Server/hub_server.py) on
# 127.0.0.1, engines alternating, each into a fresh cache. Issue 7's "Benchmark" is the spec:
# faster than huggingface_hub with hashing on, and hashing under 10% of the transfer.
#
# Environment (all optional):
#   PHIKIT_BIN        phikit binary                  (default .build/release/phikit in the repo)
#   PHIKIT_BENCH_DIR  where the repo is generated    (default /tmp/phikit-bench; repo in pull-repo/)
#   BENCH_CACHE_DIR   where the caches are written   (default /dev/shm/phikit-pull-bench: RAM, so
#                     the shared VM disk is not what gets timed; set a disk path to include it)
#   PHIKIT_REF_VENV   Python with huggingface_hub    (default /opt/phikit-ref)
#   BENCH_REPEAT      runs per engine; medians shown (default 3)
#   BENCH_PULL_MB     repo size in MB (default 2200, about an MLX 4-bit Phi-3)
#   BENCH_JOBS        parallel downloads for both    (default 8, huggingface_hub's max_workers)
#   BENCH_RATE_MB     cap each LFS transfer at this many MB/s, like a real link (default 0: no
#                     cap; 127.0.0.1 is so fast that hashing, not the network, sets the pace)
#   BENCH_NOHASH      1 (default): also time a measuring build of phikit that skips SHA-256
#                     (compiled with -DPHIKIT_BENCH_NO_HASH into .build-nohash/, never installed),
#                     so the report can say what hashing costs in wall time; 0 to skip
#
# phikit fsyncs every blob before renaming it into place (durable); huggingface_hub does not.
# The table shows huggingface_hub's time both as measured and with a `sync` after it (what it
# takes until its files are on disk too).
# Exit status: 0 when every run produced the complete snapshot, 1 otherwise.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$HERE/../.." && pwd)
BENCH_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}
CACHE_DIR=${BENCH_CACHE_DIR:-/dev/shm/phikit-pull-bench}
PHIKIT_BIN=${PHIKIT_BIN:-$REPO_ROOT/.build/release/phikit}
REF_VENV=${PHIKIT_REF_VENV:-/opt/phikit-ref}
REPEAT=${BENCH_REPEAT:-3}
SIZE_MB=${BENCH_PULL_MB:-2200}
JOBS=${BENCH_JOBS:-8}
NOHASH=${BENCH_NOHASH:-1}
RATE_MB=${BENCH_RATE_MB:-0}
NOHASH_BIN=$REPO_ROOT/.build-nohash/release/phikit
SERVER=$REPO_ROOT/Tests/PhiHubTests/Server/hub_server.py
MODEL_ID=bench/phi-like-4bit

die() { echo "error: $*" >&2; exit 1; }
note() { echo "== $*" >&2; }
sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT must be a positive integer, got '$REPEAT'"
[ -x "$PHIKIT_BIN" ] || die "no phikit binary at $PHIKIT_BIN: run 'make build' or set PHIKIT_BIN"
if [ ! -x /usr/bin/time ]; then
  note "installing GNU time (apt)"
  { sudo_if_needed apt-get update -qq && sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time; } ||
    die "could not install GNU time; install the 'time' package by hand"
fi
PY=$REF_VENV/bin/python
if ! "$PY" -c 'import huggingface_hub' 2>/dev/null; then
  note "installing huggingface_hub into $REF_VENV"
  [ -x "$PY" ] || python3 -m venv "$REF_VENV" || die "cannot create $REF_VENV"
  "$REF_VENV/bin/pip" install -q "huggingface_hub==2.4.0" || die "pip install huggingface_hub failed"
fi

ENGINES="huggingface_hub phikit"
if [ "$NOHASH" = 1 ]; then
  note "building the measuring phikit without hashing (.build-nohash)"
  if (cd "$REPO_ROOT" && swift build -c release --scratch-path .build-nohash --product phikit \
        -Xswiftc -DPHIKIT_BENCH_NO_HASH > "${TMPDIR:-/tmp}/phikit-nohash-build.log" 2>&1); then
    ENGINES="$ENGINES phikit-nohash"
  else
    note "that build failed (see ${TMPDIR:-/tmp}/phikit-nohash-build.log); timing hashing by CPU clock only"
  fi
fi

# --- repo and server -------------------------------------------------------------------------
SRC=$BENCH_DIR/pull-repo
note "repo $SRC (${SIZE_MB} MB)"
python3 "$HERE/make_pull_repo.py" "$SRC" --mb "$SIZE_MB" || die "could not generate the repo"
TOTAL=$(python3 -c "import json; print(json.load(open('$SRC/.repo.json'))['bytes'])")
mkdir -p "$CACHE_DIR" "$BENCH_DIR/logs" "$BENCH_DIR/results"
avail=$(df -PB1 "$CACHE_DIR" | awk 'NR==2 {print $4}')
(( avail > TOTAL * 11 / 10 )) || die "only $((avail >> 20)) MB free in $CACHE_DIR; a cache needs $((TOTAL >> 20)) MB"

FAULTS=$BENCH_DIR/logs/faults.json
if [ "$RATE_MB" != 0 ]; then
  echo "[{\"kind\": \"slow\", \"path\": \"/lfs/\", \"rate\": $((RATE_MB * 1000000))}]" > "$FAULTS"
else
  echo "[]" > "$FAULTS"
fi
SERVER_IN=$(mktemp -u)
mkfifo "$SERVER_IN"
python3 "$SERVER" --spec "$SRC/spec.json" --faults "$FAULTS" < "$SERVER_IN" > "$BENCH_DIR/logs/server.url" 2> "$BENCH_DIR/logs/server.err" &
SERVER_PID=$!
exec 4> "$SERVER_IN"  # keeps the server alive until this script exits
rm -f "$SERVER_IN"
cleanup() { exec 4>&-; kill "$SERVER_PID" 2>/dev/null || true; rm -rf "$CACHE_DIR"; }
trap cleanup EXIT
for _ in $(seq 100); do [ -s "$BENCH_DIR/logs/server.url" ] && break; sleep 0.1; done
ENDPOINT=$(python3 -c "import json; print(json.load(open('$BENCH_DIR/logs/server.url'))['hub'])") ||
  die "the Hub server did not start (see $BENCH_DIR/logs/server.err)"
note "server $ENDPOINT"

# --- runs ------------------------------------------------------------------------------------
RESULTS=$BENCH_DIR/results/pull-$(date +%Y%m%d-%H%M%S).tsv
printf 'engine\trun\twall_s\tsync_s\tuser_s\tsys_s\tmaxrss_kb\thash_s\tload_before\n' > "$RESULTS"
loadavg() { cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/'; }
field() { awk -F': ' -v k="$1" 'index($0, k) {print $2}' "$2"; }

run_engine() {  # engine run-number
  local engine=$1 i=$2 cache=$CACHE_DIR/$1 log=$BENCH_DIR/logs/pull-$1-run$2
  local cmd
  case $engine in
    phikit) cmd=("$PHIKIT_BIN" pull "$MODEL_ID" --jobs "$JOBS" --json) ;;
    phikit-nohash) cmd=("$NOHASH_BIN" pull "$MODEL_ID" --jobs "$JOBS" --json) ;;
    huggingface_hub)
      cmd=("$PY" -c "from huggingface_hub import snapshot_download as s; print(s('$MODEL_ID', cache_dir='$cache', max_workers=$JOBS))") ;;
  esac
  rm -rf "$cache"
  sync  # the previous run's writeback is not charged to this one
  cat "$SRC"/*.safetensors > /dev/null  # the server reads from the page cache for both
  local before; before=$(loadavg)
  note "run $i/$REPEAT: $engine (load $before)"
  if ! env HF_ENDPOINT="$ENDPOINT" HF_HUB_CACHE="$cache" HF_HUB_DISABLE_XET=1 HF_HUB_DISABLE_PROGRESS_BARS=1 \
       HF_HUB_DISABLE_TELEMETRY=1 HF_TOKEN= HF_HOME="$BENCH_DIR/hf-home" \
       /usr/bin/time -v -o "$log.time" "${cmd[@]}" > "$log.out" 2> "$log.err"; then
    tail -n 20 "$log.err" >&2
    die "$engine failed (log: $log.err)"
  fi
  local t0 t1; t0=$(date +%s%N); sync; t1=$(date +%s%N)
  local snapshot; snapshot=$(find "$cache" -maxdepth 3 -path '*/snapshots/*' -type d | head -n 1)
  local got; got=$(du -DLcb "$snapshot"/* | tail -n 1 | cut -f1)
  [ "$got" = "$TOTAL" ] || die "$engine: snapshot holds $got bytes, expected $TOTAL"
  local wall user sys rss hash=""
  wall=$(field "Elapsed (wall clock)" "$log.time" | awk -F: '{s=0; for(j=1;j<=NF;j++) s=s*60+$j; print s}')
  user=$(field "User time (seconds)" "$log.time")
  sys=$(field "System time (seconds)" "$log.time")
  rss=$(field "Maximum resident set size" "$log.time")
  [ "$engine" = phikit ] && hash=$(python3 -c "import json; print(json.load(open('$log.out'))['hash_seconds'])")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$engine" "$i" "$wall" \
    "$(( (t1 - t0) / 1000000000 )).$(printf '%03d' $(( (t1 - t0) / 1000000 % 1000 )))" "$user" "$sys" "$rss" "${hash:-}" "$before" >> "$RESULTS"
}

read -r -a engines <<< "$ENGINES"
for i in $(seq "$REPEAT"); do
  # Rotate who goes first, so no engine always gets the quieter moment.
  n=${#engines[@]}
  for k in $(seq 0 $((n - 1))); do run_engine "${engines[$(( (i - 1 + k) % n ))]}" "$i"; done
done

# --- report ----------------------------------------------------------------------------------
REPORT=${RESULTS%.tsv}.md
python3 - "$RESULTS" "$TOTAL" "$CACHE_DIR" "$JOBS" "$RATE_MB" > "$REPORT" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
total, cache, jobs = int(sys.argv[2]), sys.argv[3], sys.argv[4]
med = lambda e, k: statistics.median(float(r[k]) for r in rows if r["engine"] == e)
rate = int(sys.argv[5])
print(f"Pull of {total/1e9:.2f} GB (2 LFS shards + 3 small files) from 127.0.0.1"
      + (f" at {rate} MB/s per LFS transfer" if rate else "") + f", {jobs} workers, "
      f"cache in {cache}; medians of {sum(r['engine'] == 'phikit' for r in rows)} runs, engines alternating.\n")
best = lambda e, k: min(float(r[k]) for r in rows if r["engine"] == e)
print("| engine | wall s median / best | wall + sync s | CPU s (user+sys) | peak RSS MB | GB/s (median wall) |")
print("|---|---|---|---|---|---|")
engines = [e for e in ("phikit", "phikit-nohash", "huggingface_hub") if any(r["engine"] == e for r in rows)]
for e in engines:
    wall, sync = med(e, "wall_s"), med(e, "sync_s")
    cpu = med(e, "user_s") + med(e, "sys_s")
    print(f"| {e} | {wall:.2f} / {best(e, 'wall_s'):.2f} | {wall + sync:.2f} | {cpu:.2f} | "
          f"{med(e, 'maxrss_kb')/1024:.0f} | {total/1e9/wall:.2f} |")
p, h = med("phikit", "wall_s"), med("huggingface_hub", "wall_s")
hs = med("phikit", "hash_s")
pcpu = med("phikit", "user_s") + med("phikit", "sys_s")
print(f"\nhuggingface_hub / phikit wall time: {h/p:.2f}x median, "
      f"{best('huggingface_hub', 'wall_s')/best('phikit', 'wall_s'):.2f}x best "
      f"(goal > 1: phikit faster, with hashing on)")
print(f"phikit hashing (sha256 of every byte, streamed): {hs:.2f} s CPU over all threads = {total/1e9/hs:.2f} GB/s "
      f"per thread; {100*hs/pcpu:.1f}% of phikit's CPU time")
if "phikit-nohash" in engines:
    n = med("phikit-nohash", "wall_s")
    bp, bn = best("phikit", "wall_s"), best("phikit-nohash", "wall_s")
    print(f"wall time with hashing vs the measuring build without it: median {p:.2f} s vs {n:.2f} s "
          f"({100*(p/n - 1):+.0f}%), best {bp:.2f} s vs {bn:.2f} s ({100*(bp/bn - 1):+.0f}%) (goal < 10%)")
print("\nload average before each run: " + ", ".join(f"{r['engine']}#{r['run']} {r['load_before']}" for r in rows))
EOF
cat "$REPORT"
note "results: $RESULTS, $REPORT"
