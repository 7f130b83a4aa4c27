//! P4, the steady-state miss costs one Acquire load: once every slot is loaded and visited, a miss reads the map's
//! word once and touches nothing else shared (no read-modify-write, no reference count, no lock). What could go
//! wrong: an extra load, store or `Arc` clone on the quiet path (counted by the facade's wrappers,
//! `src/sync/atomic.rs` and `src/sync/arc.rs`), or a facade that miscounts, so the budget checks nothing.

use super::*;

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
/// in the handle's snapshot, `view.map().word().is_retired()`. Each must be exactly one Acquire load.
fn check_fast_paths(view: &mut View<Fake, Plan>, loads: &[AtomicUsize]) -> Result<(), String> {
    take_op_counts();
    if !view.is_settled() {
        return Err("a view that concluded Exhausted is not settled".into());
    }
    let miss = take_op_counts();
    if miss != OpCounts::ONE_ACQUIRE_LOAD {
        return Err(format!("the store's miss fast path did {miss:?}"));
    }
    if view.map().word().is_retired() {
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
        let w = map.word();
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

/// The facade's boundary: a model checks only primitives built inside it (`testing::model::checked`), so a
/// primitive built outside and carried in must fail the model rather than run unchecked on std's side. What
/// would go wrong without it: a map built before the checker ran would be std atomics inside the model, and
/// every count and interleaving above would silently be about nothing.
#[test]
#[should_panic(expected = "built outside the model is used inside it")]
fn facade_primitive_built_outside_the_model_fails_it() {
    let map: std::sync::Arc<SlotMap<Fake, Plan>> =
        std::sync::Arc::new(SlotMap::new(vec![vec![1]], 0, vec![]));
    builder().check(move || {
        let _ = map.word();
    });
}
