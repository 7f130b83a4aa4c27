//! Abbreviated object ids: a [`Prefix`] of an id's hex form, as `git rev-parse` and `git cat-file` accept them.

use std::cmp::Ordering;
use std::fmt;

use crate::oid::{HashKind, ObjectId};

/// The fewest hex digits a [`Prefix`] may have: git's `MINIMUM_ABBREV`.
pub const MIN_HEX_LEN: usize = 4;

/// The first `hex_len` hex digits of an object id (at least 4 (git's minimum), at most the kind's full length).
///
/// ```
/// use odb_index::{HashKind, Prefix};
///
/// let p = Prefix::from_hex("e69de2", HashKind::Sha1)?;
/// assert_eq!(p.hex_len(), 6);
/// assert_eq!(p.to_string(), "e69de2");
/// assert!(p.matches(&"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse()?));
/// assert!(!p.matches(&"e69de39bb2d1d6434b8b29ae775ad8c2e48c5391".parse()?));
/// assert!(Prefix::from_hex("e69", HashKind::Sha1).is_err()); // git's minimum is 4 digits
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Prefix {
    /// The digits, zero-padded to a full id.
    id: ObjectId,
    hex_len: usize,
}

/// Why text is not a [`Prefix`].
///
/// ```
/// use odb_index::{HashKind, Prefix, PrefixError};
///
/// assert!(matches!(Prefix::from_hex("abc", HashKind::Sha1), Err(PrefixError::BadLength { len: 3, .. })));
/// assert!(matches!(Prefix::from_hex("abcg", HashKind::Sha1), Err(PrefixError::BadDigit { pos: 3, .. })));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PrefixError {
    /// Fewer than 4 or more than the kind's hex length digits.
    #[error("a prefix of {kind} ids has {MIN_HEX_LEN} to {max} hex digits, not {len}", max = kind.hex_len())]
    BadLength {
        /// Digits given.
        len: usize,
        /// The hash kind asked for.
        kind: HashKind,
    },
    /// A byte that is not a hex digit.
    #[error("not a hex digit at position {pos}: {byte:#04x}")]
    BadDigit {
        /// Where.
        pos: usize,
        /// The byte.
        byte: u8,
    },
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

impl Prefix {
    /// Parse `hex` (either case) as a prefix of a `kind` id.
    pub fn from_hex(hex: &str, kind: HashKind) -> Result<Prefix, PrefixError> {
        let hex = hex.as_bytes();
        if hex.len() < MIN_HEX_LEN || hex.len() > kind.hex_len() {
            return Err(PrefixError::BadLength {
                len: hex.len(),
                kind,
            });
        }
        let mut bytes = [0u8; 32];
        for (pos, &byte) in hex.iter().enumerate() {
            let v = hex_val(byte).ok_or(PrefixError::BadDigit { pos, byte })?;
            bytes[pos / 2] |= if pos % 2 == 0 { v << 4 } else { v };
        }
        let id = ObjectId::from_bytes(&bytes[..kind.len()]).ok_or(PrefixError::BadLength {
            len: hex.len(),
            kind,
        })?;
        Ok(Prefix {
            id,
            hex_len: hex.len(),
        })
    }

    /// The first `hex_len` digits of `id`.
    pub fn new(id: &ObjectId, hex_len: usize) -> Result<Prefix, PrefixError> {
        let kind = id.kind();
        if !(MIN_HEX_LEN..=kind.hex_len()).contains(&hex_len) {
            return Err(PrefixError::BadLength { len: hex_len, kind });
        }
        let mut bytes = [0u8; 32];
        let b = id.as_bytes();
        let full = hex_len / 2;
        bytes[..full].copy_from_slice(&b[..full]);
        if hex_len % 2 == 1 {
            bytes[full] = b[full] & 0xf0;
        }
        let id = ObjectId::from_bytes(&bytes[..kind.len()])
            .ok_or(PrefixError::BadLength { len: hex_len, kind })?;
        Ok(Prefix { id, hex_len })
    }

    /// How many hex digits.
    pub fn hex_len(&self) -> usize {
        self.hex_len
    }

    /// The hash kind of the ids it abbreviates.
    pub fn kind(&self) -> HashKind {
        self.id.kind()
    }

    /// The smallest id with this prefix (the digits, zero-padded).
    pub fn as_id(&self) -> &ObjectId {
        &self.id
    }

