# lib.sh: shell helpers shared by the benchmark scripts (sourced, not run).

die() { echo "error: $*" >&2; exit 1; }
note() { echo "== $*" >&2; }
sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# GNU time gives the peak RSS (ru_maxrss) of a whole process tree; bash's `time` keyword does not.
ensure_gnu_time() {
  [ -x /usr/bin/time ] && return
  note "installing GNU time (apt)"
  { sudo_if_needed apt-get update -qq && sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time; } ||
    die "could not install GNU time; install the 'time' package by hand"
}
