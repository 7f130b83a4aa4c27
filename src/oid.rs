//! Object ids: SHA-1 and SHA-256, parsed from hex with typed errors.

use std::fmt;

/// Which hash function a repository (and every index file in it) uses.
///
/// ```
/// use odb_index::HashKind;
/// assert_eq!(HashKind::Sha1.len(), 20);
/// assert_eq!(HashKind::Sha256.hex_len(), 64);
/// assert_eq!("sha256".parse::<HashKind>().unwrap(), HashKind::Sha256);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HashKind {
    /// SHA-1, 20 bytes: git's default object format.
    Sha1,
    /// SHA-256, 32 bytes: `git init --object-format=sha256`.
    Sha256,
}

impl HashKind {
    /// Length of an id in bytes.
    #[inline]
    #[allow(clippy::len_without_is_empty)] // a hash kind is never empty
    pub const fn len(self) -> usize {
        match self {
            HashKind::Sha1 => 20,
            HashKind::Sha256 => 32,
        }
    }

    /// Length of an id in hex digits.
    #[inline]
    pub const fn hex_len(self) -> usize {
        self.len() * 2
    }

    /// The name git uses in `extensions.objectFormat` (`sha1` or `sha256`).
    pub const fn name(self) -> &'static str {
        match self {
            HashKind::Sha1 => "sha1",
            HashKind::Sha256 => "sha256",
        }
    }

    /// The format id used in multi-pack-index headers (1 = SHA-1, 2 = SHA-256).
    pub const fn midx_id(self) -> u8 {
        match self {
            HashKind::Sha1 => 1,
            HashKind::Sha256 => 2,
        }
    }

    /// The hash kind whose id length is `len` bytes, if any.
    pub const fn from_len(len: usize) -> Option<HashKind> {
        match len {
            20 => Some(HashKind::Sha1),
            32 => Some(HashKind::Sha256),
            _ => None,
        }
    }

    /// Hash `data` with this kind's function (used for trailer checksums).
    pub fn digest(self, data: &[u8]) -> ObjectId {
        use sha1::Digest as _;
        match self {
            HashKind::Sha1 => {
                let d = sha1::Sha1::digest(data);
                ObjectId::from_bytes(&d).expect("20 bytes")
            }
            HashKind::Sha256 => {
                let d = sha2::Sha256::digest(data);
                ObjectId::from_bytes(&d).expect("32 bytes")
            }
        }
    }
}

impl fmt::Display for HashKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for HashKind {
    type Err = UnknownHashKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "sha1" => Ok(HashKind::Sha1),
            "sha256" => Ok(HashKind::Sha256),
            _ => Err(UnknownHashKind(s.to_owned())),
        }
    }
}

/// A hash name that is neither `sha1` nor `sha256`.
///
/// ```
/// use odb_index::{HashKind, UnknownHashKind};
///
/// assert_eq!("sha256".parse::<HashKind>(), Ok(HashKind::Sha256));
/// assert_eq!("sha3".parse::<HashKind>(), Err(UnknownHashKind("sha3".into())));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownHashKind(pub String);

impl fmt::Display for UnknownHashKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown object format {:?} (expected sha1 or sha256)",
            self.0
        )
    }
}
impl std::error::Error for UnknownHashKind {}

/// Why a string is not an object id.
///
/// ```
/// use odb_index::{HexError, ObjectId};
///
/// assert!(matches!("abc".parse::<ObjectId>(), Err(HexError::WrongLength { len: 3, .. })));
/// let bad = format!("g{}", "0".repeat(39));
/// assert_eq!(bad.parse::<ObjectId>(), Err(HexError::BadDigit { pos: 0, byte: b'g' }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HexError {
    /// The string is not 40 (SHA-1) or 64 (SHA-256) hex digits long, or not the length the caller asked for.
    WrongLength {
        /// Length of the input in bytes.
        len: usize,
        /// The lengths that would have been accepted.
        expected: &'static [usize],
    },
    /// A byte that is not a hex digit (`0-9`, `a-f`, `A-F`).
    BadDigit {
        /// Byte position in the input.
        pos: usize,
        /// The offending byte.
        byte: u8,
    },
}

