//! Hex object names as git reads them (`get_oid` on hex digits): [`Objects::lookup_name`], the one place the
//! rules live, and [`Objects::read_by_name`] on it.

use gix_hash::ObjectId;
use odb_index::{Prefix, PrefixLookup};

use crate::Error;
use crate::convert::oid_to_gix;
use crate::objects::Objects;
use crate::read::Info;

/// git's `MINIMUM_ABBREV`: an object name shorter than this is not an abbreviation.
const MIN_NAME_LEN: usize = 4;

impl Objects {
    /// The object an object name names, by git's rules for a hex name (`get_oid` on hex digits, any case): a
    /// full-length id names itself if the repository has it; 4 or more digits are an abbreviation, naming the
    /// one object whose id starts with them. `Ok(None)`: no such object (git's `missing`). Errors:
    /// [`Error::AmbiguousName`] (several objects start so; it lists them, as git does) and [`Error::BadName`]
    /// (fewer than 4 digits, more than the hash's length, not hex). This is the one place these rules live:
    /// [`Objects::read_by_name`] and the `odb-index` command use it. The id is gix's, as every id
    /// this crate answers.
    ///
    /// ```
    /// use odb_index_gix::{Error, Objects};
    ///
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let repo = tempfile::tempdir()?;
    ///     let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    ///     git(&["init", "-q"])?;
    ///     // Two blobs whose ids both start with 6bb2: 6bb2f98f... ("195") and 6bb2f4ee... ("389").
    ///     for text in ["195\n", "389\n"] {
    ///         std::fs::write(repo.path().join("f"), text)?;
    ///         git(&["hash-object", "-w", "f"])?;
    ///     }
    ///     let objects = Objects::open(repo.path())?;
    ///     let id = objects.lookup_name("6BB2F9")?.expect("one object starts with 6bb2f9");
    ///     assert_eq!(id.to_string(), "6bb2f98fb0227744dff2c9023c2a8d53cc721588");
    ///     assert_eq!(objects.lookup_name(&id.to_string())?, Some(id));
    ///     assert_eq!(objects.lookup_name("0000")?, None);
    ///     match objects.lookup_name("6bb2") {
    ///         Err(Error::AmbiguousName { candidates, .. }) => assert_eq!(candidates.len(), 2),
    ///         other => panic!("{other:?}"),
    ///     }
    ///     match objects.lookup_name("6bb") {
    ///         Err(Error::BadName { .. }) => {} // fewer than 4 digits
    ///         other => panic!("{other:?}"),
    ///     }
    ///     Ok(())
    /// }
    /// ```
    pub fn lookup_name(&self, name: &str) -> Result<Option<ObjectId>, Error> {
        let bad = |reason| {
            Err(Error::BadName {
                name: name.to_owned(),
                reason,
            })
        };
        if !name.bytes().all(|b| b.is_ascii_hexdigit()) {
            return bad("not hex digits");
        }
        if name.len() == self.kind.hex_len() {
            let id = odb_index::ObjectId::from_hex_kind(name.as_bytes(), self.kind)?;
            let found = self.handle.borrow_mut().contains(&id)?;
            return Ok(found.then(|| oid_to_gix(&id)));
        }
        let prefix = match Prefix::from_hex(name, self.kind) {
            Ok(prefix) => prefix,
            Err(_) if name.len() < MIN_NAME_LEN => return bad("fewer than 4 hex digits"),
            Err(_) => return bad("longer than an object id"),
        };
        // The borrow ends before anything below.
        let found = self.handle.borrow_mut().lookup_prefix(&prefix)?;
        match found {
            PrefixLookup::Unique(id) => Ok(Some(oid_to_gix(&id))),
            PrefixLookup::NotFound => Ok(None),
            PrefixLookup::Ambiguous => {
                let candidates = self.handle.borrow_mut().prefix_candidates(&prefix)?;
                Err(Error::AmbiguousName {
                    name: name.to_owned(),
                    candidates: candidates.iter().map(oid_to_gix).collect(),
                })
            }
        }
    }

    /// Read the object named `name` (hex, full or abbreviated: [`Objects::lookup_name`]'s rules) into `out`, as
    /// [`Objects::read`] does; [`Info::id`] is its full id. A full id costs one lookup, an abbreviation two (the
    /// prefix, then the object). `Ok(None)`: no such object (git's `missing`); [`Error::AmbiguousName`] and
    /// [`Error::BadName`] as [`Objects::lookup_name`].
    ///
    /// ```
    /// use odb_index_gix::{Objects, gix_object::Kind};
    ///
    /// fn main() -> Result<(), Box<dyn std::error::Error>> {
    ///     let repo = tempfile::tempdir()?;
    ///     let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    ///     git(&["init", "-q"])?;
    ///     std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    ///     git(&["hash-object", "-w", "hello.txt"])?;
    ///
    ///     let objects = Objects::open(repo.path())?;
    ///     let mut data = Vec::new();
    ///     let info = objects.read_by_name("ce01362", &mut data)?.expect("present");
    ///     assert_eq!((info.kind, &data[..]), (Kind::Blob, &b"hello\n"[..]));
    ///     assert_eq!(objects.read_by_name(&info.id.to_string(), &mut data)?, Some(info));
    ///     assert_eq!(objects.read_by_name("0123456", &mut data)?, None);
    ///     Ok(())
    /// }
    /// ```
    pub fn read_by_name(&self, name: &str, out: &mut Vec<u8>) -> Result<Option<Info>, Error> {
        if name.len() == self.kind.hex_len() && name.bytes().all(|b| b.is_ascii_hexdigit()) {
            // A full id: read it at once (one lookup).
            let id = odb_index::ObjectId::from_hex_kind(name.as_bytes(), self.kind)?;
            return self.read(&id, out);
        }
        match self.lookup_name(name)? {
            Some(id) => self.read(&id, out),
            None => Ok(None),
        }
    }
}
