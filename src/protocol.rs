// Over 600 lines: the one hand-made lock-free protocol, every ordering beside those it pairs with; 147 are tests.
//! The lazy-loading protocol, generic over what a slot holds.
//!
//! This module knows nothing of files: a [`SlotMap`] is a fixed list of slots, each loaded at most once by
//! whichever thread claims it, and a [`View`] is one handle's cached picture of a map. The store instantiates it
//! with index files; `loom-tests/` instantiates it with fake indices and checks every interleaving. The proof
//! that it is correct is `docs/PROTOCOL.md`; the invariants are named P1-P6 there and in the comments below.
//!
//! # The state word
//!
//! Each map owns one `AtomicU64`:
//!
//! | bits   | field      | meaning                                                        |
//! |--------|------------|----------------------------------------------------------------|
//! | 0-31   | cursor     | slots `[0, cursor)` have been claimed (loaded, or loading)     |
//! | 32-55  | in-flight  | claims whose load has not completed yet                        |
//! | 60     | `WAITERS`  | some thread may be parked on the condition variable            |
//! | 61     | `CLOSED`   | no further claims (a refresh is replacing this map)            |
//! | 62     | `RETIRED`  | a successor map has been published                             |
//!
//! Claiming a slot and announcing its load are **one** compare-exchange (`cursor += 1, in_flight += 1`), so no
//! thread can ever observe "cursor advanced" without "load in flight" (the pre-0.87 gix-odb race). Completing a
//! load is a Release read-modify-write that decrements in-flight, after the slot's value was written. The word is
//! changed only by read-modify-writes, so every later value is in the release sequence of every completion.
//!
//! `WAITERS` is set by a thread about to park ([`SlotMap::wait_for_change`]). A claim keeps it (the claim's
//! compare-exchange adds to the value it read) and wakes nobody: a claim is never what a parked thread waits
//! for. Every other change (completion, [`close`](SlotMap::close), reopening after a failed replacement,
//! [`retire`](SlotMap::retire)) clears it in the same compare-exchange and, if it was set, notifies all waiters
//! under the map's mutex. A claim that cleared it would lose the wake-up of a thread still parked when the next
//! completion comes (a thread in [`SlotMap::wait_slot`] parks while other slots are being claimed).
//!
//! In-flight counts claims not completed yet, so in-flight <= claimed slots <= `len` <= [`MAX_SLOTS`] =
//! 2^24 - 1: the 24-bit field cannot overflow into the flags ([`SlotMap::new`] asserts the bound).

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::sync::cell::UnsafeCell;
use crate::sync::{
    Arc, AtomicU8, AtomicU64, Condvar, Mutex, Ordering, lock, spin_limit, spin_loop, trace, wait,
};

const CURSOR_MASK: u64 = (1 << 32) - 1;
const IN_FLIGHT_SHIFT: u32 = 32;
const IN_FLIGHT_ONE: u64 = 1 << IN_FLIGHT_SHIFT;
const IN_FLIGHT_MASK: u64 = ((1 << 24) - 1) << IN_FLIGHT_SHIFT;
const WAITERS: u64 = 1 << 60;
const CLOSED: u64 = 1 << 61;
const RETIRED: u64 = 1 << 62;
/// Never set in a real word: a [`View`] that has not looked at its map yet holds this, so it differs from any
/// real value.
const UNSEEN: u64 = 1 << 63;

/// The most slots one map can hold: the in-flight field's width (in-flight <= claimed slots <= `len`), so the
/// in-flight count can never carry into the flag bits. The cursor field (32 bits) is wider.
pub const MAX_SLOTS: usize = (1 << 24) - 1;
const _: () = assert!(MAX_SLOTS as u64 == IN_FLIGHT_MASK >> IN_FLIGHT_SHIFT);
const _: () = assert!(MAX_SLOTS as u64 <= CURSOR_MASK);

/// A value of a map's state word.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Word(u64);

impl Word {
    /// Slots `[0, cursor)` have been claimed.
    #[inline]
    pub fn cursor(self) -> usize {
        (self.0 & CURSOR_MASK) as usize
    }
    /// Loads claimed but not completed.
    #[inline]
    pub fn in_flight(self) -> usize {
        ((self.0 & IN_FLIGHT_MASK) >> IN_FLIGHT_SHIFT) as usize
    }
    /// No further claims will succeed.
    #[inline]
    pub fn is_closed(self) -> bool {
        self.0 & CLOSED != 0
    }
    /// A successor map has been published.
    #[inline]
    pub fn is_retired(self) -> bool {
        self.0 & RETIRED != 0
    }
    /// The same protocol state, ignoring the waiters flag (which says nothing about slots).
    ///
    /// This comparison is ABA-free for what a view cares about: the cursor only rises, and while it stands still
    /// in-flight only falls, so two values with equal cursor and in-flight mean no claim and no completion
    /// happened in between. (`RETIRED` is only ever set; `CLOSED` is cleared only when a replacement's `build`
    /// panicked, and a close/reopen pair changes no slot.)
    #[inline]
    pub fn same_state(self, other: Word) -> bool {
        (self.0 ^ other.0) & !WAITERS == 0
    }
}

