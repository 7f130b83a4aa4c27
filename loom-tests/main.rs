//! Exhaustive (bounded) model checks of the lazy-loading protocol in `src/protocol.rs`, on the crate's real code.
//!
//! Compiled into the crate's unit tests under `cfg(all(test, loom))` (`src/lib.rs`), so the models reach the
//! crate-private protocol: run with `RUSTFLAGS="--cfg loom" cargo test --release` (`--lib` for the models alone,
//! `-- loom_models::NAME` for one). Each model checks one property and says what would
//! go wrong without it; `docs/PROTOCOL.md` maps them onto the invariants P1-P6. Set `LOOM_MAX_PREEMPTIONS=N` to
//! change the preemption bound (default 3, 2 for the three-thread models), or `ODB_LOOM_EXHAUSTIVE=1` to run
//! without a bound.
//!
//! The models are safe to run in parallel (cargo's default): loom runs all threads of a model on the OS thread
//! of its test, so everything a model records (trace, operation counts, witness, execution count) lives in std
//! `thread_local!`s, and nothing installs a panic hook (loaders that must panic use `resume_unwind`, which runs
//! no hook).

use std::cell::{Cell, RefCell};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

// The facade's `Arc` (loom's, with each clone and drop counted as a read-modify-write: P4 counts them).
use crate::protocol::model::{
    Arc, OpCounts, reset_model_state, set_spin_limit, take_op_counts, take_trace,
};
use crate::protocol::{Current, Settled, SlotMap, SlotRef, View};
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;

/// The bucket-order record of a file (`src/fanout.rs`'s `BucketState`).
mod fanout;
/// gix-odb 0.87.0 as published and as patched by `docs/upstream/` (see `docs/UPSTREAM.md`).
mod gix_odb_087;
/// The whole-store scenarios shared with the shuttle models (`loom-tests/shuttle.rs`), here at loom's sizes.
mod scenarios;
/// The real store (`src/store`) under loom, over small repositories on disk.
mod store;

/// A fake index: the object ids it holds. Slot values live in the map's `loom::cell::UnsafeCell`, so loom checks
/// that a reader which finds a slot ready also sees its contents (a causality violation fails the model).
type Fake = Vec<u32>;
/// What each slot will load when claimed.
type Plan = Vec<Fake>;

thread_local! {
    /// Executions of the model running on this OS thread (this test).
    static EXECUTIONS: Cell<usize> = const { Cell::new(0) };
    /// The interleaving of the first failing execution of this test, for the negative witness.
    static WITNESS: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A model checker with the suite's bounds, which reports how many executions it explored and how long it took.
struct Checker {
    builder: loom::model::Builder,
}

impl Checker {
    fn check<F: Fn() + Sync + Send + 'static>(&self, model: F) {
        EXECUTIONS.set(0);
        let started = std::time::Instant::now();
        self.builder.check(move || {
            EXECUTIONS.set(EXECUTIONS.get() + 1);
            reset_model_state();
            model()
        });
        println!(
            "loom: {} executions in {:.2?} (preemption bound {:?})",
            EXECUTIONS.get(),
            started.elapsed(),
            self.builder.preemption_bound
        );
    }
}

fn builder() -> Checker {
    builder_bounded(3)
}

/// Like [`builder`], with another default preemption bound (for models with three threads, whose state space
/// grows too fast for CI otherwise; `ODB_LOOM_EXHAUSTIVE` and `LOOM_MAX_PREEMPTIONS` still apply).
fn builder_bounded(default_bound: usize) -> Checker {
    let mut b = loom::model::Builder::new();
    if std::env::var_os("ODB_LOOM_EXHAUSTIVE").is_some() {
        b.preemption_bound = None;
    } else if b.preemption_bound.is_none() {
        b.preemption_bound = Some(default_bound);
    }
    Checker { builder: b }
}

/// Look `want` up through a view, the way the store does on a miss: visit newly visible slots, claim and load
/// unclaimed ones (counting loads per slot in `loads`), wait for in-flight ones.
fn settle(view: &mut View<Fake, Plan>, want: u32, loads: &[AtomicUsize]) -> Settled<usize> {
    view.settle(
        &mut |_, i, r| match r {
            SlotRef::Ready(f) if f.contains(&want) => Some(i),
            _ => None,
        },
        &mut |map: &SlotMap<Fake, Plan>, i| {
            loads[i].fetch_add(1, Ordering::Relaxed);
            map.meta()[i].clone()
        },
    )
}

fn counters(n: usize) -> Arc<Vec<AtomicUsize>> {
    Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect())
}

/// Fail the execution with the protocol trace printed (loom prints no interleaving by itself).
///
/// The model's main thread calls it only after joining the threads it spawned: a panic that unwinds the main
/// thread while loom threads are still alive drops loom objects outside the execution, which aborts the whole
/// test binary instead of failing one test. (A panic in a spawned thread fails the model cleanly; a deadlock
/// found while other threads are blocked may still abort: run a single model with `--exact` to see it.)
fn fail(msg: &str) -> ! {
    let trace = take_trace();
    let mut text = format!("{msg}\ninterleaving (protocol events in order):\n");
    for e in &trace {
        text.push_str("  ");
        text.push_str(e);
        text.push('\n');
    }
    WITNESS.with_borrow_mut(|w| {
        w.get_or_insert_with(|| text.clone());
    });
    panic!("{text}");
}

