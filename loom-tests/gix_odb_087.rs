// Over 600 lines: one upstream function (gix-odb 0.87 load_index) modelled with its four patched variants side by side, line for line.
//! gix-odb 0.87.0's lazy index loading, as it is and as patched by the pull requests in `docs/upstream/[123]-*/`
//! (each prefix of the three patches is a [`Variant`]), modelled for loom from a reading of its source (no code
//! copied). Line numbers are those of `gix-odb-0.87.0/src/store_impls/dynamic/load_index.rs` unless another file
//! is named; `docs/UPSTREAM.md` has the verdicts and the interleavings.
//!
//! What is modelled: the arc-swapped `SlotMapIndex` (a published id plus a `loom::cell::UnsafeCell` per
//! publication, so loom checks that a reader sees what the publisher wrote); its `next_index_to_load` and
//! `loaded_indices` (shared by `Arc` across a refresh that keeps the slot list) and its
//! `num_indices_currently_being_loaded` (fresh per instance in 0.87); register-then-claim; the slot generation
//! check; failed loads that `continue`; `state_id()` as (instance, `loaded_indices`); the `yield_now` loops as loom
//! yields; `consolidate_with_disk_state` reached only the ways gix-odb reaches it (from `load_one_index` after
//! `load_next_index` returned false), reading a scripted disk (one listing per consolidation, the last repeated).
//! Every atomic is SeqCst in gix-odb; loom treats SeqCst as AcqRel, so each execution is also replayed against a
//! sequentially consistent shadow (every load must return the latest store in the execution's order), and a false
//! miss is reported only if that shadow agrees: a reported interleaving is one a SeqCst program can produce.
//! Not modelled: initialisation (the scenarios start initialised), slot removal and generation changes (no
//! scenario overwrites a slot), loose objects (the object sought is only in packs).

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
use loom::thread;
use std::cell::RefCell;
use std::collections::HashMap;

/// Which changes of the patch are applied (all false: gix-odb 0.87.0 as published).
#[derive(Clone, Copy, Debug)]
struct Variant {
    /// Fix 1: `load_next_index` compares with the caller's marker instead of re-reading `state_id()` (line 89).
    marker_state: bool,
    /// Fix 2: a refresh that shares the cursor also shares the in-flight counter (line 402).
    share_counter: bool,
    /// Fix 3: after a refresh that changed nothing, answer "missing" only if the index is still the caller's.
    recheck: bool,
    /// The blocking wait (condvar, notified by the last decrement) instead of the `yield_now` loops
    /// (lines 139-141, 659-661), and no registration when the cursor is already exhausted.
    block: bool,
}

const AS_IS: Variant = Variant {
    marker_state: false,
    share_counter: false,
    recheck: false,
    block: false,
};
const PATCHED: Variant = Variant {
    marker_state: true,
    share_counter: true,
    recheck: true,
    block: true,
};

// ---------------------------------------------------------------------------------------------------------------
// Per-execution trace and sequentially consistent shadow (a std thread_local: loom runs a model's threads on the
// calling OS thread; reset at the start of each execution; nothing process-wide).

#[derive(Default)]
struct Log {
    events: Vec<String>,
    shadow: HashMap<usize, usize>,
    next_var: usize,
    sc_consistent: bool,
    /// A lookup of 0.87.0 went through F1's window: its re-read of `state_id()` at line 89 differed from the
    /// marker it compared at line 61 (a load completed in between).
    through_f1: bool,
    /// F2's signature: a wait (lines 139-141 or 658-662) read its instance's counter as 0 while a load claimed on
    /// the same cursor was in flight, counted on another instance's counter.
    fresh_counter_read_0: bool,
}

/// What `run` does with a sequentially consistent false miss: report it (panic), or, for the tests of the
/// unmodified 0.87.0 beyond F1, set aside those that went through F1's window (and, with `require_f2`, those
/// without F2's signature) and count them.
#[derive(Clone, Copy, Default)]
struct Filter {
    set_aside_f1: bool,
    require_f2: bool,
}

/// Per `run`: executions that went through F1's window; false misses set aside (F1's window / no F2 signature).
#[derive(Clone, Copy, Default, Debug)]
struct SetAside {
    through_f1: usize,
    misses_through_f1: usize,
    misses_without_f2: usize,
}