impl std::fmt::Debug for Word {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Word{{cursor: {}, in_flight: {}",
            self.cursor(),
            self.in_flight()
        )?;
        for (bit, name) in [
            (WAITERS, "waiters"),
            (CLOSED, "closed"),
            (RETIRED, "retired"),
            (UNSEEN, "unseen"),
        ] {
            if self.0 & bit != 0 {
                write!(f, ", {name}")?;
            }
        }
        f.write_str("}")
    }
}

const EMPTY: u8 = 0;
const READY: u8 = 1;
const ABANDONED: u8 = 2;

struct Slot<T> {
    /// `EMPTY` until the claimer finishes, then `READY` (value written) or `ABANDONED` (the loader panicked).
    /// Written once, by the one thread that claimed the slot.
    state: AtomicU8,
    value: UnsafeCell<Option<T>>,
}

/// What a reader finds in a claimed slot.
pub enum SlotRef<'a, T> {
    /// The load completed; this is its value.
    Ready(&'a T),
    /// The loader panicked before publishing a value (P2: recorded, never retried in a loop, nobody waits on it).
    Abandoned,
    /// Claimed, load still in flight (or not claimed yet).
    Pending,
}

/// A fixed list of slots loaded lazily, at most once each, by whichever thread claims them; plus metadata `M`
/// that describes what each slot is (for the store: which file).
pub struct SlotMap<T, M = ()> {
    word: crossbeam_utils::CachePadded<AtomicU64>,
    slots: Box<[Slot<T>]>,
    lock: Mutex<()>,
    cv: Condvar,
    meta: M,
    /// Model-checked builds only: claim in the pre-0.87 gix-odb order (advance the cursor, then announce the load in a
    /// second step). Exists so that the negative witness runs this very code with that one change.
    #[cfg(all(any(loom, shuttle), feature = "model-checking"))]
    pre_087_claim_order: bool,
}

// SAFETY: the only non-`Sync` part is the slots' `UnsafeCell`. Each cell is written exactly once, by the single
// thread whose compare-exchange claimed the slot (the cursor hands out each index once), before that thread's
// Release store of `READY`; it is read only after an Acquire load of the slot state returned `READY`. Values of
// `T` are shared between threads by `&T` (needs `T: Sync`) and dropped by whichever thread drops the map
// (needs `T: Send`).
unsafe impl<T: Send + Sync, M: Sync> Sync for SlotMap<T, M> {}
// SAFETY: as above; moving the map moves the values it owns.
unsafe impl<T: Send, M: Send> Send for SlotMap<T, M> {}

/// The right to load one slot, handed out by [`SlotMap::try_claim`]. Publishing consumes it; dropping it
/// unpublished (a panicking loader) marks the slot abandoned and still completes the load, so nobody waits
/// forever (P2, P3).
pub struct Ticket<'a, T, M> {
    map: &'a SlotMap<T, M>,
    index: usize,
}

impl<T, M> SlotMap<T, M> {
    /// A map whose first `ready.len()` slots are already loaded with `ready` (values carried over from the map
    /// it replaces) and whose next `unloaded` slots are empty. The cursor starts after the loaded ones.
    ///
    /// # Panics
    /// If the total exceeds `MAX_SLOTS` (2^24 - 1: the in-flight field's width).
    pub fn new(ready: Vec<T>, unloaded: usize, meta: M) -> Self {
        let n_ready = ready.len();
        let total = n_ready.checked_add(unloaded).expect("slot count overflows");
        assert!(total <= MAX_SLOTS, "too many slots for one map");
        let slots: Box<[Slot<T>]> = ready
            .into_iter()
            .map(|v| Slot {
                state: AtomicU8::new(READY),
                value: UnsafeCell::new(Some(v)),
            })
            .chain((0..unloaded).map(|_| Slot {
                state: AtomicU8::new(EMPTY),
                value: UnsafeCell::new(None),
            }))
            .collect();
        SlotMap {
            word: crossbeam_utils::CachePadded::new(AtomicU64::new(n_ready as u64)),
            slots,
            lock: Mutex::new(()),
            cv: Condvar::new(),
            meta,
            #[cfg(all(any(loom, shuttle), feature = "model-checking"))]
            pre_087_claim_order: false,
        }
    }

