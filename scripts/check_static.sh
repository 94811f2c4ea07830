#!/bin/sh
# Checks what `make install` / `make uninstall` promise, against a scratch DESTDIR:
#  - the installed binary links no Swift library (libswiftCore, Foundation, dispatch, ICU…):
#    ldd lists only system libraries (libc, libm, libstdc++/libgcc, libcurl, zlib and theirs);
#  - it runs in an empty environment (no toolchain on PATH or LD_LIBRARY_PATH) and finds its
#    registry and demo model under <prefix>/share/phikit;
#  - uninstall leaves nothing behind, not even the folders install made.
# Run from the repository root after `make build` (`make check-static` does both).
set -eu
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# -o build: `make check-static` has just built; a second build here would only race edits.
make -s -o build install DESTDIR="$scratch" PREFIX=/usr >/dev/null
bin="$scratch/usr/bin/phikit"

libs=$(ldd "$bin")
echo "$libs"
if echo "$libs" | grep -Eiq 'swift|Foundation|dispatch|BlocksRuntime|icu|not found'; then
    echo "FAIL: $bin needs a Swift toolchain library (or one is missing)" >&2
    exit 1
fi
echo "$libs" | grep -q 'libcurl' || { echo "FAIL: libcurl not linked?" >&2; exit 1; }

env -i "$bin" version
env -i HOME="$scratch/home" "$bin" run stories-260k -m 4 --temp 0 >/dev/null \
    || { echo "FAIL: the installed binary cannot run the bundled demo model" >&2; exit 1; }

make -s uninstall DESTDIR="$scratch" PREFIX=/usr
# install made $scratch/usr and everything under it, so uninstall removes the lot.
if [ -e "$scratch/usr" ]; then
    left=$(find "$scratch/usr")
    echo "FAIL: uninstall left: $left" >&2
    exit 1
fi
echo "ok: static Swift runtime; runs with an empty environment; uninstall removes everything"
