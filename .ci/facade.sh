#!/usr/bin/env bash
# The modelled facade (src/sync/) is the library's only source of atomics, locks, spin hints and yields, so the
# loom and shuttle builds swap every one of them (docs/PROTOCOL.md; issue 30). Fails on:
#   1. a std (or core) atomic, `std::sync::Mutex`, `spin_loop` from std/core, or `yield_now` in src/ outside
#      src/sync/;
#   2. a use of `sync::plain` (std in every build, so outside the models) in src/ or loom-tests/ without a reason:
#      a comment starting `// plain:` on its line or in the comment lines just above it, saying why nothing
#      another thread races on, or no answer, depends on it.
# Integration tests (tests/) and the models of other code in loom-tests/ (gix_odb_087.rs) use std freely.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
forbidden='(std|core)::sync::atomic|std::sync::Mutex|std::sync::\{[^}]*\b(Mutex|atomic)\b|(std|core)::hint::spin_loop|\byield_now\b'
if hits=$(grep -rnE "$forbidden" --include='*.rs' src | grep -v '^src/sync/'); then
    echo "$hits"
    echo "facade: std atomics, mutexes, spin hints and yields outside src/sync/ (use crate::sync, or sync::plain with a reason)" >&2
    status=1
fi

# Every line naming `plain::` needs `// plain:` on it or in the run of comment lines right above it.
unreasoned=$(find src loom-tests -name '*.rs' ! -path 'src/sync/*' -print0 | sort -z | xargs -0 awk '
    FNR == 1 { reason = 0 }
    /^[[:space:]]*\/\// {
        if ($0 ~ /\/\/ plain:/) reason = 1
        next
    }
    /plain::/ && $0 !~ /\/\/ plain:/ && !reason { print FILENAME ":" FNR ": " $0 }
    { reason = 0 }
')
if [ -n "$unreasoned" ]; then
    echo "$unreasoned"
    echo "facade: sync::plain used without a '// plain: <why no other thread races on it / no answer depends on it>' comment" >&2
    status=1
fi

[ "$status" = 0 ] && echo "facade: every std primitive is in src/sync/, every plain use has a reason"
exit "$status"