    /// Model-checked builds only: the same map, claiming in the pre-0.87 gix-odb order (cursor first, in-flight
    /// count second) for the negative witnesses.
    #[cfg(all(any(loom, shuttle), feature = "model-checking"))]
    pub fn with_pre_087_claim_order(mut self) -> Self {
        self.pre_087_claim_order = true;
        self
    }

    /// Number of slots.
    #[inline]
    #[allow(
        clippy::len_without_is_empty,
        reason = "public only to the models (testing::model); a map's length is fixed when it is built"
    )]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// What the map's slots describe.
    #[inline]
    pub fn meta(&self) -> &M {
        &self.meta
    }

    /// Read the state word.
    #[inline]
    pub fn word(&self) -> Word {
        // Acquire: pairs with the Release of every completion (`complete`) and of `retire`. Because the word is
        // only ever changed by read-modify-writes, the value read is in the release sequence of every earlier
        // completion, so every slot published before it is visible to this thread (P1).
        let w = Word(self.word.load(Ordering::Acquire)); // ORDERING: word-load-acquire
        trace(|| format!("load {w:?}"));
        w
    }

    /// Look at slot `i` (which must be `< len()`).
    #[inline]
    pub fn get(&self, i: usize) -> SlotRef<'_, T> {
        let slot = &self.slots[i];
        // Acquire: pairs with the Release store in `Ticket::publish`, so a reader that sees READY also sees the
        // value written before it (needed while other loads are still in flight, when `load()` alone does not
        // order the slot).
        let state = slot.state.load(Ordering::Acquire); // ORDERING: slot-state-acquire
        match state {
            READY => slot.value.with(|p| {
                // SAFETY: READY was stored (Release) after the value was written and the value is never written
                // again; our Acquire load synchronizes with that store. The reference lives as long as `&self`,
                // during which the value is neither moved nor dropped.
                match unsafe { &*p } {
                    Some(v) => SlotRef::Ready(v),
                    None => SlotRef::Pending,
                }
            }),
            ABANDONED => SlotRef::Abandoned,
            _ => SlotRef::Pending,
        }
    }

    /// Try to claim the slot at `seen.cursor()`, announcing its load in the same compare-exchange.
    ///
    /// Fails (returns `None`) if the word is no longer `seen` (someone else claimed, completed, closed or
    /// retired), if the map is closed, or if every slot is claimed; the caller then reloads the word.
    pub fn try_claim(&self, seen: Word) -> Option<Ticket<'_, T, M>> {
        if seen.cursor() >= self.len()
            || seen.is_closed()
            || seen.is_retired()
            || seen.0 & UNSEEN != 0
        {
            return None;
        }
        #[cfg(all(any(loom, shuttle), feature = "model-checking"))]
        if self.pre_087_claim_order {
            // The old order: take the slot, then announce the load. Between the two, another thread can read
            // "cursor exhausted, nothing in flight" while this slot is not published: the false miss.
            if self
                .word
                .compare_exchange(seen.0, seen.0 + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {
                return None;
            }
            trace(|| format!("claimed slot {} (cursor only)", seen.cursor()));
            self.word.fetch_add(IN_FLIGHT_ONE, Ordering::Relaxed);
            trace(|| "announced the load (in-flight + 1)".to_owned());
            return Some(Ticket {
                map: self,
                index: seen.cursor(),
            });
        }
        let next = seen.0 + 1 + IN_FLIGHT_ONE;
        // Relaxed on success: the claim publishes no data, and P1 rests on the completion's Release, not on the
        // claim. What the claim must guarantee is only atomicity: cursor and in-flight change in one step, so
        // "cursor exhausted, in-flight 0" can only be read after every claimed load has completed.
        // Relaxed on failure: the caller discards the value and reloads the word with Acquire.
        match self
            .word
            .compare_exchange(seen.0, next, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => {
                trace(|| format!("claimed slot {} and announced its load", seen.cursor()));
                Some(Ticket {
                    map: self,
                    index: seen.cursor(),
                })
            }
            Err(_) => None,
        }
    }

    /// Apply `f` to the word with a compare-exchange loop (`success` ordering on the final exchange), clearing the
    /// waiters flag, and wake the waiters if it was set. Returns the previous word. Every change of the word
    /// except a claim (`try_claim`) and a waiter's `fetch_or` goes through here: completions, `close`, `reopen`,
    /// `retire`.
    fn modify(&self, success: Ordering, f: impl Fn(u64) -> u64) -> Word {
        let mut cur = self.word.load(Ordering::Relaxed);
        loop {
            let new = f(cur) & !WAITERS;
            // Failure is Relaxed: the value is only used to compute the next attempt.
            match self
                .word
                .compare_exchange(cur, new, success, Ordering::Relaxed)
            {
                Ok(prev) => {
                    if prev & WAITERS != 0 {
                        // A waiter set WAITERS while holding `lock` and holds it until it is inside `cv.wait`;
                        // taking the lock here therefore waits until it is parked, and the notify cannot be lost.
                        let _g = lock(&self.lock);
                        self.cv.notify_all();
                    }
                    return Word(prev);
                }
                Err(actual) => cur = actual,
            }
        }
    }

    /// Record that one claimed load finished (published or abandoned).
    fn complete(&self) {
        // Release: the slot's value and state were written before this; a reader whose Acquire load reads this
        // value, or any later one (all later changes are read-modify-writes), sees them (P1).
        let prev = self.modify(Ordering::Release, |w| w - IN_FLIGHT_ONE); // ORDERING: complete-release
        trace(|| format!("completed a load (word was {prev:?})"));
    }

    /// Block until the word's state differs from `seen` (ignoring the waiters flag). A short bounded spin of
    /// `spin_loop` hints (none under loom), then park on the condition variable; never a yield-and-retry loop (P3).
    ///
    /// A change already made when this checks returns at once, whatever it was. Once parked, the thread is woken by
    /// the next completion, `close`, reopen or `retire`, **not** by a claim (claims notify nobody), so wait only
    /// for one of those: a load in flight to complete, or a closed map to be retired or reopened. The caller
    /// reloads the word afterwards with [`word`](Self::word).
    pub fn wait_for_change(&self, seen: Word) {
        for _ in 0..spin_limit() {
            if !self.word().same_state(seen) {
                return;
            }
            spin_loop();
        }
        let mut g = lock(&self.lock);
        loop {
            // A read-modify-write reads the latest value in the word's modification order. So either a
            // completion came before this in that order (we see the change and return), or it comes after and
            // its compare-exchange sees WAITERS and notifies under `lock`, which we hold until `cv.wait`
            // releases it (no lost wake-up, P3). Relaxed: the caller reloads the word with Acquire.
            let w = Word(self.word.fetch_or(WAITERS, Ordering::Relaxed));
            if !w.same_state(seen) {
                return;
            }
            trace(|| format!("parks: word still {w:?}"));
            g = wait(&self.cv, g);
            trace(|| "woken".to_owned());
        }
    }

    /// Block until slot `i`, which has been claimed, is no longer pending (its load was published or abandoned),
    /// and return what it holds. For a loader that needs an earlier slot's value: the store's loader of a pack
    /// covered by a multi-pack-index waits for that index's slot (claimed before it, since claims go in slot
    /// order). Other slots may be claimed while it waits; it is woken by the completion of slot `i`.
    ///
    /// # Panics
    /// If slot `i` is not below the cursor (nobody has claimed it, so nobody would complete it).
    pub fn wait_slot(&self, i: usize) -> SlotRef<'_, T> {
        loop {
            match self.get(i) {
                SlotRef::Pending => {}
                r => return r,
            }
            let w = self.word();
            assert!(
                i < w.cursor(),
                "waiting for slot {i}, which nobody has claimed"
            );
            // If slot i's completion precedes `w` in the word's modification order, our Acquire load of `w`
            // synchronizes with it and this `get` sees the slot's final state. Otherwise the completion comes
            // after `w`, so it changes the state from `w` and (clearing WAITERS, notifying) ends the wait.
            if matches!(self.get(i), SlotRef::Pending) {
                trace(|| format!("waits for slot {i}"));
                self.wait_for_change(w);
            }
        }
    }

    /// Stop further claims (the first step of replacing this map). Returns the word before closing.
    pub fn close(&self) -> Word {
        // Relaxed: closing publishes nothing. Claims after it in the word's modification order fail because a
        // compare-exchange reads the latest value; the refresher then waits for in-flight loads with Acquire
        // loads (`load`/`wait_for_change`).
        self.modify(Ordering::Relaxed, |w| w | CLOSED)
    }

    /// Undo [`close`](Self::close) when no successor will be published (the replacement's `build` panicked): wakes
    /// the lookups waiting for `RETIRED` on the unclaimed slots, which then claim them.
    fn reopen(&self) {
        // Relaxed: reopening publishes nothing; a lookup that sees it only tries to claim (a compare-exchange).
        self.modify(Ordering::Relaxed, |w| w & !CLOSED);
        trace(|| "reopened (the replacement failed)".to_owned());
    }

    /// Block until no load is in flight (after [`close`](Self::close), this is final). Returns that word.
    pub fn wait_idle(&self) -> Word {
        loop {
            let w = self.word();
            if w.in_flight() == 0 {
                return w;
            }
            self.wait_for_change(w);
        }
    }

    /// Mark the map retired: its successor has been published where handles look for it. Wakes waiters.
    pub fn retire(&self) {
        // Release: pairs with the Acquire `load` of a handle that sees RETIRED; everything the refresher did
        // before (publishing the successor) happens-before that handle goes looking for the successor.
        self.modify(Ordering::Release, |w| w | RETIRED | CLOSED); // ORDERING: retire-release
    }

    /// Every slot that holds a value, with its index (for carrying loaded values over to a successor map). Call
    /// after [`wait_idle`](Self::wait_idle) on a closed map to see all of them.
    pub fn ready(&self) -> impl Iterator<Item = (usize, &T)> + '_ {
        (0..self.len()).filter_map(move |i| match self.get(i) {
            SlotRef::Ready(v) => Some((i, v)),
            _ => None,
        })
    }
}