impl fmt::Display for HexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HexError::WrongLength { len, expected } => {
                write!(f, "object id has {len} characters, expected ")?;
                for (i, e) in expected.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" or ")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            HexError::BadDigit { pos, byte } => {
                write!(
                    f,
                    "object id has a non-hex byte {:?} at position {pos}",
                    char::from(*byte)
                )
            }
        }
    }
}
impl std::error::Error for HexError {}

/// An object id (SHA-1 or SHA-256), stored inline: no allocation.
///
/// Ordering is by hash kind, then bytewise, which for ids of one kind is git's sort order.
///
/// ```
/// use odb_index::{HashKind, ObjectId};
/// let id: ObjectId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse().unwrap();
/// assert_eq!(id.kind(), HashKind::Sha1);
/// assert_eq!(id.to_string(), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
/// assert!("e69de29".parse::<ObjectId>().is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ObjectId {
    kind: HashKind,
    bytes: [u8; 32],
}

impl ObjectId {
    /// The id made of `bytes`, whose length (20 or 32) decides the kind.
    pub fn from_bytes(bytes: &[u8]) -> Option<ObjectId> {
        let kind = HashKind::from_len(bytes.len())?;
        let mut b = [0u8; 32];
        b[..bytes.len()].copy_from_slice(bytes);
        Some(ObjectId { kind, bytes: b })
    }

    /// The all-zero id of `kind`.
    pub const fn null(kind: HashKind) -> ObjectId {
        ObjectId {
            kind,
            bytes: [0; 32],
        }
    }

    /// Parse hex of either length (40 digits: SHA-1, 64 digits: SHA-256). Upper and lower case are accepted.
    pub fn from_hex(hex: &[u8]) -> Result<ObjectId, HexError> {
        let kind = match hex.len() {
            40 => HashKind::Sha1,
            64 => HashKind::Sha256,
            len => {
                return Err(HexError::WrongLength {
                    len,
                    expected: &[40, 64],
                });
            }
        };
        Self::from_hex_kind(hex, kind)
    }

    /// Parse hex that must be an id of `kind`.
    pub fn from_hex_kind(hex: &[u8], kind: HashKind) -> Result<ObjectId, HexError> {
        if hex.len() != kind.hex_len() {
            let expected: &'static [usize] = match kind {
                HashKind::Sha1 => &[40],
                HashKind::Sha256 => &[64],
            };
            return Err(HexError::WrongLength {
                len: hex.len(),
                expected,
            });
        }
        let mut bytes = [0u8; 32];
        // One table load per digit and one test per byte (the hex of every id a front end reads is parsed here:
        // `batch-check` spent about 450 instructions per id with a `match` per digit).
        for (out, pair) in bytes.iter_mut().zip(hex.chunks_exact(2)) {
            let (hi, lo) = (
                HEX_VALUES[usize::from(pair[0])],
                HEX_VALUES[usize::from(pair[1])],
            );
            if (hi | lo) > 0xf {
                return Err(bad_digit(hex));
            }
            *out = (hi << 4) | lo;
        }
        Ok(ObjectId { kind, bytes })
    }

    /// The hash kind.
    #[inline]
    pub fn kind(&self) -> HashKind {
        self.kind
    }

    /// The raw bytes (20 or 32 of them).
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.kind.len()]
    }

    /// The first byte: the fan-out bucket and the loose directory (`xx/`).
    #[inline]
    pub fn first_byte(&self) -> u8 {
        self.bytes[0]
    }

    /// Write the lower-case hex form into `out` (which must be `kind().hex_len()` long) without allocating.
    pub fn write_hex(&self, out: &mut [u8]) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        for (i, b) in self.as_bytes().iter().enumerate() {
            out[2 * i] = DIGITS[(b >> 4) as usize];
            out[2 * i + 1] = DIGITS[(b & 15) as usize];
        }
    }
}

