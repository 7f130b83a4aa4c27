//! Fan-out buckets of sorted ids, shared by the pack index (`.idx`) and the multi-pack-index: the one check that
//! a bucket is in order ([`check_bucket`]), and the per-file record of which buckets were checked
//! ([`BucketState`]).
//!
//! A search inside a bucket (binary or interpolation) finds every id the bucket lists only if its ids are in
//! order; opening a file does not read its ids (O(1) open), so a miss is certain only once its bucket was
//! checked. Checking a bucket is O(ids in it) and happens once per bucket and file (on the first miss there,
//! or while the store's miss filter reads every id, [`OrderPass`]).

// The modelled facade: loom's atomics in the loom build, so `loom-tests/fanout.rs` checks the counting of `mark`.
use crate::bytes::head;
use crate::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering};

/// What [`check_bucket`] found wrong, by position in the file's sorted list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BucketFault {
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
pub struct Ids<'a> {
    /// The file's id table (or any bytes holding the ids at `stride`).
    pub bytes: &'a [u8],
    /// Bytes from one id to the next.
    pub stride: usize,
    /// Bytes of one id (the hash length).
    pub len: usize,
    /// How many ids the table holds.
    pub count: u32,
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
pub fn check_bucket(ids: Ids<'_>, first: u8, start: usize, end: usize) -> Result<(), BucketFault> {
    if in_order(ids, first, start, end) {
        return Ok(());
    }
    first_fault(ids, first, start, end)
}

/// [`check_bucket`]'s answer without the position, on the path of a file in order: the ids' 8-byte heads strictly
/// increasing and the first and last of the bucket's byte put every id in the bucket. The heads are compared
/// branch-free (`heads`); only a file with two equal heads in the bucket (or one out of order) compares whole
/// ids (`increasing_exact`).
pub fn in_order(ids: Ids<'_>, first: u8, start: usize, end: usize) -> bool {
    let (stride, len) = (ids.stride, ids.len);
    if start < end {
        let region = (end - 1).checked_mul(stride).and_then(|last| {
            ids.bytes
                .get(start.checked_mul(stride)?..last.checked_add(len)?)
        });
        let Some(region) = region.filter(|_| end <= ids.count as usize && len >= 8) else {
            return false;
        };
        // The strides of the files read: `.idx` v2 and the multi-pack-index (an id per entry), `.idx` v1 (a 4-byte
        // offset after each id), SHA-1 and SHA-256; a constant stride lets the loop read each head unchecked.
        let heads = match stride {
            20 => heads::<20>(region),
            24 => heads::<24>(region),
            32 => heads::<32>(region),
            36 => heads::<36>(region),
            _ => heads_any(region, stride),
        };
        let Some((lo, hi, increasing)) = heads else {
            return false;
        };
        if (lo >> 56) as u8 != first || (hi >> 56) as u8 != first {
            return false;
        }
        if !increasing && !increasing_exact(region, stride, len) {
            return false;
        }
    }
    [start.checked_sub(1), Some(end)]
        .into_iter()
        .flatten()
        .all(|i| ids.get(i).is_none_or(|id| id.first() != Some(&first)))
}

/// The heads of the ids in `region` (each id starts a chunk of `N` bytes; the last id may be shorter than a
/// chunk, a v1 entry's offset after it being outside the region): the first and the last, and whether each is
/// greater than the one before it. One compare per head, accumulated without a branch over blocks of
/// [`BLOCK`] ids; a block with a head not greater than the one before it ends the scan (a file whose ids are all
/// equal, say a sparse one of holes, is not read past its first block).
#[inline(always)]
fn heads<const N: usize>(region: &[u8]) -> Option<(u64, u64, bool)> {
    let (chunks, rest) = region.as_chunks::<N>();
    let last = (!rest.is_empty()).then(|| head(rest));
    let lo = chunks.first().map(|c| head(c)).or(last)?;
    let hi = last.or_else(|| chunks.last().map(|c| head(c)))?;
    let mut prev = lo;
    for block in chunks.get(1..).unwrap_or_default().chunks(BLOCK) {
        let (p, not_greater) = block.iter().fold((prev, false), |(p, bad), c| {
            let h = head(c);
            (h, bad | (h <= p))
        });
        if not_greater {
            return Some((lo, hi, false));
        }
        prev = p;
    }
    let increasing = chunks.is_empty() || last.is_none_or(|l| l > prev);
    Some((lo, hi, increasing))
}

