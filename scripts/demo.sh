#!/usr/bin/env bash
# The README's first command ends here: the main jobs on the built-in default, with nothing to
# download. The bundled demo model (stories-260k: Karpathy's TinyStories stories260K in the
# phi3 layout, float32) tells its story; `convert` makes an MLX 4-bit copy in phikit's model
# store (so `run` and `list` find it by name), which tells its own; `verify` checks both.
set -euo pipefail
bin=${1:-.build/release/phikit}
prompt="Once upon a time"
run() { echo; printf "$ phikit"; printf " %q" "$@"; echo; "$bin" "$@"; }

run run stories-260k -p "$prompt" --stats
run convert stories-260k -q --force
run run stories-260k-4bit -p "$prompt" --stats
run verify stories-260k --smoke
run verify stories-260k-4bit
run list stories
