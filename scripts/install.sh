#!/bin/sh
# install.sh: what `make install` and `make uninstall` do, in one place the tests run too.
#
#   scripts/install.sh install   BINARY ROOT   puts ROOT/bin/phikit (BINARY, stripped),
#                                              ROOT/share/phikit/registry.json and the bundled
#                                              demo model under ROOT/share/phikit/models/,
#                                              the man page as ROOT/share/man/man1/phikit.1
#   scripts/install.sh uninstall ROOT          removes exactly those, then every folder install
#                                              created that is empty again (a folder that holds
#                                              anything else stays)
#
# ROOT is $(DESTDIR)$(PREFIX). The folders install had to create are listed in
# ROOT/share/phikit/install-manifest, so uninstall removes those and no others (an existing
# /usr/local/bin is never removed, even when empty). STRIP=: installs unstripped.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
STRIP=${STRIP:-strip}
usage() { echo "usage: $0 install BINARY ROOT | uninstall ROOT" >&2; exit 64; }
[ $# -ge 2 ] || usage

model=share/phikit/models/stories-260k
# Parents first: the order install creates them in, and the reverse of the order they go.
dirs=". bin share share/phikit share/phikit/models $model share/man share/man/man1"

case $1 in
install)
    [ $# -eq 3 ] || usage
    binary=$2 root=$3
    [ -x "$binary" ] || { echo "error: $binary: no such executable (run make build)" >&2; exit 66; }
    created=""
    for d in $dirs; do
        if [ ! -d "$root/$d" ]; then
            mkdir -p "$root/$d"
            created="$created$d
"
        fi
    done
    # Stripped beside its final name, then renamed: a running phikit is never half-replaced.
    install -m 755 "$binary" "$root/bin/.phikit.new"
    "$STRIP" "$root/bin/.phikit.new"
    mv -f "$root/bin/.phikit.new" "$root/bin/phikit"
    install -m 644 "$repo/registry.json" "$root/share/phikit/registry.json"
    for f in "$repo/models/stories-260k"/*; do install -m 644 "$f" "$root/$model/"; done
    install -m 644 "$repo/docs/phikit.1" "$root/share/man/man1/phikit.1"
    manifest="$root/share/phikit/install-manifest"
    # Folders created by an earlier install stay listed when this one found them present.
    { [ -f "$manifest" ] && cat "$manifest"; printf '%s' "$created"; } | sort -u > "$manifest.new"
    mv -f "$manifest.new" "$manifest"
    ;;
uninstall)
    [ $# -eq 2 ] || usage
    root=$2
    manifest="$root/share/phikit/install-manifest"
    # Without a manifest (an install older than it): phikit's own folders only.
    created=$( [ -f "$manifest" ] && cat "$manifest" || printf '%s\n' share/phikit share/phikit/models "$model")
    rm -f "$root/bin/phikit" "$root/share/phikit/registry.json" "$manifest" \
        "$root/share/man/man1/phikit.1"
    for f in "$repo/models/stories-260k"/*; do rm -f "$root/$model/$(basename "$f")"; done
    # Deepest first; rmdir refuses a folder that still holds something, which is the point.
    for d in $(printf '%s\n' $dirs | awk '{ a[NR] = $0 } END { for (i = NR; i; i--) print a[i] }'); do
        target="$root/$d"
        [ "$d" = . ] && target=$root
        if printf '%s\n' "$created" | grep -qxF "$d"; then rmdir "$target" 2>/dev/null || true; fi
    done
    ;;
*) usage ;;
esac