/// [`heads`] for a stride no file has (kept for completeness): a plain loop, ending at the first head not greater
/// than the one before it.
fn heads_any(region: &[u8], stride: usize) -> Option<(u64, u64, bool)> {
    let mut chunks = region.chunks(stride);
    let lo = head(chunks.next()?);
    let hi = region.chunks(stride).next_back().map_or(lo, head);
    let mut prev = lo;
    for c in chunks {
        let h = head(c);
        if h <= prev {
            return Some((lo, hi, false));
        }
        prev = h;
    }
    Some((lo, hi, true))
}

/// Ids per block of [`heads`]' branch-free scan.
const BLOCK: usize = 64;

/// Whether the ids of `region` (one every `stride` bytes, `len` long) are strictly increasing, compared whole:
/// [`in_order`]'s answer when two heads are equal (ids differing only after byte 8) or out of order.
#[cold]
fn increasing_exact(region: &[u8], stride: usize, len: usize) -> bool {
    let mut chunks = region.chunks(stride);
    let Some(mut prev) = chunks.next() else {
        return true;
    };
    chunks.all(|c| {
        let greater = less(
            head(prev),
            prev.get(..len).unwrap_or(prev),
            head(c),
            c.get(..len).unwrap_or(c),
        );
        prev = c;
        greater
    })
}

