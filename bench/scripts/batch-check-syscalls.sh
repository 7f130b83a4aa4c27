#!/bin/sh
# The command as users run it: `odb-index batch-check --buffer` with 200 000 absent ids on a repository with
# real history (crate directories of the cargo registry's sources, each imported by its own `git fast-import`:
# one pack each, plus a few thousand loose objects), against git. Prints, per configuration, syscalls per miss
# (`strace -c -f`, all syscalls of the process divided by the ids) and wall/sys times over RUNS runs, with the
# load average. Then the same with three objects directories (the repository as an alternate of a small one,
# plus a third).
#
#   cargo build --release -p odb-index-cli && sh bench/scripts/batch-check-syscalls.sh [RUNS]
set -eu
RUNS=${1:-5}
BIN=${BIN:-$(pwd)/target/release/odb-index}
# The registry's largest unpacked source directory (there may be small ones, e.g. from `cargo package`).
SRC=${SRC:-$(for d in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/; do echo "$(ls "$d" | wc -l) $d"; done |
    sort -n | tail -1 | cut -d' ' -f2-)}
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
G="git -c gc.auto=0 -c maintenance.auto=false"
T=$(mktemp -d /tmp/odb-index-batch-check-XXXXXX)
trap 'rm -rf "$T"' EXIT
import() { # import() REPO DIR: one commit of every file under DIR, one pack
    (cd "$2" && find . -type f -size -512k | grep -v '[[:space:]"]' | sort | head -1500) |
        while read -r f; do
            printf 'M 100644 inline %s\ndata %s\n' "${f#./}" "$(wc -c < "$2/$f")"
            cat "$2/$f"
            echo
        done > "$T/commands"
    { printf 'commit refs/heads/%s\ncommitter x <x@example.invalid> 1700000000 +0000\ndata 0\n' "$3"; cat "$T/commands"; echo; } |
        $G -C "$1" -c fastimport.unpackLimit=0 fast-import --quiet
}
mkrepo() { # mkrepo NAME PACKS LOOSE FIRST-CRATE
    $G init -q --bare "$T/$1"
    i=0
    for d in $(ls "$SRC" | tail -n +"$4" | head -"$2"); do i=$((i + 1)); import "$T/$1" "$SRC/$d" "b$i"; done
    # Loose objects: the files of the next crates, written with hash-object.
    ls "$SRC" | tail -n +$(($4 + $2)) | head -80 | while read -r d; do find "$SRC/$d" -type f -size -512k; done |
        head -"$3" | $G -C "$T/$1" hash-object -w --stdin-paths > /dev/null
}
mkrepo real 12 3000 1
python3 - "$T/absent" <<'PY'
import random, sys
r = random.Random(1)
open(sys.argv[1], "w").write("".join("%040x\n" % r.getrandbits(160) for _ in range(200000)))
PY
report() { # report LABEL REPO COMMAND...
    label=$1; repo=$2; shift 2
    strace -f -c -o "$T/st" "$@" "$repo" < "$T/absent" > "$T/out"
    [ "$(grep -c ' missing$' "$T/out")" = 200000 ] || { echo "$label: not every id missing" >&2; exit 1; }
    calls=$(awk '$NF == "total" { print $(NF-2) }' "$T/st")
    top=$(grep -v -e total -e '^%' -e '^-' "$T/st" | sort -k4 -n -r | head -2 | awk '{ printf "%s %s, ", $NF, $4 }')
    times=""
    for r in $(seq "$RUNS"); do
        /usr/bin/time -f '%e %S' -o "$T/time" "$@" "$repo" < "$T/absent" > /dev/null
        times="$times $(cat "$T/time" | tr ' ' '/')"
    done
    printf '%-44s %6.2f syscalls/miss (%s...)  wall/sys s:%s  load %s\n' "$label" \
        "$(echo "$calls / 200000" | bc -l)" "$top" "$times" "$(cut -d' ' -f1 /proc/loadavg)"
}
run_all() {
    repo=$1
    report "odb-index batch-check --buffer (default)" "$repo" "$BIN" batch-check --buffer
    report "odb-index ... --no-events (the old default)" "$repo" "$BIN" batch-check --buffer --no-events
    report "odb-index ... --no-refresh" "$repo" "$BIN" batch-check --buffer --no-refresh
    report "odb-index ... --no-refresh --loose none" "$repo" "$BIN" batch-check --buffer --no-refresh --loose none
    report "git cat-file --batch-check --buffer" "$repo" \
        sh -c 'exec git --git-dir "$0" cat-file --batch-check --buffer'
}
echo "repository: $(ls "$T/real/objects/pack" | grep -c '\.idx$') packs, $(find "$T/real/objects" -path '*/pack' -prune -o -type f -print | wc -l) loose objects; git $(git --version | cut -d' ' -f3); $(nproc) CPUs"
run_all "$T/real"
# Three objects directories.
mkrepo alt 2 500 40
mkrepo own 2 500 50
printf '%s\n%s\n' "$T/real/objects" "$T/alt/objects" > "$T/own/objects/info/alternates"
echo "three objects directories (own + 2 alternates):"
run_all "$T/own"
