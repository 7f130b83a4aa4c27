//! The kinds of delta chains' bases, remembered per pack: a header read ([`Objects::header_at`]) of a delta
//! must reach the chain's base to learn the object's type, entry by entry; objects of one history share their
//! chains (every version of a file deltas against a neighbour), so a front end listing a history walks the
//! same chain again and again. This remembers, for the entries a walk went through, the base's kind it
//! reached, so that the next walk stops at the first entry it knows.
//!
//! A pack file is immutable once written (git renames a new one into place, never rewrites one), and a
//! [`BaseKinds`] belongs to one opened pack (it lives beside that pack's mapping, so a pack written again under
//! the same name is another `Pack` with a table of its own): an entry's chain base kind is a function of that
//! pack's bytes, never stale. The table is direct-mapped, lossy and shared by the threads reading the pack:
//! each slot is one atomic word holding an offset and its kind (a torn pair cannot be read), a collision
//! overwrites, and a slot that names another offset is a miss. `Relaxed` throughout: a slot's word is the
//! whole fact; nothing else is published through it.
//!
//! [`Objects::header_at`]: crate::Objects::header_at

use std::sync::atomic::{AtomicU64, Ordering};

use gix_object::Kind;

/// Slots per pack: a quarter of its objects rounded up to a power of two, within these bounds (64 slots are
/// 512 bytes for a one-object pack; 65 536 are 512 KiB for a pack of 256 Ki objects and more).
const MIN_SLOTS: usize = 64;
const MAX_SLOTS: usize = 1 << 16;

/// Offsets at most this far into a pack are remembered (the three low bits of a slot hold the kind).
const MAX_OFFSET: u64 = u64::MAX >> 3;

/// One pack's remembered chain base kinds (see the module's documentation).
pub(crate) struct BaseKinds {
    slots: Box<[AtomicU64]>,
}

impl BaseKinds {
    /// An empty table for a pack of `objects` entries.
    pub(crate) fn for_objects(objects: u32) -> BaseKinds {
        let n = (objects as usize / 4)
            .next_power_of_two()
            .clamp(MIN_SLOTS, MAX_SLOTS);
        BaseKinds {
            slots: (0..n).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn slot(&self, offset: u64) -> &AtomicU64 {
        // Fibonacci hashing: entries of one chain sit at nearby offsets; spread them.
        let h = offset.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let bits = self.slots.len().trailing_zeros();
        &self.slots[(h >> (64 - bits)) as usize]
    }

    /// The kind of the base of the chain through the entry at `offset`, if a walk recorded it.
    #[inline]
    pub(crate) fn get(&self, offset: u64) -> Option<Kind> {
        if offset > MAX_OFFSET {
            return None;
        }
        let word = self.slot(offset).load(Ordering::Relaxed);
        if word >> 3 != offset {
            return None;
        }
        match word & 7 {
            1 => Some(Kind::Commit),
            2 => Some(Kind::Tree),
            3 => Some(Kind::Blob),
            4 => Some(Kind::Tag),
            _ => None,
        }
    }

    /// Record that the chain through the entry at `offset` has a base of `kind`.
    #[inline]
    pub(crate) fn put(&self, offset: u64, kind: Kind) {
        if offset > MAX_OFFSET {
            return;
        }
        let code = match kind {
            Kind::Commit => 1,
            Kind::Tree => 2,
            Kind::Blob => 3,
            Kind::Tag => 4,
        };
        self.slot(offset)
            .store(offset << 3 | code, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded kind is found at its offset only; a colliding offset replaces it; offset 0 (never an entry's:
    /// the pack header is there) is not confused with an empty slot's word.
    #[test]
    fn remembers_by_offset() {
        let t = BaseKinds::for_objects(1);
        assert_eq!(t.slots.len(), MIN_SLOTS);
        assert_eq!(t.get(12), None);
        t.put(12, Kind::Tree);
        assert_eq!(t.get(12), Some(Kind::Tree));
        assert_eq!(t.get(13), None);
        assert_eq!(t.get(0), None, "an empty slot names offset 0 with no kind");
        // Find an offset in the same slot and check that it takes the slot over.
        let other = (13..)
            .find(|&o| std::ptr::eq(t.slot(o), t.slot(12)))
            .unwrap();
        t.put(other, Kind::Blob);
        assert_eq!(t.get(other), Some(Kind::Blob));
        assert_eq!(t.get(12), None);
        assert_eq!(t.get(MAX_OFFSET + 1), None);
        t.put(MAX_OFFSET + 1, Kind::Commit);
        assert_eq!(t.get(MAX_OFFSET + 1), None);
        assert_eq!(BaseKinds::for_objects(u32::MAX).slots.len(), MAX_SLOTS);
        assert_eq!(BaseKinds::for_objects(32_000).slots.len(), 8192);
    }
}