impl<'a, T, M> Ticket<'a, T, M> {
    /// The claimed slot's index.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// Store the loaded value, publish it, and complete the load. Returns the published value.
    pub fn publish(self, value: T) -> &'a T {
        let map = self.map;
        let index = self.index;
        std::mem::forget(self);
        let slot = &map.slots[index];
        slot.value.with_mut(|p| {
            // SAFETY: this thread won the compare-exchange for `index`, so no other thread writes this cell, and
            // no thread reads it before the READY store below.
            unsafe { *p = Some(value) }
        });
        // Release: pairs with the Acquire load in `get` (readers that find the slot while loads are in flight).
        slot.state.store(READY, Ordering::Release); // ORDERING: publish-release
        map.complete();
        match map.get(index) {
            SlotRef::Ready(v) => v,
            // We just stored READY and a slot's state is written only by its claimer.
            _ => unreachable!("published slot is not ready"),
        }
    }
}

impl<T, M> Drop for Ticket<'_, T, M> {
    /// The loader did not publish (it panicked): record the slot as abandoned and complete the load, so waiters
    /// wake and the slot is never claimed again (P2).
    fn drop(&mut self) {
        // Relaxed: ABANDONED publishes no value (a reader that sees it reads nothing else from the slot), and the
        // completion below is a Release that orders this store for readers that conclude from the word.
        self.map.slots[self.index]
            .state
            .store(ABANDONED, Ordering::Relaxed);
        self.map.complete();
    }
}

