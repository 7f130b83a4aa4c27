#!/usr/bin/env bash
# The fuzz targets without cargo-fuzz: build them as plain binaries (cargo-fuzz's `--cfg fuzzing`, no sanitizer,
# no coverage instrumentation) and run each once over the committed seeds, and over `corpus/<target>/` when a
# fuzzing run left one (libFuzzer's `main` runs the files it is given and stops; a panic or a failed assertion
# exits non-zero). This keeps the targets compiling against the current API and replays the corpus in CI
# (.ci/run), where cargo-fuzz is not installed; it fuzzes nothing (README.md here says how to).
#
# With --asan, the same replay with AddressSanitizer (nightly, `-Zsanitizer=address` and a sanitized std through
# `-Zbuild-std`, into fuzz/target/asan, as `cargo fuzz` builds them): an out-of-bounds read, a use after free or a
# leak on any seed is a report and a non-zero exit (issue 30; docs/RELIABILITY.md, "Miri, ThreadSanitizer,
# AddressSanitizer").
#
# Usage: fuzz/replay.sh [--asan] [TARGET...]   (default: idx midx prefix)
set -euo pipefail
cd "$(dirname "$0")"
asan=0
if [ "${1:-}" = "--asan" ]; then
  asan=1
  shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(idx midx prefix)
# Not --locked: a dependency added to odb-index must not fail this replay (cargo updates Cargo.lock here).
if [ "$asan" = 1 ]; then
  triple=x86_64-unknown-linux-gnu
  RUSTFLAGS="--cfg fuzzing -Zsanitizer=address" cargo +nightly build -q -Zbuild-std --target "$triple" \
    --target-dir target/asan --bins
  bindir=target/asan/$triple/debug
  log_prefix=target/replay-asan
else
  RUSTFLAGS="--cfg fuzzing" cargo build -q --bins
  bindir=target/debug
  log_prefix=target/replay
fi
for t in "${targets[@]}"; do
  files=(seeds/"$t"/*)
  [ -d "corpus/$t" ] && mapfile -t -O "${#files[@]}" files < <(find "corpus/$t" -type f)
  "$bindir/$t" "${files[@]}" >"$log_prefix-$t.log" 2>&1 || {
    tail -30 "$log_prefix-$t.log" >&2
    echo "$t: an input failed (log: fuzz/$log_prefix-$t.log)" >&2
    exit 1
  }
  if [ "$asan" = 1 ]; then
    echo "$t: ${#files[@]} inputs replayed under AddressSanitizer, no failure"
  else
    echo "$t: ${#files[@]} inputs replayed, no failure"
  fi
done
