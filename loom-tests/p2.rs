//! P2, each index loaded at most once: whoever loads a slot, it is loaded exactly once, and a loader that panics
//! leaves the slot abandoned and still completes its load. What could go wrong: two threads claiming the same slot
//! (a lost compare-exchange), or a panicking loader that never completes, so its waiters park for good.

use super::*;

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
