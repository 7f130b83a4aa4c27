#!/usr/bin/env bash
# The upstream pull requests of docs/upstream/ (four folders, applied in order), checked on scratch git
# repositories made from the registry's gix-odb sources (the registry's copies stay untouched):
# - gix-odb 0.88.0, the base of the pull requests: `git init; git add -A; git commit` of the crates.io source,
#   then for each PR in order: its old-code-test.diff (its tests against the code before it), where it has one,
#   must fail exactly its new tests; its gix-odb-0.88.0.patch applies with `git am` (upstream/am.sh); the files it
#   touches are rustfmt-clean with gitoxide's rustfmt.toml (max_width = 120); gix-odb's tests pass (`--lib`: the
#   tarball ships src/ only, so gix-odb's tests/ and doctests are not there); clippy is clean with the lint table
#   of the published manifest, which is gitoxide's `[workspace.lints]` (`lints.workspace = true` in its
#   Cargo.toml.orig). That table allows `clippy::assert_is_empty`, which clippy 1.95 does not know: rustc warns
#   about it with or without the series, so clippy's output is shown only if it fails.
# - gix-odb 0.87.0, which upstream/'s programs, upstream/deterministic.sh and the loom model measure: the series
#   as upstream/series-087.sh lists it applies in order with `patch -p1`, and gix-odb's tests pass after each.
# - the test-only delay hook of upstream/deterministic.sh applies to 0.87.0, alone and on top of the series.
# - upstream/Cargo.lock, upstream/repro/Cargo.lock and upstream/gix-ref-repro/Cargo.lock are current (`cargo
#   metadata --locked`). The gix-ref pull request (docs/upstream/gix-ref-pack-refs/, no number: not in the loop
#   below) is checked by upstream/gix-ref.sh, not run here.
# A source absent from the registry is fetched by a scratch cargo project that depends on it (the registry's
# source appears only once something depends on it). Needs network on a fresh machine (crates.io).
# Builds go to target/upstream-0.88.0 and target/upstream-0.87.0. Cost on a 2-core machine shared with other
# builds: 6 min 48 s from a fresh clone with those directories empty (load average 13), 3.5 min when they are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
# Only for the scratch repositories, never published: upstream/am.sh makes the applier the patches' author.
export GIT_AUTHOR_NAME="odb-index CI" GIT_AUTHOR_EMAIL=ci@localhost
export GIT_COMMITTER_NAME="odb-index CI" GIT_COMMITTER_EMAIL=ci@localhost
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

registry_src() { ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/gix-odb-"$1" 2>/dev/null | head -n 1; }
source_of() {  # the registry's source of gix-odb $1, fetched if absent
    local src
    src=$(registry_src "$1")
    if [ -z "$src" ]; then
        mkdir -p "$scratch/fetch-$1/src"
        printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\ngix-odb = "=%s"\n' \
            "$1" > "$scratch/fetch-$1/Cargo.toml"
        touch "$scratch/fetch-$1/src/lib.rs"
        cargo fetch --quiet --manifest-path "$scratch/fetch-$1/Cargo.toml" >&2
        src=$(registry_src "$1")
    fi
    [ -n "$src" ] || { echo "gix-odb $1 is not in the cargo registry and could not be fetched" >&2; exit 1; }
    echo "$src"
}
repo_of() {  # a git repository of the registry's source of gix-odb $1, at $scratch/$1
    cp -R "$(source_of "$1")" "$scratch/$1"
    chmod -R u+w "$scratch/$1"
    rm -f "$scratch/$1/.cargo-ok"
    git -C "$scratch/$1" init --quiet
    git -C "$scratch/$1" add -A
    git -C "$scratch/$1" commit --quiet -m "gix-odb $1 (crates.io)"
}
in_repo() { (cd "$scratch/$1" && CARGO_TARGET_DIR="$root/target/upstream-$1" "${@:2}"); }
lib_tests() {  # gix-odb's unit tests in the repository of version $1; prints cargo's summary line
    in_repo "$1" cargo test --quiet --features sha1 --lib 2>&1 | grep -E '^test result' || true
}