/// Claim up to `n` slots of `map` in a row and hold the tickets (a loader that has not published yet), the way
/// several loading threads would, with fewer threads for loom to explore.
fn claim_up_to(
    map: &SlotMap<Fake, Plan>,
    n: usize,
) -> Vec<crate::protocol::Ticket<'_, Fake, Plan>> {
    let mut tickets = Vec::new();
    while tickets.len() < n {
        let w = map.load();
        if w.cursor() >= map.len() || w.is_closed() {
            break;
        }
        // A failed claim means the word changed (another claim or completion): read it again.
        if let Some(t) = map.try_claim(w) {
            tickets.push(t);
        }
    }
    tickets
}

/// A loader with two loads in flight at once: claim up to `n` slots, holding the earlier tickets, then publish
/// each (its planned value) in claim order.
fn claim_then_publish(map: &SlotMap<Fake, Plan>, n: usize) {
    for t in claim_up_to(map, n) {
        let i = t.index();
        t.publish(map.meta()[i].clone());
    }
}

/// [`claim_then_publish`], publishing in reverse claim order (the last slot claimed completes first).
fn claim_then_publish_reversed(map: &SlotMap<Fake, Plan>, n: usize) {
    for t in claim_up_to(map, n).into_iter().rev() {
        let i = t.index();
        t.publish(map.meta()[i].clone());
    }
}

/// One handle of the store in miniature: a view that it keeps across lookups, and the ids of every slot it has
/// visited (the store's snapshot). A lookup searches what was visited, then (unless the view is settled: the
/// store's one-load miss path) settles the view for what is new.
struct Reused {
    view: View<Fake, Plan>,
    visited: Vec<u32>,
}

impl Reused {
    fn new(map: Arc<SlotMap<Fake, Plan>>) -> Self {
        Reused {
            view: View::new(map),
            visited: Vec::new(),
        }
    }

    fn lookup(&mut self, want: u32, loads: &[AtomicUsize]) -> bool {
        if self.visited.contains(&want) {
            return true;
        }
        if self.view.is_settled() {
            return false;
        }
        let visited = &mut self.visited;
        let r = self.view.settle(
            &mut |_, _, r| match r {
                SlotRef::Ready(f) => {
                    visited.extend_from_slice(f);
                    f.contains(&want).then_some(())
                }
                _ => None,
            },
            &mut |map: &SlotMap<Fake, Plan>, i| {
                loads[i].fetch_add(1, Ordering::Relaxed);
                map.meta()[i].clone()
            },
        );
        matches!(r, Settled::Found(()))
    }
}

/// P1 with a reused handle. One handle looks up the ids of slots 0 and then 2 of a cold three-slot map while
/// another thread looks up an absent id (loading whatever it claims). The first lookup may find its object in a
/// slot it first saw in flight (a hole) while later slots are still unvisited: `catch_up` must then leave its
/// `seen` word stale, or the second lookup sees the word unchanged, takes the one-load miss path and reports a
/// false miss of the object in slot 2 (the trace: the other thread claims slot 0; the handle records it as a
/// hole, loads slot 1; the other thread completes slot 0 and loads slot 2; the handle's claim fails, it finds
/// its object in the hole and must not mark the word seen).
#[test]
fn p1_reused_handle_after_a_hit_in_a_hole() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(vec![], 3, vec![vec![1], vec![2], vec![3]]));
        let loads = counters(3);
        let (m2, l2) = (map.clone(), loads.clone());
        let t = thread::spawn(move || {
            if Reused::new(m2).lookup(9, &l2) {
                fail("found an absent id");
            }
        });
        let mut h = Reused::new(map);
        let first = h.lookup(1, &loads);
        let second = h.lookup(3, &loads);
        t.join().unwrap();
        if !first || !second {
            fail(&format!(
                "false miss with a reused handle: 1 found {first}, 3 found {second}"
            ));
        }
        for (i, l) in loads.iter().enumerate() {
            assert_eq!(
                l.load(Ordering::Relaxed),
                1,
                "slot {i} not loaded exactly once"
            );
        }
    });
}

/// P1 with a reused handle whose first lookup hits during the walk: the same race as
/// `p1_reused_handle_after_a_hit_in_a_hole`, the handle looking up the ids of slots 1, 0 and 2 in turn, so that
/// a hit is found both in a newly walked slot and in a hole before the last lookup.
#[test]
fn p1_reused_handle_three_lookups() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(vec![], 3, vec![vec![1], vec![2], vec![3]]));
        let loads = counters(3);
        let (m2, l2) = (map.clone(), loads.clone());
        let t = thread::spawn(move || {
            let mut h = Reused::new(m2);
            let found = [h.lookup(3, &l2), h.lookup(9, &l2)];
            if found != [true, false] {
                fail(&format!("spawned handle: 3 and 9 found {found:?}"));
            }
        });
        let mut h = Reused::new(map);
        let found = [
            h.lookup(2, &loads),
            h.lookup(1, &loads),
            h.lookup(3, &loads),
        ];
        t.join().unwrap();
        if found != [true; 3] {
            fail(&format!(
                "false miss with a reused handle: 2, 1, 3 found {found:?}"
            ));
        }
    });
}

/// P1 + P3. Two threads look up the object in the only slot of a fresh map. Whichever loses the claim must wait
/// for the other's load and then find the object. Without the one-word claim (cursor and in-flight in one
/// compare-exchange), the Release on completion or the Acquire on the word, the loser could read "cursor
/// exhausted, nothing in flight" and report a false miss; without the WAITERS handshake it could park forever
/// (loom reports the deadlock).
#[test]
fn p1_p3_racing_lookups_both_find_the_object() {
    builder().check(|| racing_lookups(SlotMap::new(vec![], 1, vec![vec![7]])));
}