/// How [`View::settle`] ended.
pub enum Settled<R> {
    /// The search closure found what it was looking for in a newly visible slot.
    Found(R),
    /// Every slot of the map is loaded (or failed) and has been visited: nothing left to load, nothing in flight.
    Exhausted,
    /// The map was retired: move to its successor and search again.
    Retired,
}

/// One handle's cached picture of a map: the last word it saw and which slots it has visited. Lookups re-visit
/// slots only when the word changed, so a steady-state miss costs one Acquire load (P4).
pub struct View<T, M = ()> {
    map: crate::sync::Arc<SlotMap<T, M>>,
    seen: Word,
    /// Slots `[0, next)` have been visited once.
    next: usize,
    /// Visited while their load was still in flight; visited again when the word changes.
    holes: Vec<usize>,
}

impl<T, M> View<T, M> {
    /// A view of `map` that has visited nothing yet.
    pub fn new(map: crate::sync::Arc<SlotMap<T, M>>) -> Self {
        View {
            map,
            seen: Word(UNSEEN),
            next: 0,
            holes: Vec::new(),
        }
    }

    /// The map this view looks at.
    #[inline]
    pub fn map(&self) -> &crate::sync::Arc<SlotMap<T, M>> {
        &self.map
    }

    /// The steady-state fast path of [`settle`](Self::settle): one Acquire load, and true if the word has not
    /// changed since this view saw every slot of the map loaded (nothing left to load, nothing in flight, not
    /// retired). Then `settle` would return `Exhausted` without visiting anything.
    #[inline]
    pub fn is_settled(&self) -> bool {
        let w = self.map.word();
        w.same_state(self.seen)
            && w.cursor() == self.map.len()
            && w.in_flight() == 0
            && !w.is_retired()
            && self.holes.is_empty()
    }

