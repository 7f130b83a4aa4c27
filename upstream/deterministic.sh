#!/usr/bin/env bash
# Forced-timing reproduction of F1 (lookups, packed_object_count(), iter()) and F3 (docs/UPSTREAM.md): copies gix-odb 0.87.0 from the cargo registry to
# target/deterministic/gix-odb-hooked (+ deterministic/delay-hook.diff) and to
# target/deterministic/gix-odb-patched-hooked (+ the four pull requests, upstream/series-087.sh, + the hook), builds
# upstream/deterministic against both, and runs it: one line per scenario, "0.87.0: missing / patched: found",
# exit status 1 if any scenario answers otherwise. No gix-odb code is tracked: only the diffs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
hook=$here/deterministic/delay-hook.diff
"$here/build-patched.sh" "$root/target/deterministic/gix-odb-hooked" gix-odb-hooked "$hook" >/dev/null
mapfile -t series < <("$here/series-087.sh")
"$here/build-patched.sh" "$root/target/deterministic/gix-odb-patched-hooked" gix-odb-patched-hooked \
    "${series[@]}" "$hook" >/dev/null
cargo build --release --quiet --manifest-path "$here/deterministic/Cargo.toml" --target-dir "$root/target/deterministic/build"
"$root/target/deterministic/build/release/gix-odb-deterministic"
