#!/bin/sh
# What a process pays at exit for an inotify watch, without odb-index: a C program that creates one inotify
# descriptor (with one watch on DIR, or none) and exits, run N times each way, in ROUNDS rounds; prints the
# seconds per N runs. Needs a C compiler (`cc`).
#
#   sh bench/scripts/inotify-exit-cost.sh [N] [ROUNDS] [DIR]
set -eu
N=${1:-300}
ROUNDS=${2:-3}
DIR=${3:-/tmp}
T=$(mktemp -d /tmp/odb-index-inotify-XXXXXX)
trap 'rm -rf "$T"' EXIT
cat > "$T/w.c" <<'C'
#include <sys/inotify.h>
int main(int argc, char **argv) {
    int fd = inotify_init1(0);
    if (argc > 2) inotify_add_watch(fd, argv[1], IN_CREATE);
    return fd < 0;
}
C
cc -O2 -o "$T/w" "$T/w.c"
run() { # run ARGS...: N runs, prints the wall seconds
    s=$(date +%s.%N)
    i=0
    while [ $i -lt "$N" ]; do "$T/w" "$@"; i=$((i + 1)); done
    echo "$s $(date +%s.%N)" | awk '{ printf "%.3f", $2 - $1 }'
}
echo "inotify at exit: $N runs each, load average $(cut -d' ' -f1 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
    echo "  round $r: no watch $(run "$DIR") s, one watch $(run "$DIR" watch) s"
done