/// Two threads look up the object in the only slot of `map`; both must find it, and the slot is loaded once.
/// Shared by `p1_p3_racing_lookups_both_find_the_object` and the negative witness, so the two differ only in how
/// the map claims.
fn racing_lookups(map: SlotMap<Fake, Plan>) {
    let map = Arc::new(map);
    let loads = counters(1);
    let (m2, l2) = (map.clone(), loads.clone());
    let t = thread::spawn(move || {
        let mut v = View::new(m2);
        if !matches!(settle(&mut v, 7, &l2), Settled::Found(0)) {
            fail("false miss (spawned thread)");
        }
    });
    let mut v = View::new(map);
    let found = matches!(settle(&mut v, 7, &loads), Settled::Found(0));
    t.join().unwrap();
    if !found {
        fail("false miss (main thread)");
    }
    // P2: exactly one of them loaded it.
    assert_eq!(
        loads[0].load(Ordering::Relaxed),
        1,
        "slot loaded more than once"
    );
}

/// P1 for a miss. A lookup of an absent id races a lookup that loads the second slot. When the miss concludes
/// "nothing left", it must have visited both slots with their values (a slot still in flight would be skipped).
#[test]
fn p1_concluded_miss_has_visited_every_slot() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(vec![vec![1]], 1, vec![vec![1], vec![2]]));
        let loads = counters(2);
        let (m2, l2) = (map.clone(), loads.clone());
        let t = thread::spawn(move || {
            let mut v = View::new(m2);
            if !matches!(settle(&mut v, 2, &l2), Settled::Found(1)) {
                fail("false miss of id 2");
            }
        });
        let mut v = View::new(map.clone());
        let mut seen = Vec::new();
        let r = v.settle(
            &mut |_, _, r| {
                if let SlotRef::Ready(f) = r {
                    seen.extend_from_slice(f);
                }
                None::<()>
            },
            &mut |map: &SlotMap<Fake, Plan>, i| {
                loads[i].fetch_add(1, Ordering::Relaxed);
                map.meta()[i].clone()
            },
        );
        t.join().unwrap();
        assert!(matches!(r, Settled::Exhausted));
        seen.sort();
        if seen != [1, 2] {
            fail(&format!("miss concluded after visiting only {seen:?}"));
        }
        assert!(v.is_complete());
        assert_eq!(
            loads[1].load(Ordering::Relaxed),
            1,
            "slot 1 loaded more than once"
        );
        assert_eq!(
            loads[0].load(Ordering::Relaxed),
            0,
            "a carried-over slot was reloaded"
        );
    });
}

/// P1 with two holes in one view. A loader claims both slots of a map before publishing either (two loads in
/// flight at once); a lookup that reads the word meanwhile records both slots as holes. When it catches up, it
/// must re-visit every hole that became ready: `catch_up` removes a ready hole with `swap_remove`, which moves
/// the last hole into its place, and a walk that skipped that position would conclude "missing" with the object
/// in the skipped slot.
#[test]
fn p1_two_holes_in_one_view_are_both_revisited() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(vec![], 2, vec![vec![1], vec![2]]));
        let m2 = map.clone();
        let loader = thread::spawn(move || claim_then_publish(&m2, 2));
        let loads = counters(2);
        let mut v = View::new(map.clone());
        let found = matches!(settle(&mut v, 2, &loads), Settled::Found(1));
        loader.join().unwrap();
        if !found {
            fail("false miss of the object in the second hole");
        }
        let mut v = View::new(map);
        assert!(matches!(settle(&mut v, 1, &loads), Settled::Found(0)));
    });
}

/// P1 with two holes published in reverse claim order. As `p1_two_holes_in_one_view_are_both_revisited`, but
/// the loader publishes slot 1 before slot 0: when the view catches up, the resolved hole is the second one, and
/// removing any hole but the resolved one (the first, say) loses slot 0, whose object the lookup then misses.
/// The same handle then looks up slot 1's object (already visited: found in what it visited).
#[test]
fn p1_two_holes_published_in_reverse_claim_order() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(vec![], 2, vec![vec![1], vec![2]]));
        let m2 = map.clone();
        let loader = thread::spawn(move || claim_then_publish_reversed(&m2, 2));
        let loads = counters(2);
        let mut h = Reused::new(map);
        let found = [h.lookup(1, &loads), h.lookup(2, &loads)];
        loader.join().unwrap();
        if found != [true; 2] {
            fail(&format!(
                "false miss with holes published in reverse: 1, 2 found {found:?}"
            ));
        }
    });
}

