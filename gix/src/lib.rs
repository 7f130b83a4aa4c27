//! # odb-index-gix
//!
//! gix interop for [odb-index](odb_index): conversions to and from gix-hash's ids and kinds ([`convert`]), and
//! gix-object's [`Find`](gix_object::Find), [`FindHeader`](gix_object::FindHeader) and
//! [`Exists`](gix_object::Exists) implemented on an odb-index [`Handle`] ([`Objects`]), with
//! gix-pack decoding pack entries (both delta kinds; a REF_DELTA's base is looked up in the same pack, as git's
//! `find_pack_entry_one`) and loose objects inflated with gix-zlib. gix's algorithms that take a `Find` run on
//! odb-index through it.
//!
//! Open with [`Objects::open`] (default [`Options`]: [`IncompleteMode::Error`]) or [`Objects::open_with`] (a batch
//! front end answering as git passes `Options::default().incomplete(IncompleteMode::Miss)`). One object by id:
//! [`Objects::read`] (one lookup, one read; the buffer is cleared first) or, headers only, [`Objects::info`]. The
//! store's types and the gix crates this implements are re-exported ([`ObjectId`], [`Store`], [`gix_object`],
//! [`gix_hash`], ...), so a client needs no second dependency; errors are this crate's [`Error`].
//!
//! From a lookup to bytes: [`Objects::place`] turns the store's [`Location`] into a
//! [`Place`] (the `.pack` path and offset, or the loose file's path), [`Objects::header_at`] and
//! [`Objects::read_at`] read what is there.
//!
//! Abbreviated ids, iteration and counts are the store's own ([`Handle::lookup_prefix`],
//! [`Handle::objects_sorted`], ...), through [`Objects::handle`] (a new handle,
//! the caller's own);
//! [`Objects::resolve`] reads a hex object name as `git cat-file` does.
//!
//! ```
//! # let repo = odb_index_testkit::init_repo("sha256", false);
//! # odb_index_testkit::fast_import_blobs(repo.path(), 10, 1, "main");
//! # let id = odb_index_testkit::git(repo.path(), &["rev-parse", "main:f0/0"]);
//! use odb_index_gix::{Objects, PrefixLookup};
//!
//! let objects = Objects::open(repo.path())?;
//! let id: odb_index::ObjectId = id.trim().parse()?;
//! let info = objects.info(&id)?.expect("present");
//! assert_eq!((info.kind, info.size), (gix_object::Kind::Blob, 9));
//! let mut data = Vec::new();
//! assert_eq!(objects.read_at(&info.place, &mut data)?, gix_object::Kind::Blob);
//! assert_eq!(data, b"blob 1 0\n");
//! assert!(info.place.pack_name().unwrap().starts_with("pack-"));
//! assert_eq!(objects.resolve(&id.to_string()[..8])?, PrefixLookup::Unique(id));
//! assert_eq!(objects.handle().objects_sorted()?.len(), odb_index_testkit::all_objects(repo.path()).len());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod convert;
mod error;
mod loose;
mod objects;
mod rev;

pub use error::Error;
pub use objects::{Info, Objects, Place};
/// The store's types a client of [`Objects`] needs (no second dependency on `odb-index` for them).
pub use odb_index::{
    Handle, HashKind, IncompleteMode, Location, ObjectId, Options, PackId, PrefixLookup, Store,
};
/// The gix crates whose traits and types [`Objects`] implements and returns, at the versions it was built with
/// (a client naming `gix_object::Find` through another version of gix-object would find it not implemented).
pub use {gix_hash, gix_object};
