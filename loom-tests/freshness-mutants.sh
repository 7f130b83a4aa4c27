#!/usr/bin/env bash
# Mutation score of the freshness code (issue 28; docs/FRESHNESS.md, section 2): each mutant is one small edit of
# src/store/freshness.rs, handle.rs, relist.rs, steady.rs, mod.rs, successor.rs, batch.rs, scan.rs, load.rs, loose_sources.rs or src/dir.rs, given as a literal `anchor ~~
# replacement` pair (`\n` stands for a newline), with the check that must catch it: a loom model (`loom:NAME`,
# the test target `loom` built with `--cfg loom`), a unit test (`lib:NAME`, the library's unit tests, where
# the deterministic relisting tests of src/store/relist_tests.rs live) or an integration test (`int:NAME`,
# tests/integration). The script applies one mutant at a time to
# a scratch copy of the crate, builds that suite into a shared target directory (only the crate recompiles), runs
# the named test with `--exact`, and fails if the test passes with the mutant applied (or if an anchor does not
# occur exactly once, so a mutant can never silently be a no-op). Each row names the survivor of issue 28 it
# stands for.
#
# Usage: loom-tests/freshness-mutants.sh [--ci] [NAME...]
#   --ci   the CI subset (CI_SUBSET below)
set -euo pipefail
ci=0
if [ "${1:-}" = "--ci" ]; then
  ci=1
  shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)

