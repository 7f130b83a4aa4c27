//! Exhaustive (bounded) model checks of the lazy-loading protocol in `src/protocol.rs`, on the crate's real code.
//!
//! Run with
//! `RUSTFLAGS="--cfg loom --cfg crossbeam_loom" cargo test --release --features loom --test loom --target-dir target/loom`.
//! Each model checks one property and says what would go wrong without it; `docs/PROTOCOL.md` maps them onto
//! the invariants P1-P6. Set `LOOM_MAX_PREEMPTIONS=N` to change the preemption bound (default 3), or
//! `ODB_LOOM_EXHAUSTIVE=1` to run without a bound.
#![cfg(all(loom, feature = "loom"))]

use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use odb_index::protocol::{Current, Settled, SlotMap, SlotRef, View, take_trace};

/// gix-odb 0.87.0 as published and as patched by `docs/upstream/` (see `docs/UPSTREAM.md`).
mod gix_odb_087;

/// A fake index: the object ids it holds. Slot values live in the map's `loom::cell::UnsafeCell`, so loom checks
/// that a reader which finds a slot ready also sees its contents (a causality violation fails the model).
type Fake = Vec<u32>;
/// What each slot will load when claimed.
type Plan = Vec<Fake>;

/// A model checker with the suite's bounds, which reports how many executions it explored and how long it took.
struct Checker {
    builder: loom::model::Builder,
}

static EXECUTIONS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Checker {
    fn check<F: Fn() + Sync + Send + 'static>(&self, model: F) {
        EXECUTIONS.store(0, std::sync::atomic::Ordering::Relaxed);
        let started = std::time::Instant::now();
        self.builder.check(move || {
            EXECUTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            model()
        });
        println!(
            "loom: {} executions in {:.2?} (preemption bound {:?})",
            EXECUTIONS.load(std::sync::atomic::Ordering::Relaxed),
            started.elapsed(),
            self.builder.preemption_bound
        );
    }
}

fn builder() -> Checker {
    builder_bounded(3)
}

/// Like [`builder`], with a smaller default preemption bound for models with three threads, whose state space
/// grows too fast for CI otherwise (`ODB_LOOM_EXHAUSTIVE` and `LOOM_MAX_PREEMPTIONS` still apply).
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
fn fail(msg: &str) -> ! {
    let trace = take_trace();
    let mut text = format!("{msg}\ninterleaving (protocol events in order):\n");
    for e in &trace {
        text.push_str("  ");
        text.push_str(e);
        text.push('\n');
    }
    WITNESS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .replace(text.clone());
    panic!("{text}");
}

static WITNESS: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

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
    take_trace();
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
    if !matches!(settle(&mut v, 7, &loads), Settled::Found(0)) {
        fail("false miss (main thread)");
    }
    t.join().unwrap();
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
        take_trace();
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
            &mut |_, i, r| {
                if let SlotRef::Ready(f) = r {
                    seen.extend_from_slice(f);
                }
                let _ = i;
                None::<()>
            },
            &mut |map: &SlotMap<Fake, Plan>, i| {
                loads[i].fetch_add(1, Ordering::Relaxed);
                map.meta()[i].clone()
            },
        );
        assert!(matches!(r, Settled::Exhausted));
        seen.sort();
        if seen != [1, 2] {
            fail(&format!("miss concluded after visiting only {seen:?}"));
        }
        assert!(v.is_complete());
        t.join().unwrap();
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

