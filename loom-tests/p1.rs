//! P1, no false miss (docs/PROTOCOL.md): a lookup that concludes "missing" has visited every slot of its map that
//! was ready or in flight when it began. What could go wrong: a claim seen before the load it announces (the
//! pre-0.87 order of gix-odb, witnessed below), a hole (a slot claimed but not yet published) skipped by a view,
//! or a reused handle that keeps a stale "settled" and answers a later lookup from an old walk.

use super::*;

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
pub(super) fn racing_lookups(map: SlotMap<Fake, Plan>) {
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
