#!/bin/sh
# The command as users run it: `odb-index batch-check --buffer` with 200 000 absent ids on a repository with
# real history (crate directories of the cargo registry's sources, each imported by its own `git fast-import`:
# one pack each, plus a few thousand loose objects), against the turn-2 default (`--no-events`: a `stat` per pack
# directory and a probe per objects directory per miss) and against git. Then the same with three objects
# directories (the repository as an alternate of a small one, plus a third).
#
# Per configuration, deterministic counts first:
#   - syscalls per miss: `strace -c -f`, every syscall of the process divided by the 200 000 ids;
#   - instructions per miss (user space, odb-index only): callgrind's total for 200 000 ids minus its total for
#     the first 100 000, divided by 100 000 (process start, listing and set-up cancel out); skipped with a note if
#     valgrind is missing, or with CALLGRIND=0;
# then times: RUNS rounds, each running every configuration once, back to back (so a round's runs share the
# load); wall, user and system seconds (`/usr/bin/time`) as min-max and median over the rounds, the 1-minute load
# average at each run. The targets of issue 22 are printed met/MISSED from the per-round ratios (turn-2 default
# wall / default wall in the same round; git wall / default wall): met if the median round meets it.
#
#   cargo build --release -p odb-index-cli && sh bench/scripts/batch-check-syscalls.sh [RUNS]
#
# WORK=DIR keeps the repositories (and the ids) in DIR and reuses them on the next run; BIN=PATH tests another
# build of the command; GIT=0 leaves git out (its runs take most of the time).
set -eu
RUNS=${1:-5}
BIN=${BIN:-$(pwd)/target/release/odb-index}
CALLGRIND=${CALLGRIND:-1}
GIT=${GIT:-1}
# The registry's largest unpacked source directory (there may be small ones, e.g. from `cargo package`).
SRC=${SRC:-$(for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do echo "$(ls "$d" | wc -l) $d"; done |
    sort -n | tail -1 | cut -d' ' -f2-)}
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
G="git -c gc.auto=0 -c maintenance.auto=false"
S=$(mktemp -d /tmp/odb-index-batch-check-XXXXXX)
if [ -n "${WORK:-}" ]; then
    mkdir -p "$WORK"
    T=$WORK
    trap 'rm -rf "$S"' EXIT
else
    T=$S
    trap 'rm -rf "$S"' EXIT
fi
import() { # import() REPO DIR BRANCH: one commit of every file under DIR, one pack
    (cd "$2" && find . -type f -size -512k | grep -v '[[:space:]"]' | sort | head -1500) |
        while read -r f; do
            printf 'M 100644 inline %s\ndata %s\n' "${f#./}" "$(wc -c < "$2/$f")"
            cat "$2/$f"
            echo
        done > "$S/commands"
    { printf 'commit refs/heads/%s\ncommitter x <x@example.invalid> 1700000000 +0000\ndata 0\n' "$3"; cat "$S/commands"; echo; } |
        $G -C "$1" -c fastimport.unpackLimit=0 fast-import --quiet
}
mkrepo() { # mkrepo NAME PACKS LOOSE FIRST-CRATE (kept if WORK already has it)
    [ -f "$T/$1/.done" ] && return 0
    rm -rf "${T:?}/$1"
    $G init -q --bare "$T/$1"
    i=0
    for d in $(ls "$SRC" | tail -n +"$4" | head -"$2"); do i=$((i + 1)); import "$T/$1" "$SRC/$d" "b$i"; done
    # Loose objects: the files of the next crates, written with hash-object.
    ls "$SRC" | tail -n +$(($4 + $2)) | head -80 | while read -r d; do find "$SRC/$d" -type f -size -512k; done |
        head -"$3" | $G -C "$T/$1" hash-object -w --stdin-paths > /dev/null
    touch "$T/$1/.done"
}
mkrepo real 12 3000 1
[ -f "$T/absent" ] || python3 - "$T/absent" <<'PY'
import random, sys
r = random.Random(1)
open(sys.argv[1], "w").write("".join("%040x\n" % r.getrandbits(160) for _ in range(200000)))
PY
head -100000 "$T/absent" > "$S/half"
if [ "$CALLGRIND" = 1 ] && ! valgrind --version > /dev/null 2>&1; then
    echo "valgrind is not installed: instructions per miss not measured"
    CALLGRIND=0
