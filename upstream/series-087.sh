#!/usr/bin/env bash
# Prints, one per line and in order, the files that put docs/upstream's pull requests on gix-odb 0.87.0 with
# `patch -p1`: each PR's gix-odb-0.87.0.diff where it has one (PR 2: 0.88.0's patch calls
# `Snapshot::store_state_changed_since()`, which 0.87.0 lacks), otherwise its gix-odb-0.88.0.patch (which `patch`
# applies to 0.87.0 with offsets). The 0.87.0 copies are what upstream/'s programs, upstream/deterministic.sh and
# the loom model (docs/UPSTREAM.md) measure; the pull requests themselves are the 0.88.0 patches.
# Usage: upstream/series-087.sh [LAST]   (LAST: the number of PRs, default all four)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=0
for pr in "$root"/docs/upstream/[1-9]-*/; do
    n=$((n + 1))
    [ -z "${1:-}" ] || [ "$n" -le "$1" ] || break
    if [ -f "$pr/gix-odb-0.87.0.diff" ]; then
        echo "${pr}gix-odb-0.87.0.diff"
    else
        echo "${pr}gix-odb-0.88.0.patch"
    fi
done
