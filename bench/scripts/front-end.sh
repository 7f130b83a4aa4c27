#!/usr/bin/env bash
# The end-to-end front-end row of the batches group (bench/src/batch/front.rs) by hand, for profiling its arms:
# writes the same history as the bench (`odb-index-bench --make-history`, fixture::history: COMMITS commits of a
# generated project, imported with git fast-import) into DIR/real.git unless it is there, lists its ids in `git rev-list --objects --all` order, then runs the three arms
# RUNS times round-robin, each with every id and with none, and prints per arm the median time per object
# ((every id - none) / ids), its start-up, and the median peak RSS over start-up. With --counts it also prints
# each arm's instructions per object under callgrind (every id - none), which the load does not move.
#
# Usage: bench/scripts/front-end.sh DIR [COMMITS] [RUNS] [--counts]    (defaults: 800, 7)
# Needs target/release/odb-index-bench (cargo build --release -p odb-index-bench) and /usr/bin/time.
# Cost here: 7 runs ~5 s, --counts ~1 min, after the history is written (once).
set -euo pipefail
dir=${1:?usage: front-end.sh DIR [COMMITS] [RUNS] [--counts]}
commits=${2:-800}
runs=${3:-7}
counts=${4:-}
bench=$(cd "$(dirname "$0")/../.." && pwd)/target/release/odb-index-bench
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
mkdir -p "$dir"
if [[ ! -d $dir/real.git/objects ]]; then
    "$bench" --make-history "$dir" "$commits" # the bench's own history (fixture::history)
fi
git --git-dir "$dir/real.git" rev-list --objects --all | cut -c1-40 > "$dir/ids.txt"
: > "$dir/none.txt"
n=$(wc -l < "$dir/ids.txt")
arms=(front-adapter front-gix git)
run() { # ARM FILE: wall ns and peak KiB
    local t0 t1 kib
    t0=$(date +%s%N)
    if [[ $1 == git ]]; then
        kib=$({ /usr/bin/time -f %M git --git-dir "$dir/real.git" cat-file --batch-check --buffer < "$2" > /dev/null; } 2>&1 | tail -1)
    else
        kib=$({ /usr/bin/time -f %M "$bench" --batch-child "$1" "$2" "$dir/real.git/objects" > /dev/null; } 2>&1 | tail -1)
    fi
    t1=$(date +%s%N)
    echo "$((t1 - t0)) $kib"
}
declare -A wall rss
for _ in $(seq "$runs"); do
    for a in "${arms[@]}"; do
        for f in ids none; do
            read -r ns kib < <(run "$a" "$dir/$f.txt")
            wall[$a.$f]+="$ns "
            rss[$a.$f]+="$kib "
        done
    done
done
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
echo "$n objects, $runs runs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for a in "${arms[@]}"; do
    wa=$(med <<<"${wall[$a.ids]}"); wn=$(med <<<"${wall[$a.none]}")
    ra=$(med <<<"${rss[$a.ids]}"); rn=$(med <<<"${rss[$a.none]}")
    echo "$a: $(((wa - wn) / n)) ns per object, start-up $((wn / 1000)) us; peak RSS $ra - $rn = $((ra - rn)) KiB over start-up"
done
if [[ $counts == --counts ]]; then
    for a in "${arms[@]}"; do
        c=()
        for f in ids none; do
            if [[ $a == git ]]; then
                c+=($(valgrind --tool=callgrind --callgrind-out-file=/dev/null git --git-dir "$dir/real.git" \
                    cat-file --batch-check --buffer < "$dir/$f.txt" 2>&1 >/dev/null | sed -n 's/.*Collected : //p'))
            else
                c+=($(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" --batch-child "$a" \
                    "$dir/$f.txt" "$dir/real.git/objects" 2>&1 >/dev/null | sed -n 's/.*Collected : //p'))
            fi
        done
        echo "$a: $(((c[0] - c[1]) / n)) instructions per object (callgrind)"
    done
fi