thread_local! {
    static LOG: RefCell<Log> = RefCell::new(Log::default());
    static EXECUTIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    static FILTER: std::cell::Cell<Filter> = std::cell::Cell::new(Filter::default());
    static SET_ASIDE: std::cell::Cell<SetAside> = std::cell::Cell::new(SetAside::default());
}

fn reset_log() {
    LOG.with(|l| {
        *l.borrow_mut() = Log {
            sc_consistent: true,
            ..Log::default()
        }
    });
}

fn ev(who: char, what: String) {
    LOG.with(|l| l.borrow_mut().events.push(format!("{who}: {what}")));
}

/// A SeqCst `AtomicUsize` whose operations are checked against the sequentially consistent shadow.
struct Atom {
    a: AtomicUsize,
    id: usize,
    /// Ghost state, not part of gix-odb (a plain std atomic: loom runs a model's threads on one OS thread and
    /// does not see it): for a cursor, the loads claimed on it and not yet over. Used only to recognise F2.
    claimed_in_flight: std::sync::atomic::AtomicUsize,
}

impl Atom {
    fn new(v: usize) -> Self {
        let id = LOG.with(|l| {
            let mut l = l.borrow_mut();
            l.next_var += 1;
            let id = l.next_var;
            l.shadow.insert(id, v);
            id
        });
        Atom {
            a: AtomicUsize::new(v),
            id,
            claimed_in_flight: std::sync::atomic::AtomicUsize::new(0),
        }
    }
    fn note(&self, read: Option<usize>, written: Option<usize>) {
        LOG.with(|l| {
            let mut l = l.borrow_mut();
            if let Some(r) = read
                && l.shadow.get(&self.id) != Some(&r)
            {
                l.sc_consistent = false;
            }
            if let Some(w) = written {
                l.shadow.insert(self.id, w);
            }
        });
    }
    fn load(&self) -> usize {
        let v = self.a.load(SeqCst);
        self.note(Some(v), None);
        v
    }
    fn store(&self, v: usize) {
        self.a.store(v, SeqCst);
        self.note(None, Some(v));
    }
    fn fetch_add(&self, d: usize) -> usize {
        let old = self.a.fetch_add(d, SeqCst);
        self.note(Some(old), Some(old + d));
        old
    }
    fn fetch_sub(&self, d: usize) -> usize {
        let old = self.a.fetch_sub(d, SeqCst);
        self.note(Some(old), Some(old - d));
        old
    }
    /// `fetch_update(SeqCst, SeqCst, |c| (c != len).then_some(c + 1))` (lines 94-98).
    fn claim(&self, len: usize) -> Result<usize, usize> {
        let mut c = self.load();
        loop {
            if c == len {
                return Err(c);
            }
            match self.a.compare_exchange(c, c + 1, SeqCst, SeqCst) {
                Ok(_) => {
                    self.note(Some(c), Some(c + 1));
                    return Ok(c);
                }
                Err(actual) => {
                    self.note(Some(actual), None);
                    c = actual;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The store.

const UNLOADED: usize = 0;
const LOADED: usize = 1;
const FAILED: usize = 2;

/// One entry of `Store::files` (`MutableIndexAndPack`): generation, write lock, and the bundle's state.
struct Slot {
    generation: Atom,
    write: Mutex<()>,
    state: Atom,
    holds: Vec<u32>,
    fails: bool,
}

/// `num_indices_currently_being_loaded` (types.rs:106); the patch adds the mutex and condvar beside it.
struct Counter {
    n: Atom,
    lock: Mutex<()>,
    idle: Condvar,
}

impl Counter {
    fn new() -> Self {
        Counter {
            n: Atom::new(0),
            lock: Mutex::new(()),
            idle: Condvar::new(),
        }
    }
}

/// `IncOnNewAndDecOnDrop` (lines 701-712).
struct Registered<'a> {
    c: &'a Counter,
    v: Variant,
}

impl<'a> Registered<'a> {
    fn new(c: &'a Counter, v: Variant) -> Self {
        c.n.fetch_add(1);
        Registered { c, v }
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        let old = self.c.n.fetch_sub(1);
        if self.v.block && old == 1 {
            // Patched: the last one out wakes the waiters (under the lock, so no waiter misses it).
            let _g = self.c.lock.lock().unwrap();
            self.c.idle.notify_all();
        }
    }
}

/// Ghost: a load claimed on a cursor, from the claim until the slot is stored and counted (lines 99-116).
struct ClaimInFlight<'a>(&'a Atom);

impl<'a> ClaimInFlight<'a> {
    fn new(cursor: &'a Atom) -> Self {
        cursor
            .claimed_in_flight
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        ClaimInFlight(cursor)
    }
}

impl Drop for ClaimInFlight<'_> {
    fn drop(&mut self) {
        self.0
            .claimed_in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `SlotMapIndex` (types.rs:85-107).
struct Idx {
    /// Stands for `Arc::as_ptr(self)` in `state_id()`.
    id: usize,
    slot_indices: Vec<usize>,
    /// The loose databases, as a version number of the alternates chain.
    loose: usize,
    generation: usize,
    next_index_to_load: Arc<Atom>,
    loaded_indices: Arc<Atom>,
    in_flight: Arc<Counter>,
}

type StateId = (usize, usize);

impl Idx {
    /// types.rs:110-117: crc32 of the instance's address and `loaded_indices`.
    fn state_id(&self) -> StateId {
        (self.id, self.loaded_indices.load())
    }
}

/// `SlotIndexMarker` (types.rs:21-29).
#[derive(Clone, Copy, PartialEq, Debug)]
struct Marker {
    generation: usize,
    state_id: StateId,
}

/// `load_index::Snapshot` (lines 17-24): the loaded slots and the marker.
struct Snapshot {
    slots: Vec<usize>,
    marker: Marker,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Never,
    AfterAllIndicesLoaded,
}

struct WriteState {
    consolidations: usize,
    next_id: usize,
}

struct Store {
    files: Vec<Slot>,
    /// `Store::index: ArcSwap<SlotMapIndex>`: the id of the published instance ...
    current: Atom,
    /// ... and the instances, each written once under `write` before its id is stored.
    published: Vec<UnsafeCell<Option<Arc<Idx>>>>,
    write: Mutex<WriteState>,
    /// What each consolidation reads from disk: (slot list, loose version); the last one repeats.
    listings: Vec<(Vec<usize>, usize)>,
    v: Variant,
}

struct Scenario {
    /// Per slot: the objects its index holds, and whether loading it fails.
    slots: Vec<(Vec<u32>, bool)>,
    /// The initial index: its slot list and which of them are already loaded (claimed and loaded, in order).
    initial: Vec<usize>,
    preloaded: usize,
    listings: Vec<(Vec<usize>, usize)>,
    mode: Mode,
    threads: usize,
    want: u32,
}

impl Store {
    fn new(s: &Scenario, v: Variant) -> Self {
        let files: Vec<Slot> = s
            .slots
            .iter()
            .enumerate()
            .map(|(i, (holds, fails))| Slot {
                generation: Atom::new(0),
                write: Mutex::new(()),
                state: Atom::new(if s.initial[..s.preloaded].contains(&i) {
                    LOADED
                } else {
                    UNLOADED
                }),
                holds: holds.clone(),
                fails: *fails,
            })
            .collect();
        let published: Vec<_> = (0..s.listings.len() + 2)
            .map(|_| UnsafeCell::new(None))
            .collect();
        let first = Idx {
            id: 0,
            slot_indices: s.initial.clone(),
            loose: 0,
            generation: 0,
            next_index_to_load: Arc::new(Atom::new(s.preloaded)),
            loaded_indices: Arc::new(Atom::new(s.preloaded)),
            in_flight: Arc::new(Counter::new()),
        };
        // SAFETY: nothing else can see the store yet.
        published[0].with_mut(|p| unsafe { *p = Some(Arc::new(first)) });
        Store {
            files,
            current: Atom::new(0),
            published,
            write: Mutex::new(WriteState {
                consolidations: 0,
                next_id: 1,
            }),
            listings: s.listings.clone(),
            v,
        }
    }

    /// `self.index.load()`.
    fn load_index(&self) -> Arc<Idx> {
        let k = self.current.load();
        // SAFETY: `published[k]` was written once, before `k` was stored in `current` (SeqCst, read above), and
        // is never written again.
        self.published[k]
            .with(|p| unsafe { (*p).clone() })
            .expect("published before its id")
    }

    /// Wait until nothing is in flight on `idx`'s counter: 0.87 spins with `yield_now` (lines 139-141, 659-661);
    /// the patch blocks on the counter's condvar.
    fn wait_idle(&self, who: char, idx: &Idx, line: &str) {
        if self.v.block {
            if idx.in_flight.n.load() != 0 {
                let mut g = idx.in_flight.lock.lock().unwrap();
                while idx.in_flight.n.load() != 0 {
                    ev(who, format!("{line}: blocks, in flight on I{}", idx.id));
                    g = idx.in_flight.idle.wait(g).unwrap();
                }
            }
        } else {
            while idx.in_flight.n.load() != 0 {
                thread::yield_now();
            }
        }
        ev(who, format!("{line}: in flight on I{} read 0", idx.id));
        let ghost = idx
            .next_index_to_load
            .claimed_in_flight
            .load(std::sync::atomic::Ordering::Relaxed);
        if ghost != 0 {
            ev(
                who,
                format!(
                    "(F2: {ghost} load(s) claimed on I{}'s cursor still in flight)",
                    idx.id
                ),
            );
            LOG.with(|l| l.borrow_mut().fresh_counter_read_0 = true);
        }
    }

    /// `collect_snapshot` (lines 653-693).
    fn collect_snapshot(&self, who: char) -> Snapshot {
        let idx = self.load_index(); // 657
        self.wait_idle(who, &idx, "collect_snapshot 658-662");
        let marker = Marker {
            generation: idx.generation,
            state_id: idx.state_id(),
        }; // 663
        let slots: Vec<usize> = idx
            .slot_indices
            .iter()
            .copied()
            .filter(|&s| self.files[s].state.load() == LOADED)
            .collect(); // 664-682: loaded slots only
        ev(
            who,
            format!(
                "snapshot of I{}: marker {:?}, loaded slots {slots:?}",
                idx.id, marker.state_id
            ),
        );
        Snapshot { slots, marker }
    }

    /// `contains_with_refresh_mode` (find.rs:288-317).
    fn contains(&self, who: char, snapshot: &mut Snapshot, want: u32, mode: Mode) -> bool {
        loop {
            if snapshot
                .slots
                .iter()
                .any(|&s| self.files[s].holds.contains(&want))
            {
                return true; // find.rs:291-298
            }
            // find.rs:300-304: loose databases (the object is never loose here).
            match self.load_one_index(who, snapshot.marker, mode) {
                Some(s) => *snapshot = s, // find.rs:310-312
                None => {
                    ev(
                        who,
                        "load_one_index returned None: contains() is false".into(),
                    );
                    return false; // find.rs:314
                }
            }
        }
    }

    /// `load_one_index` (lines 44-81).
    fn load_one_index(&self, who: char, marker: Marker, mode: Mode) -> Option<Snapshot> {
        let index = self.load_index(); // 52; 53-59: initialised in every scenario
        let now = index.state_id();
        if marker.generation != index.generation || marker.state_id != now {
            ev(
                who,
                format!("61: marker {:?} != I{} {now:?}", marker.state_id, index.id),
            );
            return Some(self.collect_snapshot(who)); // 61-63
        }
        ev(
            who,
            format!("61: marker {:?} == I{} state", marker.state_id, index.id),
        );
        if self.load_next_index(who, index, Some(marker.state_id)) {
            return Some(self.collect_snapshot(who)); // 67-68
        }
        match mode {
            Mode::Never => None, // 72
            Mode::AfterAllIndicesLoaded => {
                let r = self.consolidate_with_disk_state(who, true); // 73-77
                if self.v.recheck && r.is_none() {
                    let index = self.load_index();
                    let now = Marker {
                        generation: index.generation,
                        state_id: index.state_id(),
                    };
                    if now != marker {
                        ev(
                            who,
                            format!(
                                "patch: I{} {:?} is not the caller's",
                                index.id, now.state_id
                            ),
                        );
                        return Some(self.collect_snapshot(who));
                    }
                }
                r
            }
        }
    }

    /// `load_next_index` (lines 87-162). `caller` is the state the caller has seen (its marker's, from
    /// `load_one_index`); the patch compares with it, 0.87 re-reads `state_id()` (line 89) and only the model uses
    /// `caller` there, to recognise F1's window. None from `consolidate_with_disk_state` in 0.87 (nothing to compare).
    fn load_next_index(&self, who: char, mut index: Arc<Idx>, caller: Option<StateId>) -> bool {
        let mut first = true;
        loop {
            // 'retry_with_changed_index (88)
            let previous_state_id = match caller {
                Some(c) if self.v.marker_state => c,
                _ => index.state_id(), // 89
            };
            ev(who, format!("89: previous_state_id {previous_state_id:?}"));
            if first && !self.v.marker_state && caller.is_some_and(|c| c != previous_state_id) {
                ev(
                    who,
                    "(F1's window: a load completed between 61 and 89)".into(),
                );
                LOG.with(|l| l.borrow_mut().through_f1 = true);
            }
            first = false;
            loop {
                // 'retry_with_next_slot_index (90)
                let len = index.slot_indices.len();
                if self.v.block && index.next_index_to_load.load() == len {
                    // Patch: nothing to claim, so do not register; wait for loads in flight.
                    ev(who, format!("patch: cursor of I{} exhausted", index.id));
                    self.wait_idle(who, &index, "patch");
                    break;
                }
                let ongoing = Registered::new(&index.in_flight, self.v); // 93
                match index.next_index_to_load.claim(len) {
                    Ok(i) => {
                        // 99-132
                        let claim = ClaimInFlight::new(&index.next_index_to_load);
                        let s = index.slot_indices[i];
                        ev(
                            who,
                            format!("94-98: claims cursor {i} of I{} (slot {s})", index.id),
                        );
                        let slot = &self.files[s];
                        let _lock = slot.write.lock().unwrap(); // 102
                        if slot.generation.load() > index.generation {
                            continue; // 103-108
                        }
                        // 109-118: load, store the bundle, count the attempt (failed ones too).
                        slot.state.store(if slot.fails { FAILED } else { LOADED });
                        let n = index.loaded_indices.fetch_add(1);
                        ev(
                            who,
                            format!("115-116: slot {s} stored, loaded_indices {n} -> {}", n + 1),
                        );
                        drop(claim);
                        if slot.fails {
                            continue; // 123-129: the guard drops, the loop registers again
                        }
                        drop(_lock);
                        drop(ongoing);
                        break; // 120-122
                    }
                    Err(_) => {
                        ev(who, format!("133: cursor of I{} exhausted", index.id));
                        drop(ongoing); // 134
                        self.wait_idle(who, &index, "139-141");
                        break; // 142
                    }
                }
            }
            let now = index.state_id();
            if previous_state_id == now {
                // 146
                let potentially_new = self.load_index(); // 147
                if potentially_new.id == index.id {
                    ev(
                        who,
                        format!("146-150: I{} state {now:?} unchanged: false", index.id),
                    );
                    return false;
                }
                index = potentially_new; // 153-154
            } else {
                ev(who, format!("146/159: state {now:?} changed: true"));
                return true;
            }
        }
    }

    /// `consolidate_with_disk_state(needs_init: false, ...)` (lines 169-439), as reached from `load_one_index`.
    fn consolidate_with_disk_state(&self, who: char, load_new_index: bool) -> Option<Snapshot> {
        let index = self.load_index(); // 175
        let previous = index.id; // 176
        ev(who, format!("175: consolidation starts from I{previous}"));
        let mut w: MutexGuard<'_, WriteState> = self.write.lock().unwrap(); // 179, held to the end
        let index = self.load_index(); // 183
        if index.id != previous {
            ev(who, "183-187: index changed before the lock".into());
            return Some(self.collect_snapshot(who));
        }
        // 189-198: initialised, needs_init false.
        let (slots, loose) = self.listings[w.consolidations.min(self.listings.len() - 1)].clone(); // 201-237
        w.consolidations += 1;
        let num_loaded = slots
            .iter()
            .filter(|&&s| self.files[s].state.load() == LOADED)
            .count(); // 255-284
        let unchanged = slots == index.slot_indices; // 378
        ev(
            who,
            format!(
                "consolidates I{}: disk {slots:?} loose {loose}, slots unchanged: {unchanged}",
                index.id
            ),
        );
        if !unchanged || loose != index.loose {
            // 385-405
            let id = w.next_id;
            w.next_id += 1;
            let new = Idx {
                id,
                slot_indices: slots,
                loose,
                generation: index.generation,
                next_index_to_load: if unchanged {
                    index.next_index_to_load.clone()
                } else {
                    Arc::new(Atom::new(0))
                },
                loaded_indices: if unchanged {
                    index.loaded_indices.clone()
                } else {
                    Arc::new(Atom::new(num_loaded))
                },
                in_flight: if unchanged && self.v.share_counter {
                    index.in_flight.clone()
                } else {
                    Arc::new(Counter::new())
                },
            };
            // SAFETY: `published[id]` is written once, under `write`, before `id` is published below; readers
            // only reach it through `current`.
            self.published[id].with_mut(|p| unsafe { *p = Some(Arc::new(new)) });
            self.current.store(id); // 404
            ev(
                who,
                format!("404: publishes I{id} (cursor shared: {unchanged})"),
            );
        }
        let new_index = self.load_index(); // 429
        if index.state_id() == new_index.state_id() {
            ev(who, "430-432: no change: None".into());
            None
        } else {
            if load_new_index {
                let caller = self.v.marker_state.then(|| new_index.state_id());
                self.load_next_index(who, new_index, caller); // 434-436
            }
            Some(self.collect_snapshot(who)) // 437
        }
    }
}

fn lookup_thread(store: &Store, who: char, want: u32, mode: Mode) {
    let mut snapshot = store.collect_snapshot(who); // a new handle (handle.rs:272)
    if !store.contains(who, &mut snapshot, want, mode) {
        let (sc, through_f1, f2, events) = LOG.with(|l| {
            let l = l.borrow();
            (
                l.sc_consistent,
                l.through_f1,
                l.fresh_counter_read_0,
                l.events.join("\n  "),
            )
        });
        let filter = FILTER.with(|f| f.get());
        if sc && filter.set_aside_f1 && through_f1 {
            SET_ASIDE.with(|c| {
                c.set(SetAside {
                    misses_through_f1: c.get().misses_through_f1 + 1,
                    ..c.get()
                })
            });
        } else if sc && filter.require_f2 && !f2 {
            SET_ASIDE.with(|c| {
                c.set(SetAside {
                    misses_without_f2: c.get().misses_without_f2 + 1,
                    ..c.get()
                })
            });
        } else if sc {
            let f2 = if f2 {
                " [F2: a fresh counter read 0 with a load in flight]"
            } else {
                ""
            };
            panic!(
                "false miss{f2}: thread {who} reports object {want} missing; interleaving (sequentially consistent):\n  {events}"
            );
        }
        // A loom-only execution (a load read a value older than the latest store): gix-odb's SeqCst forbids it.
    }
}

/// `run` for the unmodified 0.87.0 beyond F1: executions that went through F1's window are set aside and counted
/// (printed), and with `require_f2` so are false misses without F2's signature.
fn run_as_is_beyond_f1(s: Scenario, bound: usize, require_f2: bool) {
    FILTER.with(|f| {
        f.set(Filter {
            set_aside_f1: true,
            require_f2,
        })
    });
    SET_ASIDE.with(|c| c.set(SetAside::default()));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(s, AS_IS, bound)));
    println!("set aside: {:?}", SET_ASIDE.with(|c| c.get()));
    FILTER.with(|f| f.set(Filter::default()));
    if let Err(e) = r {
        std::panic::resume_unwind(e);
    }
}

fn run(s: Scenario, v: Variant, bound: usize) {
    let mut b = loom::model::Builder::new();
    if std::env::var_os("ODB_LOOM_EXHAUSTIVE").is_some() {
        b.preemption_bound = None;
    } else if b.preemption_bound.is_none() {
        b.preemption_bound = Some(bound);
    }
    b.max_branches = 10_000;
    let s = std::sync::Arc::new(s);
    let started = std::time::Instant::now();
    EXECUTIONS.with(|e| e.set(0));
    b.check(move || {
        EXECUTIONS.with(|e| e.set(e.get() + 1));
        reset_log();
        let store = Arc::new(Store::new(&s, v));
        let names = ['A', 'B', 'C'];
        let handles: Vec<_> = (1..s.threads)
            .map(|t| {
                let (store, s2) = (store.clone(), s.clone());
                thread::spawn(move || lookup_thread(&store, names[t], s2.want, s2.mode))
            })
            .collect();
        lookup_thread(&store, names[0], s.want, s.mode);
        for h in handles {
            h.join().unwrap();
        }
        if LOG.with(|l| l.borrow().through_f1) {
            SET_ASIDE.with(|c| {
                c.set(SetAside {
                    through_f1: c.get().through_f1 + 1,
                    ..c.get()
                })
            });
        }
    });
    println!(
        "loom: {} executions in {:.2?} (preemption bound {:?})",
        EXECUTIONS.with(|e| e.get()),
        started.elapsed(),
        b.preemption_bound
    );
}

/// S1: one slot holding the object, nothing loaded, two threads look it up (`RefreshMode::Never`); no refresh.
fn s1_two_lookups_one_slot() -> Scenario {
    Scenario {
        slots: vec![(vec![7], false)],
        initial: vec![0],
        preloaded: 0,
        listings: vec![(vec![0], 0)],
        mode: Mode::Never,
        threads: 2,
        want: 7,
    }
}

/// S1f: like S1, but the first slot fails to load and the second holds the object (the `continue` at 128).
fn s1f_failed_slot_first() -> Scenario {
    Scenario {
        slots: vec![(vec![], true), (vec![7], false)],
        initial: vec![0, 1],
        preloaded: 0,
        listings: vec![(vec![0, 1], 0)],
        mode: Mode::Never,
        threads: 2,
        want: 7,
    }
}

/// S2: the fresh counter after one refresh (the question). One slot holding the object; the disk shows the
/// same slot list and changed loose databases, so a refresh publishes an index sharing the cursor and
/// `loaded_indices` with a fresh in-flight counter (lines 385-404). `AfterAllIndicesLoaded`, `threads` lookups.
fn s2_one_refresh_same_slots(threads: usize) -> Scenario {
    Scenario {
        slots: vec![(vec![7], false)],
        initial: vec![0],
        preloaded: 0,
        listings: vec![(vec![0], 1)],
        mode: Mode::AfterAllIndicesLoaded,
        threads,
        want: 7,
    }
}

/// S3: two refreshes. Slot 0 is loaded; slot 1 (holding the object) is on disk but not yet in the index. The first
/// consolidation finds slot 1 (new slot list, fresh cursor); the second finds the same slots and changed loose
/// databases (shared cursor, fresh counter).
fn s3_two_refreshes() -> Scenario {
    Scenario {
        slots: vec![(vec![5], false), (vec![7], false)],
        initial: vec![0],
        preloaded: 1,
        listings: vec![(vec![0, 1], 0), (vec![0, 1], 1)],
        mode: Mode::AfterAllIndicesLoaded,
        threads: 2,
        want: 7,
    }
}

/// S4: one refresh that adds a slot. Slot 0 is loaded; slot 1 (holding the object) is on disk, not in the index.
fn s4_refresh_adds_slot() -> Scenario {
    Scenario {
        slots: vec![(vec![5], false), (vec![7], false)],
        initial: vec![0],
        preloaded: 1,
        listings: vec![(vec![0, 1], 0)],
        mode: Mode::AfterAllIndicesLoaded,
        threads: 2,
        want: 7,
    }
}

/// Patch 1 (`docs/upstream/1-f1/`): fix 1 alone.
const ONLY_FIX_1: Variant = Variant {
    marker_state: true,
    ..AS_IS
};
/// Fixes 1 and 2 without 3 (not a prefix of the patches: isolates F3).
const FIXES_1_2: Variant = Variant {
    marker_state: true,
    share_counter: true,
    ..AS_IS
};
/// Pull requests 1-3 (`docs/upstream/1-f1/`, `2-f3/`, `3-f2/`): fixes 1-3, the `yield_now` loops and the counting kept.
const FIXES_1_2_3: Variant = Variant {
    marker_state: true,
    share_counter: true,
    recheck: true,
    block: false,
};

#[test]
#[should_panic(expected = "false miss")]
fn gix087_as_is_false_miss_without_refresh() {
    run(s1_two_lookups_one_slot(), AS_IS, 3);
}

/// F3 on 0.87.0 as published: executions through F1's window are set aside (and counted); a false miss remains.
#[test]
#[should_panic(expected = "false miss")]
fn gix087_as_is_refresh_on_a_newer_index_false_miss() {
    run_as_is_beyond_f1(s4_refresh_adds_slot(), 2, false);
}

/// F2 on 0.87.0 as published: executions through F1's window and false misses without F2's signature (a counter
/// read 0 with a load claimed on its cursor in flight) are set aside; a false miss with it remains.
#[test]
#[should_panic(expected = "false miss [F2")]
fn gix087_as_is_two_refreshes_fresh_counter_false_miss() {
    run_as_is_beyond_f1(s3_two_refreshes(), 2, true);
}

/// Patch 1 alone removes F1 (S1, S1f); F2 and F3 remain (the `gix087_fresh_counter_two_refreshes_false_miss`
/// test below is S3 on patch 1).
#[test]
fn gix087_patch1_two_lookups_one_slot() {
    run(s1_two_lookups_one_slot(), ONLY_FIX_1, 3);
}

#[test]
fn gix087_patch1_failed_slot_first() {
    run(s1f_failed_slot_first(), ONLY_FIX_1, 2);
}

#[test]
#[should_panic(expected = "false miss")]
fn gix087_patch1_refresh_adds_slot_false_miss() {
    run(s4_refresh_adds_slot(), ONLY_FIX_1, 2);
}

/// Pull requests 1-3 (the `yield_now` loops kept): no false miss in any scenario.
#[test]
fn gix087_patch12_two_lookups_one_slot() {
    run(s1_two_lookups_one_slot(), FIXES_1_2_3, 3);
}

#[test]
fn gix087_patch12_failed_slot_first() {
    run(s1f_failed_slot_first(), FIXES_1_2_3, 2);
}

#[test]
fn gix087_patch12_one_refresh() {
    run(s2_one_refresh_same_slots(2), FIXES_1_2_3, 3);
}

#[test]
fn gix087_patch12_two_refreshes() {
    run(s3_two_refreshes(), FIXES_1_2_3, 2);
}

#[test]
fn gix087_patch12_refresh_adds_slot() {
    run(s4_refresh_adds_slot(), FIXES_1_2_3, 2);
}

#[test]
fn gix087_patched_two_lookups_one_slot() {
    run(s1_two_lookups_one_slot(), PATCHED, 3);
}

#[test]
fn gix087_patched_failed_slot_first() {
    run(s1f_failed_slot_first(), PATCHED, 2);
}

#[test]
fn gix087_fresh_counter_one_refresh_no_false_miss() {
    run(s2_one_refresh_same_slots(2), ONLY_FIX_1, 3);
}

/// Three threads with the `yield_now` loops exceed loom's branch limit; the blocking wait (which changes who
/// waits how, not what any counter reads) keeps the fresh counter of 0.87 and is small enough.
#[test]
fn gix087_fresh_counter_one_refresh_three_threads_no_false_miss() {
    let v = Variant {
        marker_state: true,
        block: true,
        ..AS_IS
    };
    run(s2_one_refresh_same_slots(3), v, 2);
}

#[test]
#[should_panic(expected = "false miss")]
fn gix087_fresh_counter_two_refreshes_false_miss() {
    run(s3_two_refreshes(), ONLY_FIX_1, 2);
}

#[test]
#[should_panic(expected = "false miss")]
fn gix087_refresh_on_a_newer_index_false_miss() {
    run(s4_refresh_adds_slot(), FIXES_1_2, 2);
}

#[test]
fn gix087_patched_one_refresh() {
    run(s2_one_refresh_same_slots(2), PATCHED, 3);
}

#[test]
fn gix087_patched_two_refreshes() {
    run(s3_two_refreshes(), PATCHED, 2);
}

#[test]
fn gix087_patched_refresh_adds_slot() {
    run(s4_refresh_adds_slot(), PATCHED, 2);
}
