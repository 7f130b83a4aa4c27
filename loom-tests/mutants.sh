#!/usr/bin/env bash
# Mutation score of the loom suite (issues 11 and 23). Each mutant below is one small semantic edit of the protocol
# (src/protocol.rs), of the store's loader and lookup paths (src/store/, run for real by the store_* models), of
# the loose objects (src/loose/mod.rs, src/store/listing/loose_sources.rs) or of the counting facade (src/sync/), given as literal `anchor ~~ replacement` pairs (`\n` stands for a newline). The script applies one mutant at a time to a
# scratch copy of the crate, builds the loom suite into a shared target directory (only the crate recompiles), and
# runs every model in its own process with `--exact` (a deadlock that loom finds aborts the binary; that counts as
# caught without hiding the other models), quick models first. A mutant that no model catches must be listed in
# ARGUED with the section of docs/PROTOCOL.md that argues why it is harmless; otherwise the script fails. An anchor
# that does not occur exactly once fails the script, so a mutant can never silently be a no-op.
#
# Usage: loom-tests/mutants.sh [--ci | --check | --shuttle] [NAME...]
#   --ci       run the CI subset (CI_SUBSET below) and stop at the first model that catches each mutant
#   --check    only check that every mutant applies (no build)
#   --shuttle  run the shuttle models (loom-tests/shuttle.rs, ODB_SHUTTLE_ITERATIONS schedules each, default
#              2000 here) instead of loom's, for comparison: shuttle treats every atomic as SeqCst and counts no
#              operations, so ordering and miss-path mutants are expected to pass it; nothing fails the script
#   NAME       run only the named mutants (all models, unless --ci)
set -euo pipefail
ci=0
check=0
shuttle=0
if [ "${1:-}" = "--ci" ]; then
  ci=1
  shift
elif [ "${1:-}" = "--check" ]; then
  check=1
  shift
elif [ "${1:-}" = "--shuttle" ]; then
  shuttle=1
  shift
fi
checker=loom
[ "$shuttle" = 1 ] && checker=shuttle
export ODB_SHUTTLE_ITERATIONS="${ODB_SHUTTLE_ITERATIONS:-2000}"

root=$(cd "$(dirname "$0")/.." && pwd)

