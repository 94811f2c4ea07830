#!/usr/bin/env bash
# bench_verify.sh: time `phikit verify` on a full-size MLX 4-bit Phi-3.5-mini (random weights,
# 2.1 GB) against just reading the same files: `cat files > /dev/null` and `sha256sum files`,
# engines alternated in every round, each from a cold-ish and from a warm page cache. Issue 9's
# goal: verify (every byte hashed, every tensor scanned) in about the time it takes to read the
# model from disk. The model is verified as a Hugging Face cache snapshot (hard links, no copy)
# whose saved Hub listing holds the files' hashes, as after `phikit pull`.
#
# Environment (all optional):
#   PHIKIT_BIN        phikit binary              (default .build/release/phikit in the repo)
#   PHIKIT_BENCH_DIR  model and logs             (default /tmp/phikit-bench; shares bench_run's
#                     phi35-mlx4 and bench_convert's phi35-random-bf16 when they are there)
#   PHIKIT_REF_VENV   Python with numpy/safetensors, only to generate a missing checkpoint
#                     (default /opt/phikit-ref)
#   BENCH_REPEAT      rounds; the table shows medians (default 3)
#
# "cold-ish": before such a run the model's pages are dropped from the page cache with
# posix_fadvise(DONTNEED) on its files only (not drop_caches: the machine is shared), so the
# bytes come from the disk (or whatever cache the VM's host keeps); pages another process has
# mapped (e.g. a bench_run.sh engine on the same phi35-mlx4) stay, so the share of the model
# still cached at the start of each run is recorded (fincore) and shown; that is why verify
# reads its own copy of phi35-mlx4 (verify-phi35-mlx4, 2.1 GB more on disk). "warm": the files are
# read into the page cache first, so the run measures CPU work (hashing, scanning), not the disk.
# Exit status: 0 when every run succeeded and verify found the model intact.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BENCH_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}
PHIKIT_BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
REF_VENV=${PHIKIT_REF_VENV:-/opt/phikit-ref}
REPEAT=${BENCH_REPEAT:-3}
FIXTURES=${PHIKIT_FIXTURES:-$("$REPO/scripts/fixtures.sh")}
SOURCE_MODEL=$BENCH_DIR/phi35-mlx4
MODEL=$BENCH_DIR/verify-phi35-mlx4
CACHE=$BENCH_DIR/verify-hub
REPO_ID=bench/phi35-mlx4

# shellcheck source=lib.sh
. "$HERE/lib.sh"

[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT must be a positive integer, got '$REPEAT'"
[ -x "$PHIKIT_BIN" ] || die "no phikit binary at $PHIKIT_BIN: run 'make build' or set PHIKIT_BIN"
ensure_gnu_time
mkdir -p "$BENCH_DIR/logs" "$BENCH_DIR/results"

# --- model -----------------------------------------------------------------------------------
if [ ! -f "$SOURCE_MODEL/config.json" ]; then
  CKPT=$BENCH_DIR/phi35-random-bf16
  note "no $SOURCE_MODEL: generating $CKPT and converting it with phikit"
  "$REF_VENV/bin/python" "$HERE/make_random_checkpoint.py" "$CKPT" \
    --config "$FIXTURES/microsoft--Phi-3.5-mini-instruct/config.json" ||
    die "could not generate the checkpoint"
  "$PHIKIT_BIN" convert "$CKPT" -o "$SOURCE_MODEL" -q --bits 4 --group-size 64 > "$BENCH_DIR/logs/verify-convert.log" 2>&1 ||
    die "phikit convert failed (log $BENCH_DIR/logs/verify-convert.log)"
fi
if [ ! -f "$MODEL/config.json" ] || [ "$SOURCE_MODEL/model.safetensors" -nt "$MODEL/config.json" ]; then
  note "copying $SOURCE_MODEL to $MODEL (pages of its own, see above)"
  rm -rf "$MODEL" "$CACHE"
  cp -r --reflink=auto "$SOURCE_MODEL" "$MODEL.incomplete" && mv "$MODEL.incomplete" "$MODEL" ||
    die "could not copy $SOURCE_MODEL"
fi
note "snapshot of $MODEL in $CACHE"
python3 "$HERE/make_verify_cache.py" "$MODEL" "$CACHE" "$REPO_ID" || die "could not lay out the snapshot"
mapfile -t FILES < <(find "$MODEL" -maxdepth 1 -type f ! -name '.*' | sort)
BYTES=$(cat "${FILES[@]}" | wc -c)

evict() {  # drop the model's pages from the page cache (only these files)
  python3 - "${FILES[@]}" <<'PY'
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
}

cached_bytes() {  # bytes of the model in the page cache now (-1 without fincore)
  command -v fincore > /dev/null || { echo -1; return; }
  fincore --bytes --noheadings --output RES "${FILES[@]}" | awk '{s += $1} END {print s + 0}'
}

RESULTS=$BENCH_DIR/results/verify-$(date +%Y%m%d-%H%M%S).tsv
printf 'engine\tcache\trun\twall_s\tmaxrss_kb\tcpu_pct\tload_before\tcached_bytes\n' > "$RESULTS"

run() {  # engine cache run-number
  local engine=$1 cache=$2 i=$3 log=$BENCH_DIR/logs/verify-$1-$2-run$3
  local cmd
  case $engine in
    cat) cmd=(sh -c 'cat "$@" > /dev/null' cat "${FILES[@]}") ;;
    sha256sum) cmd=(sha256sum "${FILES[@]}") ;;
    verify) cmd=("$PHIKIT_BIN" verify "$REPO_ID" --offline) ;;
  esac
  sync
  if [ "$cache" = cold ]; then evict; else cat "${FILES[@]}" > /dev/null; fi
  local before cached; before=$(loadavg); cached=$(cached_bytes)
  note "round $i/$REPEAT, $cache: $engine (load $before)"
  HF_HUB_CACHE=$CACHE HF_HUB_OFFLINE=1 /usr/bin/time -v -o "$log.time" "${cmd[@]}" > "$log.log" 2>&1 ||
    { tail -n 20 "$log.log" >&2; die "$engine failed (log $log.log)"; }
  local wall rss cpu
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(j=1;j<=n;j++) s=s*60+p[j]; print s}' "$log.time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log.time")
  cpu=$(awk -F': ' '/Percent of CPU/ {sub("%","",$2); print $2}' "$log.time")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$engine" "$cache" "$i" "$wall" "$rss" "$cpu" "$before" \
    "$cached" >> "$RESULTS"
}