    /// True if every slot has been visited with its final state, as of the last word this view saw (so a
    /// lookup that found nothing in the visited slots has nothing else to search in this map). The models' check.
    #[cfg(all(loom, feature = "model-checking"))]
    pub fn is_complete(&self) -> bool {
        self.next == self.map.len() && self.holes.is_empty()
    }

    /// Acquire-load the word; if its state changed since this view last looked, visit each slot that became
    /// ready or abandoned since then (in claim order; `visit` may stop the walk by returning `Some`). Returns
    /// the word and what `visit` returned, if anything.
    pub fn catch_up<R>(
        &mut self,
        visit: &mut impl FnMut(&SlotMap<T, M>, usize, SlotRef<'_, T>) -> Option<R>,
    ) -> (Word, Option<R>) {
        let map: &SlotMap<T, M> = &self.map;
        let w = map.word();
        if w.same_state(self.seen) {
            return (w, None);
        }
        // Re-check slots that were in flight when last visited.
        let mut i = 0;
        while i < self.holes.len() {
            let slot = self.holes[i];
            match map.get(slot) {
                SlotRef::Pending => i += 1,
                r => {
                    self.holes.swap_remove(i);
                    if let Some(x) = visit(map, slot, r) {
                        // `seen` stays stale, so the next call looks again at whatever is left.
                        return (w, Some(x));
                    }
                }
            }
        }
        while self.next < w.cursor() {
            let slot = self.next;
            self.next += 1;
            match map.get(slot) {
                SlotRef::Pending => self.holes.push(slot),
                r => {
                    if let Some(x) = visit(map, slot, r) {
                        return (w, Some(x));
                    }
                }
            }
        }
        self.seen = w;
        (w, None)
    }

    /// Search the map until `visit` finds something or nothing is left to load and nothing is in flight.
    ///
    /// The caller has already searched everything this view visited before; `settle` visits only slots that
    /// became visible since, claims and loads unclaimed slots itself (`load` runs outside every lock), and
    /// blocks (never spins) while other threads' loads are in flight. `Exhausted` is the P1 conclusion: every
    /// slot whose claim precedes the word value read last has been published and visited.
    pub fn settle<R>(
        &mut self,
        visit: &mut impl FnMut(&SlotMap<T, M>, usize, SlotRef<'_, T>) -> Option<R>,
        load: &mut impl FnMut(&SlotMap<T, M>, usize) -> T,
    ) -> Settled<R> {
        loop {
            let (w, found) = self.catch_up(visit);
            if let Some(x) = found {
                return Settled::Found(x);
            }
            if w.is_retired() {
                return Settled::Retired;
            }
            // Borrow the map through the field (not `&self`), so `next` and `holes` stay writable: no reference
            // count is touched on this path.
            let map: &SlotMap<T, M> = &self.map;
            if w.cursor() < map.len() && !w.is_closed() {
                if let Some(ticket) = map.try_claim(w) {
                    let index = ticket.index();
                    let value = match catch_unwind(AssertUnwindSafe(|| load(map, index))) {
                        Ok(value) => value,
                        // The loader panicked: abandon the slot (which completes its load and wakes waiters,
                        // P2/P3) before the panic goes on, so that nothing locks or notifies while unwinding
                        // (under loom, all model threads share one OS thread's panic state, and a mutex
                        // released by another model thread during our unwinding would read as poisoned). The
                        // panic is the caller's: nothing here looks at state the loader left behind.
                        Err(panic) => {
                            drop(ticket);
                            resume_unwind(panic)
                        }
                    };
                    let v = ticket.publish(value);
                    // The word changed (our claim and completion), so `seen` is stale and the next `catch_up`
                    // reads it again. Mark our own slot visited so it is not visited twice.
                    if self.next == index {
                        self.next += 1;
                    } else {
                        self.holes.retain(|&h| h != index);
                    }
                    if let Some(x) = visit(map, index, SlotRef::Ready(v)) {
                        return Settled::Found(x);
                    }
                }
                // Lost the race for the slot, or loaded it: look again.
                continue;
            }
            if w.in_flight() > 0 || w.cursor() < map.len() {
                // Loads in flight, or a closed map with unclaimed slots (a refresh is replacing it: wait for
                // RETIRED). Block until the word changes.
                map.wait_for_change(w);
                continue;
            }
            trace(|| format!("concludes: nothing left to load in {w:?}"));
            return Settled::Exhausted;
        }
    }
}

/// The map that new handles and handles leaving a retired map should use, and the one way to replace it.
///
/// Replacing is the refresh protocol: close the old map's claims, wait for its in-flight loads, build the
/// successor from what the old map loaded (the caller shares loaded values, never reloads them), publish it here,
/// then mark the old map retired (P5). Callers serialize replacements (the store holds its refresh lock).
pub struct Current<T, M = ()> {
    map: Mutex<Arc<SlotMap<T, M>>>,
}

impl<T, M> Current<T, M> {
    /// Start with `map`.
    pub fn new(map: SlotMap<T, M>) -> Self {
        Current {
            map: Mutex::new(Arc::new(map)),
        }
    }

    /// The current map. Takes a lock: called when a handle is made and when it leaves a retired map, never on a
    /// lookup's hit or steady-state miss path.
    pub fn get(&self) -> Arc<SlotMap<T, M>> {
        Arc::clone(&lock(&self.map))
    }

    /// Replace the current map with `build(old)`, where `old` is closed and idle when `build` runs, so every slot
    /// it loaded is visible through [`SlotMap::ready`]. Returns the new map.
    ///
    /// # Panics
    /// If `build` panics, the panic propagates and `old` stays current, reopened: lookups waiting on its unclaimed
    /// slots claim them, and the next `replace` closes it again and publishes a successor.
    pub fn replace(
        &self,
        build: impl FnOnce(&SlotMap<T, M>) -> SlotMap<T, M>,
    ) -> Arc<SlotMap<T, M>> {
        let old = self.get();
        old.close();
        old.wait_idle();
        // A `build` that panics must not leave the map closed and never retired (lookups waiting on its unclaimed
        // slots would wait for a RETIRED that never comes): reopen it, then let the panic go on. Reopening runs
        // after the catch, not while unwinding (see `View::settle` on why nothing locks while unwinding), and the
        // panic is the caller's: nothing here looks at what `build` left behind.
        let new = match catch_unwind(AssertUnwindSafe(|| build(&old))) {
            Ok(map) => Arc::new(map),
            Err(panic) => {
                old.reopen();
                drop(old);
                resume_unwind(panic)
            }
        };
        *lock(&self.map) = Arc::clone(&new);
        trace(|| "published the successor map".to_owned());
        // After publishing: a handle that sees RETIRED (Acquire, pairing with retire's Release) and then asks
        // `get` finds the successor.
        old.retire();
        trace(|| "retired the old map".to_owned());
        new
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "too many slots")]
    fn more_slots_than_the_in_flight_field_holds_are_refused() {
        // Refused before anything is allocated.
        let _ = SlotMap::<(), ()>::new(vec![], MAX_SLOTS + 1, ());
    }

    #[test]
    fn a_full_in_flight_field_does_not_touch_the_flags() {
        let w = Word(MAX_SLOTS as u64 * (1 + IN_FLIGHT_ONE));
        assert_eq!((w.cursor(), w.in_flight()), (MAX_SLOTS, MAX_SLOTS));
        assert!(!w.is_closed() && !w.is_retired() && w.0 & (WAITERS | UNSEEN) == 0);
    }

    #[test]
    #[should_panic(expected = "nobody has claimed")]
    fn waiting_for_an_unclaimed_slot_panics() {
        let map = SlotMap::<u32, ()>::new(vec![1], 1, ());
        assert!(matches!(map.wait_slot(0), SlotRef::Ready(1)));
        map.wait_slot(1);
    }

    /// Slot values with a `Drop` through every `unsafe` path of the map, on real threads (the test Miri runs:
    /// `.ci/miri.sh`): values carried over at creation, one published while another thread waits and reads it, one
    /// abandoned (the loader's ticket dropped), one never claimed; dropping the map drops each stored value exactly
    /// once (a leak, a double drop or a read of a dropped value is what Miri reports).
    #[test]
    fn slot_values_are_published_read_abandoned_and_dropped_once() {
        #[expect(
            clippy::disallowed_types,
            reason = "sync::plain: read after the threads joined"
        )]
        use crate::sync::plain::atomic::{AtomicU64, Ordering::Relaxed};
        #[expect(
            clippy::disallowed_types,
            reason = "sync::plain: read after the threads joined"
        )]
        static DROPS: AtomicU64 = AtomicU64::new(0);
        struct Counted(Box<u32>);
        impl Drop for Counted {
            fn drop(&mut self) {
                DROPS.fetch_add(1, Relaxed);
            }
        }
        let map = SlotMap::<Counted, ()>::new(vec![Counted(Box::new(1))], 3, ());
        let published = map.try_claim(map.word()).expect("slot 1");
        let claimed = map.word();
        std::thread::scope(|s| {
            let reader = s.spawn(|| {
                map.wait_for_change(claimed);
                match map.get(1) {
                    SlotRef::Ready(v) => *v.0,
                    _ => 0,
                }
            });
            assert_eq!(*published.publish(Counted(Box::new(2))).0, 2);
            assert_eq!(reader.join().unwrap(), 2);
        });
        drop(map.try_claim(map.word()).expect("slot 2"));
        assert!(matches!(map.get(0), SlotRef::Ready(Counted(b)) if **b == 1));
        assert!(!matches!(map.get(2), SlotRef::Ready(_)), "abandoned");
        assert!(!matches!(map.get(3), SlotRef::Ready(_)), "never claimed");
        assert_eq!(DROPS.load(Relaxed), 0);
        drop(map);
        assert_eq!(DROPS.load(Relaxed), 2, "each stored value dropped once");
    }

    /// A contended load on real threads: a lookup arrives while the slot's load is in flight, spins its whole
    /// budget of `spin_loop` hints (the loader holds the ticket until the waiter has set the waiters flag, which it
    /// does only after the spin), parks, and the publish wakes it with the value. The scenario that
    /// [`the_spin_before_parking_makes_no_sched_yield`] runs under strace.
    #[test]
    fn a_waiter_spins_then_parks_and_the_publish_wakes_it() {
        let map = SlotMap::<u32, ()>::new(vec![], 1, ());
        let ticket = map.try_claim(map.word()).expect("the only claim");
        let claimed = map.word();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                map.wait_for_change(claimed);
                matches!(map.get(0), SlotRef::Ready(7))
            });
            // Not a timing threshold: poll (sleeping, so the loader itself makes no `sched_yield`) until the
            // waiter has parked or is about to.
            while map.word().0 & WAITERS == 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            assert_eq!(*ticket.publish(7), 7);
            assert!(
                waiter.join().unwrap(),
                "the waiter woke to the published value"
            );
        });
    }

    /// The std spin is checked where it runs (the models use loom's and shuttle's `spin_loop`, so a std one
    /// turned into a yield to the scheduler, what gix-odb does and P3 rules out, would pass every model): the contended load
    /// above, run under `strace -f -c`, makes no `sched_yield` call, and parks (a `futex` call, which also shows
    /// that strace followed its threads). Skipped, with a `SKIPPED` line, without strace or ptrace.
    #[cfg(target_os = "linux")]
    #[test]
    #[cfg_attr(miri, ignore = "a child process (strace)")]
    fn the_spin_before_parking_makes_no_sched_yield() {
        const SCENARIO: &str =
            "protocol::tests::a_waiter_spins_then_parks_and_the_publish_wakes_it";
        let summary =
            std::env::temp_dir().join(format!("odb-index-spin-{}.strace", std::process::id()));
        let run = std::process::Command::new("strace")
            .args(["-f", "-c", "-e", "trace=sched_yield,futex", "-o"])
            .arg(&summary)
            .arg(std::env::current_exe().unwrap())
            .args([SCENARIO, "--exact", "--test-threads=1", "--nocapture"])
            .output();
        let run = match run {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                println!("SKIPPED: strace is not installed");
                return;
            }
            r => r.unwrap(),
        };
        let (out, err) = (
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr),
        );
        if !run.status.success() && err.contains("ptrace") {
            println!("SKIPPED: strace cannot trace here: {err}");
            return;
        }
        assert!(
            run.status.success() && out.contains("1 passed"),
            "the scenario did not run and pass under strace:\n{out}\n{err}"
        );
        #[expect(clippy::disallowed_methods, reason = "a test reading strace's summary")]
        let table = std::fs::read_to_string(&summary).unwrap();
        let _ = std::fs::remove_file(&summary);
        // `% time  seconds  usecs/call  calls  [errors]  syscall`: the calls are the fourth column.
        let calls = |name: &str| -> u64 {
            table
                .lines()
                .find(|l| l.split_whitespace().last() == Some(name))
                .map_or(0, |l| l.split_whitespace().nth(3).unwrap().parse().unwrap())
        };
        assert!(
            calls("futex") > 0,
            "the waiter did not park (or strace saw no thread):\n{table}"
        );
        assert_eq!(
            calls("sched_yield"),
            0,
            "a waiter yields while it spins (P3):\n{table}"
        );
    }
}
