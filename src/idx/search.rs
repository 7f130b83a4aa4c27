//! The search inside a fan-out bucket ([`PackIndex::position`]): interpolation from the id's next bytes, one
//! correction, a gallop, then binary search, reading entries without bounds checks inside the bracket that the
//! layout checked at open guarantees.

use std::cmp::Ordering;

use super::PackIndex;

/// Where a gallop starts: the last probe `p`, the bracket `[l, r)` still to search, and whether `id` lies after
/// `p` (`forward`) or before it.
#[derive(Clone, Copy)]
struct Bracket {
    p: u32,
    l: u32,
    r: u32,
    forward: bool,
}

impl PackIndex {
    /// The id bytes of entry `i`, without a bounds check.
    ///
    /// # Safety
    /// `i < self.count`, `d` is `self.data`, and `H == self.kind.len()`.
    #[inline(always)]
    unsafe fn entry<'a, const H: usize>(&self, d: &'a [u8], i: u32) -> &'a [u8; H] {
        // No overflow and in bounds: `parse` checked that the file holds `count` entries of `stride` bytes from
        // `ids_at`, each beginning with an id of `kind.len() == H` bytes (v2: the ids end where the CRC table
        // begins, `ids_at + count * H <= len`; v1: `ids_at - 4 + count * (H + 4) <= len - trailer`).
        let s = self
            .ids_at
            .wrapping_add((i as usize).wrapping_mul(self.stride));
        debug_assert!(i < self.count && s + H <= d.len());
        // SAFETY: by the caller's contract and the layout checked at open (above), `s..s + H` is in `d`; a
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
    #[inline]
    pub(super) fn find_interpolated<const H: usize>(&self, id: &[u8; H]) -> Option<u32> {
        debug_assert_eq!(H, self.kind.len());
        let d: &[u8] = &self.data;
        let b = usize::from(id[0]);
        let (mut l, mut r) = (self.fanout[b], self.fanout[b + 1]);
        if l >= r {
            return None;
        }
        let key = u64::from_be_bytes(*id.first_chunk::<8>()?);
        let n = r - l;
        // The 7 bytes after the first, as a fraction of the bucket (scaled to 2^64): below n, so p < r.
        let frac = key << 8;
        let mut p = l.wrapping_add(((u128::from(frac) * u128::from(n)) >> 64) as u32);
        // SAFETY: l <= p < r <= count.
        let (v, o) = unsafe { self.cmp_entry::<H>(d, p, key, id) };
        match o {
            Ordering::Equal => return Some(p),
            Ordering::Less => l = p + 1,
            Ordering::Greater => r = p,
        }
        if l >= r {
            return None;
        }
        // A correction by the distance in id space from the id found at p, at the bucket's density (n ids per
        // 2^56): |diff| < 2^64 and n <= 2^32, so the product fits in i128; clamped into the bracket.
        let diff = i128::from(key) - i128::from(v);
        let step = (diff * i128::from(n)) >> 56;
        p = (i128::from(p) + step).clamp(i128::from(l), i128::from(r) - 1) as u32;
        // SAFETY: l <= p < r <= count (clamped).
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

    /// Gallop away from the last probe `b.p` in the direction of `id` (doubling the step), then binary search
    /// the bracket `[b.l, b.r)` (with `b.r <= count`). Every probe `q` is checked to lie in `[l, r)` before it is
    /// read.
    #[inline]
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
