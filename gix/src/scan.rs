//! Abbreviated ids and iteration over every object, built on the public per-file APIs (each pack's `.idx`, the
//! loose directories), until the store offers them itself.

use std::path::Path;

use odb_index::{HashKind, ObjectId};

use crate::objects::loose_path;
use crate::{Error, Objects, Place};

/// What an abbreviated id names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prefix {
    /// Exactly one object starts with it.
    Unique(ObjectId),
    /// Two or more distinct objects do (git's `<name> ambiguous`).
    Ambiguous,
    /// None does.
    None,
}

/// A hex prefix of 1 to `hex_len` digits, any case.
#[derive(Clone, Debug)]
struct HexPrefix {
    /// The digits as bytes; the last one's low half is 0 for an odd count.
    bytes: Vec<u8>,
    digits: usize,
}

impl HexPrefix {
    fn parse(hex: &[u8], kind: HashKind) -> Option<HexPrefix> {
        if hex.is_empty() || hex.len() > kind.hex_len() {
            return None;
        }
        let mut bytes = vec![0u8; hex.len().div_ceil(2)];
        for (i, c) in hex.iter().enumerate() {
            let v = (*c as char).to_digit(16)? as u8;
            bytes[i / 2] |= if i.is_multiple_of(2) { v << 4 } else { v };
        }
        Some(HexPrefix {
            bytes,
            digits: hex.len(),
        })
    }

    fn matches(&self, id: &[u8]) -> bool {
        let full = self.digits / 2;
        id[..full] == self.bytes[..full]
            && (self.digits.is_multiple_of(2) || id[full] >> 4 == self.bytes[full] >> 4)
    }
}

/// Adds distinct matches, stops caring after two.
#[derive(Default)]
struct Matches(Vec<ObjectId>);

impl Matches {
    fn add(&mut self, id: ObjectId) {
        if self.0.len() < 2 && !self.0.contains(&id) {
            self.0.push(id);
        }
    }
    fn full(&self) -> bool {
        self.0.len() >= 2
    }
}

impl Objects {
    /// Resolve an abbreviated id of at least 4 hex digits (any case) as git does: the one object whose id
    /// starts with it, or [`Prefix::Ambiguous`] if two distinct objects do, searching every pack (in every objects
    /// directory, alternates included) and the loose objects. A full-length id is looked up as such; anything
    /// that is not 4 to `hex_len` hex digits is [`Prefix::None`] (git's `missing`).
    ///
    /// ```
    /// # let repo = odb_index_testkit::init_repo("sha1", false);
    /// # odb_index_testkit::fast_import_blobs(repo.path(), 3, 7, "main");
    /// # let commit = odb_index_testkit::git(repo.path(), &["rev-parse", "main"]);
    /// use odb_index_gix::{Objects, Prefix};
    ///
    /// let objects = Objects::open(repo.path())?;
    /// let commit = commit.trim();
    /// assert_eq!(objects.lookup_prefix(&commit[..12])?, Prefix::Unique(commit.parse()?));
    /// assert_eq!(objects.lookup_prefix("123")?, Prefix::None); // too short
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn lookup_prefix(&self, hex: &str) -> Result<Prefix, Error> {
        let kind = self.hash_kind();
        if hex.len() == kind.hex_len() {
            return Ok(match ObjectId::from_hex_kind(hex.as_bytes(), kind) {
                Ok(id) if self.place(&id)?.is_some() => Prefix::Unique(id),
                _ => Prefix::None,
            });
        }
        let Some(prefix) = HexPrefix::parse(hex.as_bytes(), kind).filter(|p| p.digits >= 4) else {
            return Ok(Prefix::None);
        };
        let mut found = Matches::default();
        let store = self.store();
        for (pack, _) in store.packs() {
            let idx = self.pack_index(pack)?;
            let n = idx.len();
            let mut i = partition(n, |i| idx.id_at(i).is_some_and(|id| id < &prefix.bytes[..]));
            while let Some(id) = idx.id_at(i).filter(|id| prefix.matches(id)) {
                found.add(ObjectId::from_bytes(id).expect("an id of the index's kind"));
                i += 1;
            }
            if found.full() {
                return Ok(Prefix::Ambiguous);
            }
        }
        let fan = &hex[..2].to_ascii_lowercase();
        for dir in store.objects_dirs() {
            for_each_loose_in(&dir.join(fan), kind, &mut |id| {
                if prefix.matches(id.as_bytes()) {
                    found.add(id);
                }
            })?;
        }
        Ok(match found.0.as_slice() {
            [] => Prefix::None,
            [one] => Prefix::Unique(*one),
            _ => Prefix::Ambiguous,
        })
    }

