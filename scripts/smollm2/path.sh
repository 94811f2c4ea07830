#!/usr/bin/env bash
# Prints where scripts/smollm2/fetch_and_convert.sh puts things, for other scripts, make
# targets and benchmarks: the converted MLX model directory by default, `--gguf` for the GGUF
# file, `--assets` for the cache folder. Nothing is created or checked; test for the
# directory's config.json to know whether the model was fetched.
#
#   model=$(scripts/smollm2/path.sh)       # …/.build/assets/smollm2/SmolLM2-135M-Instruct-Q4_1
#
# PHIKIT_ASSETS moves the cache (default: <repository>/.build/assets, never the HF cache or
# the phikit store).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
assets=${PHIKIT_ASSETS:-$root/.build/assets}/smollm2
case "${1:-}" in
    --gguf) echo "$assets/SmolLM2-135M-Instruct.Q4_1.gguf" ;;
    --assets) echo "$assets" ;;
    "") echo "$assets/SmolLM2-135M-Instruct-Q4_1" ;;
    *) echo "usage: $0 [--gguf | --assets]" >&2; exit 64 ;;
esac