/// P2. Three lookups of an absent id on a two-slot map: each slot is loaded exactly once, whoever loads it, and
/// every lookup ends (nobody waits on a slot nobody will complete).
#[test]
fn p2_each_slot_loaded_exactly_once() {
    builder().check(|| {
        take_trace();
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
/// it wakes up and concludes (with the slot recorded as abandoned) instead of parking forever.
#[test]
fn p2_p3_panicking_loader_wakes_waiters() {
    // The loader's panic is expected: keep it out of the output (restored below).
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(p2_p3_model);
    std::panic::set_hook(default_hook);
    if let Err(e) = outcome {
        std::panic::resume_unwind(e);
    }
}

fn p2_p3_model() {
    builder().check(|| {
        take_trace();
        let map = Arc::new(SlotMap::new(vec![], 1, vec![vec![7]]));
        let m2 = map.clone();
        let t = thread::spawn(move || {
            let mut v = View::new(m2);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                v.settle(&mut |_, _, _| None::<()>, &mut |_: &SlotMap<Fake, Plan>,
                                                          _|
                 -> Fake {
                    panic!("loader fails")
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

/// P5 + P1 across a refresh. A refresh replaces the map (adding a slot) while a lookup of an object present
/// throughout runs on the old map. The lookup must find it, in the old map or, after seeing RETIRED, in the new
/// one; the index is loaded once in all (carried over, never reloaded); an old view's values stay valid.
#[test]
fn p5_refresh_racing_lookup_finds_object_present_throughout() {
    builder().check(|| {
        take_trace();
        let current = Arc::new(Current::new(SlotMap::<Fake, Plan>::new(
            vec![],
            1,
            vec![vec![1]],
        )));
        let loads = counters(2);
        let (c2, l2) = (current.clone(), loads.clone());
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
            let _ = &l2;
        });
        let found = loop {
            match settle(&mut view, 1, &loads) {
                Settled::Found(i) => break i,
                Settled::Exhausted => fail("false miss of an object present throughout a refresh"),
                Settled::Retired => view = View::new(current.get()),
            }
        };
        assert_eq!(found, 0);
        r.join().unwrap();
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

/// P4. Once every slot is loaded and visited, a miss is exactly one Acquire load of the word: no claim, no
/// read-modify-write, no wait (the trace records every protocol step).
#[test]
fn p4_steady_state_miss_is_one_load() {
    builder().check(|| {
        let map = Arc::new(SlotMap::new(vec![vec![1], vec![2]], 0, vec![]));
        let mut v = View::new(map);
        let loads = counters(2);
        assert!(matches!(settle(&mut v, 9, &loads), Settled::Exhausted));
        take_trace();
        assert!(matches!(settle(&mut v, 9, &loads), Settled::Exhausted));
        let t = take_trace();
        assert_eq!(
            t.len(),
            2,
            "steady-state miss did more than one load: {t:?}"
        );
        assert!(
            t[0].ends_with("load Word{cursor: 2, in_flight: 0}"),
            "{t:?}"
        );
        assert!(t[1].contains("concludes"), "{t:?}");
    });
}

/// The negative witness. The same lookups as `p1_p3_racing_lookups_both_find_the_object`, on a map that claims in
/// gix-odb's pre-0.87 order (advance the cursor, then increment the in-flight count, with no `yield_now`). loom
/// must find the false miss; this test passes only because it does, and prints the interleaving.
#[test]
fn witness_pre_087_claim_order_gives_false_miss() {
    WITNESS.lock().unwrap().take();
    let result = std::panic::catch_unwind(|| {
        builder().check(|| {
            racing_lookups(SlotMap::new(vec![], 1, vec![vec![7]]).with_pre_087_claim_order())
        });
    });
    assert!(
        result.is_err(),
        "loom did not find the false miss in the pre-0.87 claim order"
    );
    let witness = WITNESS
        .lock()
        .unwrap()
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
    // Three threads: bound 2 explores 104 230 executions (about 15 s); bound 3 took 3.2 million (11 minutes).
    builder_bounded(2).check(|| {
        take_trace();
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
                    Settled::Retired => loader_view = View::new(c2.current_get()),
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
        loop {
            match settle(&mut miss_view, 9, &loads) {
                Settled::Found(_) => panic!("found an absent id"),
                Settled::Exhausted => break,
                Settled::Retired => miss_view = View::new(current.get()),
            }
        }
        loader.join().unwrap();
        refresher.join().unwrap();
        for (i, l) in loads.iter().enumerate() {
            assert!(
                l.load(Ordering::Relaxed) <= 1,
                "pack {} loaded twice across the refresh",
                i + 1
            );
        }
    });
}

trait CurrentGet {
    fn current_get(&self) -> Arc<SlotMap<Fake, Plan>>;
}
impl CurrentGet for Arc<Current<Fake, Plan>> {
    fn current_get(&self) -> Arc<SlotMap<Fake, Plan>> {
        self.get()
    }
}