    /// Every object of the repository with where it is, as git's `--batch-all-objects --unordered` visits
    /// them: the loose objects of each objects directory, then each pack's entries (a pack's in `.idx`
    /// order). An object stored twice is visited twice.
    ///
    /// ```
    /// # let repo = odb_index_testkit::init_repo("sha1", false);
    /// # odb_index_testkit::fast_import_blobs(repo.path(), 3, 7, "main");
    /// let objects = odb_index_gix::Objects::open(repo.path())?;
    /// let mut n = 0;
    /// objects.for_each_object(|_id, _place| n += 1)?;
    /// assert_eq!(n, odb_index_testkit::all_objects(repo.path()).len());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_each_object(&self, mut f: impl FnMut(ObjectId, Place)) -> Result<(), Error> {
        let kind = self.hash_kind();
        let store = self.store();
        for dir in store.objects_dirs() {
            for fan in 0..=255u8 {
                let fan_dir = dir.join(format!("{fan:02x}"));
                for_each_loose_in(&fan_dir, kind, &mut |id| {
                    let path = loose_path(&dir, &id);
                    f(id, Place::Loose { path })
                })?;
            }
        }
        for (pack, _) in store.packs() {
            let p = self.pack(pack)?;
            let idx = p.index(kind)?;
            for (id, offset) in idx.iter() {
                f(
                    id,
                    Place::Packed {
                        pack,
                        path: std::sync::Arc::clone(&p.path),
                        offset,
                    },
                );
            }
        }
        Ok(())
    }

    /// Every object id in the repository, sorted and without repeats (git's `--batch-all-objects` order).
    pub fn all_ids(&self) -> Result<Vec<ObjectId>, Error> {
        let mut ids = Vec::new();
        self.for_each_object(|id, _| ids.push(id))?;
        ids.sort_unstable();
        ids.dedup();
        Ok(ids)
    }
}

/// The first `i` in `0..n` for which `before(i)` is false (`before` is true then false along `0..n`).
fn partition(n: u32, before: impl Fn(u32) -> bool) -> u32 {
    let (mut lo, mut hi) = (0, n);
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

/// The ids of the loose files in one fan-out directory `xx/` (names that are not `hex_len - 2` hex digits are
/// skipped, as git does). A missing directory has none.
fn for_each_loose_in(
    fan_dir: &Path,
    kind: HashKind,
    f: &mut dyn FnMut(ObjectId),
) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: fan_dir.to_owned(),
        source,
    };
    let entries = match std::fs::read_dir(fan_dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    let Some(fan) = fan_dir.file_name().and_then(|n| n.to_str()) else {
        return Ok(());
    };
    let mut hex = Vec::with_capacity(kind.hex_len());
    for entry in entries {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let name = name.as_encoded_bytes();
        if name.len() != kind.hex_len() - 2
            || !name.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
        {
            continue;
        }
        hex.clear();
        hex.extend_from_slice(fan.as_bytes());
        hex.extend_from_slice(name);
        if let Ok(id) = ObjectId::from_hex_kind(&hex, kind) {
            f(id);
        }
    }
    Ok(())
}
