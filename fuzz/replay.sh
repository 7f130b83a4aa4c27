#!/usr/bin/env bash
# The fuzz targets without cargo-fuzz: build them as plain binaries (cargo-fuzz's `--cfg fuzzing`, no sanitizer,
# no coverage instrumentation) and run each once over the committed seeds, and over `corpus/<target>/` when a
# fuzzing run left one (libFuzzer's `main` runs the files it is given and stops; a panic or a failed assertion
# exits non-zero). This keeps the targets compiling against the current API and replays the corpus in CI
# (.ci/run), where cargo-fuzz is not installed; it fuzzes nothing (README.md here says how to).
#
# Usage: fuzz/replay.sh [TARGET...]   (default: idx midx)
set -euo pipefail
cd "$(dirname "$0")"
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(idx midx)
# Not --locked: a dependency added to odb-index must not fail this replay (cargo updates Cargo.lock here).
RUSTFLAGS="--cfg fuzzing" cargo build -q --bins
for t in "${targets[@]}"; do
  files=(seeds/"$t"/*)
  [ -d "corpus/$t" ] && mapfile -t -O "${#files[@]}" files < <(find "corpus/$t" -type f)
  ./target/debug/"$t" "${files[@]}" >"target/replay-$t.log" 2>&1 || {
    tail -30 "target/replay-$t.log" >&2
    echo "$t: an input failed (log: fuzz/target/replay-$t.log)" >&2
    exit 1
  }
  echo "$t: ${#files[@]} inputs replayed, no failure"
done
