//! Conversions between odb-index's ids and hash kinds and gix-hash's.
//!
//! This crate's surface speaks gix-hash's id ([`crate::ObjectId`]); the store underneath speaks odb-index's,
//! converted inside. Both crates store an id as its raw bytes, so a conversion is a copy; the orphan rule forbids
//! `From` impls between two foreign types, hence these functions, and [`AnyId`], which lets
//! [`Objects`](crate::Objects) take the store's id too (from a [`Handle`](crate::Handle)'s lookups or iteration).
//!
//! ```
//! use odb_index_gix::convert::{kind_from_gix, kind_to_gix, oid_from_gix, oid_to_gix};
//!
//! let id: odb_index::ObjectId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse().unwrap();
//! let gix = oid_to_gix(&id);
//! assert_eq!(gix.to_string(), id.to_string());
//! assert_eq!(oid_from_gix(&gix), id);
//! assert_eq!(kind_to_gix(id.kind()), gix_hash::Kind::Sha1);
//! assert_eq!(kind_from_gix(gix_hash::Kind::Sha256), Some(odb_index::HashKind::Sha256));
//! ```

use gix_hash::Kind;
use odb_index::{HashKind, ObjectId};

/// The gix-hash id with the same bytes.
pub fn oid_to_gix(id: &ObjectId) -> gix_hash::ObjectId {
    // Both kinds have the same lengths (20 and 32 bytes), both enabled in gix-hash by this package.
    gix_hash::ObjectId::from_bytes_or_panic(id.as_bytes())
}

/// The odb-index id with the same bytes.
pub fn oid_from_gix(id: &gix_hash::oid) -> ObjectId {
    ObjectId::from_bytes(id.as_bytes()).expect("gix-hash ids are 20 or 32 bytes, as odb-index's")
}

/// gix-hash's name for `kind`.
pub fn kind_to_gix(kind: HashKind) -> Kind {
    match kind {
        HashKind::Sha1 => Kind::Sha1,
        HashKind::Sha256 => Kind::Sha256,
    }
}

/// odb-index's name for `kind`; `None` for a kind odb-index does not know (gix-hash's `Kind` is
/// non-exhaustive).
pub fn kind_from_gix(kind: Kind) -> Option<HashKind> {
    match kind {
        Kind::Sha1 => Some(HashKind::Sha1),
        Kind::Sha256 => Some(HashKind::Sha256),
        _ => None,
    }
}

/// An id [`Objects`](crate::Objects)'s lookups take (`&impl AnyId`): gix-hash's [`gix_hash::ObjectId`](https://docs.rs/gix-hash/0.28/gix_hash/enum.ObjectId.html) /
/// [`gix_hash::oid`](https://docs.rs/gix-hash/0.28/gix_hash/struct.oid.html), the crate's own id type, or the store's [`ObjectId`] (what a [`Handle`](crate::Handle) answers).
/// What [`Objects`](crate::Objects) answers is always gix's.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use odb_index_gix::{convert::AnyId, gix_hash};
///
/// let ours: odb_index::ObjectId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse()?;
/// let theirs = gix_hash::ObjectId::from_hex(b"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")?;
/// assert_eq!(theirs.to_object_id(), ours);
/// assert_eq!(theirs.as_ref().to_object_id(), ours.to_object_id()); // `&gix_hash::oid` too
/// # Ok(())
/// # }
/// ```
pub trait AnyId {
    /// The odb-index id with the same bytes.
    fn to_object_id(&self) -> ObjectId;
}

impl AnyId for ObjectId {
    fn to_object_id(&self) -> ObjectId {
        *self
    }
}

impl AnyId for gix_hash::oid {
    fn to_object_id(&self) -> ObjectId {
        oid_from_gix(self)
    }
}

impl AnyId for gix_hash::ObjectId {
    fn to_object_id(&self) -> ObjectId {
        oid_from_gix(self)
    }
}
