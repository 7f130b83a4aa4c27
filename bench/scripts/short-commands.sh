#!/bin/sh
# Short commands, as a git front end runs them: `odb-index batch-check` started, given K absent ids, and ended,
# N times in a row; against git. What it shows: the cost of setting up change events (inotify) in a process that
# then misses only a few times. The kernel makes a process wait when it closes an inotify descriptor with watches
# (also at exit) for the watches' teardown, so events set up at start (`--events-after 0`, the default before
# `Options::change_events_after`) cost a short command milliseconds; the default sets them up after 2 048 misses.
#
# Configurations: the default; `--events-after 0`; `--no-events` (the turn-2 default: stat and probe); git
# `cat-file --batch-check`. RUNS rounds, each running every configuration N times back to back for each K; prints
# milliseconds per command as min-max (median) over the rounds, with the 1-minute load average of the rounds.
#
#   cargo build --release -p odb-index-cli && sh bench/scripts/short-commands.sh [RUNS] [N]
#
# BIN=PATH tests another build of the command; KS="1 100 5000" sets the numbers of ids per command.
set -eu
RUNS=${1:-5}
N=${2:-100}
KS=${KS:-1 100 5000}
BIN=${BIN:-$(pwd)/target/release/odb-index}
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
G="git -c gc.auto=0 -c maintenance.auto=false"
T=$(mktemp -d /tmp/odb-index-short-XXXXXX)
trap 'rm -rf "$T"' EXIT
# A repository: one pack of 3 000 blobs (one fast-import) and 200 loose blobs.
$G init -q --bare "$T/repo.git"
i=0
{
    printf 'commit refs/heads/main\ncommitter x <x@example.invalid> 1700000000 +0000\ndata 0\n'
    while [ $i -lt 3000 ]; do
        printf 'M 100644 inline f%s\ndata <<EOF\nblob %s\nEOF\n' $i $i
        i=$((i + 1))
    done
    echo
} | $G -C "$T/repo.git" -c fastimport.unpackLimit=0 fast-import --quiet
i=0
while [ $i -lt 200 ]; do echo "loose $i" > "$T/l$i"; echo "$T/l$i"; i=$((i + 1)); done |
    $G -C "$T/repo.git" hash-object -w --stdin-paths > /dev/null
for k in $KS; do
    # K ids that are in no repository (hex of a counter under a fixed prefix).
    j=0
    while [ $j -lt "$k" ]; do printf 'ffffeeee%032x\n' $j; j=$((j + 1)); done > "$T/ids.$k"
done
run() { # run CONFIG K: N commands; prints the wall seconds
    s=$(date +%s.%N)
    c=0
    while [ $c -lt "$N" ]; do
        case $1 in
            default) "$BIN" batch-check "$T/repo.git" < "$T/ids.$2" > /dev/null ;;
            events-at-start) "$BIN" batch-check --events-after 0 "$T/repo.git" < "$T/ids.$2" > /dev/null ;;
            no-events) "$BIN" batch-check --no-events "$T/repo.git" < "$T/ids.$2" > /dev/null ;;
            git) $G -C "$T/repo.git" cat-file --batch-check < "$T/ids.$2" > /dev/null ;;
        esac
        c=$((c + 1))
    done
    e=$(date +%s.%N)
    echo "$s $e" | awk '{ printf "%.6f\n", $2 - $1 }'
}
CONFIGS="default events-at-start no-events git"
for r in $(seq "$RUNS"); do
    for k in $KS; do
        for c in $CONFIGS; do
            echo "$k $c $(run "$c" "$k")" >> "$T/times"
        done
    done
    cut -d' ' -f1 /proc/loadavg >> "$T/loads"
done
echo "short commands: $N runs of each per round, $RUNS rounds; load average $(sort -n "$T/loads" | head -1)-$(sort -n "$T/loads" | tail -1)"
echo "ms per command, min-max (median) over the rounds:"
for k in $KS; do
    for c in $CONFIGS; do
        grep "^$k $c " "$T/times" | cut -d' ' -f3 | sort -n | awk -v k="$k" -v c="$c" -v n="$N" '
            { v[NR] = $1 * 1000 / n }
            END { printf "  %5d ids  %-16s %7.2f-%-7.2f (%.2f)\n", k, c, v[1], v[NR], v[int((NR + 1) / 2)] }'
    done
done
# The system calls of one command per configuration (one id): the inotify set-up is in the events-at-start one.
if command -v strace > /dev/null; then
    k=$(echo "$KS" | cut -d' ' -f1)
    for c in default events-at-start no-events; do
        case $c in
            default) set -- ;;
            events-at-start) set -- --events-after 0 ;;
            no-events) set -- --no-events ;;
        esac
        strace -f -c -o "$T/st" "$BIN" batch-check "$@" "$T/repo.git" < "$T/ids.$k" > /dev/null
        echo "  syscalls of one command ($k ids), $c: $(awk '$NF == "total" { print $4 }' "$T/st")," \
            "inotify: $(grep -c inotify "$T/st" || true) kinds"
    done
fi