# name ~~ file ~~ check ~~ anchor ~~ replacement
MUTANTS=$(cat <<'LIST'
listing-scans-before-its-detector ~~ src/store/freshness.rs ~~ loom:detectors::freshness_events_pack_written_during_a_refresh_is_found ~~         let started = SystemTime::now();\n        let watch = match prev { ~~         let started = SystemTime::now();\n        let s = scan();\n        let watch = match prev { ~~         let s = scan();\n        let untrusted ~~         let untrusted
switch-detector-after-scan ~~ src/store/freshness.rs ~~ loom:detectors::freshness_switch_pack_written_during_a_refresh_is_found ~~         let started = SystemTime::now();\n        let watch = match prev { ~~         let started = SystemTime::now();\n        let s = scan();\n        let watch = match prev { ~~         let s = scan();\n        let untrusted ~~         let untrusted
listing-drains-after-scan-std ~~ src/store/freshness.rs ~~ lib:store::freshness::tests::a_pack_written_during_the_scan_is_not_vouched_for ~~         let started = SystemTime::now();\n        let watch = match prev { ~~         let started = SystemTime::now();\n        let s = scan();\n        let watch = match prev { ~~         let s = scan();\n        let untrusted ~~         let untrusted
confirm-ignores-stamps ~~ src/store/freshness.rs ~~ lib:store::freshness::tests::a_relisting_with_other_stamps_replaces_the_listing ~~ || (new.stamps == self.stamps && !self.untrusted && !new.untrusted)); ~~ || (!self.untrusted && !new.untrusted));
unchanged-refresh-keeps-token ~~ src/store/freshness.rs ~~ lib:store::freshness::tests::an_unchanged_relisting_raises_the_token ~~             self.token\n                .store(new.token.load(Ordering::Relaxed), Ordering::Relaxed); ~~ 
tally-never-reset ~~ src/store/freshness.rs ~~ lib:store::freshness::tests::deferred_count_reaches_its_target_exactly ~~ let n = self.misses.replace(0); ~~ let n = self.misses.get();
tally-per-miss ~~ src/store/freshness.rs ~~ lib:store::freshness::tests::deferred_count_reaches_its_target_exactly ~~ let n = self.misses.get() + dirs as u64; ~~ let n = self.misses.get() + 1 + 0 * dirs as u64;
count-before-report ~~ src/store/watch.rs ~~ lib:store::freshness::tests::deferred_count_reaches_its_target_exactly ~~ .fetch_add(n, Ordering::Relaxed).saturating_add(n) >= d.after ~~ .fetch_add(n, Ordering::Relaxed) >= d.after
relisted-baseline-late ~~ src/store/relist.rs ~~ lib:store::relist_tests::iteration_lists_objects_packed_while_loose_were_listed_under_a_trusted_listing_another_refresh_made ~~         let before = sync::Arc::clone(self.view.map());\n        self.load_all(); ~~         self.load_all();\n        let before = sync::Arc::clone(self.view.map());
relist-bound-off-by-one ~~ src/store/relist.rs ~~ lib:store::relist_tests::relisting_while_packs_keep_vanishing_stops_at_its_bound ~~ while relists < MAX_RELISTS && self.should_refresh() { ~~ while relists <= MAX_RELISTS && self.should_refresh() {
locate-relist-bound-off-by-one ~~ src/store/lookup/handle.rs ~~ lib:store::relist_tests::relisting_while_packs_keep_vanishing_stops_at_its_bound ~~ && relists < MAX_RELISTS ~~ && relists <= MAX_RELISTS
locate-relists-once ~~ src/store/lookup/handle.rs ~~ lib:store::relist_tests::a_miss_is_none_when_a_relisted_pack_vanishes_before_it_is_loaded ~~ && relists < MAX_RELISTS ~~ && relists < 1
vanished-makes-incomplete ~~ src/store/lookup/miss.rs ~~ lib:store::relist_tests::relisting_while_packs_keep_vanishing_stops_at_its_bound ~~         self.shape.refresh_on_miss() && f.1.is_vanished() ~~         self.shape.refresh_on_miss() && f.1.is_vanished() && false
vanished-relisting-confirms ~~ src/store/freshness.rs ~~ loom:detectors::freshness_vanished_pack_back_is_loaded_again ~~         let unchanged = !vanished\n            && same_packs ~~         let unchanged = same_packs
vanished-relisting-confirms-std ~~ src/store/freshness.rs ~~ lib:store::relist_tests::a_pack_back_before_the_relisting_is_loaded_again ~~         let unchanged = !vanished\n            && same_packs ~~         let unchanged = same_packs
vanished-failure-carried ~~ src/store/listing/successor.rs ~~ lib:store::relist_tests::a_pack_back_before_the_relisting_is_loaded_again ~~             (_, Loaded::Failed { error, .. }) if error.is_vanished() => {}\n ~~ 
cached-name-unconfirmed ~~ src/store/listing/loose_sources.rs ~~ int:freshness::a_loose_object_moved_into_a_pack_is_found_in_the_pack_in_every_loose_mode ~~ LooseSource::Cached(c) => Ok(c.contains(id)? && c.db().contains(id)?), ~~ LooseSource::Cached(c) => c.contains(id),
loose-check-before-probe ~~ src/store/lookup/steady.rs ~~ lib:store::relist_tests::an_object_packed_and_pruned_between_the_check_and_the_loose_step_is_found ~~             MissShape::ProbeThenCheck => match ~~             _ if false => match ~~             MissShape::Watched | MissShape::WatchedNoRefresh => { ~~             MissShape::ProbeThenCheck | MissShape::Watched | MissShape::WatchedNoRefresh => {
slow-check-before-loose-step ~~ src/store/lookup/handle.rs ~~ lib:store::relist_tests::an_object_packed_and_pruned_between_the_check_and_the_loose_step_is_found ~~                 let drained = self.drain_for_loose(); ~~                 let drained = self.drain_for_loose();\n                let early = self.shape.refresh_on_miss() && self.packs_changed(); ~~                         return Ok(Some(loc));\n                    }\n                } ~~                         return Ok(Some(loc));\n                    }\n                    if !early && stage != Stage::Refresh && !self.snap.vanished {\n                        return self.not_found(bytes);\n                    }\n                }
covered-pack-unbounded ~~ src/store/listing/load.rs ~~ int:chain::a_covered_packs_length_is_read_when_a_location_needs_it ~~ AtomicU64::new(if unread.is_some() { 0 } else { b }) ~~ AtomicU64::new(if unread.is_some() { u64::MAX } else { b })
covered-fifo-not-stated ~~ src/store/listing/scan.rs ~~ lib:store::listing::scan::tests::packs_a_multi_pack_index_lists_are_not_stated ~~ by.filter(|_| entry.regular && regular_packs.contains(&pack_name)) ~~ by.filter(|_| regular_packs.contains(&pack_name))
iter-untrusted-bucket-as-the-file-says ~~ src/store/queries/iter.rs ~~ int:never_wrong::midx::a_zeroed_id_of_a_multi_pack_index_is_never_listed ~~ (MidxCheck::Bounds, true) => ~~ (MidxCheck::Bounds, _) =>
covered-id-by-path ~~ src/dir.rs ~~ lib:store::listing::tests::a_covered_pack_keeps_its_id_until_a_file_is_renamed_over_it ~~             ino,\n            dev: u64::MAX, ~~             ino: 0 * ino,\n            dev: u64::MAX,
covered-id-without-its-midx ~~ src/dir.rs ~~ int:covered::changed::a_covered_pack_recreated_under_its_name_with_its_inode_gets_a_new_id ~~             size: covered_by, ~~             size: 0 * covered_by,
keep-let-go-one-listing-early ~~ src/store/listing/successor.rs ~~ lib:store::edge_tests::a_pack_missing_from_the_listings_is_kept_for_max_kept_listings_then_let_go ~~ || missed > MAX_KEPT_LISTINGS ~~ || missed >= MAX_KEPT_LISTINGS
keep-never-let-go ~~ src/store/listing/successor.rs ~~ lib:store::edge_tests::a_pack_missing_from_the_listings_is_kept_for_max_kept_listings_then_let_go ~~ || missed > MAX_KEPT_LISTINGS ~~ || missed > u32::MAX
keep-after-alternate-dropped ~~ src/store/listing/successor.rs ~~ lib:store::edge_tests::a_loaded_pack_of_an_alternate_dropped_from_info_alternates_is_let_go ~~             || !listing.dir_ids.contains(&p.dir)\n ~~ 
locate-again-lists-once ~~ src/store/lookup/handle.rs ~~ lib:store::edge_tests::locate_again_lists_again_while_its_answer_is_a_missing_file ~~         for _ in 0..MAX_RELISTS { ~~         for _ in 0..1 {
locate-again-unchecked-file ~~ src/store/lookup/handle.rs ~~ lib:store::edge_tests::locate_again_lists_again_while_its_answer_is_a_missing_file ~~ Some(loc) if loc == gone && !self.exists(id, loc) => continue, ~~ Some(loc) if loc == gone && false => continue,
batch-changed-held-misses-final ~~ src/store/lookup/batch.rs ~~ lib:store::edge_tests::a_batch_searches_its_held_misses_again_when_a_pack_comes_before_its_check ~~ Check::Changed => return self.all_again(ids, base, misses, out), ~~ Check::Changed => return Ok(()),
batch-stat-changed-held-misses-final ~~ src/store/lookup/batch.rs ~~ lib:store::edge_tests::a_batch_searches_its_held_misses_again_when_a_pack_comes_before_its_check ~~         if changed {\n            return self.all_again ~~         if false && changed {\n            return self.all_again
relisted-loose-not-probed ~~ src/store/lookup/handle.rs ~~ lib:store::edge_tests::a_relisting_onto_loose_sources_not_yet_probed_probes_them ~~                             stage = Stage::Loose;\n                            continue; ~~                             break;
midx-bound-read-already ~~ src/store/listing/load.rs ~~ lib:store::edge_tests::an_entry_of_a_pack_another_thread_is_bounding_is_answered_from_the_multi_pack_index ~~         let len = *unread.len.get_or_init(|| pack_len(&unread.pack_path));\n        // Relaxed ~~         if unread.len.get().is_some() {\n            return false;\n        }\n        let len = *unread.len.get_or_init(|| pack_len(&unread.pack_path));\n        // Relaxed
batch-misses-kept-from-a-left-listing ~~ src/store/lookup/batch.rs ~~ lib:store::edge_tests::a_batch_answers_its_misses_in_the_listing_it_ended_on ~~             if sync::Arc::ptr_eq(&seen, self.view.map()) { ~~             if true || sync::Arc::ptr_eq(&seen, self.view.map()) {
LIST
)

CI_SUBSET="listing-scans-before-its-detector tally-per-miss relisted-baseline-late vanished-makes-incomplete cached-name-unconfirmed"

scratch_name=odb-fresh-mutants
target="${ODB_MUTANTS_TARGET:-$root/target}"
# shellcheck source=loom-tests/scratch.sh
. "$root/loom-tests/scratch.sh"
target_base=$target

wanted=" $* "
[ "$ci" = 1 ] && [ $# -eq 0 ] && wanted=" $CI_SUBSET "

run_table freshness