# Engines alternate inside every round, cold then warm, so drifting background load (the
# machine is shared) hits all of them alike.
for ((i = 1; i <= REPEAT; i++)); do
  for cache in cold warm; do
    for engine in cat sha256sum verify; do run "$engine" "$cache" "$i"; done
  done
done
tail -n 1 "$BENCH_DIR/logs/verify-verify-warm-run$REPEAT.log" >&2

REPORT=${RESULTS%.tsv}.md
rev=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)
python3 - "$RESULTS" "$BYTES" "$REPEAT" "$rev" "$(nproc)" > "$REPORT" <<'PY'
import csv, statistics, sys
path, nbytes, repeat, rev, ncpu = sys.argv[1:]
rows = list(csv.DictReader(open(path), delimiter="\t"))
def med(engine, cache, key):
    return statistics.median(float(r[key]) for r in rows if r["engine"] == engine and r["cache"] == cache)
gb = int(nbytes) / 1e9
print(f"phikit verify of a {gb:.2f} GB MLX 4-bit Phi-3.5-mini snapshot (every file hashed, every "
      f"tensor scanned) vs reading it; median of {repeat} rounds, engines alternated; {ncpu} CPUs "
      f"(shared machine); phikit {rev}\n")
print("| cache | engine | wall s | GB/s | verify ÷ engine | CPU % | peak RSS MB | cached at start |")
print("|---|---|---|---|---|---|---|---|")
for cache in ("cold", "warm"):
    v = med("verify", cache, "wall_s")
    for e in ("cat", "sha256sum", "verify"):
        w = med(e, cache, "wall_s")
        ratio = "" if e == "verify" else f"{v / w:.2f}×"
        c = med(e, cache, "cached_bytes")
        cached = "?" if c < 0 else f"{100 * c / int(nbytes):.0f}%"
        print(f"| {cache} | {e} | {w:.2f} | {gb / w:.2f} | {ratio} | {med(e, cache, 'cpu_pct'):.0f} | "
              f"{med(e, cache, 'maxrss_kb') / 1024:.0f} | {cached} |")
loads = sorted({r["load_before"] for r in rows})
print(f"\nload average before the runs ranged over: {loads[0]} … {loads[-1]}")
PY
echo
cat "$REPORT"
note "report: $REPORT; per-run numbers: $RESULTS; logs: $BENCH_DIR/logs"
grep -q '^OK: 0 errors' "$BENCH_DIR/logs/verify-verify-warm-run$REPEAT.log" ||
  die "verify did not find the model intact (log $BENCH_DIR/logs/verify-verify-warm-run$REPEAT.log)"