/// The first position that breaks [`check_bucket`]'s rule (`Ok` if none: then [`in_order`] said no only for
/// an id outside the file, which opening rules out).
fn first_fault(ids: Ids<'_>, first: u8, start: usize, end: usize) -> Result<(), BucketFault> {
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
/// through these bits). Only the count needs care: each bucket is counted by the one call whose read-modify-write
/// set its bit, so the count reaches 256 only when every bucket is in order (`loom-tests/fanout.rs`).
#[derive(Debug)]
pub struct BucketState {
    in_order: [AtomicU64; 4],
    out_of_order: [AtomicU64; 4],
    /// How many buckets `in_order` holds; at 256, `all_in_order` is set.
    in_order_count: AtomicU32,
    /// Every bucket was found in order: every miss is certain (the steady state: one Relaxed load).
    all_in_order: AtomicBool,
}

/// What [`BucketState::confirm`] says about a miss in a bucket.
pub enum Confirmed<P> {
    /// The bucket is in order: the miss is certain.
    Certain,
    /// The bucket is out of order: search otherwise. `Some` for the one call that found it so (to report).
    OutOfOrder(Option<P>),
}

impl Default for BucketState {
    fn default() -> Self {
        BucketState {
            in_order: std::array::from_fn(|_| AtomicU64::new(0)),
            out_of_order: std::array::from_fn(|_| AtomicU64::new(0)),
            in_order_count: AtomicU32::new(0),
            all_in_order: AtomicBool::new(false),
        }
    }
}

impl BucketState {
    /// Whether every bucket was checked and found in order.
    #[inline(always)]
    pub fn all_in_order(&self) -> bool {
        // Relaxed: see the type.
        self.all_in_order.load(Ordering::Relaxed)
    }

    /// Whether bucket `first` was checked and found in order.
    #[inline(always)]
    pub fn in_order(&self, first: u8) -> bool {
        // Relaxed: see the type.
        self.in_order[usize::from(first >> 6)].load(Ordering::Relaxed) & (1 << (first & 63)) != 0
    }

    /// Whether bucket `first` was found out of order.
    pub fn out_of_order(&self, first: u8) -> bool {
        // Relaxed: see the type.
        self.out_of_order[usize::from(first >> 6)].load(Ordering::Relaxed) & (1 << (first & 63))
            != 0
    }

    /// The buckets found out of order.
    pub fn out_of_order_buckets(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&b| self.out_of_order(b))
    }

    /// Record what checking bucket `first` found; true for the call that recorded it first.
    pub fn mark(&self, first: u8, in_order: bool) -> bool {
        let mut mask = [0u64; 4];
        mask[usize::from(first >> 6)] = 1 << (first & 63);
        if in_order {
            return self.mark_in_order(mask) != 0;
        }
        // Relaxed: see the type. The RMW tells which thread set the bit first: that one reports it.
        let prev = self.out_of_order[usize::from(first >> 6)]
            .fetch_or(mask[usize::from(first >> 6)], Ordering::Relaxed);
        prev & mask[usize::from(first >> 6)] == 0
    }

    /// Record the buckets of `mask` (bit `b & 63` of word `b >> 6` for bucket `b`) as in order: one
    /// read-modify-write per word, and the count raised by the buckets this call set first (a bucket another
    /// thread set first is that thread's to count). Returns that number.
    pub fn mark_in_order(&self, mask: [u64; 4]) -> u32 {
        let mut new = 0;
        for (word, m) in self.in_order.iter().zip(mask) {
            if m != 0 {
                // Relaxed: see the type.
                let prev = word.fetch_or(m, Ordering::Relaxed);
                new += (m & !prev).count_ones();
            }
        }
        // Relaxed: see the type. The sum of what each call set first counts every bucket once.
        if new > 0 && self.in_order_count.fetch_add(new, Ordering::Relaxed) + new == 256 {
            self.all_in_order.store(true, Ordering::Relaxed);
        }
        new
    }

    /// A search missed in bucket `first`: certain if the bucket is in order, which `check` finds out the first
    /// time (then recorded).
    #[inline]
    pub fn confirm<P>(&self, first: u8, check: impl FnOnce() -> Result<(), P>) -> Confirmed<P> {
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
    pub fn copy(&self) -> BucketState {
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

/// Call `f` with every id of `ids` in file order (`fanout(b)` is the end of bucket `b`), checking the buckets'
/// order on the way (one compare per id, for a caller that reads every id anyway: the store's miss filter);
/// then mark every bucket found in order in `state`, as a miss there would after [`check_bucket`]. A bucket out
/// of order, or holding an id of another bucket, or whose id sits in another, is left for [`check_bucket`].
pub(crate) fn for_each_checking_order(
    ids: Ids<'_>,
    fanout: impl Fn(u8) -> u32,
    state: &BucketState,
    mut f: impl FnMut(&[u8]),
) {
    let mut faulty = [0u64; 4];
    let mut fault = |b: usize| faulty[b >> 6] |= 1 << (b & 63);
    let (mut prev_head, mut prev) = (0u64, &[][..]);
    let mut start = 0usize;
    let mut complete = true;
    for b in 0..=255u8 {
        let end = fanout(b) as usize;
        for i in start..end {
            let Some(id) = ids.get(i) else {
                // Not reached (both files checked their layout at open); then mark nothing.
                complete = false;
                continue;
            };
            f(id);
            let h = head(id);
            let first = (h >> 56) as usize;
            if first != usize::from(b) {
                // Its own bucket's search cannot reach it, and the bucket it sits in is not in order.
                fault(first);
                fault(usize::from(b));
            } else if i > start && !less(prev_head, prev, h, id) {
                fault(first);
            }
            (prev_head, prev) = (h, id);
        }
        start = end;
    }
    if !complete {
        return;
    }
    state.mark_in_order(faulty.map(|f| !f));
}
