#!/usr/bin/env bash
# ThreadSanitizer over the real store's multi-threaded tests (issue 30, What 3; docs/RELIABILITY.md, "Miri,
# ThreadSanitizer, AddressSanitizer"): the library and its integration tests built with `-Zsanitizer=thread` and a
# sanitized std (`-Zbuild-std`, nightly, rust-src) into target/tsan, then
#   - the concurrent integration tests: store::{cold_start_races_find_everything_and_load_each_index_once,
#     racing_misses_load_everything_once_and_report_none, refresh_under_load_never_loses_objects_present_throughout,
#     repack_and_gc_underneath_lookups_give_no_false_miss}, repo::loose::loose_cache_from_many_threads, and the
#     maintenance stress tests (stress::lookups_survive_repack_gc_midx_push_and_prune,
#     stress::prefixes::prefixes_and_iteration_survive_repack_gc_midx_push_and_prune,
#     stress::handles_come_and_go_without_accumulating_resources) for ODB_STRESS_SECS (default 3) seconds each;
#   - the library's unit tests of the slot map, the loose cache's racing listings and the store
#     (protocol::tests::, loose::tests::threads_race_first_listings_and_see_refreshes, store::), but the one
#     that runs itself under strace.
# Any report fails the run (a sanitized binary exits with 66 after a report).
#
# Usage: .ci/tsan.sh            the tests above, which must pass with no report
#        .ci/tsan.sh --mutant   plant a Relaxed publish (the slot's READY store, Release in src/protocol.rs) in a
#                               copy of the crate and expect a data race report on the slot's value
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1
export RUSTFLAGS="-Zsanitizer=thread"
export ODB_STRESS_SECS="${ODB_STRESS_SECS:-3}"
target_dir="$root/target/tsan"
triple=x86_64-unknown-linux-gnu

# build DIR: build the library's unit tests and the integration tests in DIR; sets `lib_bin` and `int_bin`.
build() {
    local log="$target_dir/build.log"
    mkdir -p "$target_dir"
    if ! (cd "$1" && cargo +nightly test -Zbuild-std --target "$triple" --target-dir "$target_dir" \
        -p odb-index --lib --test integration --no-run >"$log" 2>&1); then
        tail -30 "$log" >&2
        echo "tsan: the build failed" >&2
        exit 1
    fi
    lib_bin=$(sed -nE 's/^ *Executable unittests src\/lib.rs \((.*)\)$/\1/p' "$log" | tail -1)
    int_bin=$(sed -nE 's/^ *Executable tests\/integration\/main.rs \((.*)\)$/\1/p' "$log" | tail -1)
    [ -n "$lib_bin" ] && [ -n "$int_bin" ] || { echo "tsan: no test binaries in $log" >&2; exit 1; }
    case $lib_bin in /*) ;; *) lib_bin="$1/$lib_bin" ;; esac
    case $int_bin in /*) ;; *) int_bin="$1/$int_bin" ;; esac
}

integration=(store::cold_start_races_find_everything_and_load_each_index_once
    store::racing_misses_load_everything_once_and_report_none
    store::refresh_under_load_never_loses_objects_present_throughout
    store::repack_and_gc_underneath_lookups_give_no_false_miss
    repo::loose::loose_cache_from_many_threads
    stress::lookups_survive_repack_gc_midx_push_and_prune
    stress::prefixes::prefixes_and_iteration_survive_repack_gc_midx_push_and_prune
    stress::handles_come_and_go_without_accumulating_resources)

if [ "${1:-}" != "--mutant" ]; then
    build "$root"
    (cd "$root" && "$lib_bin" protocol::tests:: loose::tests::threads_race_first_listings_and_see_refreshes store:: \
        --skip protocol::tests::the_spin_before_parking_makes_no_sched_yield)
    for t in "${integration[@]}"; do
        # A name that matches no test would pass silently (a test renamed or moved): each must run one test.
        out=$(cd "$root" && "$int_bin" --exact "$t" 2>&1) || { echo "$out" >&2; exit 1; }
        echo "$out"
        grep -qx 'running 1 test' <<<"$out" || { echo "tsan: $t ran no test (renamed or moved? update the list)" >&2; exit 1; }
    done
    echo "tsan: no data race reported"
    exit 0
fi

# The mutant, in a copy of the crate at a fixed path, built into a target directory of its own (cargo decides
# freshness by modification times and paths relative to the workspace: sharing target/tsan, the copy's newer build
# would pass for the clean crate's, and the other way round). The first run builds std again (about 1.5 min).
target_dir="$root/target/tsan-mutant"
scratch_dir="$target_dir/crate"
# shellcheck source=loom-tests/scratch.sh
. "$root/loom-tests/scratch.sh" # the copy, and `apply`
apply "$scratch/src/protocol.rs" 'slot.state.store(READY, Ordering::Release);' 'slot.state.store(READY, Ordering::Relaxed);'
diff -u "$root/src/protocol.rs" "$scratch/src/protocol.rs" || true
build "$scratch"
log="$target_dir/mutant.log"
: >"$log"
status=0
for t in "${integration[@]}"; do
    (cd "$scratch" && "$int_bin" --exact "$t") >>"$log" 2>&1 || status=$?
    grep -q 'WARNING: ThreadSanitizer: data race' "$log" && break
done
if ! grep -q 'WARNING: ThreadSanitizer: data race' "$log"; then
    tail -30 "$log" >&2
    echo "tsan: the planted Relaxed publish was not reported (exit status $status)" >&2
    exit 1
fi
grep -m1 -A12 'WARNING: ThreadSanitizer: data race' "$log"
echo "tsan: the planted Relaxed publish is reported as a data race (exit status $status; log: $log)"
