//! The search inside a fan-out bucket ([`Table::position`]: [`PackIndex::search`] and the multi-pack-index's): interpolation from
//! the id's next bytes, one correction, a gallop, then binary search, reading entries without bounds checks
//! inside the bracket that the layout checked at open guarantees. Both files hold a [`Table`]: a sorted table of
//! ids behind a fan-out, searched by this one code.

use std::cmp::Ordering;

use super::PackIndex;
use crate::bytes::head;
use crate::oid::HashKind;

/// Where a search of [`Table::find_interpolated`] stands between its steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    /// The search is over: the id's position, or `None` (not listed).
    Done(Option<u32>),
    /// Entry `p`, predicted, is read next; `[l, r)` is the id's whole fan-out bucket.
    Predicted { p: u32, l: u32, r: u32 },
    /// Entry `p`, corrected, is read next; the id lies in `[l, r)` if anywhere.
    Corrected { p: u32, l: u32, r: u32 },
}

impl PackIndex {
    /// The sorted table of ids the searches read (and, for a batch's warming, where the offsets are: version 2's
    /// offset table; version 1 keeps each offset beside its id, warm with it).
    #[inline(always)]
    pub(crate) fn table(&self) -> Table<'_> {
        // SAFETY: `parse` checked at open that the file holds `count` entries of `stride` bytes from `ids_at`,
        // each beginning with an id of `kind.len()` bytes (v2: the ids end where the CRC table begins,
        // `ids_at + count * H <= len`; v1: `ids_at - 4 + count * (H + 4) <= len - trailer`), and that the fan-out
        // is monotonic with `fanout[256] == count` (`fanout[0]` is 0 by construction).
        unsafe {
            Table::new(
                &self.data,
                self.t.ids_at,
                self.t.stride,
                self.count,
                &self.fanout,
                self.kind,
            )
            .with_rows(self.t.offsets_at, if self.version == 1 { 0 } else { 4 })
        }
    }
}

/// Where a gallop starts: the last probe `p`, the bracket `[l, r)` still to search, and whether `id` lies after
/// `p` (`forward`) or before it.
#[derive(Clone, Copy)]
struct Bracket {
    p: u32,
    l: u32,
    r: u32,
    forward: bool,
}

/// A sorted table of ids behind a fan-out, as a `.idx` and a multi-pack-index (its `OIDF` and `OIDL` chunks)
/// hold one: what the search reads. Made by the file types from what they checked at open
/// ([`Table::new`]'s contract).
#[derive(Clone, Copy)]
pub(crate) struct Table<'a> {
    pub(super) d: &'a [u8],
    pub(super) ids_at: usize,
    pub(super) stride: usize,
    count: u32,
    fanout: &'a [u32; 257],
    pub(super) kind: HashKind,
    /// Where the file's per-entry rows a lookup reads after the id are (a `.idx`'s 32-bit offsets, a
    /// multi-pack-index's `OOFF` chunk), and their length: what a batch's warming prefetches beside the ids
    /// (`idx/batch.rs`). `row == 0`: none apart from the ids. Never read, only prefetched.
    pub(super) rows_at: usize,
    pub(super) row: usize,
}

impl<'a> Table<'a> {
    /// The table of `count` entries of `stride` bytes from `ids_at` in `d`, each beginning with an id of
    /// `kind.len()` bytes; `fanout[b]..fanout[b + 1]` are the positions of the ids whose first byte is `b`.
    ///
    /// # Safety
    /// The file's layout was checked: `ids_at + count * stride` and each entry's id (`kind.len()` bytes) are
    /// inside `d` without overflow, and `fanout` is monotonic with `fanout[0] == 0` and `fanout[256] == count`.
    /// The search reads entries without bounds checks on these grounds.
    #[inline(always)]
    pub(crate) unsafe fn new(
        d: &'a [u8],
        ids_at: usize,
        stride: usize,
        count: u32,
        fanout: &'a [u32; 257],
        kind: HashKind,
    ) -> Self {
        Table {
            d,
            ids_at,
            stride,
            count,
            fanout,
            kind,
            rows_at: 0,
            row: 0,
        }
    }

    /// This table with the rows a lookup reads after an entry's id at `rows_at`, `row` bytes each (4 or 8; 0:
    /// none), for a batch's warming to prefetch (`idx/batch.rs`; only prefetched, never read, so unchecked).
    #[inline(always)]
    pub(crate) fn with_rows(self, rows_at: usize, row: usize) -> Self {
        Table {
            rows_at,
            row,
            ..self
        }
    }

