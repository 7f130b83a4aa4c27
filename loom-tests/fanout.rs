//! The bucket-order record of a file (`BucketState`, `src/fanout.rs`) under loom: its atomics are the facade's, so
//! loom explores every order in which two threads (two lookups missing in one file, or a lookup and the miss
//! filter's pass over every id) record buckets. The one thing that can go wrong is the count: `all_in_order`
//! makes every miss in the file certain without looking at its bucket, so it must be set exactly when all 256
//! buckets were found in order.

use loom::sync::Arc;
use loom::thread;
use odb_index::testing::model::{BucketState, Confirmed};

/// Every bucket but `except` (bit `b & 63` of word `b >> 6` for bucket `b`).
fn all_but(except: &[u8]) -> [u64; 4] {
    let mut mask = [u64::MAX; 4];
    for &b in except {
        mask[usize::from(b >> 6)] &= !(1 << (b & 63));
    }
    mask
}

/// Two lookups miss in one file whose buckets are all in order but two: bucket 254 is in order and not yet
/// checked, bucket 255 is out of order. Both threads check bucket 254 (each may not see the other's bit yet),
/// one then checks 255. `all_in_order` must stay false: a miss in bucket 255 must still search it otherwise.
/// What would go wrong: `mark` counting a bucket another thread marked first counts 254 twice, the count
/// reaches 256 with 255 out of order, and every later miss there is "certain" (a false miss on a corrupt index).
/// Also: the out-of-order bucket is reported by exactly one call.
#[test]
fn bucket_state_counts_a_bucket_marked_twice_once() {
    super::builder().check(|| {
        let s = Arc::new(BucketState::default());
        assert_eq!(s.mark_in_order(all_but(&[254, 255])), 254);
        let s2 = Arc::clone(&s);
        let t = thread::spawn(move || {
            assert!(matches!(
                s2.confirm(254, || Ok::<(), ()>(())),
                Confirmed::Certain
            ));
        });
        assert!(matches!(
            s.confirm(254, || Ok::<(), ()>(())),
            Confirmed::Certain
        ));
        let reported = match s.confirm(255, || Err(())) {
            Confirmed::OutOfOrder(p) => p.is_some(),
            Confirmed::Certain => false,
        };
        t.join().unwrap();
        assert!(
            reported,
            "the one call that found bucket 255 out of order reports it"
        );
        assert!(s.in_order(254) && s.out_of_order(255) && !s.in_order(255));
        assert!(
            !s.all_in_order(),
            "all_in_order with bucket 255 out of order: a miss there would skip the search"
        );
    });
}

/// The miss filter's pass marks every bucket while a lookup confirms one of them: `all_in_order` must end true
/// (each bucket counted exactly once, so the count reaches 256 and no more). What would go wrong: counting the
/// bucket both calls set overshoots 256, `all_in_order` is never set, and every miss checks its bucket's bit.
#[test]
fn bucket_state_all_in_order_once_every_bucket_is() {
    super::builder().check(|| {
        let s = Arc::new(BucketState::default());
        let s2 = Arc::clone(&s);
        let t = thread::spawn(move || {
            s2.mark_in_order([u64::MAX; 4]);
        });
        assert!(matches!(
            s.confirm(7, || Ok::<(), ()>(())),
            Confirmed::Certain
        ));
        t.join().unwrap();
        assert!(s.all_in_order(), "every bucket in order, counted once each");
        // A few buckets (each load is a branch for loom; 512 of them exceed its branch limit).
        assert!(
            [0, 7, 64, 255]
                .iter()
                .all(|&b| s.in_order(b) && !s.out_of_order(b))
        );
    });
}
