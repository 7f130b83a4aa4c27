//! Reading an object at a [`Place`]: its type and size from headers ([`Objects::header_at`], with a delta's
//! header read without zlib's tables), its contents ([`Objects::read_at`]), its size on disk and delta base.
//! [`Info`] is what the reads by id answer ([`Objects::info`], [`Objects::read`], in `answer.rs`).

use std::path::Path;

use gix_hash::ObjectId;
use gix_object::Kind;
use gix_pack::data::decode::{
    entry::ResolvedBase as EntryBase, header::ResolvedBase as HeaderBase,
};
use gix_pack::data::entry::Header as EntryHeader;

use crate::Error;
use crate::base_cache::key_of;
use crate::convert::oid_to_gix;
use crate::delta_size;
use crate::loose::Loose;
use crate::objects::{Objects, Pack};
use crate::place::Place;

/// An object's id, type and size, and where it is: what [`Objects::info`], [`Objects::read`] and
/// [`Objects::read_by_name`] answer.
///
/// ```
/// use odb_index_gix::{Info, Objects, gix_object::Kind};
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
///     let info: Info = objects.read_by_name("ce0136", &mut data)?.expect("git wrote it");
///     assert_eq!(info.id.to_string(), "ce013625030ba8dba906f756967f9e9ca394464a");
///     assert_eq!((info.kind, info.size), (Kind::Blob, 6));
///     assert_eq!(objects.info(&info.id)?, Some(info));
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    /// The object's id (the full id, also when it was read by an abbreviated name).
    pub id: ObjectId,
    /// The object's type (the type at the end of a delta chain for a deltified entry).
    pub kind: Kind,
    /// The object's size in bytes, inflated and with deltas applied.
    pub size: u64,
    /// Where it is.
    pub place: Place,
}

