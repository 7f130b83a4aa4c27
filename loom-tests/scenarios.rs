//! Whole-store scenarios of the protocol, written once and run by both model checkers: small under loom
//! (`loom-tests/main.rs`, every interleaving within its bounds) and large under shuttle (`loom-tests/shuttle.rs`:
//! 8 threads, 64 slots, refreshes, panicking loaders and builds, at least 10^5 randomized PCT schedules each).
//!
//! A scenario is a store in miniature. Pack 0 is a multi-pack-index covering packs `1..=covered`; every other
//! pack `p` holds the id `ID_BASE + p`. A map's metadata says which pack each slot is; its loader is the store's
//! (`load_slot` in `src/store/listing/load.rs`): a covered pack waits for the multi-pack-index's slot
//! ([`SlotMap::wait_slot`]) and loads nothing if that loaded. Lookup threads keep a handle each (a [`View`] and
//! the values it has visited, as the store's `Handle` keeps its snapshot) and look up ids of every kind; one
//! refresher thread replaces the map (`Current::replace`, serialized as the store's refresh lock does), carrying
//! loaded values over and adding packs; chosen loaders and builds panic (with `resume_unwind`: no panic hook).
//!
//! What each execution checks, whatever the schedule:
//! - no false miss (P1): a lookup that concludes "missing" in a map that lists the id's pack has seen every slot
//!   that could hold the id abandoned (its loader panicked);
//! - nothing invented: an id no pack holds is never found;
//! - each pack is loaded at most once across all maps (P2 and P5: loaded values are carried over, never reloaded);
//! - every thread ends (P3): a thread parked forever is a deadlock, which both checkers report;
//! - after the refreshes, a fresh handle finds the id of every pack of the final map that loads.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
// Bookkeeping counters are std atomics on purpose: both checkers run a model's threads one at a time on one OS
// thread, so they need no synchronization of their own, and std atomics add no branch points to loom's search.
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

use odb_index::testing::model::{Arc, spawn};
use odb_index::testing::model::{Current, Settled, SlotMap, SlotRef, View};

/// Pack `p` holds the id `ID_BASE + p`.
pub const ID_BASE: u32 = 1000;
/// An id that no pack holds.
pub const ABSENT: u32 = 1;

/// The size and the adversity of one scenario.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// Lookup threads (besides the refresher).
    pub lookups: usize,
    /// Ids each lookup thread looks up (one handle, in turn).
    pub ids_per_lookup: usize,
    /// Slots of the first map: packs `0..packs`.
    pub packs: usize,
    /// Packs `1..=covered` are covered by the multi-pack-index (pack 0); 0: no multi-pack-index.
    pub covered: usize,
    /// Refreshes the refresher thread makes (0: no refresher thread).
    pub refreshes: usize,
    /// Packs each refresh adds.
    pub added_per_refresh: usize,
    /// The first load of every pack `p` with `p % panic_every == panic_at` panics (`panic_every` 0: none).
    pub panic_every: usize,
    /// See `panic_every`.
    pub panic_at: usize,
    /// The multi-pack-index's first load panics too (its covered packs then load themselves).
    pub midx_panics: bool,
    /// Refresh number `failing_build` (counted from 0) panics in its `build`; `usize::MAX`: none.
    pub failing_build: usize,
    /// Every map claims in gix-odb's pre-0.87 order (the negative witness: the checker must find a false miss).
    pub pre_087_claim_order: bool,
}

impl Scenario {
    /// Threads the scenario spawns (lookups, plus the refresher if it refreshes).
    #[cfg_attr(loom, allow(dead_code, reason = "only shuttle's report prints it"))]
    pub fn threads(&self) -> usize {
        self.lookups + usize::from(self.refreshes > 0)
    }

    fn total_packs(&self) -> usize {
        self.packs + self.refreshes * self.added_per_refresh
    }

    fn is_covered(&self, pack: usize) -> bool {
        self.covered > 0 && (1..=self.covered).contains(&pack)
    }

    fn first_load_panics(&self, pack: usize) -> bool {
        if pack == 0 && self.covered > 0 {
            return self.midx_panics;
        }
        self.panic_every > 0 && pack % self.panic_every == self.panic_at
    }

    /// The ids pack `p` holds when it loads in full.
    fn ids_of(&self, pack: usize) -> Vec<u32> {
        if pack == 0 && self.covered > 0 {
            (1..=self.covered).map(|p| ID_BASE + p as u32).collect()
        } else {
            vec![ID_BASE + pack as u32]
        }
    }

