#!/usr/bin/env bash
# Miri over the library's unit tests that reach `unsafe` from memory (issue 30, What 2; docs/RELIABILITY.md,
# "Miri, ThreadSanitizer, AddressSanitizer"):
#   - the slot map's UnsafeCell publish, read, abandon and drop with a `T` that has a `Drop`
#     (protocol::tests::slot_values_are_published_read_abandoned_and_dropped_once; the contended load on real
#     threads, protocol::tests::a_waiter_spins_then_parks_and_the_publish_wakes_it; the rest of protocol::tests);
#   - the `.idx` reader's unchecked `entry` reads on v1, v2 and SHA-256 files held in memory (idx::tests, through
#     `PackIndex::from_data` with the `Data::Vec` that `LoadMode::Read` yields), the last entries first
#     (idx::tests::every_id_is_found_from_the_last_entry_down);
#   - the loose path's unchecked `CStr` (loose::tests::rel_cstr_is_the_written_path: `rel_cstr`, the construction
#     `probe` uses, from a buffer `write_rel_path` filled; the probe itself needs a real directory).
# In the release profile: debug assertions off (no `debug_assert!` stands between a bad index and the unchecked
# read, as in the code users run), overflow checks on (Cargo.toml).
#
# Ignored under cfg(miri) (`#[cfg_attr(miri, ignore = ...)]`), because Miri cannot open files with the flags rustix
# uses or spawn processes: idx::tests::{opens_files_and_names_them_in_io_errors,
# check_pack_compares_the_pack_trailer_with_the_recorded_checksum}; loose::tests::{
# cache_skips_odd_entries_and_finds_real_ones, fanout_that_is_a_file_is_empty, open_errors_name_the_path,
# threads_race_first_listings_and_see_refreshes, failed_load_is_retried_and_wakes_nobody_forever};
# protocol::tests::the_spin_before_parking_makes_no_sched_yield (runs strace). Skipped by the filter below, for
# time (each reaches no `unsafe` that the tests kept do not): idx::tests::checksum_mismatch (hashes whole files;
# `verify` reads through checked accessors, 20 s under Miri) and
# idx::tests::offsets_in_the_pack_header_or_past_its_end_are_errors_never_answers (its lookups are
# reads_what_it_writes's on the same three-entry files; its subject, offset validation, is checked code; 38 s).
# Under Miri, idx::tests::entries_out_of_order_are_found_and_their_buckets_reported and
# every_id_is_found_from_the_last_entry_down run on SHA-1 files of 48 entries (600, both hash kinds, otherwise).
#
# Usage: .ci/miri.sh            the tests above, which must pass
#        .ci/miri.sh --mutant   plant an off-by-one in `entry` (entries one byte further apart than they are) in
#                               a scratch copy and expect Miri to report undefined behaviour in src/idx/search.rs
#                               (the failing line is printed)
# Needs `rustup component add miri rust-src --toolchain nightly`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
tests=(protocol::tests:: idx::tests:: loose::tests::rel_ --skip midx:: --skip idx::tests::checksum_mismatch
    --skip idx::tests::offsets_in_the_pack_header_or_past_its_end_are_errors_never_answers)

if [ "${1:-}" != "--mutant" ]; then
    cargo +nightly miri test --release -p odb-index --lib -- "${tests[@]}"
    exit 0
fi

# A copy of the crate at a fixed path (cargo-miri records the directory a test binary was built in, so a fresh
# temporary directory each time would have it run a stale binary), with the mutant applied; its own target
# directory, so only the crate recompiles after the first run.
target="$root/target/miri-mutant"
scratch_dir="$target/crate"
# shellcheck source=loom-tests/scratch.sh
. "$root/loom-tests/scratch.sh" # the copy, and `apply`
apply "$scratch/src/idx/search.rs" \
    '.wrapping_add((i as usize).wrapping_mul(self.stride));' \
    '.wrapping_add((i as usize).wrapping_mul(self.stride + 1));'
diff -u "$root/src/idx/search.rs" "$scratch/src/idx/search.rs" || true
log="$target/miri.log"
if (cd "$scratch" && CARGO_TARGET_DIR="$target" cargo +nightly miri test --release -p odb-index --lib -- \
    --exact idx::tests::every_id_is_found_from_the_last_entry_down >"$log" 2>&1); then
    tail -20 "$log" >&2
    echo "miri: the planted off-by-one in entry passed" >&2
    exit 1
fi
if ! grep -q 'error: Undefined Behavior' "$log"; then
    tail -30 "$log" >&2
    echo "miri: the test failed, but not with undefined behaviour" >&2
    exit 1
fi
grep -o -A1 'error: Undefined Behavior.*' "$log"
grep -m1 -- '--> src/idx/search.rs' "$log"
echo "miri: the planted off-by-one in entry is reported as undefined behaviour"
