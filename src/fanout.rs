//! Fan-out buckets of sorted ids, shared by the pack index (`.idx`) and the multi-pack-index: the one check that
//! a bucket is in order ([`check_bucket`]), and the per-file record of which buckets were checked
//! ([`BucketState`]).
//!
//! A search inside a bucket (binary or interpolation) finds every id the bucket lists only if its ids are in
//! order; opening a file does not read its ids (O(1) open), so a miss is certain only once its bucket was
//! checked. Checking a bucket is O(ids in it) and happens once per bucket and file (on the first miss there,
//! or while the store's miss filter reads every id, [`OrderPass`]).

use crate::sync::plain::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// What [`check_bucket`] found wrong, by position in the file's sorted list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BucketFault {
    /// The id at this position is not greater than the one before it (same bucket).
    OutOfOrder(u32),
    /// The id at this position is not of the bucket the fan-out puts it in: inside the bucket checked, another
    /// first byte; just outside it, the first byte of the bucket checked. `first_byte` is the id's.
    NotInBucket {
        /// Its position.
        at: u32,
        /// Its first byte.
        first_byte: u8,
    },
}

/// The ids of a file as [`check_bucket`] reads them: id `i < count` is `bytes[i * stride..i * stride + len]`.
#[derive(Clone, Copy)]
pub(crate) struct Ids<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) stride: usize,
    pub(crate) len: usize,
    pub(crate) count: u32,
}

impl<'a> Ids<'a> {
    /// Id `i`, if `i < count` and it is inside `bytes`.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<&'a [u8]> {
        if i >= self.count as usize {
            return None;
        }
        let s = i.checked_mul(self.stride)?;
        self.bytes.get(s..s.checked_add(self.len)?)
    }
}

/// The first 8 bytes of an id (at least 20 bytes long) as a big-endian word: ids compare as their heads first.
#[inline(always)]
fn head(id: &[u8]) -> u64 {
    id.first_chunk::<8>().map_or(0, |h| u64::from_be_bytes(*h))
}

/// Whether `a < b` for two ids of one length, `ha`/`hb` their heads (one 8-byte compare, the rest only on a tie).
#[inline(always)]
fn less(ha: u64, a: &[u8], hb: u64, b: &[u8]) -> bool {
    ha < hb || (ha == hb && a.get(8..) < b.get(8..))
}

/// Check fan-out bucket `first`, positions `start..end` of `ids`: each id is of that bucket (its first byte is
/// `first`), each is greater than the one before it, and the ids just before and after the bucket have another
/// first byte (a fan-out boundary moved by one leaves an id of this bucket where a search for it never looks).
/// Then a search in the bucket cannot miss an id the file lists. `Err` names the first position that breaks it.
/// O(ids in the bucket); the ids are compared as 8-byte big-endian words (the rest only on a tie).
pub(crate) fn check_bucket(
    ids: Ids<'_>,
    first: u8,
    start: usize,
    end: usize,
) -> Result<(), BucketFault> {
    let mut prev: Option<(u64, &[u8])> = None;
    for i in start..end {
        // Both files checked at open that they hold as many ids as their fan-out counts.
        let Some(id) = ids.get(i) else { break };
        let h = head(id);
        let first_byte = (h >> 56) as u8;
        if let Some((ph, p)) = prev
            && !less(ph, p, h, id)
        {
            return Err(BucketFault::OutOfOrder(i as u32));
        }
        if first_byte != first {
            return Err(BucketFault::NotInBucket {
                at: i as u32,
                first_byte,
            });
        }
        prev = Some((h, id));
    }
    for i in [start.checked_sub(1), Some(end)].into_iter().flatten() {
        if let Some(id) = ids.get(i)
            && id.first() == Some(&first)
        {
            return Err(BucketFault::NotInBucket {
                at: i as u32,
                first_byte: first,
            });
        }
    }
    Ok(())
}

/// Check every bucket (`fanout[b]` is the end of bucket `b`, the start of bucket 0 is 0): the first fault in
/// file order. Every bucket in order means the whole list is strictly increasing and each id is in its bucket.
pub(crate) fn check_all(ids: Ids<'_>, fanout: impl Fn(u8) -> u32) -> Result<(), BucketFault> {
    let mut start = 0usize;
    for b in 0..=255u8 {
        let end = fanout(b) as usize;
        check_bucket(ids, b, start, end)?;
        start = end;
    }
    Ok(())
}

/// The position of `id` found by reading every id of `ids` in file order: for a bucket found out of order, where
/// a search can miss. O(ids); the heads compared as 8-byte words.
pub(crate) fn position_linear(ids: Ids<'_>, id: &[u8]) -> Option<u32> {
    let key = head(id);
    (0..ids.count).find(|&i| {
        ids.get(i as usize)
            .is_some_and(|e| head(e) == key && e == id)
    })
}

/// Which fan-out buckets (by first byte) of one file were checked ([`check_bucket`]) and found in order or out
/// of order. A fact about a file's immutable contents, so every access is `Relaxed`: a thread that does not see
/// a bit yet checks the bucket again and reaches the same answer (a monotone cache; nothing else is published
/// through these bits).
#[derive(Debug, Default)]
pub(crate) struct BucketState {
    in_order: [AtomicU64; 4],
    out_of_order: [AtomicU64; 4],
    /// How many buckets `in_order` holds; at 256, `all_in_order` is set.
    in_order_count: AtomicU32,
    /// Every bucket was found in order: every miss is certain (the steady state: one Relaxed load).
    all_in_order: AtomicBool,
}

