//! P5, refreshes: a refresh replaces the map (closing the old one, carrying its loaded slots over) while lookups
//! and loaders run on it. What could go wrong: a lookup of an object present throughout misses it across the
//! replacement, a load repeated in the new map, a miss that waits forever on a closed map's unclaimed slots, or a
//! panicking build that leaves the map closed.

use super::*;

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
        assert!(old.word().is_retired(), "old map not retired");
        assert!(Arc::ptr_eq(&current.get(), &new));
        let mut fresh = View::new(new);
        assert!(matches!(settle(&mut fresh, 1, &loads), Settled::Found(0)));
        for (i, l) in loads.iter().enumerate() {
            assert!(l.load(Ordering::Relaxed) <= 1, "slot {i} loaded twice");
        }
    });
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