    /// The ids lookup thread `t` looks for, in turn with one handle: the absent id, a covered pack's, a pack
    /// added by a refresh (when there is one), then packs spread over the first map; rotated by `t`, so that the
    /// absent id is not always first (a lookup of the absent id walks the whole map, which hides a handle that
    /// wrongly marks the word seen after a hit).
    fn wanted(&self, t: usize) -> Vec<u32> {
        let mut ids = vec![ABSENT];
        if self.covered > 0 {
            ids.push(ID_BASE + 1 + (t % self.covered) as u32);
        }
        if self.refreshes > 0 && self.added_per_refresh > 0 {
            ids.push(ID_BASE + (self.packs + t % (self.refreshes * self.added_per_refresh)) as u32);
        }
        let mut k = 0;
        while ids.len() < self.ids_per_lookup.max(1) {
            let pack = (t * 7 + k * 11 + 1) % self.packs;
            ids.push(ID_BASE + pack as u32);
            k += 1;
        }
        ids.truncate(self.ids_per_lookup.max(1));
        let n = ids.len();
        ids.rotate_left(t % n);
        ids
    }

    fn pack_of(&self, id: u32) -> Option<usize> {
        let p = id.checked_sub(ID_BASE)? as usize;
        (p < self.total_packs() && !(p == 0 && self.covered > 0)).then_some(p)
    }
}

/// What a slot holds once loaded.
#[derive(Clone, Debug)]
pub struct Loaded {
    pack: usize,
    ids: Vec<u32>,
}

/// A map's metadata: the pack of each slot, and the multi-pack-index's slot.
pub struct Plan {
    packs: Vec<usize>,
    midx_slot: Option<usize>,
}

type Map = SlotMap<Loaded, Plan>;

/// One execution's shared state.
struct World {
    sc: Scenario,
    current: Current<Loaded, Plan>,
    /// Load attempts per pack (the first one panics for chosen packs).
    attempts: Vec<AtomicUsize>,
    /// Loads per pack that read the pack in full (a covered pack whose multi-pack-index loaded reads nothing).
    loads: Vec<AtomicUsize>,
}

fn plan(sc: &Scenario, packs: Vec<usize>) -> Plan {
    let midx_slot = if sc.covered > 0 {
        packs.iter().position(|&p| p == 0)
    } else {
        None
    };
    Plan { packs, midx_slot }
}

fn first_map(sc: &Scenario) -> Map {
    let map = SlotMap::new(vec![], sc.packs, plan(sc, (0..sc.packs).collect()));
    if sc.pre_087_claim_order {
        map.with_pre_087_claim_order()
    } else {
        map
    }
}

/// The store's loader, in miniature.
fn load(world: &World, map: &Map, slot: usize) -> Loaded {
    let sc = &world.sc;
    let pack = map.meta().packs[slot];
    if world.attempts[pack].fetch_add(1, SeqCst) == 0 && sc.first_load_panics(pack) {
        resume_unwind(Box::new("loader fails"));
    }
    if sc.is_covered(pack) {
        let midx = map
            .meta()
            .midx_slot
            .expect("a map with covered packs lists pack 0");
        // Claims go in slot order and the multi-pack-index precedes every unloaded covered pack (`successor`).
        assert!(
            midx < slot,
            "a covered pack's slot precedes its multi-pack-index's"
        );
        match map.wait_slot(midx) {
            SlotRef::Ready(_) => {
                return Loaded {
                    pack,
                    ids: Vec::new(),
                };
            }
            SlotRef::Abandoned => {}
            SlotRef::Pending => panic!("wait_slot returned a pending slot"),
        }
    }
    world.loads[pack].fetch_add(1, SeqCst);
    Loaded {
        pack,
        ids: sc.ids_of(pack),
    }
}

/// The refresh's `build`: carry every loaded value over (they come first: claims go in slot order, so loaded
/// slots are what was claimed), then the packs still to load, the multi-pack-index first, then the new packs.
fn successor(sc: &Scenario, old: &Map, added: std::ops::Range<usize>) -> Map {
    let carried: Vec<Loaded> = old.ready().map(|(_, v)| v.clone()).collect();
    let have: HashSet<usize> = carried.iter().map(|l| l.pack).collect();
    let mut packs: Vec<usize> = carried.iter().map(|l| l.pack).collect();
    let mut rest: Vec<usize> = old
        .meta()
        .packs
        .iter()
        .copied()
        .filter(|p| !have.contains(p))
        .chain(added)
        .collect();
    rest.sort_unstable();
    let unloaded = rest.len();
    packs.extend(rest);
    let map = SlotMap::new(carried, unloaded, plan(sc, packs));
    if sc.pre_087_claim_order {
        map.with_pre_087_claim_order()
    } else {
        map
    }
}

/// One lookup thread's handle: its view and the values it visited (the store's snapshot).
struct Handle {
    view: View<Loaded, Plan>,
    visited: Vec<Loaded>,
    /// Packs whose slot this view found abandoned.
    abandoned: HashSet<usize>,
}

impl Handle {
    fn new(world: &World) -> Self {
        Handle {
            view: View::new(world.current.get()),
            visited: Vec::new(),
            abandoned: HashSet::new(),
        }
    }