    /// How `candidate` (raw id bytes) compares with the ids this prefix abbreviates: `Equal` if it has the prefix,
    /// `Less` if it sorts before all of them, `Greater` after.
    #[inline]
    pub fn cmp_id(&self, candidate: &[u8]) -> Ordering {
        let full = self.hex_len / 2;
        let p = self.id.as_bytes();
        let (Some(c), Some(pp)) = (candidate.get(..full), p.get(..full)) else {
            return Ordering::Less;
        };
        match c.cmp(pp) {
            Ordering::Equal if self.hex_len % 2 == 1 => {
                let c = candidate.get(full).map_or(0, |b| b & 0xf0);
                c.cmp(&p[full])
            }
            o => o,
        }
    }

    /// Whether `id` starts with this prefix (always false for an id of another kind).
    pub fn matches(&self, id: &ObjectId) -> bool {
        id.kind() == self.kind() && self.cmp_id(id.as_bytes()) == Ordering::Equal
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 64];
        let n = self.kind().hex_len();
        self.id.write_hex(&mut buf[..n]);
        // Hex digits are ASCII.
        f.write_str(std::str::from_utf8(&buf[..self.hex_len]).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Prefix({self})")
    }
}

/// The number of leading hex digits `a` and `b` share.
pub(crate) fn common_hex_digits(a: &[u8], b: &[u8]) -> usize {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x != y {
            return 2 * i + usize::from(x >> 4 == y >> 4);
        }
    }
    2 * a.len().min(b.len())
}

/// The range of positions `lo..hi` in a sorted sequence of `n` ids (`id(i)` gives the i-th) whose ids have
/// `prefix`: two binary searches. Out-of-order input gives some range, never a panic.
pub(crate) fn sorted_range<'a>(
    prefix: &Prefix,
    lo: u32,
    hi: u32,
    id: impl Fn(u32) -> Option<&'a [u8]>,
) -> std::ops::Range<u32> {
    let first = partition(lo, hi, |i| {
        id(i).is_some_and(|c| prefix.cmp_id(c) == Ordering::Less)
    });
    let end = partition(first, hi, |i| {
        id(i).is_some_and(|c| prefix.cmp_id(c) != Ordering::Greater)
    });
    first..end
}

/// The first `i` in `lo..hi` for which `before(i)` is false, `before` being true then false along the range.
fn partition(mut lo: u32, mut hi: u32, before: impl Fn(u32) -> bool) -> u32 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_and_even_prefixes() {
        let id: ObjectId = "abcdef0123456789abcdef0123456789abcdef01".parse().unwrap();
        for n in MIN_HEX_LEN..=40 {
            let p = Prefix::new(&id, n).unwrap();
            assert!(p.matches(&id), "{n}");
            assert_eq!(p.to_string(), &id.to_string()[..n]);
            assert_eq!(
                Prefix::from_hex(&id.to_string()[..n], HashKind::Sha1),
                Ok(p)
            );
        }
        let p = Prefix::from_hex("abcde", HashKind::Sha1).unwrap();
        assert_eq!(p.cmp_id(&[0xab, 0xcd, 0xe0]), Ordering::Equal);
        assert_eq!(p.cmp_id(&[0xab, 0xcd, 0xef]), Ordering::Equal);
        assert_eq!(p.cmp_id(&[0xab, 0xcd, 0xd0]), Ordering::Less);
        assert_eq!(p.cmp_id(&[0xab, 0xcd, 0xf0]), Ordering::Greater);
        assert!(Prefix::from_hex("abcg", HashKind::Sha1).is_err());
        assert!(Prefix::new(&id, 41).is_err());
        assert_eq!(common_hex_digits(&[0xab, 0xcd], &[0xab, 0xc0]), 3);
        assert_eq!(common_hex_digits(&[0xab, 0xcd], &[0xab, 0xcd]), 4);
        assert_eq!(common_hex_digits(&[0x1b], &[0xab]), 0);
    }

    #[test]
    fn range_in_sorted_ids() {
        let ids: Vec<[u8; 2]> = vec![
            [0x10, 0],
            [0xab, 0xc0],
            [0xab, 0xcf],
            [0xab, 0xd0],
            [0xff, 0],
        ];
        let get = |i: u32| ids.get(i as usize).map(|x| &x[..]);
        let p = Prefix::from_hex("abc0", HashKind::Sha1).unwrap();
        assert_eq!(sorted_range(&p, 0, 5, get), 1..2);
        let p = Prefix::from_hex("abcf", HashKind::Sha1).unwrap();
        assert_eq!(sorted_range(&p, 0, 5, get), 2..3);
        let p = Prefix::from_hex("ab00", HashKind::Sha1).unwrap();
        assert_eq!(sorted_range(&p, 0, 5, get), 1..1);
    }
}