echo "-- gix-odb 0.88.0 (the pull requests' base)"
repo_of 0.88.0
# 0.88.0's Cargo.lock pins jiff 1.0.0, which crates.io no longer offers (yanked): let cargo pick a 1.0.x. The
# lock file stays modified in the work tree only, outside the commits `git am` makes.
in_repo 0.88.0 cargo update --quiet -p jiff
for pr in docs/upstream/[1-9]-*/; do
    pr=${pr%/}
    if [ -f "$pr/old-code-test.diff" ]; then
        git -C "$scratch/0.88.0" apply "$root/$pr/old-code-test.diff"
        result=$(lib_tests 0.88.0)
        want=$(grep -c '^+    #\[test\]' "$pr/old-code-test.diff")
        echo "old code, $pr's tests: $result"
        echo "$result" | grep -q "^test result: FAILED\. [0-9]* passed; $want failed" \
            || { echo "$pr: expected its $want new tests to fail on the code before it" >&2; exit 1; }
        git -C "$scratch/0.88.0" checkout --quiet -- src
    fi
    (cd "$scratch/0.88.0" && "$root/upstream/am.sh" "$root/$pr/gix-odb-0.88.0.patch")
    mapfile -t touched < <(git -C "$scratch/0.88.0" diff --name-only HEAD~1 HEAD -- '*.rs')
    (cd "$scratch/0.88.0" && rustfmt --edition 2024 --config max_width=120 --check "${touched[@]}")
    result=$(lib_tests 0.88.0)
    echo "with $pr: $result"
    echo "$result" | grep -q '^test result: ok\.' || { echo "$pr: gix-odb's tests fail" >&2; exit 1; }
    clippy=$(in_repo 0.88.0 cargo clippy --quiet --features sha1 --all-targets -- -D warnings -A unknown-lints 2>&1) \
        || { echo "$clippy" >&2; echo "$pr: clippy" >&2; exit 1; }
    echo "with $pr: clippy clean"
done
echo "the series: $(git -C "$scratch/0.88.0" log --format=%s HEAD~4..HEAD | tac | paste -sd '|' | sed 's/|/ | /g')"

echo "-- gix-odb 0.87.0 (what upstream/ and the loom model measure)"
repo_of 0.87.0
mapfile -t series < <(upstream/series-087.sh)
for p in "${series[@]}"; do
    (cd "$scratch/0.87.0" && patch -p1 --quiet < "$p")
    result=$(lib_tests 0.87.0)
    echo "with ${p#"$root"/}: $result"
    echo "$result" | grep -q '^test result: ok\.' || { echo "$p: gix-odb 0.87.0's tests fail with it" >&2; exit 1; }
done
(cd "$scratch/0.87.0" && patch -p1 --dry-run --quiet < "$root/upstream/deterministic/delay-hook.diff")
git -C "$scratch/0.87.0" stash --quiet
(cd "$scratch/0.87.0" && patch -p1 --dry-run --quiet < "$root/upstream/deterministic/delay-hook.diff")
echo "the delay hook applies to gix-odb 0.87.0, alone and on top of the series"

echo "-- upstream/Cargo.lock is current (cargo metadata --locked, after build-patched.sh makes its path dependency)"
bash upstream/build-patched.sh >/dev/null
# Not --offline: on a fresh machine some locked crates are not downloaded yet, which --offline reports as an error.
cargo metadata --locked --format-version 1 --manifest-path upstream/Cargo.toml >/dev/null
cargo metadata --locked --format-version 1 --manifest-path upstream/repro/Cargo.toml >/dev/null
cargo metadata --locked --format-version 1 --manifest-path upstream/gix-ref-repro/Cargo.toml >/dev/null
echo "upstream/Cargo.lock, upstream/repro/Cargo.lock and upstream/gix-ref-repro/Cargo.lock are current"
