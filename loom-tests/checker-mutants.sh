#!/usr/bin/env bash
# Mutants of the code loom's protocol models do not run, or run only in part (issue 30, What 4): the bucket-order
# record (src/fanout.rs), the std spin (src/sync/hint.rs), a dropped handle's report (src/store/handle.rs), the miss
# filter (src/store/filter.rs) and the facade rules themselves. Each row is one literal edit (`anchor ~~
# replacement`, `\n` for a newline, as in mutants.sh) with the check that must catch it:
#   loom:NAME   a loom model (the library's unit tests built with `--cfg loom`, target/loom-weaken)
#   lib:NAME    a std unit test of the library (release, target/fresh-mutants-std; the property tests are
#               compiled into it)
#   sh:COMMAND  a command run in the mutated copy that must fail (the CI checks of .ci/run: .ci/facade.sh, the
#               yield grep)
# The script applies one mutant at a time to a scratch copy of the crate, runs its check, and fails if the check
# passes with the mutant applied (or if an anchor does not occur exactly once). Miri's and ThreadSanitizer's
# planted bugs have scripts of their own (.ci/miri.sh --mutant, .ci/tsan.sh --mutant); the table of every mutant
# and which kind of checker catches it is docs/RELIABILITY.md, "Mutation table".
#
# Usage: loom-tests/checker-mutants.sh [NAME...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

# name ~~ file ~~ check ~~ anchor ~~ replacement [~~ anchor ~~ replacement]...
MUTANTS=$(cat <<'LIST'
bucket-mark-counts-repeats ~~ src/fanout.rs ~~ loom:loom_models::fanout::bucket_state_counts_a_bucket_marked_twice_once ~~ new += (m & !prev).count_ones(); ~~ new += m.count_ones();
bucket-all-in-order-one-short ~~ src/fanout.rs ~~ loom:loom_models::fanout::bucket_state_counts_a_bucket_marked_twice_once ~~ .fetch_add(new, Ordering::Relaxed) + new == 256 ~~ .fetch_add(new, Ordering::Relaxed) + new == 255
bucket-all-in-order-never-set ~~ src/fanout.rs ~~ loom:loom_models::fanout::bucket_state_all_in_order_once_every_bucket_is ~~             self.all_in_order.store(true, Ordering::Relaxed);\n ~~ 
spin-yields ~~ src/sync/hint.rs ~~ lib:protocol::tests::the_spin_before_parking_makes_no_sched_yield ~~ std::hint::spin_loop(); ~~ std::thread::yield_now();
spin-yields-grep ~~ src/sync/hint.rs ~~ sh:! grep -rnwE 'yield_now|snooze' src/ ~~ std::hint::spin_loop(); ~~ std::thread::yield_now();
dropped-handle-stops-reporting ~~ src/store/handle.rs ~~ lib:store::relist_tests::a_dropped_handle_reports_its_uncounted_misses ~~ self.view.map().meta().fresh.report(&self.tally); ~~ let _ = &self.tally;
std-atomic-outside-the-facade ~~ src/fanout.rs ~~ sh:bash .ci/facade.sh ~~ use crate::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering}; ~~ use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
plain-without-reason ~~ src/protocol.rs ~~ sh:bash .ci/facade.sh ~~         // plain: a test's drop counter, read after the threads joined.\n ~~ 
filter-restrict-keeps-uncovered ~~ src/store/filter.rs ~~ prop:filter::three_generations_of_small_packs_keep_the_filter_honest ~~ if self.covers(id) { ~~ if true || self.covers(id) {
filter-rebuild-threshold-4x ~~ src/store/filter.rs ~~ lib:store::filter::tests::needs_rebuild_at_its_thresholds ~~ stale > f.live_ids / 4 ~~ stale > f.live_ids * 4
filter-rebuild-ignores-outside-packs ~~ src/store/filter.rs ~~ lib:store::filter::tests::needs_rebuild_at_its_thresholds ~~ outside_packs > 4 || outside_ids ~~ outside_ids
LIST
)

scratch_name=odb-checker-mutants
target="${ODB_MUTANTS_TARGET:-$root/target}"
# shellcheck source=loom-tests/scratch.sh
. "$root/loom-tests/scratch.sh"
target_base=$target

wanted=" $* "

run_table checker