/// P2. Two lookups of an absent id on a two-slot map: each slot is loaded exactly once, whoever loads it, and
/// both lookups end (nobody waits on a slot nobody will complete).
#[test]
fn p2_each_slot_loaded_exactly_once() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(vec![], 2, vec![vec![1], vec![2]]));
        let loads = counters(2);
        let ts: Vec<_> = (0..2)
            .map(|_| {
                let (m, l) = (map.clone(), loads.clone());
                thread::spawn(move || {
                    let mut v = View::new(m);
                    assert!(matches!(settle(&mut v, 9, &l), Settled::Exhausted));
                    assert!(v.is_complete());
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        for (i, l) in loads.iter().enumerate() {
            assert_eq!(
                l.load(Ordering::Relaxed),
                1,
                "slot {i} not loaded exactly once"
            );
        }
    });
}

/// P2 + P3. A loader that panics leaves its slot abandoned and still completes its load, so a lookup waiting for
/// it wakes up and concludes (with the slot recorded as abandoned) instead of parking forever. The loader panics
/// with `resume_unwind` (no panic hook runs, so nothing is printed and no process-wide hook is needed).
#[test]
fn p2_p3_panicking_loader_wakes_waiters() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(vec![], 1, vec![vec![7]]));
        let m2 = map.clone();
        let t = thread::spawn(move || {
            let mut v = View::new(m2);
            let r = catch_unwind(AssertUnwindSafe(|| {
                v.settle(&mut |_, _, _| None::<()>, &mut |_: &SlotMap<Fake, Plan>,
                                                          _|
                 -> Fake {
                    resume_unwind(Box::new("loader fails"))
                })
            }));
            // Either it panicked while loading, or the other thread had loaded the slot first.
            if let Ok(r) = r {
                assert!(matches!(r, Settled::Exhausted));
            }
        });
        let mut v = View::new(map.clone());
        let mut abandoned = false;
        let r = v.settle(
            &mut |_, _, r| {
                if matches!(r, SlotRef::Abandoned) {
                    abandoned = true;
                }
                if let SlotRef::Ready(f) = r {
                    assert_eq!(f, &vec![7]);
                    return Some(());
                }
                None
            },
            &mut |map: &SlotMap<Fake, Plan>, i| map.meta()[i].clone(),
        );
        t.join().unwrap();
        match r {
            Settled::Found(()) => assert!(!abandoned),
            Settled::Exhausted => assert!(abandoned, "exhausted without seeing the abandoned slot"),
            Settled::Retired => panic!("not retired"),
        }
    });
}

/// The store's loader, in miniature: slot 0 is a multi-pack-index covering slot 1's pack, so slot 1's loader
/// waits for slot 0 (`SlotMap::wait_slot`, as the store's `load_slot` does) and loads nothing if it loaded; any
/// other slot loads its plan.
fn store_like_load(map: &SlotMap<Fake, Plan>, i: usize, loads: &[AtomicUsize]) -> Fake {
    if i == 1 {
        match map.wait_slot(0) {
            SlotRef::Ready(_) => return Vec::new(),
            SlotRef::Abandoned => {}
            SlotRef::Pending => fail("wait_slot returned a pending slot"),
        }
    }
    loads[i].fetch_add(1, Ordering::Relaxed);
    map.meta()[i].clone()
}

/// P3 with a waiter parked while claims continue. Slot 1's loader waits for slot 0 (`wait_slot`) while another
/// thread holds slot 0's ticket and goes on to claim slot 2. A claim keeps `WAITERS` and wakes nobody; the
/// completion of slot 0 (or of slot 2) clears it and notifies. A claim that cleared `WAITERS` without notifying
/// would leave the waiter parked for good (loom reports the deadlock).
#[test]
fn p3_waiter_parked_while_claims_continue() {
    builder().check(waiter_parked_while_claims_continue);
}

/// The body of `p3_waiter_parked_while_claims_continue` (also run with a spin budget of 1).
fn waiter_parked_while_claims_continue() {
    {
        // Slot 0: the multi-pack-index (ids 1, 2); slot 1: pack 2, covered by it; slot 2: pack 3.
        let map = Arc::new(SlotMap::new(vec![], 3, vec![vec![1, 2], vec![2], vec![3]]));
        let loads = counters(3);
        let m2 = map.clone();
        let loader = thread::spawn(move || claim_then_publish(&m2, 2));
        let mut v = View::new(map.clone());
        let r = v.settle(
            &mut |_, i, r| match r {
                SlotRef::Ready(f) if f.contains(&3) => Some(i),
                _ => None,
            },
            &mut |map: &SlotMap<Fake, Plan>, i| store_like_load(map, i, &loads),
        );
        loader.join().unwrap();
        if !matches!(r, Settled::Found(2)) {
            fail("false miss of pack 3's object");
        }
        assert_eq!(
            loads[1].load(Ordering::Relaxed),
            0,
            "a covered pack was loaded although its multi-pack-index loaded"
        );
    }
}

/// P3 with the spin before parking. Every other model runs with a spin budget of 0 (each spin is a branch for
/// loom to explore); these run two of them with a budget of 1, so that the spin's early return (the word changed
/// while spinning) and the fall-through to parking are both explored. A waiter whose spin returned on an
/// unchanged word would busy-loop through `settle` (loom exceeds its branch limit), and one that parked after
/// missing the change in its spin would deadlock.
#[test]
fn p3_spin_then_park_racing_lookups() {
    set_spin_limit(1);
    builder().check(|| racing_lookups(SlotMap::new(vec![], 1, vec![vec![7]])));
}

/// See `p3_spin_then_park_racing_lookups`: the waiter parked while claims continue, with a spin budget of 1.
#[test]
fn p3_spin_then_park_waiter_while_claims_continue() {
    set_spin_limit(1);
    builder().check(waiter_parked_while_claims_continue);
}

