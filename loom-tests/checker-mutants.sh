#!/usr/bin/env bash
# Mutants of the code loom's protocol models do not run, or run only in part (issue 30, What 4): the bucket-order
# record (src/fanout.rs), the std spin (src/sync/hint.rs), a dropped handle's report (src/store/lookup/handle.rs), the miss
# filter (src/store/listing/filter.rs) and the CI checks themselves (clippy's rules of .clippy.toml, the layout's file
# sizes and `#[path]`, the module check's import cycles, the public-API lists): each `sh:` row plants one violation. Each row is one literal edit (`anchor ~~
# replacement`, `\n` for a newline, as in mutants.sh) with the check that must catch it:
#   loom:NAME   a loom model (the test target `loom` built with `--cfg loom`, target/loom-weaken)
#   lib:NAME    a std unit test of the library (release, target/fresh-mutants-std)
#   prop:NAME   a property test (the test target `proptests`)
#   sh:COMMAND  a command run in the mutated copy that must fail (the CI checks of .ci/run: clippy with the
#               project's .clippy.toml and lints, `$CLIPPY` below; .ci/layout.sh; .ci/public-api.sh)
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
bucket-mark-counts-repeats ~~ src/fanout.rs ~~ loom:fanout::bucket_state_counts_a_bucket_marked_twice_once ~~ new += (m & !prev).count_ones(); ~~ new += m.count_ones();
bucket-all-in-order-one-short ~~ src/fanout.rs ~~ loom:fanout::bucket_state_counts_a_bucket_marked_twice_once ~~ .fetch_add(new, Ordering::Relaxed) + new == 256 ~~ .fetch_add(new, Ordering::Relaxed) + new == 255
bucket-all-in-order-never-set ~~ src/fanout.rs ~~ loom:fanout::bucket_state_all_in_order_once_every_bucket_is ~~             self.all_in_order.store(true, Ordering::Relaxed);\n ~~ 
spin-yields ~~ src/sync/hint.rs ~~ lib:protocol::tests::the_spin_before_parking_makes_no_sched_yield ~~ std::hint::spin_loop(); ~~ std::thread::yield_now();
spin-yields-clippy ~~ src/protocol.rs ~~ sh:$CLIPPY -p odb-index --lib -- -D warnings ~~             spin_loop();\n ~~             spin_loop();\n            std::thread::yield_now();\n
dropped-handle-stops-reporting ~~ src/store/lookup/handle.rs ~~ lib:store::relist_tests::a_dropped_handle_reports_its_uncounted_misses ~~ self.view.map().meta().fresh.report(&self.tally); ~~ let _ = &self.tally;
std-atomic-outside-the-facade ~~ src/fanout.rs ~~ sh:$CLIPPY -p odb-index --lib -- -D warnings ~~ use crate::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering}; ~~ use crate::sync::{AtomicBool, AtomicU32, Ordering};\nuse std::sync::atomic::AtomicU64;
plain-without-reason ~~ src/loose/mod.rs ~~ sh:$CLIPPY -p odb-index --lib -- -D warnings ~~ #[expect(\n    clippy::disallowed_types,\n    reason = "sync::plain: the loose cache, outside the models"\n)]\nstruct Bucket ~~ struct Bucket
unguarded-read ~~ cli/src/replace.rs ~~ sh:$CLIPPY -p odb-index-cli --bins -- -D warnings ~~ odb_index::data::read_bounded(path, REF_FILE_LIMIT) ~~ std::fs::read(path)
too-many-arguments-allowed ~~ src/repo/mod.rs ~~ sh:$CLIPPY -p odb-index --lib -- -D warnings ~~ pub fn discover(path: &Path) ~~ #[allow(clippy::too_many_arguments)]\npub fn discover(path: &Path)
public-api-unlisted ~~ src/repo/mod.rs ~~ sh:CARGO_TARGET_DIR=$CHECK_TARGET bash .ci/public-api.sh ~~ pub fn discover(path: &Path) ~~ pub fn unlisted() {}\n\n/// Planted.\npub fn discover(path: &Path)
filter-restrict-keeps-uncovered ~~ src/store/listing/filter.rs ~~ prop:filter::three_generations_of_small_packs_keep_the_filter_honest ~~ if self.covers(id) { ~~ if true || self.covers(id) {
filter-rebuild-threshold-4x ~~ src/store/listing/filter.rs ~~ lib:store::listing::filter::tests::needs_rebuild_at_its_thresholds ~~ stale > f.live_ids / 4 ~~ stale > f.live_ids * 4
import-cycle ~~ loom-tests/p1.rs ~~ sh:bash .ci/module-deps.sh ~~ use super::*;\n ~~ use super::*;\nuse super::p3::*;\n
store-folder-cycle ~~ src/store/listing/filter.rs ~~ sh:bash .ci/module-deps.sh ~~ use crate::ids::PackId;\n ~~ use crate::ids::PackId;\nuse crate::store::lookup::snapshot::Snapshot;\n
filter-rebuild-ignores-outside-packs ~~ src/store/listing/filter.rs ~~ lib:store::listing::filter::tests::needs_rebuild_at_its_thresholds ~~ outside_packs > 4 || outside_ids ~~ outside_ids
LIST
)
# Two rows whose replacements are long: a function of 81 statements, a file of 601 lines.
MUTANTS+=$'\n'"function-over-80-lines ~~ src/repo/mod.rs ~~ sh:\$CLIPPY -p odb-index --lib -- -D warnings ~~ pub fn discover(path: &Path) -> Result<Repository, Error> {\n ~~ pub fn discover(path: &Path) -> Result<Repository, Error> {\n$(printf '    let _ = %d;\\n' $(seq 81))"
MUTANTS+=$'\n'"path-attribute ~~ src/store/watch.rs ~~ sh:bash .ci/layout.sh ~~ mod inotify; ~~ #[path = \"watch/inotify.rs\"]\nmod inotify;"

scratch_name=odb-checker-mutants
target="${ODB_MUTANTS_TARGET:-$root/target}"
# shellcheck source=loom-tests/scratch.sh
. "$root/loom-tests/scratch.sh"
target_base=$target
# The CI checks' builds share the crate's target directory (.ci/run's clippy and public-API builds made the
# dependencies already; the scratch copy's own packages build apart, being at another path).
export CHECK_TARGET="$target"
export CLIPPY="cargo clippy -q --target-dir $CHECK_TARGET"

wanted=" $* "

run_table checker
