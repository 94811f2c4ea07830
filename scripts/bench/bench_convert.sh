#!/usr/bin/env bash
# bench_convert.sh: time `phikit convert` against `mlx_lm.convert` (bf16 -> MLX 4-bit g64)
# on a full-size random-weight Phi-3.5-mini, in the same run, and check that the two outputs
# are byte-identical. Issue 3's "Benchmark" section is the spec; see scripts/bench/README.md.
#
# Environment (all optional):
#   PHIKIT_BIN        phikit binary              (default .build/release/phikit in the repo)
#   PHIKIT_BENCH_DIR  checkpoint, outputs, logs  (default /tmp/phikit-bench; needs ~13 GB free)
#   PHIKIT_REF_VENV   Python venv with mlx-lm    (default /opt/phikit-ref; created if missing)
#   BENCH_REPEAT      runs per engine; the table shows medians (default 1)
#   BENCH_ENGINES     "mlx_lm phikit" (default); "phikit" alone reuses an earlier mlx_lm output
#                     for the byte comparison and leaves the ratio blank
#   BENCH_SMALL=1     tiny 2-layer model instead of the full-size one (smoke test, seconds)
#   BENCH_COLD=1      drop the page cache before every run (needs root; default: warm runs)
#
# Exit status: 0 when every run succeeded and the outputs are byte-identical, 1 otherwise.
# The speed and memory goals are reported, not enforced (this is a benchmark, not a test).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BENCH_DIR=${PHIKIT_BENCH_DIR:-/tmp/phikit-bench}
PHIKIT_BIN=${PHIKIT_BIN:-$REPO/.build/release/phikit}
REF_VENV=${PHIKIT_REF_VENV:-/opt/phikit-ref}
REPEAT=${BENCH_REPEAT:-1}
ENGINES=${BENCH_ENGINES:-mlx_lm phikit}
SMALL=${BENCH_SMALL:-0}
COLD=${BENCH_COLD:-0}
# Pinned so "byte-identical to mlx" always means the same mlx; bump together with the goldens.
REF_PACKAGES="mlx==0.32.4 mlx-cpu==0.32.4 mlx-lm==0.32.2 safetensors numpy"

# shellcheck source=lib.sh
. "$HERE/lib.sh"

[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "BENCH_REPEAT must be a positive integer, got '$REPEAT'"
for e in $ENGINES; do
  [[ "$e" == mlx_lm || "$e" == phikit ]] || die "BENCH_ENGINES: unknown engine '$e' (mlx_lm, phikit)"
done
[[ " $ENGINES " == *" phikit "* && ! -x "$PHIKIT_BIN" ]] &&
  die "no phikit binary at $PHIKIT_BIN: run 'make build' or set PHIKIT_BIN"

# --- tools -----------------------------------------------------------------------------------
ensure_gnu_time

PY=$REF_VENV/bin/python
if ! "$PY" -c 'import mlx.core, mlx_lm, numpy, safetensors' 2>/dev/null; then
  note "creating the reference venv at $REF_VENV ($REF_PACKAGES)"
  python3 -m venv "$REF_VENV" ||
    die "python3 -m venv $REF_VENV failed (apt-get install python3-venv? or set PHIKIT_REF_VENV to a writable path)"
  "$REF_VENV/bin/pip" install -q --upgrade pip
  # shellcheck disable=SC2086  # word splitting of the package list is intended
  "$REF_VENV/bin/pip" install -q $REF_PACKAGES || die "pip install into $REF_VENV failed (is PyPI reachable?)"
  "$PY" -c 'import mlx.core, mlx_lm' || die "$REF_VENV has mlx-lm installed but it does not import"
fi

# --- checkpoint ------------------------------------------------------------------------------
mkdir -p "$BENCH_DIR/logs" "$BENCH_DIR/results"
# Outputs are named after the checkpoint size so a phikit-only run never compares against an
# mlx_lm output of the other size.
if [ "$SMALL" = 1 ]; then
  SRC=$BENCH_DIR/phi35-small-bf16; OUT_PREFIX=$BENCH_DIR/small-out; GEN_ARGS=(--small)
else
  SRC=$BENCH_DIR/phi35-random-bf16; OUT_PREFIX=$BENCH_DIR/out; GEN_ARGS=()
fi
note "checkpoint $SRC"
"$PY" "$HERE/make_random_checkpoint.py" "$SRC" "${GEN_ARGS[@]}" ||
  die "could not generate the checkpoint (see above)"
SRC_BYTES=$(du -cb "$SRC"/*.safetensors | tail -n 1 | cut -f1)
# Each 4-bit output is ~0.28x the bf16 source; keep room for both plus some slack.
avail=$(df -PB1 "$BENCH_DIR" | awk 'NR==2 {print $4}')
need=$((SRC_BYTES * 6 / 10))
(( avail > need )) || die "only $((avail >> 20)) MB free in $BENCH_DIR; the two outputs need ~$((need >> 20)) MB"

# --- runs ------------------------------------------------------------------------------------
# Default is warm: the source is read into the page cache right before each run, so both
# engines start from the same state and we time conversion, not the disk. BENCH_COLD=1 drops
# the cache instead (then the disk's read speed is part of the number).
prepare_cache() {
  sync  # flush the previous run's output first, so its writeback isn't charged to this run
  if [ "$COLD" = 1 ]; then
    if ! { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null; then
      note "cannot write /proc/sys/vm/drop_caches (not root?); this run is warm"
      COLD=warm-fallback
      cat "$SRC"/*.safetensors > /dev/null
    fi
  else
    cat "$SRC"/*.safetensors > /dev/null
  fi
}

RESULTS=$BENCH_DIR/results/runs-$(date +%Y%m%d-%H%M%S).tsv
printf 'engine\trun\twall_s\tmaxrss_kb\tcpu_pct\tout_bytes\tload_before\tload_after\n' > "$RESULTS"

run_engine() {  # engine run-number
  local engine=$1 i=$2 out=$OUT_PREFIX-$1 log=$BENCH_DIR/logs/${OUT_PREFIX##*/}-$1-run$2
  local cmd
  case $engine in
    mlx_lm) cmd=("$REF_VENV/bin/mlx_lm.convert" --hf-path "$SRC" --mlx-path "$out" -q --q-bits 4 --q-group-size 64) ;;
    phikit) cmd=("$PHIKIT_BIN" convert "$SRC" -o "$out" -q --bits 4 --group-size 64) ;;
  esac
  rm -rf "$out"  # mlx_lm.convert refuses an existing output; phikit would need --force
  prepare_cache
  local before; before=$(loadavg)
  note "run $i/$REPEAT: $engine (load $before)"
  if ! HF_HUB_OFFLINE=1 /usr/bin/time -v -o "$log.time" "${cmd[@]}" > "$log.log" 2>&1; then
    tail -n 20 "$log.log" >&2
    die "$engine failed (log: $log.log); command: ${cmd[*]}"
  fi
  local wall rss cpu
  # "Elapsed (wall clock) time (h:mm:ss or m:ss): 0:40.20" -> seconds
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,p,":"); s=0; for(j=1;j<=n;j++) s=s*60+p[j]; print s}' "$log.time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log.time")
  cpu=$(awk -F': ' '/Percent of CPU/ {sub("%","",$2); print $2}' "$log.time")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$engine" "$i" "$wall" "$rss" "$cpu" \
    "$(du -sb "$out" | cut -f1)" "$before" "$(loadavg)" >> "$RESULTS"
}

