//! Reading the big-endian integers of git's index files: the one byte-reading helper of the `.idx`
//! ([`crate::idx`]) and the multi-pack-index ([`crate::midx`]) readers, and of the search and the bucket check
//! they share. Every read is bounds-checked: `None` where the bytes are not in the slice, never a panic.

/// The big-endian `u32` at `at` in `d`, if all four bytes are there.
#[inline(always)]
pub(crate) fn be32(d: &[u8], at: usize) -> Option<u32> {
    let b = d.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(*b.first_chunk::<4>()?))
}

/// The big-endian `u64` at `at` in `d`, if all eight bytes are there.
#[inline(always)]
pub(crate) fn be64(d: &[u8], at: usize) -> Option<u64> {
    let b = d.get(at..at.checked_add(8)?)?;
    Some(u64::from_be_bytes(*b.first_chunk::<8>()?))
}

/// The first 8 bytes of an id (at least 20 bytes long) as a big-endian word: ids compare as their heads first
/// (0 for a slice shorter than 8 bytes, which no id is).
#[inline(always)]
pub(crate) fn head(id: &[u8]) -> u64 {
    id.first_chunk::<8>().map_or(0, |h| u64::from_be_bytes(*h))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::{be32, be64, head};

    #[test]
    fn reads_in_bounds_and_none_past_the_end() {
        let d = [0u8, 0, 1, 2, 0, 0, 0, 0, 0, 3];
        assert_eq!(be32(&d, 0), Some(0x0102));
        assert_eq!(be32(&d, 6), Some(3));
        assert_eq!(be32(&d, 7), None);
        assert_eq!(be32(&d, usize::MAX), None);
        assert_eq!(be64(&d, 2), Some(0x0102_0000_0000_0003));
        assert_eq!(be64(&d, 3), None);
        assert_eq!(head(&[0xff; 20]), u64::MAX);
        assert_eq!(head(&[1; 7]), 0);
    }
}