    /// Look `id` up as the store does: in what this handle has visited, then through its view (which loads,
    /// waits and follows refreshes). `Err` describes a wrong answer.
    fn lookup(&mut self, world: &World, id: u32) -> Result<bool, String> {
        loop {
            if self.visited.iter().any(|l| l.ids.contains(&id)) {
                return Ok(true);
            }
            let (view, visited, abandoned) =
                (&mut self.view, &mut self.visited, &mut self.abandoned);
            let r = catch_unwind(AssertUnwindSafe(|| {
                view.settle(
                    &mut |map: &Map, slot, r| match r {
                        SlotRef::Ready(v) => {
                            visited.push(v.clone());
                            v.ids.contains(&id).then_some(())
                        }
                        SlotRef::Abandoned => {
                            abandoned.insert(map.meta().packs[slot]);
                            None
                        }
                        SlotRef::Pending => None,
                    },
                    &mut |map: &Map, slot| load(world, map, slot),
                )
            }));
            // A loader that panics unwinds through the lookup (as through the store's `locate`), leaving its slot
            // abandoned. The caller goes on with the same handle: the view must still be consistent.
            let r = match r {
                Ok(r) => r,
                Err(panic) if panic.downcast_ref::<&str>() == Some(&"loader fails") => continue,
                Err(panic) => resume_unwind(panic),
            };
            match r {
                Settled::Found(()) => return Ok(true),
                Settled::Retired => *self = Handle::new(world),
                Settled::Exhausted => return self.check_miss(world, id).map(|()| false),
            }
        }
    }

    /// A concluded miss is right only if the id's pack is not in this map, or every slot that could hold the id
    /// was found abandoned: its pack's, and the multi-pack-index's when it covers that pack.
    fn check_miss(&self, world: &World, id: u32) -> Result<(), String> {
        let sc = &world.sc;
        let Some(pack) = sc.pack_of(id) else {
            return Ok(());
        };
        let map = self.view.map();
        if !map.meta().packs.contains(&pack) {
            return Ok(());
        }
        let pack_failed = self.abandoned.contains(&pack);
        let midx_failed = !sc.is_covered(pack) || self.abandoned.contains(&0);
        if pack_failed && midx_failed {
            return Ok(());
        }
        Err(format!(
            "false miss of {id} (pack {pack}) in a map of {} slots; abandoned: {:?}",
            map.len(),
            self.abandoned
        ))
    }
}

/// Run one execution of `sc`. Panics (failing the execution) on a wrong answer; a deadlock is the checker's to
/// report.
pub fn run(sc: Scenario) {
    let total = sc.total_packs();
    let world = Arc::new(World {
        sc,
        current: Current::new(first_map(&sc)),
        attempts: (0..total).map(|_| AtomicUsize::new(0)).collect(),
        loads: (0..total).map(|_| AtomicUsize::new(0)).collect(),
    });
    let mut threads = Vec::new();
    for t in 0..sc.lookups {
        let world = world.clone();
        threads.push(spawn(move || {
            let mut handle = Handle::new(&world);
            for id in sc.wanted(t) {
                let found = handle.lookup(&world, id);
                match (id, found) {
                    (_, Err(e)) => panic!("thread {t}: {e}"),
                    (ABSENT, Ok(true)) => panic!("thread {t}: found the absent id"),
                    _ => {}
                }
            }
        }));
    }
    if sc.refreshes > 0 {
        let world = world.clone();
        threads.push(spawn(move || {
            let sc = world.sc;
            for k in 0..sc.refreshes {
                let start = sc.packs + k * sc.added_per_refresh;
                let before = world.current.get();
                let r = catch_unwind(AssertUnwindSafe(|| {
                    world.current.replace(|old| {
                        if k == sc.failing_build {
                            resume_unwind(Box::new("build fails"));
                        }
                        successor(&sc, old, start..start + sc.added_per_refresh)
                    })
                }));
                match r {
                    Ok(new) => {
                        assert!(before.word().is_retired(), "replaced map not retired");
                        assert!(Arc::ptr_eq(&new, &world.current.get()));
                    }
                    Err(_) => {
                        assert_eq!(k, sc.failing_build, "a build that should not fail did");
                        assert!(
                            Arc::ptr_eq(&before, &world.current.get()),
                            "a failed refresh changed the current map"
                        );
                        assert!(
                            !before.word().is_closed(),
                            "a failed refresh left the map closed"
                        );
                    }
                }
            }
        }));
    }
    for t in threads {
        if let Err(panic) = t.join() {
            resume_unwind(panic);
        }
    }
    for (p, l) in world.loads.iter().enumerate() {
        assert!(l.load(SeqCst) <= 1, "pack {p} loaded more than once");
    }
    // Every pack of the final map whose loads can succeed is found by a fresh handle (a failed first load is
    // not retried within one map, so only packs without a pending panic are asked for).
    let mut fresh = Handle::new(&world);
    let last = fresh.view.map().meta().packs.clone();
    for p in last {
        if p == 0 && sc.covered > 0 {
            continue;
        }
        let id = ID_BASE + p as u32;
        match fresh.lookup(&world, id) {
            Ok(true) => {}
            Ok(false) => {
                // Allowed only where a panicking load left the slot(s) abandoned (checked by `lookup`).
            }
            Err(e) => panic!("after the threads ended: {e}"),
        }
    }
}
