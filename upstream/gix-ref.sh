#!/usr/bin/env bash
# docs/upstream/gix-ref-pack-refs/ from scratch: copies gix-ref 0.69.1 from the cargo registry to a new
# temporary directory (a git repository, outside this workspace; GIX_REF_WORK to choose it), checks that the pull request's test fails there (old-code-test.diff),
# applies the patch with am.sh, runs the test again (it must pass), then runs the reproduction
# (upstream/gix-ref-repro) on the published crate (it must report the miss) and on the patched copy (it must find
# the ref). Exit status 1 if any step answers otherwise. Needs git, mkfifo, and gix-ref 0.69.1 in the registry
# (`cargo fetch` in this repository); the crate's dev-dependency `insta` is fetched from crates.io if absent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
docs=$root/docs/upstream/gix-ref-pack-refs
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-"gix-ref.sh"} GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-"none@invalid"}
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/gix-ref-0.69.1 | head -n 1)
work=${GIX_REF_WORK:-$(mktemp -d)}
rm -rf "$work/crate" && mkdir -p "$work" && cp -R "$src" "$work/crate"
echo "working in $work"
cd "$work/crate" && chmod -R u+w . && rm -f .cargo-ok
git init -q && git add -A && git commit -qm "gix-ref 0.69.1 (crates.io)"
test=(cargo test --quiet --features sha1 --target-dir "$work/build" --test pack_refs_during_lookup)
git apply "$docs/old-code-test.diff"
out=$("${test[@]}" 2>&1 || true)
grep -q 'test result: FAILED. 0 passed; 2 failed' <<<"$out" || { echo "$out" >&2; echo "gix-ref 0.69.1: expected 2 failing tests" >&2; exit 1; }
echo "gix-ref 0.69.1: the pull request's 2 tests fail, as expected"
git checkout -q . && git clean -qfd
"$here/am.sh" "$docs/gix-ref-0.69.1.patch"
"${test[@]}" >/dev/null
echo "gix-ref 0.69.1 + the patch: the test passes"
repro=(cargo run --quiet --release --manifest-path "$here/gix-ref-repro/Cargo.toml" --target-dir "$work/repro")
"${repro[@]}" | tail -n 1 | grep -q '^reproduced' || { echo "published crate: not reproduced" >&2; exit 1; }
echo "reproduction, published gix-ref 0.69.1: the ref is not found"
status=0
# The patched run rewrites the reproduction's Cargo.lock (gix-ref from a path): keep the committed one.
lock="$here/gix-ref-repro/Cargo.lock"
cp "$lock" "$work/Cargo.lock.committed"
"${repro[@]}" --config "patch.crates-io.gix-ref.path=\"$work/crate\"" >/dev/null 2>&1 || status=$?
cp "$work/Cargo.lock.committed" "$lock"
[ "$status" = 1 ] || { echo "patched crate: exit $status, expected 1 (found)" >&2; exit 1; }
echo "reproduction, patched: the ref is found"