/// P3 as the store runs it: three lookups, each loading whatever slot it claims with the store's loader (the
/// covered pack in slot 1 waits for the multi-pack-index in slot 0). All three end and find what they look for.
#[test]
fn p3_three_lookups_with_a_covered_pack() {
    // Three threads: bound 2 (see docs/PROTOCOL.md section 5 for the executions).
    builder_bounded(2).check(|| {
        let map = Arc::new(SlotMap::new(vec![], 3, vec![vec![1, 2], vec![2], vec![3]]));
        let loads = counters(3);
        let lookup = |map: Arc<SlotMap<Fake, Plan>>, loads: Arc<Vec<AtomicUsize>>, want: u32| {
            let mut v = View::new(map);
            let r = v.settle(
                &mut |_, i, r| match r {
                    SlotRef::Ready(f) if f.contains(&want) => Some(i),
                    _ => None,
                },
                &mut |map: &SlotMap<Fake, Plan>, i| store_like_load(map, i, &loads),
            );
            matches!(r, Settled::Found(_))
        };
        let ts: Vec<_> = [2, 3]
            .into_iter()
            .map(|want| {
                let (m, l) = (map.clone(), loads.clone());
                thread::spawn(move || {
                    if !lookup(m, l, want) {
                        fail(&format!("false miss of {want}"));
                    }
                })
            })
            .collect();
        let found = lookup(map.clone(), loads.clone(), 3);
        for t in ts {
            t.join().unwrap();
        }
        if !found {
            fail("false miss of 3 (main thread)");
        }
        assert!(loads.iter().all(|l| l.load(Ordering::Relaxed) <= 1));
    });
}

/// P4, single thread. Once every slot is loaded and visited, a miss through `settle` and the store's fast path
/// (`View::is_settled`) each do exactly one Acquire load of shared state and nothing else: no other load, no
/// store, no read-modify-write, no compare-exchange (successful or failed), no lock, no wait. Counted by the
/// wrappers of `src/sync/atomic.rs`, so an operation that leaves no trace line is counted too.
#[test]
fn p4_steady_state_miss_is_one_load() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(vec![vec![1], vec![2]], 0, vec![]));
        let mut v = View::new(map);
        let loads = counters(2);
        assert!(matches!(settle(&mut v, 9, &loads), Settled::Exhausted));
        take_op_counts();
        assert!(matches!(settle(&mut v, 9, &loads), Settled::Exhausted));
        assert_eq!(take_op_counts(), OpCounts::ONE_ACQUIRE_LOAD, "settle");
        assert!(v.is_settled());
        assert_eq!(take_op_counts(), OpCounts::ONE_ACQUIRE_LOAD, "is_settled");
    });
}

/// The store's fast paths, counted: on a miss, `if view.is_settled() { Exhausted } else { settle }`; after a hit
/// in the handle's snapshot, `view.map().load().is_retired()`. Each must be exactly one Acquire load.
fn check_fast_paths(view: &mut View<Fake, Plan>, loads: &[AtomicUsize]) -> Result<(), String> {
    take_op_counts();
    if !view.is_settled() {
        return Err("a view that concluded Exhausted is not settled".into());
    }
    let miss = take_op_counts();
    if miss != OpCounts::ONE_ACQUIRE_LOAD {
        return Err(format!("the store's miss fast path did {miss:?}"));
    }
    if view.map().load().is_retired() {
        return Err("retired without a refresh".into());
    }
    let hit = take_op_counts();
    if hit != OpCounts::ONE_ACQUIRE_LOAD {
        return Err(format!("the store's hit check did {hit:?}"));
    }
    if !matches!(settle(view, 9, loads), Settled::Exhausted) {
        return Err("the steady-state miss did not conclude".into());
    }
    let settled = take_op_counts();
    if settled != OpCounts::ONE_ACQUIRE_LOAD {
        return Err(format!("the steady-state settle did {settled:?}"));
    }
    Ok(())
}

/// The counting facade itself (`src/sync/`), which every P4 model trusts: an `Arc` clone and an `Arc` drop
/// are one read-modify-write each, the word's load is one Acquire load, a claim against a stale word is one
/// failed compare-exchange, and stores, other loads, `fetch_or`s and locks are counted where the protocol does
/// them.
#[test]
fn p4_the_facade_counts_what_p4_assumes() {
    builder().check(|| {
        let one_rmw = OpCounts {
            rmws: 1,
            ..OpCounts::default()
        };
        let map = Arc::new(SlotMap::<Fake, Plan>::new(vec![], 1, vec![vec![1]]));
        take_op_counts();
        let other = Arc::clone(&map);
        assert_eq!(take_op_counts(), one_rmw, "an Arc clone");
        drop(other);
        assert_eq!(take_op_counts(), one_rmw, "an Arc drop");
        let w = map.load();
        assert_eq!(
            take_op_counts(),
            OpCounts::ONE_ACQUIRE_LOAD,
            "the word's load"
        );
        let t = map.try_claim(w).expect("a fresh map's slot");
        assert!(map.try_claim(w).is_none(), "a stale word cannot claim");
        let counts = take_op_counts();
        assert_eq!(
            (counts.cas_successes, counts.cas_failures),
            (1, 1),
            "{counts:?}"
        );
        // Abandoning the ticket: a Relaxed store of the slot state, then the completion's compare-exchange loop
        // (a Relaxed load and one successful compare-exchange).
        drop(t);
        let abandon = OpCounts {
            stores: 1,
            other_loads: 1,
            cas_successes: 1,
            ..OpCounts::default()
        };
        assert_eq!(take_op_counts(), abandon, "abandoning a ticket");
        // A wait on a word that already changed: the mutex and the `fetch_or` that finds the change.
        map.wait_for_change(w);
        let wait = OpCounts {
            rmws: 1,
            locks: 1,
            ..OpCounts::default()
        };
        assert_eq!(take_op_counts(), wait, "a wait that returns at once");
    });
}

