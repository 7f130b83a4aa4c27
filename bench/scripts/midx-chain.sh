#!/usr/bin/env bash
# A repository of N packs (one blob each) covered by an incremental multi-pack-index chain of N layers (one
# `git multi-pack-index write --incremental` after each pack), for measuring a listing that opens many index
# files (issue 32, What 4). Prints the repository's path; the blobs' ids are in <dir>/ids (one per line, in the
# order written). Needs git 2.47 or later (incremental multi-pack-index writes).
#
# Usage: bench/scripts/midx-chain.sh DIR [N]     (N defaults to 1000; DIR must not exist)
# Cost here: 2.4 s for N = 100 (load 2.3), but each layer's write is slower than the last: 17.5 minutes for
# N = 1000 (issue 32). `odb-index-bench --make-chain DIR` builds the same kind of chain of 1 000 layers in seconds
# (git's packs, the crate's layers, checked by `git multi-pack-index verify`; docs/BENCHMARKS.md, "Opening a
# 1 000-layer chain").
set -euo pipefail
dir=${1:?usage: midx-chain.sh DIR [N]}
n=${2:-1000}
[[ -e $dir ]] && { echo "midx-chain.sh: $dir exists" >&2; exit 1; }
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
git init -q --bare "$dir"
g() { git -C "$dir" -c gc.auto=0 -c maintenance.auto=false "$@"; }
: > "$dir/ids"
for i in $(seq 1 "$n"); do
    content="blob $i of $n"
    # fast-import writes a pack even for one object with unpackLimit=0 (else it would write it loose).
    printf 'blob\ndata %d\n%s\n' "${#content}" "$content" | g -c fastimport.unpackLimit=0 fast-import --quiet
    printf '%s' "$content" | g hash-object --stdin >> "$dir/ids"
    g multi-pack-index write --incremental
done
layers=$(grep -c . "$dir/objects/pack/multi-pack-index.d/multi-pack-index-chain")
packs=$(ls "$dir/objects/pack/"*.idx | wc -l)
[[ $layers == "$n" && $packs == "$n" ]] || { echo "midx-chain.sh: $layers layers, $packs packs, expected $n" >&2; exit 1; }
echo "$dir"