impl Objects {
    /// Open the loose object at `path`; a file that is not one ([`Error::is_not_a_loose_object`]) is reported in
    /// [`Store::problems`] under [`IncompleteMode::Miss`].
    fn open_loose(&self, path: &Path, z: &mut gix_zlib::Decompress) -> Result<Loose, Error> {
        Loose::open(path, z).inspect_err(|e| {
            // A file gone since the lookup (nothing at its path) is no problem of the repository: the object is
            // looked for again. A dangling symbolic link is one.
            let gone = e.is_gone() && std::fs::symlink_metadata(path).is_err();
            if e.is_not_a_loose_object() && self.answers_missing() && !gone {
                let reason = match e {
                    Error::LooseCorrupt { reason, .. } => reason.clone(),
                    Error::LooseUnreadable { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                self.store.report_unreadable_loose(path.to_owned(), reason);
            }
        })
    }

    /// Type and size of the object at `place`, from headers only.
    pub fn header_at(&self, place: &Place) -> Result<(Kind, u64), Error> {
        match place {
            Place::Packed { pack, offset, .. } => {
                let p = self.pack(*pack)?;
                let entry = p.entry(*offset)?;
                if let Some(found) = self.delta_header(&p, &entry) {
                    return Ok(found);
                }
                let resolve = |base: &gix_hash::oid| -> gix_error::Result<Option<HeaderBase>> {
                    Ok(self.base_in(&p, base)?.map(HeaderBase::InPack))
                };
                let mut inflate = self.inflate.borrow_mut();
                let out = p
                    .data()?
                    .decode_header(entry, &mut inflate, &resolve)
                    .map_err(p.decode_error(*offset))?;
                Ok((out.kind, out.object_size))
            }
            Place::Loose { path, .. } => {
                let loose = self.open_loose(path, &mut self.loose.borrow_mut())?;
                Ok((loose.kind, loose.size))
            }
        }
    }

    /// A delta entry's type and size as gix-pack's `decode_header` gives them, without its inflating through
    /// zlib's decoding tables: the result size from the delta's first bytes ([`delta_size::first_bytes`]), the type
    /// from the chain's base, reached header by header. `None` wherever `decode_header` must decide (not a delta;
    /// a stream `first_bytes` leaves to zlib; a base that is not reached in [`MAX_CHAIN`] steps, or not at all),
    /// so that every answer and error stays gix-pack's: this only saves the tables' cost (docs/BENCHMARKS.md,
    /// "Batches").
    fn delta_header(&self, p: &Pack, entry: &gix_pack::data::Entry) -> Option<(Kind, u64)> {
        if !entry.header.is_delta() || entry.decompressed_size <= delta_size::LEN as u64 {
            return None;
        }
        let data = p.data().ok()?;
        let input = data.entry_slice(entry.data_offset..data.data_len() as u64)?;
        let bytes = delta_size::first_bytes(input)?;
        let (_base_size, used) = delta_size(&bytes)?;
        let (size, _) = delta_size(&bytes[used..])?;
        // The chain's base kind, from the entries this walk goes through: the first one a walk before has
        // recorded ends it; the kind found is recorded for the first `WALKED` of them.
        let kinds = p.base_kinds(data);
        let mut walked = [0u64; WALKED];
        let mut n = 0;
        let mut e = entry.clone();
        for _ in 0..MAX_CHAIN {
            if let Some(kind) = kinds.get(e.pack_offset()) {
                return Some((remember(kinds, &walked[..n], kind), size));
            }
            if n < WALKED {
                walked[n] = e.pack_offset();
                n += 1;
            }
            e = match e.header {
                EntryHeader::OfsDelta { base_distance } => {
                    let base = e.checked_base_pack_offset(base_distance)?;
                    if let Some(kind) = kinds.get(base) {
                        return Some((remember(kinds, &walked[..n], kind), size));
                    }
                    data.entry(base).ok()?
                }
                EntryHeader::RefDelta { base_id } => self.base_in(p, &base_id).ok()??,
                whole => return Some((remember(kinds, &walked[..n], whole.as_kind()?), size)),
            };
        }
        None
    }

    /// The object's size on disk, as git's `%(objectsize:disk)`: for a pack entry, the bytes up to the next
    /// entry in pack order (from the pack's `.rev` file if git wrote one, else from the `.idx`); for a loose
    /// object, the file's size.
    pub fn disk_size(&self, place: &Place) -> Result<u64, Error> {
        match place {
            Place::Packed { pack, offset, .. } => {
                let p = self.pack(*pack)?;
                let rev = self.rev(&p)?;
                let end = (p.data()?.data_len().saturating_sub(self.kind.len())) as u64;
                self.with_index(&p, |idx| rev.disk_size(idx, *offset, end))?
                    .ok_or_else(|| Error::Index {
                        path: p.idx_path.clone(),
                        reason: format!("no entry at pack offset {offset}"),
                    })
            }
            Place::Loose { path, .. } => odb_index::data::open_regular(path)
                .map(|(_, md)| md)
                .map(|m| m.len())
                .map_err(|source| Error::Io {
                    path: path.clone(),
                    source,
                }),
        }
    }

    /// The delta base of the entry at `place`, as git's `%(deltabase)`: the id a REF_DELTA names, the id of the
    /// entry an OFS_DELTA points to (found with the reverse index), `None` for a whole object or a loose one.
    pub fn delta_base(&self, place: &Place) -> Result<Option<ObjectId>, Error> {
        let Place::Packed { pack, offset, .. } = place else {
            return Ok(None);
        };
        let p = self.pack(*pack)?;
        let entry = p.entry(*offset)?;
        match entry.header {
            EntryHeader::RefDelta { base_id } => Ok(Some(base_id)),
            EntryHeader::OfsDelta { base_distance } => {
                let bad = || Error::Index {
                    path: p.idx_path.clone(),
                    reason: format!("the OFS_DELTA at offset {offset} points to no entry"),
                };
                let base = entry
                    .checked_base_pack_offset(base_distance)
                    .ok_or_else(bad)?;
                let rev = self.rev(&p)?;
                let id = self.with_index(&p, |idx| {
                    let i = rev.index_position(idx, base)?;
                    idx.id_at(i)
                        .and_then(odb_index::ObjectId::from_bytes)
                        .map(|id| oid_to_gix(&id))
                })?;
                id.ok_or_else(bad).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Read the object at `place` into `out` (inflated, deltas applied; `out` is cleared first and holds exactly
    /// the object's bytes on success); returns its type.
    pub fn read_at(&self, place: &Place, out: &mut Vec<u8>) -> Result<Kind, Error> {
        match place {
            Place::Packed { pack, offset, .. } => {
                let p = self.pack(*pack)?;
                let entry = p.entry(*offset)?;
                let resolve = |base: &gix_hash::oid,
                               _: &mut Vec<u8>|
                 -> gix_error::Result<Option<EntryBase>> {
                    Ok(self.base_in(&p, base)?.map(EntryBase::InPack))
                };
                let decoded = {
                    let mut inflate = self.inflate.borrow_mut();
                    let mut bases = self.delta_bases.borrow_mut();
                    p.data()?
                        .decode_entry(
                            entry.clone(),
                            out,
                            &mut inflate,
                            &resolve,
                            bases.for_pack(key_of(p.id)),
                        )
                        .map_err(p.decode_error(*offset))
                };
                match decoded {
                    Ok(outcome) => Ok(outcome.kind),
                    // A delta whose base here cannot be read: on another copy of the base, as git.
                    Err(e) if e.is_corrupt() => {
                        match self.delta_on_another_base(place, &p, &entry, out) {
                            Ok(Some(kind)) => Ok(kind),
                            _ => Err(e),
                        }
                    }
                    Err(e) => Err(e),
                }
            }
            Place::Loose { path, .. } => {
                let mut z = self.loose.borrow_mut();
                let loose = self.open_loose(path, &mut z)?;
                let kind = loose.kind;
                loose.read_into(&mut z, out)?;
                Ok(kind)
            }
        }
    }
}

/// How many delta links [`Objects::delta_header`] follows before it leaves the chain to gix-pack (git writes
/// chains of at most 4 095).
const MAX_CHAIN: usize = 10_000;

/// The entries of a chain walk whose base kind [`Objects::delta_header`] records (the nearest to the object
/// read: those the next reads of the same history meet first).
const WALKED: usize = 32;

/// Record `kind` as the chain base kind of the entries at `offsets`; returns it.
fn remember(kinds: &crate::base_kinds::BaseKinds, offsets: &[u64], kind: Kind) -> Kind {
    for &o in offsets {
        kinds.put(o, kind);
    }
    kind
}

/// A size varint of a delta's header and how many bytes it took, as gix-pack's `delta::decode_header_size`
/// reads it (`None` where that errs: more than 64 bits, or cut short).
fn delta_size(d: &[u8]) -> Option<(u64, usize)> {
    let (mut shift, mut size) = (0u32, 0u64);
    for (i, &b) in d.iter().enumerate() {
        if shift >= u64::BITS {
            return None;
        }
        size |= (u64::from(b) & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Some((size, i + 1));
        }
    }
    None
}