/// P4 after a race. Two lookups of an absent id load a map's two unloaded slots between them (claims, waits,
/// holes); once each has concluded, its fast paths (the store's `is_settled` check, its hit check, and `settle`)
/// each cost exactly one Acquire load, counted per loom thread, whatever the other thread is still doing.
#[test]
fn p4_fast_paths_after_racing_loads_are_one_acquire_load() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(
            vec![vec![1]],
            2,
            vec![vec![1], vec![2], vec![3]],
        ));
        let loads = counters(3);
        let (m2, l2) = (map.clone(), loads.clone());
        let t = thread::spawn(move || {
            let mut v = View::new(m2);
            assert!(matches!(settle(&mut v, 9, &l2), Settled::Exhausted));
            if let Err(e) = check_fast_paths(&mut v, &l2) {
                fail(&e);
            }
        });
        let mut v = View::new(map);
        let concluded = matches!(settle(&mut v, 9, &loads), Settled::Exhausted);
        let fast = check_fast_paths(&mut v, &loads);
        t.join().unwrap();
        assert!(concluded);
        if let Err(e) = fast {
            fail(&e);
        }
    });
}

/// P5 + P1 across a refresh. A refresh replaces the map (adding a slot) while a lookup of an object present
/// throughout runs on the old map. The lookup must find it, in the old map or, after seeing RETIRED, in the new
/// one; the index is loaded once in all (carried over, never reloaded); an old view's values stay valid.
#[test]
fn p5_refresh_racing_lookup_finds_object_present_throughout() {
    builder().check(|| {
        let current = Arc::new(Current::new(SlotMap::<Fake, Plan>::new(
            vec![],
            1,
            vec![vec![1]],
        )));
        let loads = counters(2);
        let c2 = current.clone();
        let mut view = View::new(current.get());
        let r = thread::spawn(move || {
            c2.replace(|old| {
                let carried: Vec<Fake> = old.ready().map(|(_, v)| v.clone()).collect();
                let mut plan = carried.clone();
                // Slot 0 of the old map is "pack 1"; carry it if loaded, else plan to load it again here.
                let unloaded = if carried.is_empty() { 2 } else { 1 };
                if carried.is_empty() {
                    plan.push(vec![1]);
                }
                plan.push(vec![2]);
                // New slots count as loads of the same packs: slot 0 -> pack 1, slot 1 -> pack 2.
                SlotMap::new(carried, unloaded, plan)
            });
        });
        let found = loop {
            match settle(&mut view, 1, &loads) {
                Settled::Found(i) => break Some(i),
                Settled::Exhausted => break None,
                Settled::Retired => view = View::new(current.get()),
            }
        };
        r.join().unwrap();
        match found {
            Some(i) => assert_eq!(i, 0),
            None => fail("false miss of an object present throughout a refresh"),
        }
        // Pack 1 is slot 0 in both maps: loaded at most once overall.
        assert!(
            loads[0].load(Ordering::Relaxed) <= 1,
            "pack 1 loaded twice across the refresh"
        );
        // After the refresh a fresh view finds the new pack.
        let mut fresh = View::new(current.get());
        assert!(matches!(settle(&mut fresh, 2, &loads), Settled::Found(1)));
    });
}

/// P5 + P3 with a panicking refresh. A refresh whose `build` panics (after closing the old map and waiting for
/// its loads) must not leave the map closed and never retired: a lookup that needs an unclaimed slot of it would
/// wait for RETIRED forever. `Current::replace` reopens the map on unwind, so the lookup claims the slot and
/// finds its object; the next refresh then closes the map again and publishes a successor.
#[test]
fn p5_panicking_build_reopens_the_map() {
    builder().check(|| {
        let current = Arc::new(Current::new(SlotMap::<Fake, Plan>::new(
            vec![],
            2,
            vec![vec![1], vec![2]],
        )));
        let loads = counters(2);
        let c2 = current.clone();
        let refresher = thread::spawn(move || {
            let r = catch_unwind(AssertUnwindSafe(|| {
                c2.replace(|_| resume_unwind(Box::new("build fails")))
            }));
            assert!(r.is_err(), "the build's panic propagates");
        });
        let mut view = View::new(current.get());
        let r = settle(&mut view, 2, &loads);
        refresher.join().unwrap();
        match r {
            Settled::Found(1) => {}
            Settled::Found(i) => panic!("found in slot {i}"),
            Settled::Exhausted => fail("false miss while a refresh failed"),
            Settled::Retired => fail("retired although no successor was published"),
        }
        // The next refresh publishes a successor (carrying what was loaded) and retires the old map.
        let old = current.get();
        let new = current.replace(|old| {
            let carried: Vec<Fake> = old.ready().map(|(_, v)| v.clone()).collect();
            let plan: Plan = vec![vec![1], vec![2]];
            let unloaded = plan.len() - carried.len();
            SlotMap::new(carried, unloaded, plan)
        });
        assert!(!Arc::ptr_eq(&old, &new), "no successor published");
        assert!(old.load().is_retired(), "old map not retired");
        assert!(Arc::ptr_eq(&current.get(), &new));
        let mut fresh = View::new(new);
        assert!(matches!(settle(&mut fresh, 1, &loads), Settled::Found(0)));
        for (i, l) in loads.iter().enumerate() {
            assert!(l.load(Ordering::Relaxed) <= 1, "slot {i} loaded twice");
        }
    });
}

