//! P3, waiters wake: a lookup that waits for an in-flight load parks on the condition variable and is woken when
//! it completes, never a yield-and-retry loop. What could go wrong: a claim that clears `WAITERS` without
//! notifying, a notification sent without the mutex (a lost wake-up), a spin path that skips the re-check before
//! parking, or a covered pack's loader waiting for its multi-pack-index's slot forever (loom reports each as a
//! deadlock).

use super::p1::racing_lookups;
use super::*;

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