/// Each byte's value as a hex digit (either case), or `0xff` if it is not one.
const HEX_VALUES: [u8; 256] = {
    let mut t = [0xff; 256];
    let mut i = 0;
    while i < 16 {
        t[b"0123456789abcdef"[i] as usize] = i as u8;
        t[b"0123456789ABCDEF"[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// The value of one hex digit (either case), if it is one.
#[inline]
pub(crate) fn hex_val(c: u8) -> Option<u8> {
    let v = HEX_VALUES[usize::from(c)];
    (v <= 0xf).then_some(v)
}

/// The error for the first byte of `hex` that is not a hex digit (there is one).
#[cold]
fn bad_digit(hex: &[u8]) -> HexError {
    let (pos, &byte) = hex
        .iter()
        .enumerate()
        .find(|(_, c)| hex_val(**c).is_none())
        .unwrap_or((0, &0));
    HexError::BadDigit { pos, byte }
}

impl PartialOrd for ObjectId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ObjectId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.kind
            .cmp(&other.kind)
            .then_with(|| self.as_bytes().cmp(other.as_bytes()))
    }
}

impl std::str::FromStr for ObjectId {
    type Err = HexError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ObjectId::from_hex(s.as_bytes())
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; 64];
        let n = self.kind.hex_len();
        self.write_hex(&mut buf[..n]);
        // The buffer holds ASCII hex digits only.
        f.write_str(std::str::from_utf8(&buf[..n]).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte value at every position of a SHA-1 and a SHA-256 id: a hex digit (either case) parses to its
    /// value, anything else is `BadDigit` naming the first such position and byte.
    #[test]
    fn every_byte_at_every_position() {
        for kind in [HashKind::Sha1, HashKind::Sha256] {
            let base = "5".repeat(kind.hex_len()).into_bytes();
            for pos in 0..kind.hex_len() {
                for b in 0..=255u8 {
                    let mut hex = base.clone();
                    hex[pos] = b;
                    let want = match b {
                        b'0'..=b'9' => Some(b - b'0'),
                        b'a'..=b'f' => Some(b - b'a' + 10),
                        b'A'..=b'F' => Some(b - b'A' + 10),
                        _ => None,
                    };
                    match (ObjectId::from_hex_kind(&hex, kind), want) {
                        (Ok(id), Some(v)) => {
                            let byte = id.as_bytes()[pos / 2];
                            let got = if pos % 2 == 0 { byte >> 4 } else { byte & 0xf };
                            assert_eq!(got, v, "{kind:?} byte {b:#x} at {pos}");
                        }
                        (Err(e), None) => assert_eq!(e, HexError::BadDigit { pos, byte: b }),
                        (r, w) => {
                            panic!("{kind:?} byte {b:#x} at {pos}: {r:?}, expected digit {w:?}")
                        }
                    }
                }
            }
            // Two bad digits: the first is named.
            let mut hex = base.clone();
            hex[9] = b'x';
            hex[4] = b'G';
            assert_eq!(
                ObjectId::from_hex_kind(&hex, kind),
                Err(HexError::BadDigit { pos: 4, byte: b'G' })
            );
        }
    }

    #[test]
    fn parse_roundtrip_and_errors() {
        let h = "0123456789abcdefABCDEF0123456789abcdef01";
        let id = ObjectId::from_hex(h.as_bytes()).unwrap();
        assert_eq!(id.to_string(), h.to_ascii_lowercase());
        assert_eq!(
            ObjectId::from_hex(b"abc"),
            Err(HexError::WrongLength {
                len: 3,
                expected: &[40, 64]
            })
        );
        let mut bad = h.as_bytes().to_vec();
        bad[7] = b'g';
        assert_eq!(
            ObjectId::from_hex(&bad),
            Err(HexError::BadDigit { pos: 7, byte: b'g' })
        );
        let s256 = "ff".repeat(32);
        let id2: ObjectId = s256.parse().unwrap();
        assert_eq!(id2.kind(), HashKind::Sha256);
        assert!(id < id2);
        assert!(ObjectId::from_hex_kind(h.as_bytes(), HashKind::Sha256).is_err());
    }

    #[test]
    fn digest_known_values() {
        assert_eq!(
            HashKind::Sha1.digest(b"").to_string(),
            "da39a3ee5e6b4b0d3255bfef95601890afd80709"
        );
        assert_eq!(
            HashKind::Sha256.digest(b"").to_string(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
