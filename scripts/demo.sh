#!/usr/bin/env bash
# The README's first command ends here: the main job on a built-in default, with nothing to
# download. It writes a small Phi-3-shaped checkpoint with random bf16 weights, converts it to
# MLX 4-bit (group 64) the way mlx_lm.convert would, and inspects source and result.
set -euo pipefail
bin=${1:-.build/release/phikit}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$here/scripts/make_demo_checkpoint.py" "$work/phi3-demo"
run() { echo; echo "\$ phikit $*"; "$bin" "$@"; }
run inspect "$work/phi3-demo"
run convert "$work/phi3-demo" -o "$work/phi3-demo-4bit" -q --bits 4 --group-size 64
run inspect "$work/phi3-demo-4bit"