# Engines alternate within each round so slow drift in background load hits both alike.
for ((i = 1; i <= REPEAT; i++)); do
  for e in $ENGINES; do run_engine "$e" "$i"; done
done

# --- compare + report ------------------------------------------------------------------------
IDENTICAL=skipped
if [ -d "$OUT_PREFIX-mlx_lm" ] && [ -d "$OUT_PREFIX-phikit" ]; then
  note "comparing $OUT_PREFIX-mlx_lm and $OUT_PREFIX-phikit"
  if "$PY" "$HERE/compare_outputs.py" "$OUT_PREFIX-mlx_lm" "$OUT_PREFIX-phikit" | tee "$BENCH_DIR/logs/compare.log"; then
    IDENTICAL=yes
  else
    IDENTICAL=no
  fi
  [[ " $ENGINES " == *" mlx_lm "* ]] || note "(the mlx_lm output is from an earlier run)"
fi

REPORT=${RESULTS%.tsv}.md
versions="mlx $("$PY" -c 'import mlx.core as m; print(m.__version__)'), mlx-lm $("$PY" -c 'import mlx_lm; print(mlx_lm.__version__)')"
rev=$(git -C "$REPO" describe --always --dirty 2>/dev/null || echo unknown)
"$PY" - "$RESULTS" "$IDENTICAL" "$REPEAT" "$COLD" "$SRC_BYTES" "$versions" "$rev" "$(nproc)" > "$REPORT" <<'EOF'
import csv, statistics, sys
path, identical, repeat, cold, src_bytes, versions, rev, ncpu = sys.argv[1:]
rows = list(csv.DictReader(open(path), delimiter="\t"))
med = lambda e, k: statistics.median(float(r[k]) for r in rows if r["engine"] == e)
engines = list(dict.fromkeys(r["engine"] for r in rows))
stat = "median of %s runs" % repeat if int(repeat) > 1 else "1 run"
cache = "cold (page cache dropped before each run)" if cold == "1" else "warm (source in page cache for every run)"
print(f"Convert bf16 -> MLX 4-bit g64, {int(src_bytes) / 1e9:.2f} GB source, {stat}, {cache}; "
      f"{ncpu} CPUs; {versions}; phikit {rev}\n")
print("| engine | wall s | peak RSS | output GB | ratio vs mlx_lm | CPU % |")
print("|---|---|---|---|---|---|")
for e in engines:
    w, rss = med(e, "wall_s"), med(e, "maxrss_kb") * 1024 / 1e9
    ratio = "–"
    if "mlx_lm" in engines:
        ratio = "1.00×" if e == "mlx_lm" else f"{med('mlx_lm', 'wall_s') / w:.2f}× faster"
    print(f"| {e} | {w:.1f} | {rss:.2f} GB | {med(e, 'out_bytes') / 1e9:.3f} | {ratio} | {med(e, 'cpu_pct'):.0f} |")
reused = identical != "skipped" and "mlx_lm" not in engines
print(f"\ntensors byte-identical: {identical}" + (" (against an mlx_lm output from an earlier run)" if reused else ""))
if "phikit" in engines:
    rss = med("phikit", "maxrss_kb") * 1024 / 1e9
    goal = "" if "mlx_lm" not in engines else \
        f"≥3× faster: {'yes' if med('mlx_lm', 'wall_s') / med('phikit', 'wall_s') >= 3 else 'no'}; "
    print(f"goals: {goal}peak RSS < 1.5 GB: {'yes' if rss < 1.5 else 'no'} ({rss:.2f} GB)")
loads = ", ".join(f"{r['engine']}#{r['run']} {r['load_before']} → {r['load_after']}" for r in rows)
print(f"load average (1/5/15 min) before → after each run: {loads}")
EOF
echo
cat "$REPORT"
note "report: $REPORT; per-run numbers: $RESULTS; logs: $BENCH_DIR/logs"
[ "$IDENTICAL" != no ]