    /// The id bytes of entry `i`, without a bounds check.
    ///
    /// # Safety
    /// `i < self.count`, `d` is `self.d`, and `H == self.kind.len()`.
    #[inline(always)]
    unsafe fn entry<'b, const H: usize>(&self, d: &'b [u8], i: u32) -> &'b [u8; H] {
        // No overflow and in bounds: the file's layout holds `count` entries of `stride` bytes from `ids_at`,
        // each beginning with an id of `kind.len() == H` bytes (`Table::new`'s contract).
        let s = self
            .ids_at
            .wrapping_add((i as usize).wrapping_mul(self.stride));
        debug_assert!(i < self.count && s + H <= d.len());
        // SAFETY: by the caller's contract and `Table::new`'s (above), `s..s + H` is in `d`; a
        // `[u8; H]` has alignment 1.
        unsafe { &*d.as_ptr().add(s).cast::<[u8; H]>() }
    }

    /// The first 8 bytes of entry `i` (big-endian), and whether the entry is less than, equal to or greater than
    /// `id` (whose first 8 bytes are `key`).
    ///
    /// # Safety
    /// As [`entry`](Self::entry).
    #[inline(always)]
    unsafe fn cmp_entry<const H: usize>(
        &self,
        d: &[u8],
        i: u32,
        key: u64,
        id: &[u8; H],
    ) -> (u64, Ordering) {
        // SAFETY: forwarded to the caller.
        let e = unsafe { self.entry::<H>(d, i) };
        let (head, tail) = e.split_at(8);
        let mut p = [0u8; 8];
        p.copy_from_slice(head);
        let p = u64::from_be_bytes(p);
        let o = match p.cmp(&key) {
            Ordering::Equal => tail.cmp(&id[8..]),
            o => o,
        };
        (p, o)
    }

    /// Interpolation search inside the fan-out bucket: predict, correct once, gallop, then binary search.
    ///
    /// Terminates and stays in bounds for any file: every probe lies in the bracket `[l, r)`, which shrinks
    /// with every probe, and the bracket starts as a fan-out bucket, inside `[0, count)` (the fan-out was
    /// checked monotonic with `fanout[256] == count` at open). It finds `id` whenever the ids are sorted (the
    /// bracket holds everything that can equal it). No bounds checks in the loop: every probe index is below
    /// `r <= count` (the `// SAFETY` comments name the invariant at each probe).
    ///
    /// Three steps, each a [`Probe`]: [`predict`](Self::predict) reads nothing of the file,
    /// [`correct`](Self::correct) reads the predicted entry, [`finish`](Self::finish) the corrected one and
    /// what follows. A batch of lookups (`idx/batch.rs`) runs one step for each id of a group, prefetching the
    /// entry the next step reads, and resumes each search where its last step left it
    /// ([`position`](Self::position) from a probe): the same steps in the same order, so the same answer
    /// as this function, on any file.
    #[inline(always)]
    pub(crate) fn find_interpolated<const H: usize>(&self, id: &[u8; H]) -> Option<u32> {
        debug_assert_eq!(H, self.kind.len());
        let key = u64::from_be_bytes(*id.first_chunk::<8>()?);
        let probe = self.predict::<H>(id, key);
        // SAFETY: `predict`'s bracket is a fan-out bucket, inside `[0, count)`, and its probe lies in it.
        unsafe { self.resume::<H>(id, key, probe) }
    }

    /// Step 1: the bracket of `id`'s fan-out bucket and the position predicted from `key` (`id`'s first 8 bytes,
    /// big-endian): the 7 bytes after the first as a fraction of the bucket (scaled to 2^64), below its size,
    /// so `l <= p < r`. Reads only the fan-out table copied at open.
    #[inline(always)]
    fn predict<const H: usize>(&self, id: &[u8; H], key: u64) -> Probe {
        let b = usize::from(id[0]);
        let (l, r) = (self.fanout[b], self.fanout[b + 1]);
        if l >= r {
            return Probe::Done(None);
        }
        let p = l.wrapping_add(((u128::from(key << 8) * u128::from(r - l)) >> 64) as u32);
        Probe::Predicted { p, l, r }
    }

    /// The search from `probe` on, to its end.
    ///
    /// # Safety
    /// `probe`'s bracket is inside `[0, count)` and holds its position (`l <= p < r <= count`), as the steps
    /// make it; a `Predicted` bracket is still its whole fan-out bucket (its size is the density of the
    /// correction).
    #[inline(always)]
    unsafe fn resume<const H: usize>(&self, id: &[u8; H], key: u64, probe: Probe) -> Option<u32> {
        let probe = match probe {
            // SAFETY: forwarded to the caller.
            Probe::Predicted { p, l, r } => unsafe { self.correct::<H>(id, key, p, l, r) },
            other => other,
        };
        match probe {
            Probe::Done(i) => i,
            // SAFETY: forwarded to the caller (`correct` keeps its probe inside its narrowed bracket).
            Probe::Corrected { p, l, r } => unsafe { self.finish::<H>(id, key, p, l, r) },
            Probe::Predicted { .. } => None,
        }
    }

    /// Step 2: read the predicted entry `p` of the bucket `[l, r)`; correct by the distance in id space from
    /// the id found there, at the bucket's density.
    ///
    /// # Safety
    /// `l <= p < r <= count`.
    #[inline(always)]
    unsafe fn correct<const H: usize>(
        &self,
        id: &[u8; H],
        key: u64,
        p: u32,
        l: u32,
        r: u32,
    ) -> Probe {
        let d: &[u8] = self.d;
        let n = r - l;
        let (mut l, mut r) = (l, r);
        // SAFETY: l <= p < r <= count (the caller's contract).
        let (v, o) = unsafe { self.cmp_entry::<H>(d, p, key, id) };
        match o {
            Ordering::Equal => return Probe::Done(Some(p)),
            Ordering::Less => l = p + 1,
            Ordering::Greater => r = p,
        }
        if l >= r {
            return Probe::Done(None);
        }
        // The bucket holds n ids per 2^56: |diff| < 2^64 and n <= 2^32, so the product fits in i128; clamped
        // into the bracket.
        let diff = i128::from(key) - i128::from(v);
        let step = (diff * i128::from(n)) >> 56;
        let q = (i128::from(p) + step).clamp(i128::from(l), i128::from(r) - 1) as u32;
        Probe::Corrected { p: q, l, r }
    }

    /// Step 3: read the corrected entry `p` of the bracket `[l, r)`, then gallop and binary search.
    ///
    /// # Safety
    /// `l <= p < r <= count`.
    #[inline(always)]
    unsafe fn finish<const H: usize>(
        &self,
        id: &[u8; H],
        key: u64,
        p: u32,
        l: u32,
        r: u32,
    ) -> Option<u32> {
        let d: &[u8] = self.d;
        let (mut l, mut r) = (l, r);
        // SAFETY: l <= p < r <= count (the caller's contract).
        let forward = match unsafe { self.cmp_entry::<H>(d, p, key, id) }.1 {
            Ordering::Equal => return Some(p),
            Ordering::Less => {
                l = p + 1;
                true
            }
            Ordering::Greater => {
                r = p;
                false
            }
        };
        if l >= r {
            return None;
        }
        self.gallop::<H>(d, id, key, Bracket { p, l, r, forward })
    }

    /// Step 1 of [`position`](Self::position)'s search for a batch: nothing of the file read (`Done(None)` for an
    /// empty bucket or an id of another length).
    #[inline(always)]
    pub(crate) fn probe_start(&self, id: &[u8]) -> Probe {
        match self.kind {
            HashKind::Sha1 => self.start::<20>(id),
            HashKind::Sha256 => self.start::<32>(id),
        }
    }

    #[inline(always)]
    fn start<const H: usize>(&self, id: &[u8]) -> Probe {
        match <&[u8; H]>::try_from(id) {
            Ok(id) => self.predict::<H>(id, head(id)),
            Err(_) => Probe::Done(None),
        }
    }

    /// The next step of `probe` (a step of this index for `id`): `Predicted` reads its entry and is corrected;
    /// anything else is returned as it is. A probe that is not this index's (its bracket outside the file) is
    /// started again.
    #[inline(always)]
    pub(crate) fn probe_next(&self, id: &[u8], probe: Probe) -> Probe {
        let Probe::Predicted { p, l, r } = probe else {
            return probe;
        };
        if !self.holds(p, l, r) {
            return self.probe_start(id);
        }
        match self.kind {
            // SAFETY: l <= p < r <= count (checked just above).
            HashKind::Sha1 => match <&[u8; 20]>::try_from(id) {
                Ok(id) => unsafe { self.correct::<20>(id, head(id), p, l, r) },
                Err(_) => Probe::Done(None),
            },
            // SAFETY: as above.
            HashKind::Sha256 => match <&[u8; 32]>::try_from(id) {
                Ok(id) => unsafe { self.correct::<32>(id, head(id), p, l, r) },
                Err(_) => Probe::Done(None),
            },
        }
    }

    /// The position of `id` in the table, if it lists it (`None` too for an id of another length): the search
    /// of [`find_interpolated`](Self::find_interpolated), from the start, or resumed from `from` (steps of this
    /// table for `id`, [`probe_start`](Self::probe_start) then [`probe_next`](Self::probe_next)) with the same
    /// answer. A probe that is not this table's is searched from the start. The one search of both formats
    /// ([`PackIndex::search`], the multi-pack-index's `search`).
    #[inline(always)]
    pub(crate) fn position(&self, id: &[u8], from: Option<Probe>) -> Option<u32> {
        let Some(probe) = from else {
            return match self.kind {
                HashKind::Sha1 => self.find_interpolated::<20>(id.try_into().ok()?),
                HashKind::Sha256 => self.find_interpolated::<32>(id.try_into().ok()?),
            };
        };
        let ok = match probe {
            Probe::Done(None) => true,
            Probe::Done(Some(i)) => i < self.count,
            Probe::Predicted { p, l, r } | Probe::Corrected { p, l, r } => self.holds(p, l, r),
        };
        if !ok {
            return match self.kind {
                HashKind::Sha1 => self.find_interpolated::<20>(id.try_into().ok()?),
                HashKind::Sha256 => self.find_interpolated::<32>(id.try_into().ok()?),
            };
        }
        match self.kind {
            // SAFETY: the probe's bracket is inside the file (checked just above).
            HashKind::Sha1 => match <&[u8; 20]>::try_from(id) {
                Ok(id) => unsafe { self.resume::<20>(id, head(id), probe) },
                Err(_) => None,
            },
            // SAFETY: as above.
            HashKind::Sha256 => match <&[u8; 32]>::try_from(id) {
                Ok(id) => unsafe { self.resume::<32>(id, head(id), probe) },
                Err(_) => None,
            },
        }
    }

    /// Whether `l <= p < r <= count`: the bracket of a step of this index's search.
    #[inline(always)]
    fn holds(&self, p: u32, l: u32, r: u32) -> bool {
        l <= p && p < r && r <= self.count
    }

    /// Gallop away from the last probe `b.p` in the direction of `id` (doubling the step), then binary search
    /// the bracket `[b.l, b.r)` (with `b.r <= count`). Every probe `q` is checked to lie in `[l, r)` before it is
    /// read.
    #[inline(always)]
    fn gallop<const H: usize>(&self, d: &[u8], id: &[u8; H], key: u64, b: Bracket) -> Option<u32> {
        let Bracket {
            mut p,
            mut l,
            mut r,
            forward,
        } = b;
        let mut step = 1u32;
        if forward {
            // Entries up to p are < id.
            loop {
                let q = match p.checked_add(step) {
                    Some(q) if q < r => q,
                    _ => break,
                };
                // SAFETY: q < r <= count.
                match unsafe { self.cmp_entry::<H>(d, q, key, id) }.1 {
                    Ordering::Equal => return Some(q),
                    Ordering::Less => {
                        l = q + 1;
                        p = q;
                        step = step.saturating_mul(2);
                    }
                    Ordering::Greater => {
                        r = q;
                        break;
                    }
                }
            }
        } else {
            // Entries from p on are > id.
            loop {
                let q = match p.checked_sub(step) {
                    Some(q) if q >= l => q,
                    _ => break,
                };
                // SAFETY: l <= q < p == r <= count (going backwards, r is always the last probe).
                match unsafe { self.cmp_entry::<H>(d, q, key, id) }.1 {
                    Ordering::Equal => return Some(q),
                    Ordering::Greater => {
                        r = q;
                        p = q;
                        step = step.saturating_mul(2);
                    }
                    Ordering::Less => {
                        l = q + 1;
                        break;
                    }
                }
            }
        }
        while l < r {
            let mid = l + (r - l) / 2;
            // SAFETY: l <= mid < r <= count.
            match unsafe { self.cmp_entry::<H>(d, mid, key, id) }.1 {
                Ordering::Less => l = mid + 1,
                Ordering::Greater => r = mid,
                Ordering::Equal => return Some(mid),
            }
        }
        None
    }
}
