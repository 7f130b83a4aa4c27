//! A delta whose base entry in its pack cannot be read, applied to another copy of the base (another pack, or
//! loose), as git's `unpack_entry` does ("failed to read delta base object ...", then the base read by id):
//! t5303's corrupt base with a good loose copy.

use std::cell::Cell;

use gix_object::Kind;
use gix_pack::data::entry::Header as EntryHeader;

use crate::Error;
use crate::answer::Want;
use crate::objects::{Objects, Pack};
use crate::place::Place;

/// How many delta bases one read may fetch by id in a row (a chain of corrupt bases: each is a nested read).
const MAX_NESTED: u32 = 64;

thread_local! {
    /// The bases fetched by id on this thread's reads now under way.
    static NESTED: Cell<u32> = const { Cell::new(0) };
}

impl Objects {
    /// The object whose delta entry `entry` (at `place`, in `p`) failed to decode, its base read by id from
    /// wherever it can be read ([`Objects::answer`]: another copy where its entry here is corrupt) and the delta
    /// applied to it: its type, the object in `out`. `Ok(None)` when `entry` is no delta, or its base cannot be
    /// read elsewhere, or the delta does not apply: the decode's error stands.
    pub(crate) fn delta_on_another_base(
        &self,
        place: &Place,
        p: &Pack,
        entry: &gix_pack::data::Entry,
        out: &mut Vec<u8>,
    ) -> Result<Option<Kind>, Error> {
        if !matches!(
            entry.header,
            EntryHeader::OfsDelta { .. } | EntryHeader::RefDelta { .. }
        ) {
            return Ok(None);
        }
        let Some(base_id) = self.delta_base(place)? else {
            return Ok(None);
        };
        if NESTED.get() >= MAX_NESTED {
            return Ok(None);
        }
        NESTED.set(NESTED.get() + 1);
        let mut base = Vec::new();
        let read = self.answer(&base_id, Want::CONTENTS, &mut base);
        NESTED.set(NESTED.get() - 1);
        let Ok(Some(answer)) = read else {
            return Ok(None);
        };
        let Some(kind) = answer.kind else {
            return Ok(None);
        };
        // The delta itself, whole (its size as the pack says: a failed allocation is no panic, but no answer).
        let Ok(size) = usize::try_from(entry.decompressed_size) else {
            return Ok(None);
        };
        let mut delta = Vec::new();
        if delta.try_reserve_exact(size).is_err() {
            return Ok(None);
        }
        delta.resize(size, 0);
        let inflated = {
            let mut inflate = self.inflate.borrow_mut();
            p.data()?.decompress_entry(entry, &mut inflate, &mut delta)
        };
        // (It says how many bytes of the pack it read; the stream must end after exactly `size` bytes.)
        if inflated.is_err() {
            return Ok(None);
        }
        out.clear();
        Ok(apply(&base, &delta, out).map(|()| kind))
    }
}

/// A git delta (`delta` against `base`) applied into `out`; `None` if it is malformed (a size that does not
/// match, a copy outside the base, an instruction 0, a result of another size than it declares).
fn apply(base: &[u8], delta: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let mut at = 0;
    let mut varint = || {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *delta.get(at)?;
            at += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    };
    let base_size = varint()?;
    let result_size = usize::try_from(varint()?).ok()?;
    if base_size != base.len() as u64 || out.try_reserve_exact(result_size).is_err() {
        return None;
    }
    let mut ops = delta.get(at..)?.iter().copied();
    while let Some(op) = ops.next() {
        if op & 0x80 != 0 {
            // Copy from the base: up to 4 offset bytes and 3 size bytes, those whose bits are set.
            let mut field = |bits: std::ops::Range<u8>| -> Option<usize> {
                let mut v = 0usize;
                for (i, bit) in bits.enumerate() {
                    if op & (1 << bit) != 0 {
                        v |= usize::from(ops.next()?) << (8 * i);
                    }
                }
                Some(v)
            };
            let offset = field(0..4)?;
            let size = match field(4..7)? {
                0 => 0x10000,
                n => n,
            };
            out.extend_from_slice(base.get(offset..offset.checked_add(size)?)?);
        } else if op != 0 {
            for _ in 0..op {
                out.push(ops.next()?);
            }
        } else {
            return None;
        }
        if out.len() > result_size {
            return None;
        }
    }
    (out.len() == result_size).then_some(())
}

#[cfg(test)]
mod tests {
    use super::apply;

    /// Copies and inserts, a copy of the default size (0x10000), and malformed deltas refused without a panic.
    #[test]
    fn deltas_apply_as_git_writes_them() {
        let base: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        // base size 70 000, result 0x10000 + 3 + 2: copy 0x10000 from 0, insert "abc", copy 2 from offset 5.
        let mut delta = vec![0xf0, 0xa2, 0x04, 0x85, 0x80, 0x04];
        delta.extend_from_slice(&[0x80, 3, b'a', b'b', b'c', 0x91, 5, 2]);
        let mut out = Vec::new();
        assert_eq!(apply(&base, &delta, &mut out), Some(()));
        assert_eq!(out.len(), 0x10000 + 5);
        assert_eq!(&out[..0x10000], &base[..0x10000]);
        assert_eq!(&out[0x10000..], &[b'a', b'b', b'c', base[5], base[6]]);
        for bad in [
            &delta[..delta.len() - 1],                    // cut short
            &[0xf0, 0xa2, 0x04, 1, 0x91, 0xff, 0xff][..], // copy outside the base
            &[0xf0, 0xa2, 0x04, 1, 0][..],                // instruction 0
            &[0x01, 0][..],                               // wrong base size
            &[
                0xf0, 0xa2, 0x04, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
            ][..],
        ] {
            assert_eq!(apply(&base, bad, &mut Vec::new()), None, "{bad:?}");
        }
    }
}
