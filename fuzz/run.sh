#!/usr/bin/env bash
# Coverage-guided fuzzing without cargo-fuzz: builds TARGET with the flags `cargo fuzz build --sanitizer none
# --release` passes (SanitizerCoverage's 8-bit counters, PC table and compare tracing, `--cfg fuzzing`, debug
# assertions; overflow checks come from this package's release profile) into target/cov, then runs libFuzzer on
# corpus/TARGET (created, ignored by git) and seeds/TARGET for SECONDS, printing its final statistics. A failing
# input is written to artifacts/TARGET/ (libFuzzer's -artifact_prefix) and the exit status is non-zero.
#
# Usage: fuzz/run.sh TARGET [SECONDS]   (default: 300)
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?usage: fuzz/run.sh TARGET [SECONDS]}
seconds=${2:-300}
triple=x86_64-unknown-linux-gnu
# --target keeps these flags off build scripts (linking a build script with SanitizerCoverage fails).
RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions" \
  cargo build -q --release --bin "$target" --target "$triple" --target-dir target/cov
mkdir -p "corpus/$target" "artifacts/$target"
exec "target/cov/$triple/release/$target" "corpus/$target" "seeds/$target" -max_total_time="$seconds" \
  -print_final_stats=1 -artifact_prefix="artifacts/$target/"