fi
load() { cut -d' ' -f1 /proc/loadavg; }
# stats FILE COLUMN: "min-max (median m)" of a column of numbers
stats() {
    sort -g -k"$2","$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END {
        m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.2f-%.2f (median %.2f)", v[1], v[NR], m }'
}
# counts LABEL REPO COMMAND...: syscalls (and instructions) per miss; checks every id is reported missing
counts() {
    label=$1; repo=$2; shift 2
    strace -f -c -o "$S/st" "$@" "$repo" < "$T/absent" > "$S/out"
    [ "$(grep -c ' missing$' "$S/out")" = 200000 ] || { echo "$label: not every id missing" >&2; exit 1; }
    calls=$(awk '$NF == "total" { print $(NF-2) }' "$S/st")
    top=$(grep -v -e total -e '^%' -e '^-' "$S/st" | sort -k4 -n -r | head -2 | awk '{ printf "%s %.2f, ", $NF, $4 / 200000 }')
    line=$(printf '%6.2f syscalls/miss (%s...)' "$(echo "$calls / 200000" | bc -l)" "$top")
    if [ "$CALLGRIND" = 1 ] && [ "$1" = "$BIN" ]; then
        for ids in absent half; do
            f=$T/absent; [ $ids = half ] && f=$S/half
            valgrind --tool=callgrind --callgrind-out-file="$S/cg.out" "$@" "$repo" < "$f" 2> "$S/cg.err" > /dev/null
            sed -n 's/.*Collected : //p' "$S/cg.err" > "$S/ir.$ids"
        done
        line="$line  $(echo "($(cat "$S/ir.absent") - $(cat "$S/ir.half")) / 100000" | bc -l |
            xargs printf '%.1f') instructions/miss"
    fi
    echo "$line"
}
# run_all REPO: counts, then RUNS interleaved rounds of times, then the ratios
run_all() {
    repo=$1
    set -- default "$BIN batch-check --buffer" \
        turn2 "$BIN batch-check --buffer --no-events" \
        norefresh "$BIN batch-check --buffer --no-refresh" \
        floor "$BIN batch-check --buffer --no-refresh --loose none"
    [ "$GIT" = 1 ] && set -- "$@" git "git cat-file --batch-check --buffer"
    labels=""
    while [ $# -gt 0 ]; do
        labels="$labels $1"
        eval "cmd_$1=\"\$2\""
        shift 2
    done
    for l in $labels; do
        eval "c=\$cmd_$l"
        case $l in
            git) printf '%-10s %s\n' "$l" "$(counts "$l" "$repo" sh -c 'exec git --git-dir "$0" cat-file --batch-check --buffer')" ;;
            *) printf '%-10s %s\n' "$l" "$(counts "$l" "$repo" $c)" ;;
        esac
        : > "$S/t.$l"
    done
    for r in $(seq "$RUNS"); do
        for l in $labels; do
            eval "c=\$cmd_$l"
            ld=$(load)
            case $l in
                git) /usr/bin/time -f '%e %U %S' -o "$S/time" git --git-dir "$repo" cat-file --batch-check --buffer \
                    < "$T/absent" > /dev/null ;;
                *) /usr/bin/time -f '%e %U %S' -o "$S/time" $c "$repo" < "$T/absent" > /dev/null ;;
            esac
            echo "$r $(cat "$S/time") $ld" >> "$S/t.$l"
        done
    done
    for l in $labels; do
        printf '%-10s wall %s  user %s  sys %s  load %s\n' "$l" "$(stats "$S/t.$l" 2)" "$(stats "$S/t.$l" 3)" \
            "$(stats "$S/t.$l" 4)" "$(stats "$S/t.$l" 5)"
    done
    ratio() { # ratio SLOW FAST TARGET WHAT: per-round wall ratio SLOW/FAST
        paste -d' ' "$S/t.$1" "$S/t.$2" | awk '{ printf "%d %.3f %.3f\n", $1, $2 / $7, ($3 + $4) / ($8 + $9) }' > "$S/ratio"
        m=$(sort -g -k2,2 "$S/ratio" | awk '{ v[NR] = $2 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
        met=$(echo "$m >= $3" | bc -l)
        printf '  %-58s wall %sx per round, cpu (user+sys) %sx (>= %s on the median round): %s\n' "$4" \
            "$(stats "$S/ratio" 2)" "$(stats "$S/ratio" 3)" "$3" "$([ "$met" = 1 ] && echo met || echo MISSED)"
    }
    ratio turn2 default 3 "default vs the turn-2 default (--no-events)"
    [ "$GIT" = 1 ] && ratio git default 15 "default vs git cat-file --batch-check"
    return 0
}
echo "repository: $(ls "$T/real/objects/pack" | grep -c '\.idx$') packs, $(find "$T/real/objects" -path '*/pack' -prune -o -type f -print | wc -l) loose objects; git $(git --version | cut -d' ' -f3); $(nproc) CPUs; $RUNS rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
run_all "$T/real"
# Three objects directories.
mkrepo alt 2 500 40
mkrepo own 2 500 50
printf '%s\n%s\n' "$T/real/objects" "$T/alt/objects" > "$T/own/objects/info/alternates"
echo "three objects directories (own + 2 alternates); load $(cut -d' ' -f1-3 /proc/loadavg):"
run_all "$T/own"
