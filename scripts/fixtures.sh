#!/bin/sh
# fixtures.sh: prints the directory that holds the test fixtures ready to read.
#
# Tests/Fixtures is what the repository stores: files over a few MB are kept gzip'ed
# (`NAME.gz`) and files that two fixtures share are symlinks inside the tree. Readers (the
# Swift tests through TestSupport's TestPaths, the golden and benchmark scripts) want plain
# files, so this makes `.build/fixtures/<digest>/` once: a copy of the tree with the links
# followed and every `.gz` decompressed. <digest> is a checksum of the stored tree, so an
# edited fixture gets a new copy and a copy is never changed under a reader; the copy is
# built under a temporary name and published by one symlink, so concurrent callers never
# see half of one. Needs only POSIX tools and gzip.
#
# usage: scripts/fixtures.sh        (prints the absolute path, nothing else, on stdout)
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
src="$repo/Tests/Fixtures"
[ -d "$src" ] || { echo "error: $src is missing" >&2; exit 66; }

digest=$(cd "$src" && find -L . -type f | LC_ALL=C sort | while IFS= read -r f; do
    printf '%s ' "$f"; cksum < "$f"; done | cksum | cut -d' ' -f1)
cache="$repo/.build/fixtures"
out="$cache/$digest"
if [ ! -e "$out" ]; then
    mkdir -p "$cache"
    work=$(mktemp -d "$cache/.$digest.XXXXXX")
    chmod 755 "$work"
    trap 'rm -rf "$work"' EXIT
    cp -RL "$src/." "$work/"
    find "$work" -type f -name '*.gz' | while IFS= read -r gz; do
        gzip -dc "$gz" > "${gz%.gz}"
        rm -f "$gz"
    done
    # The name appears at once and only once (a symlink is made or refused atomically): a
    # caller that lost the race drops its own copy and reads the winner's.
    if ln -s "$(basename "$work")" "$out" 2>/dev/null; then trap - EXIT; fi
    # Copies of earlier fixture trees are read by no one now.
    for old in "$cache"/*; do
        [ "$old" = "$out" ] && continue
        [ -L "$old" ] && rm -rf "$cache/$(readlink "$old")"
        rm -rf "$old"
    done
fi
echo "$out"