/// The negative witness. The same lookups as `p1_p3_racing_lookups_both_find_the_object`, on a map that claims in
/// gix-odb's pre-0.87 order (advance the cursor, then increment the in-flight count, with no `yield_now`). loom
/// must find the false miss; this test passes only because it does, and prints the interleaving.
#[test]
fn witness_pre_087_claim_order_gives_false_miss() {
    WITNESS.take();
    let result = catch_unwind(|| {
        builder().check(|| {
            racing_lookups(SlotMap::new(vec![], 1, vec![vec![7]]).with_pre_087_claim_order())
        });
    });
    assert!(
        result.is_err(),
        "loom did not find the false miss in the pre-0.87 claim order"
    );
    let witness = WITNESS
        .take()
        .expect("the failing execution recorded its interleaving");
    assert!(witness.contains("false miss"));
    assert!(witness.contains("claimed slot 0 (cursor only)"));
    assert!(witness.contains("concludes: nothing left to load"));
    println!("loom found the pre-0.87 false miss:\n{witness}");
}

/// P5 + P2 + P3 with three threads: a refresh races a loader and a miss. The loader finds its object (in the old
/// map or the new one); the miss ends (no deadlock while the old map is closed with unclaimed slots: it waits for
/// RETIRED and moves on); no index is loaded twice across the two maps.
#[test]
fn p5_refresh_racing_loader_and_miss() {
    // Three threads: bound 2 (bound 3 took 3.2 million executions, 11 minutes).
    builder_bounded(2).check(|| {
        // Old map: packs 1 and 2. New map: the same packs plus pack 3. Slot i of either map is pack i + 1.
        let current = Arc::new(Current::new(SlotMap::<Fake, Plan>::new(
            vec![],
            2,
            vec![vec![1], vec![2]],
        )));
        let loads = counters(3);
        let mut views: Vec<View<Fake, Plan>> = (0..2).map(|_| View::new(current.get())).collect();
        let (c2, l2) = (current.clone(), loads.clone());
        let mut loader_view = views.pop().unwrap();
        let loader = thread::spawn(move || {
            loop {
                match settle(&mut loader_view, 2, &l2) {
                    Settled::Found(_) => break,
                    Settled::Exhausted => fail("false miss of pack 2's object during a refresh"),
                    Settled::Retired => loader_view = View::new(c2.get()),
                }
            }
        });
        let c3 = current.clone();
        let refresher = thread::spawn(move || {
            c3.replace(|old| {
                // Carry what is loaded (in slot order: they are a prefix, since claims go in order), plan the rest.
                let carried: Vec<Fake> = old.ready().map(|(_, v)| v.clone()).collect();
                let mut plan = carried.clone();
                for pack in carried.len() + 1..=3 {
                    plan.push(vec![pack as u32]);
                }
                let unloaded = 3 - carried.len();
                SlotMap::new(carried, unloaded, plan)
            });
        });
        let mut miss_view = views.pop().unwrap();
        let invented = loop {
            match settle(&mut miss_view, 9, &loads) {
                Settled::Found(_) => break true,
                Settled::Exhausted => break false,
                Settled::Retired => miss_view = View::new(current.get()),
            }
        };
        loader.join().unwrap();
        refresher.join().unwrap();
        if invented {
            fail("found an absent id");
        }
        for (i, l) in loads.iter().enumerate() {
            assert!(
                l.load(Ordering::Relaxed) <= 1,
                "pack {} loaded twice across the refresh",
                i + 1
            );
        }
    });
}

/// A small scenario of `scenarios.rs` (the store in miniature, shared with shuttle's 8-thread, 64-slot runs).
const SMALL: scenarios::Scenario = scenarios::Scenario {
    lookups: 2,
    ids_per_lookup: 2,
    packs: 2,
    covered: 1,
    refreshes: 0,
    added_per_refresh: 0,
    panic_every: 0,
    panic_at: 0,
    midx_panics: false,
    failing_build: usize::MAX,
    pre_087_claim_order: false,
};

/// Scenario, loom's size: two handles (each looks up an absent id and the covered pack's id) on a map whose
/// slot 0 is a multi-pack-index covering slot 1, whose first load panics. Checks what the shuttle runs check at
/// 8 threads and 64 slots (no false miss unless every slot that could hold the id was abandoned, nothing
/// invented, nothing loaded twice, every thread ends), here for every interleaving within the bound.
#[test]
fn scenario_handles_with_a_panicking_multi_pack_index() {
    builder().check(|| {
        scenarios::run(scenarios::Scenario {
            midx_panics: true,
            ..SMALL
        })
    });
}

/// Scenario, loom's size: one handle races a refresher whose first build panics and whose second adds a pack.
#[test]
fn scenario_handle_across_a_failed_and_a_good_refresh() {
    builder().check(|| {
        scenarios::run(scenarios::Scenario {
            lookups: 1,
            ids_per_lookup: 3,
            covered: 0,
            refreshes: 2,
            added_per_refresh: 1,
            failing_build: 0,
            ..SMALL
        })
    });
}

/// The real store, a reused handle: as `p1_reused_handle_after_a_hit_in_a_hole`, through `Store` and
/// `Handle::locate` (the store's loader, snapshot, fast miss path and filter publication) over three one-object
/// packs. Each pack's index is opened exactly once.
#[test]
fn store_reused_handle_against_a_loading_thread() {
    let (_tmp, dir) = store::objects(&[&[1], &[2], &[3]], 0);
    // Bound 2: every store operation is several protocol steps (see docs/PROTOCOL.md section 5).
    builder_bounded(2)
        .check(move || store::reused_handle_against_a_loader(&dir, &[1, 3], &[1, 2, 3], 3));
}