/// What [`BucketState::confirm`] says about a miss in a bucket.
pub(crate) enum Confirmed<P> {
    /// The bucket is in order: the miss is certain.
    Certain,
    /// The bucket is out of order: search otherwise. `Some` for the one call that found it so (to report).
    OutOfOrder(Option<P>),
}

impl BucketState {
    /// Whether every bucket was checked and found in order.
    #[inline(always)]
    pub(crate) fn all_in_order(&self) -> bool {
        // Relaxed: see the type.
        self.all_in_order.load(Ordering::Relaxed)
    }

    /// Whether bucket `first` was checked and found in order.
    #[inline(always)]
    pub(crate) fn in_order(&self, first: u8) -> bool {
        // Relaxed: see the type.
        self.in_order[usize::from(first >> 6)].load(Ordering::Relaxed) & (1 << (first & 63)) != 0
    }

    /// Whether bucket `first` was found out of order.
    pub(crate) fn out_of_order(&self, first: u8) -> bool {
        // Relaxed: see the type.
        self.out_of_order[usize::from(first >> 6)].load(Ordering::Relaxed) & (1 << (first & 63))
            != 0
    }

    /// The buckets found out of order.
    pub(crate) fn out_of_order_buckets(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&b| self.out_of_order(b))
    }

    /// Record what checking bucket `first` found; true for the call that recorded it first.
    pub(crate) fn mark(&self, first: u8, in_order: bool) -> bool {
        let bits = if in_order {
            &self.in_order
        } else {
            &self.out_of_order
        };
        let bit = 1 << (first & 63);
        // Relaxed: see the type. The RMW tells which thread set the bit first: that one counts it.
        let prev = bits[usize::from(first >> 6)].fetch_or(bit, Ordering::Relaxed);
        let new = prev & bit == 0;
        if in_order && new && self.in_order_count.fetch_add(1, Ordering::Relaxed) + 1 == 256 {
            self.all_in_order.store(true, Ordering::Relaxed);
        }
        new
    }

    /// A search missed in bucket `first`: certain if the bucket is in order, which `check` finds out the first
    /// time (then recorded).
    #[inline]
    pub(crate) fn confirm<P>(
        &self,
        first: u8,
        check: impl FnOnce() -> Result<(), P>,
    ) -> Confirmed<P> {
        if self.in_order(first) {
            return Confirmed::Certain;
        }
        if self.out_of_order(first) {
            return Confirmed::OutOfOrder(None);
        }
        match check() {
            Ok(()) => {
                self.mark(first, true);
                Confirmed::Certain
            }
            Err(p) => Confirmed::OutOfOrder(self.mark(first, false).then_some(p)),
        }
    }

    /// A copy (the same file seen by another listing).
    pub(crate) fn copy(&self) -> BucketState {
        let s = BucketState::default();
        for (to, from) in [
            (&s.in_order, &self.in_order),
            (&s.out_of_order, &self.out_of_order),
        ] {
            for (t, f) in to.iter().zip(from) {
                // Relaxed: see the type.
                t.store(f.load(Ordering::Relaxed), Ordering::Relaxed);
            }
        }
        // Relaxed: see the type.
        let count = self.in_order_count.load(Ordering::Relaxed);
        s.in_order_count.store(count, Ordering::Relaxed);
        s.all_in_order.store(count == 256, Ordering::Relaxed);
        s
    }
}

/// Bucket order checked while something reads every id of a file in order anyway (the store's miss filter): one
/// compare with the previous id per id. [`finish`](Self::finish) marks every bucket found in order.
pub(crate) struct OrderPass<'a> {
    /// Bucket of the last position seen.
    bucket: usize,
    prev_head: u64,
    prev: &'a [u8],
    /// Buckets found out of order (or holding a misplaced id): left to [`check_bucket`] on a miss.
    faulty: [u64; 4],
    seen: u32,
}

impl<'a> OrderPass<'a> {
    pub(crate) fn new() -> Self {
        OrderPass {
            bucket: 0,
            prev_head: 0,
            prev: &[],
            faulty: [0; 4],
            seen: 0,
        }
    }

    fn fault(&mut self, b: usize) {
        self.faulty[b >> 6] |= 1 << (b & 63);
    }

    /// The id at the next position, where `fanout(b)` is the end of bucket `b`.
    #[inline(always)]
    pub(crate) fn see(&mut self, id: &'a [u8], fanout: impl Fn(u8) -> u32) {
        let i = self.seen;
        self.seen += 1;
        while self.bucket < 255 && fanout(self.bucket as u8) <= i {
            self.bucket += 1;
        }
        let h = head(id);
        let b = (h >> 56) as usize;
        if b != self.bucket {
            // Misplaced: its own bucket's search cannot reach it, and the bucket it sits in is not in order.
            self.fault(b);
            self.fault(self.bucket);
        } else if i > 0 && !less(self.prev_head, self.prev, h, id) {
            self.fault(b);
        }
        self.prev_head = h;
        self.prev = id;
    }

    /// After every one of the file's `count` ids was seen: mark the buckets found in order in `state`.
    pub(crate) fn finish(self, count: u32, state: &BucketState) {
        if self.seen != count {
            return;
        }
        for b in 0..=255u8 {
            if self.faulty[usize::from(b >> 6)] & (1 << (b & 63)) == 0 && !state.in_order(b) {
                state.mark(b, true);
            }
        }
    }
}