# name ~~ file ~~ anchor ~~ replacement [~~ anchor ~~ replacement]...
MUTANTS=$(cat <<'LIST'
split-claim-announce ~~ src/protocol.rs ~~ if self.pre_087_claim_order { ~~ if true || self.pre_087_claim_order {
claim-ignores-closed ~~ src/protocol.rs ~~             || seen.is_closed()\n ~~ 
claim-ignores-retired ~~ src/protocol.rs ~~             || seen.is_retired()\n ~~ 
claim-past-the-end ~~ src/protocol.rs ~~ if seen.cursor() >= self.len() ~~ if seen.cursor() > self.len()
claim-clears-waiters ~~ src/protocol.rs ~~ let next = seen.0 + 1 + IN_FLIGHT_ONE; ~~ let next = (seen.0 + 1 + IN_FLIGHT_ONE) & !WAITERS;
complete-before-publish ~~ src/protocol.rs ~~ slot.state.store(READY, Ordering::Release); // ORDERING: publish-release\n        map.complete(); ~~ map.complete();\n        slot.state.store(READY, Ordering::Release);
publish-never-completes ~~ src/protocol.rs ~~ // ORDERING: publish-release\n        map.complete(); ~~ // ORDERING: publish-release
publish-relaxed ~~ src/protocol.rs ~~ slot.state.store(READY, Ordering::Release); ~~ slot.state.store(READY, Ordering::Relaxed);
abandon-never-completes ~~ src/protocol.rs ~~ .store(ABANDONED, Ordering::Relaxed);\n        self.map.complete(); ~~ .store(ABANDONED, Ordering::Relaxed);
abandon-not-waking ~~ src/protocol.rs ~~ .store(ABANDONED, Ordering::Relaxed);\n        self.map.complete(); ~~ .store(ABANDONED, Ordering::Relaxed);\n        self.map.word.fetch_sub(IN_FLIGHT_ONE, Ordering::Release);
abandoned-reads-pending ~~ src/protocol.rs ~~ ABANDONED => SlotRef::Abandoned, ~~ ABANDONED => SlotRef::Pending,
modify-keeps-waiters ~~ src/protocol.rs ~~ let new = f(cur) & !WAITERS; ~~ let new = f(cur);
no-notify ~~ src/protocol.rs ~~ let _g = lock(&self.lock);\n                        self.cv.notify_all(); ~~ let _g = lock(&self.lock);
notify-one ~~ src/protocol.rs ~~ self.cv.notify_all(); ~~ self.cv.notify_one();
notify-without-mutex ~~ src/protocol.rs ~~ let _g = lock(&self.lock);\n                        self.cv.notify_all(); ~~ self.cv.notify_all();
never-set-waiters ~~ src/protocol.rs ~~ self.word.fetch_or(WAITERS, Ordering::Relaxed) ~~ self.word.fetch_or(0, Ordering::Relaxed)
park-without-recheck ~~ src/protocol.rs ~~             if !w.same_state(seen) {\n                return;\n            }\n ~~  ~~ g = wait(&self.cv, g); ~~ drop(wait(&self.cv, g));\n            return;
waiter-compares-in-flight-only ~~ src/protocol.rs ~~ if !w.same_state(seen) { ~~ if w.in_flight() != seen.in_flight() {
same-state-ignores-in-flight ~~ src/protocol.rs ~~ (self.0 ^ other.0) & !WAITERS == 0 ~~ (self.0 ^ other.0) & !(WAITERS | IN_FLIGHT_MASK) == 0
wait-slot-returns-pending ~~ src/protocol.rs ~~ SlotRef::Pending => {}\n                r => return r, ~~ r => return r,
wait-slot-no-recheck ~~ src/protocol.rs ~~ if matches!(self.get(i), SlotRef::Pending) { ~~ if true {
wait-idle-off-by-one ~~ src/protocol.rs ~~ if w.in_flight() == 0 {\n                return w; ~~ if w.in_flight() <= 1 {\n                return w;
walk-to-previous-cursor ~~ src/protocol.rs ~~ while self.next < w.cursor() { ~~ while self.next < self.seen.cursor() {
walk-off-by-one ~~ src/protocol.rs ~~ while self.next < w.cursor() { ~~ while self.next + 1 < w.cursor() {
hole-swap-skip ~~ src/protocol.rs ~~ self.holes.swap_remove(i);\n ~~ self.holes.swap_remove(i);\n                    i += 1;\n
holes-not-revisited ~~ src/protocol.rs ~~ while i < self.holes.len() { ~~ while i < 0 * self.holes.len() {
miss-path-rmw ~~ src/protocol.rs ~~ let map: &SlotMap<T, M> = &self.map;\n        let w = map.word(); ~~ let map: &SlotMap<T, M> = &self.map;\n        let w = Word(map.word.fetch_add(0, Ordering::Acquire));
settled-ignores-holes ~~ src/protocol.rs ~~             && self.holes.is_empty()\n    } ~~     }
settle-ignores-retired ~~ src/protocol.rs ~~ if w.is_retired() {\n                return Settled::Retired; ~~ if false && w.is_retired() {\n                return Settled::Retired;
own-load-stays-a-hole ~~ src/protocol.rs ~~ self.holes.retain(|&h| h != index); ~~ let _ = &self.holes;
conclude-while-in-flight ~~ src/protocol.rs ~~ if w.in_flight() > 0 || w.cursor() < map.len() { ~~ if w.cursor() < map.len() {
closed-with-unclaimed-concludes ~~ src/protocol.rs ~~ if w.in_flight() > 0 || w.cursor() < map.len() { ~~ if w.in_flight() > 0 {
no-close ~~ src/protocol.rs ~~         old.close();\n ~~ 
no-wait-idle ~~ src/protocol.rs ~~         old.wait_idle();\n ~~ 
no-reopen ~~ src/protocol.rs ~~                 old.reopen();\n ~~ 
reopen-keeps-closed ~~ src/protocol.rs ~~ self.modify(Ordering::Relaxed, |w| w & !CLOSED); ~~ self.modify(Ordering::Relaxed, |w| w);
retire-before-successor ~~ src/protocol.rs ~~         *lock(&self.map) = Arc::clone(&new);\n ~~         old.retire();\n        *lock(&self.map) = Arc::clone(&new);\n ~~         old.retire();\n        trace(|| "retired ~~         trace(|| "retired
no-retire ~~ src/protocol.rs ~~         old.retire();\n ~~ 
retire-not-closing ~~ src/protocol.rs ~~ |w| w | RETIRED | CLOSED); ~~ |w| w | RETIRED);
hole-hit-saves-word ~~ src/protocol.rs ~~ // `seen` stays stale, so the next call looks again at whatever is left.\n ~~ self.seen = w;\n
walk-hit-saves-word ~~ src/protocol.rs ~~                     if let Some(x) = visit(map, slot, r) {\n                        return (w, Some(x)); ~~                     if let Some(x) = visit(map, slot, r) {\n                        self.seen = w;\n                        return (w, Some(x));
remove-first-hole ~~ src/protocol.rs ~~ self.holes.swap_remove(i); ~~ self.holes.swap_remove(0);
spin-never-parks ~~ src/protocol.rs ~~ if !self.word().same_state(seen) { ~~ if self.word().same_state(seen) {
settled-clones-arc ~~ src/protocol.rs ~~ let w = self.map.word();\n        w.same_state(self.seen) ~~ let w = Arc::clone(&self.map).word();\n        w.same_state(self.seen)
covered-pack-peeks ~~ src/store/listing/load.rs ~~ if let SlotRef::Ready(Loaded::Midx(_)) = map.wait_slot(*m) { ~~ if let SlotRef::Ready(Loaded::Midx(_)) = map.get(*m) {
locate-clones-arc-on-miss ~~ src/store/lookup/handle.rs ~~             // 2. Loose objects (git's order ~~             let _map = sync::Arc::clone(self.view.map());\n            // 2. Loose objects (git's order
arc-clone-uncounted ~~ src/sync/arc.rs ~~             count(|c| c.rmws += 1);\n            match self { ~~             match self {
arc-drop-uncounted ~~ src/sync/arc.rs ~~         fn drop(&mut self) {\n            count(|c| c.rmws += 1);\n        } ~~         fn drop(&mut self) {}
acquire-counted-as-other ~~ src/sync/atomic.rs ~~ Ordering::Acquire => c.acquire_loads += 1, ~~ Ordering::Acquire => c.other_loads += 1,
failed-cas-uncounted ~~ src/sync/atomic.rs ~~ Err(_) => c.cas_failures += 1, ~~ Err(_) => {}
pack-load-not-counted ~~ src/store/listing/load.rs ~~             loads.fetch_add(1, plain_atomic::Ordering::Relaxed);\n            match load_pack( ~~             match load_pack(
covered-pack-loads-anyway ~~ src/store/listing/load.rs ~~                     return Loaded::Covered;\n ~~ 
steady-hit-ignores-retired ~~ src/store/lookup/steady.rs ~~             if self.view.map().word().is_retired() {\n                return Err(Stage::Packs);\n            }\n            return Ok(Some(loc)); ~~             return Ok(Some(loc));
steady-miss-unsettled ~~ src/store/lookup/steady.rs ~~ self.snap.bad_entry.is_some() || !self.view.is_settled()\n ~~ self.snap.bad_entry.is_some()\n
filter-built-on-hit ~~ src/store/lookup/handle.rs ~~             Settled::Found(loc) => Some(Ok(loc)), ~~             Settled::Found(loc) => {\n                self.filter_tick();\n                Some(Ok(loc))\n            }
lock-uncounted ~~ src/sync/mutex.rs ~~         count(|c| c.locks += 1);\n ~~ 
store-uncounted ~~ src/sync/atomic.rs ~~                 count(|c| c.stores += 1);\n ~~ 
other-load-uncounted ~~ src/sync/atomic.rs ~~             _ => c.other_loads += 1, ~~             _ => {}
fetch-or-uncounted ~~ src/sync/atomic.rs ~~                 };\n                count(|c| c.rmws += 1);\n                r\n            }\n        )*}; ~~                 };\n                if stringify!($op) != "fetch_or" {\n                    count(|c| c.rmws += 1);\n                }\n                r\n            }\n        )*};
std-side-unchecked ~~ src/sync/model.rs ~~         !in_model(),\n ~~         true || !in_model(),\n
free-values-on-retire ~~ src/protocol.rs ~~ |w| w | RETIRED | CLOSED); // ORDERING: retire-release ~~ |w| w | RETIRED | CLOSED); // ORDERING: retire-release\n        for s in self.slots.iter() {\n            s.value.with_mut(|p| unsafe { *p = None });\n        }
fanout-name-upper-case ~~ src/loose/mod.rs ~~ const DIGITS: &[u8; 16] = b"0123456789abcdef"; ~~ const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
fanout-name-shifted ~~ src/loose/mod.rs ~~ hex[2..2 + name_len].copy_from_slice(name); ~~ hex[..name_len].copy_from_slice(name);
fanout-listing-accepts-upper-case ~~ src/loose/mod.rs ~~ matches!(b, b'0'..=b'9' | b'a'..=b'f') ~~ matches!(b, b'0'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
cache-refresh-keeps-listings ~~ src/loose/mod.rs ~~ b.listing.take(); ~~ let _ = b.listing.get();
watched-listing-version-ignored ~~ src/store/listing/loose_sources.rs ~~ && watch.fanout_version(dir, b) == Some(*v) ~~ && (watch.fanout_version(dir, b) == Some(*v) || true)
covered-by-not-remapped ~~ src/store/listing/successor.rs ~~ covered_by: covered_by.map(|c| new_index[c]), ~~ covered_by,
drain-release-relaxed ~~ src/store/watch/inotify.rs ~~ s.state.fetch_sub(DRAINING, Ordering::Release); ~~ s.state.fetch_sub(DRAINING, Ordering::Relaxed);
check-relaxed ~~ src/store/watch/inotify.rs ~~ let w = self.shared.state.load(Ordering::Acquire); ~~ let w = self.shared.state.load(Ordering::Relaxed);
draining-never-set ~~ src/store/watch/inotify.rs ~~ s.state.fetch_add(DRAINING, Ordering::Relaxed); ~~ s.state.fetch_add(0, Ordering::Relaxed); ~~ s.state.fetch_sub(DRAINING, Ordering::Release); ~~ s.state.fetch_sub(0, Ordering::Release);
check-ignores-draining ~~ src/store/watch/inotify.rs ~~ if w == token { ~~ if w & !DRAINING == token {
check-ignores-pack-count ~~ src/store/watch/inotify.rs ~~ if w == token { ~~ if w & (DRAINING | FALLBACK) == 0 {
fanout-version-not-bumped ~~ src/store/watch/inotify.rs ~~ s.bump(dir, b); ~~ let _ = (dir, b);
LIST
)

# Mutants no model catches, with where docs/PROTOCOL.md argues that they are harmless.
declare -A ARGUED=(
  [claim-ignores-closed]="docs/PROTOCOL.md, 'Mutation score': settle offers try_claim only a word without CLOSED, and the CAS is against that word"
  [claim-past-the-end]="docs/PROTOCOL.md, 'Mutation score': settle offers try_claim only a word whose cursor is below len"
  [claim-ignores-retired]="docs/PROTOCOL.md, 'Mutation score': RETIRED is only ever set together with CLOSED"
  [modify-keeps-waiters]="docs/PROTOCOL.md, 'Mutation score': a stale WAITERS bit costs spurious notifications, never a lost one"
  [settled-ignores-holes]="docs/PROTOCOL.md, 'Mutation score': a hole is a slot counted in flight in the word the view saw, so the other conditions already exclude it"
  [own-load-stays-a-hole]="docs/PROTOCOL.md, 'Mutation score': the slot is READY, so visiting it again gives the same answer; only is_settled is lost until then"
  [retire-not-closing]="docs/PROTOCOL.md, 'Mutation score': replace retires only a map it closed, and nothing reopens it after a successful build"
)

# The CI subset: one mutant per mechanism (claim, wake-up, abandon, view walk, quiet miss path, refresh; a reused
# handle, the real store's loader, change detection), each caught
# by a quick model, so that `--ci` fits in about five minutes on two loaded cores (docs/PROTOCOL.md, section 10).
CI_SUBSET="split-claim-announce claim-clears-waiters abandon-not-waking hole-swap-skip miss-path-rmw settle-ignores-retired hole-hit-saves-word covered-pack-peeks drain-release-relaxed"

scratch_name=odb-mutants
target="${ODB_MUTANTS_TARGET:-$root/target/$checker-weaken}"
# shellcheck source=loom-tests/scratch.sh
. "$root/loom-tests/scratch.sh"

wanted=" $* "
[ "$ci" = 1 ] && [ $# -eq 0 ] && wanted=" $CI_SUBSET "

uncaught=0
ran=0
printf '%-34s %s\n' "mutant" "caught by"
while IFS= read -r line; do
  [ -n "$line" ] || continue
  split_fields "$line"
  name=${fields[0]}
  file=${fields[1]}
  if [ "$wanted" != "  " ] && [[ $wanted != *" $name "* ]]; then continue; fi
  ran=$((ran + 1))
  apply_row "$name" "$file" "${fields[@]:2}"
  if [ "$check" = 1 ]; then
    cp "$scratch/$file" "$scratch/$name.rs"
    cp "$root/$file" "$scratch/$file"
    printf "%-34s %s\n" "$name" "applies"
    continue
  fi
  build_suite "$checker" "$name"
  run_models "$name" "$ci"
  cp "$root/$file" "$scratch/$file"
  if [ -n "$caught" ]; then
    printf '%-34s %s\n' "$name" "$caught"
  elif [ "$shuttle" = 1 ]; then
    printf '%-34s %s\n' "$name" "none under shuttle"
  elif [ -n "${ARGUED[$name]:-}" ]; then
    printf '%-34s %s\n' "$name" "none (argued: ${ARGUED[$name]})"
  else
    printf '%-34s %s\n' "$name" "NONE: add a model or argue it in docs/PROTOCOL.md"
    uncaught=$((uncaught + 1))
  fi
done <<<"$MUTANTS"
if [ "$check" = 1 ]; then
  echo "every mutant applies"
  exit 0
fi
if [ "$ran" -eq 0 ]; then
  echo "no mutant matched: $*" >&2
  exit 1
fi
if [ "$uncaught" -gt 0 ]; then
  echo "$uncaught mutant(s) neither caught nor argued" >&2
  exit 1
fi
if [ "$shuttle" = 1 ]; then
  echo "shuttle comparison done ($ODB_SHUTTLE_ITERATIONS schedules per model; the score is loom's)"
  exit 0
fi
echo "every mutant is caught by a loom model or argued in docs/PROTOCOL.md"