/// The real store with a multi-pack-index covering two of three packs: the loaders of the covered packs' slots
/// wait for the multi-pack-index's and open nothing, whichever thread claims them, so exactly two index files
/// are opened (the multi-pack-index and the uncovered pack's `.idx`); the reused handle finds a covered and an
/// uncovered object.
#[test]
fn store_covered_packs_open_only_the_multi_pack_index() {
    let (_tmp, dir) = store::objects(&[&[1], &[2], &[3]], 2);
    builder_bounded(2)
        .check(move || store::reused_handle_against_a_loader(&dir, &[2, 3], &[1, 2, 3], 2));
}

/// P4 on the real store in its default configuration (`RefreshMode::OnMiss`, loose probing, `Auto` filter): a
/// steady-state miss and a snapshot hit each cost one Acquire load, `Arc` clones and drops counted.
#[test]
fn store_p4_default_miss_path_is_one_acquire_load() {
    let (_tmp, dir) = store::objects(&[&[1], &[2]], 0);
    builder().check(move || store::default_miss_path(&dir));
}

/// The real store across a refresh: `Store::refresh` (listing, `build_successor` carrying loaded indices over,
/// the filter's inheritance, `Current::replace`) races a handle looking up objects present throughout. Each
/// execution writes its repository afresh (the refresh adds a pack to it).
#[test]
fn store_refresh_racing_a_handle() {
    builder_bounded(2).check(store::refresh_racing_a_handle);
}

/// Loose objects through the real store in each loose mode (`src/loose.rs`, `src/store/loose_sources.rs`; one thread:
/// the file system is what is checked, the mutants of section 10 that touch it are caught here).
#[test]
fn store_loose_objects_in_every_mode() {
    builder().check(store::loose_objects_in_every_mode);
}

/// A refresh whose successor moves the multi-pack-index's slot (a carried pack goes first): the covered packs'
/// `covered_by` must be remapped, or they open their own `.idx` files (`src/store/successor.rs`).
#[test]
fn store_successor_remaps_covered_slots() {
    builder().check(store::successor_remaps_covered_slots);
}

/// The change detector's invariant (docs/PROTOCOL.md section 8b) on the real `Inotify` state word, versions and
/// drain, the kernel queue stood in for by a loom mutex: a lookup that begins after a write returned never
/// answers from a listing that lacks it, whatever a concurrent drain is doing.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn watch_lookup_after_a_write_sees_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    std::fs::create_dir_all(tmp.path().join("ab")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || crate::store::watch_model::lookup_after_a_write_sees_it(&objects));
}

/// The same invariant for a pack: a new `.idx` renamed into `pack/` while another handle drains its event. The
/// lookup's check must not answer `Quiet` for the listing made before it, and its drain's pack count must differ
/// from that listing's token (so the miss refreshes). The one model where only the state word's pack count
/// carries the change.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn watch_lookup_after_a_pack_write_sees_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || crate::store::watch_model::lookup_after_a_pack_write_sees_it(&objects));
}

/// F1 (docs/PROTOCOL.md, section 8c), `stat` detector: a pack renamed into place while another thread refreshes
/// is found by a lookup that began after the rename returned (the real `Freshness`, the file system behind its
/// seam).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn freshness_stat_pack_written_during_a_refresh_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        crate::store::freshness_model::stat_pack_written_during_a_refresh_is_found(&objects)
    });
}

/// F1 with events: the concurrent refresh may drain the pack's event; the listing's token (taken before its
/// scan) must not vouch for a listing that lacks the pack.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn freshness_events_pack_written_during_a_refresh_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        crate::store::freshness_model::events_pack_written_during_a_refresh_is_found(&objects)
    });
}

/// F1 across the deferred switch: the concurrent refresh sets events up (its detector made before its scan).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn freshness_switch_pack_written_during_a_refresh_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        crate::store::freshness_model::switch_pack_written_during_a_refresh_is_found(&objects)
    });
}

/// F2 (docs/PROTOCOL.md, section 8c): a pack removed and put back while a lookup loads it; a refresh after the
/// failed load must not keep the listing (and its recorded failure).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn freshness_vanished_pack_back_is_loaded_again() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder()
        .check(move || crate::store::freshness_model::vanished_pack_back_is_loaded_again(&objects));
}

/// B1 (docs/PROTOCOL.md, section 8c), events: a pack renamed into place while another thread refreshes is found
/// by a batch that began after the rename returned, whose misses share one check made after its searches.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn batch_events_finds_a_pack_written_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        crate::store::batch_model::events_batch_finds_a_pack_written_before_it(&objects)
    });
}

/// B1 with the `stat` detector: the batch's one `stat` of the pack directory.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn batch_stat_finds_a_pack_written_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        crate::store::batch_model::stat_batch_finds_a_pack_written_before_it(&objects)
    });
}

/// B1's witness: the batch answers its misses from a check made before it began (a handle keeping its last
/// check). loom must find the false miss; this test passes only because it does.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn witness_batch_check_before_the_batch() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    let result = catch_unwind(|| {
        builder().check(move || {
            crate::store::batch_model::events_batch_with_an_earlier_check_misses(&objects)
        });
    });
    assert!(
        result.is_err(),
        "loom did not find the false miss of a batch whose check was made before it began"
    );
}
