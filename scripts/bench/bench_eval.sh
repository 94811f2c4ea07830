#!/usr/bin/env bash
# bench_eval.sh: what each quantization costs, for scripts/bench/README.md's eval table.
#
#   scripts/bench/bench_eval.sh [MODEL_DIR] [TEXT] [CTX]      (make bench-eval)
#   EVAL_EXTRA_MODELS="DIR…" scripts/bench/bench_eval.sh …     (more models in the table)
#
# Converts MODEL_DIR (default: the bundled stories-260k) with every MLX format phikit writes —
# affine 2/3/4/5/6/8-bit at group 32/64/128, mxfp4, nvfp4, mxfp8 and the four mixed recipes —
# then scores TEXT (default: the eval golden's text) with all of them against the float model
# in one `phikit eval` run, and prints a markdown table. A group size that divides no row
# (128 on stories' 64-wide rows) leaves those layers float; the size column shows it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
BIN="${PHIKIT_BIN:-$here/../../.build/release/phikit}"
[ -x "$BIN" ] || die "no phikit binary at $BIN (make build, or set PHIKIT_BIN)"
model="${1:-$here/../../models/stories-260k}"
text="${2:-$here/../../Tests/PhiKitTests/Fixtures/eval/text.txt}"
ctx="${3:-64}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

variants=()
convert() {  # name, convert flags…
  local name="$1"; shift
  "$BIN" convert "$model" -o "$work/$name" "$@" >/dev/null
  variants+=("$work/$name")
}
for bits in 2 3 4 5 6 8; do
  for group in 32 64 128; do convert "q${bits}g${group}" -q --bits "$bits" --group-size "$group"; done
done
for mode in mxfp4 nvfp4 mxfp8; do convert "$mode" -q --q-mode "$mode"; done
for recipe in mixed_2_6 mixed_3_4 mixed_3_6 mixed_4_6; do
  convert "$recipe" -q --quant-predicate "$recipe" --group-size 64
done
# Models made elsewhere (a GGUF import of the same weights, say), scored beside the others.
for extra in ${EVAL_EXTRA_MODELS:-}; do variants+=("$extra"); done

note "eval of ${#variants[@]} variants of $model at --ctx $ctx"
"$BIN" eval "${variants[@]}" --reference "$model" --text "$text" --ctx "$ctx" --json >"$work/eval.json"
python3 - "$work/eval.json" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
print(f"{r['positions']} positions, {r['windows']} windows of {r['context']} tokens, "
      f"{r['seconds']:.1f} s\n")
print("| format | PPL | KL mean | KL p99 | top-1 | mean abs Δlogit | weights |")
print("|---|---:|---:|---:|---:|---:|---:|")
for m in r["results"]:
    name = "float (reference)" if m["is_reference"] else os.path.basename(m["model"])
    f = lambda v, d: "-" if v is None else f"{v:.{d}f}"
    top = "-" if m.get("top1_agreement") is None else f"{100 * m['top1_agreement']:.1f}%"
    print(f"| {name} | {m['perplexity']:.4f} | {f(m.get('kl_mean'), 5)} | {f(m.get('kl_p99'), 4)} | "
          f"{top} | {f(m.get('mean_abs_logit_diff'), 3)} | {m['size_on_disk'] / 1e3:.0f} kB |")
PY
