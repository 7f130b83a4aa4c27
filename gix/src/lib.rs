//! # odb-index-gix
//!
//! Objects read from a git repository through [odb-index](odb_index)'s lookups: an odb-index [`Handle`] with
//! gix-pack decoding pack entries (both delta kinds; a REF_DELTA's base is looked up in the same pack, as git's
//! `find_pack_entry_one`) and loose objects inflated with gix-zlib ([`Objects`]). [`Objects`] implements
//! gix-object's [`Find`](https://docs.rs/gix-object/0.66/gix_object/trait.Find.html), [`FindHeader`](https://docs.rs/gix-object/0.66/gix_object/trait.FindHeader.html) and
//! [`Exists`](https://docs.rs/gix-object/0.66/gix_object/trait.Exists.html), so gix's algorithms that take a `Find` run on odb-index.
//!
//! ```
//! use odb_index_gix::{ObjectId, Objects, gix_object::Kind};
//! use std::process::Command;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // A repository with one object, written by git.
//!     let repo = tempfile::tempdir()?;
//!     let git = |args: &[&str]| Command::new("git").arg("-C").arg(repo.path()).args(args).output();
//!     git(&["init", "-q"])?;
//!     std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
//!     git(&["hash-object", "-w", "hello.txt"])?;
//!
//!     let objects = Objects::open(repo.path())?;
//!     let mut data = Vec::new();
//!     // By name, as `git cat-file` reads one: a full id, or 4 or more of its first hex digits.
//!     let info = objects.read_by_name("ce01362", &mut data)?.expect("git wrote it");
//!     assert_eq!(info.id.to_string(), "ce013625030ba8dba906f756967f9e9ca394464a");
//!     assert_eq!((info.kind, info.size), (Kind::Blob, 6));
//!     assert_eq!(data, b"hello\n");
//!     // By id: gix's, as every id this crate takes and answers.
//!     let id: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
//!     assert_eq!(info.id, id);
//!     assert_eq!(objects.read(&id, &mut data)?, Some(info));
//!     Ok(())
//! }
//! ```
//!
//! - A repository as git finds it: [`Repository::discover`] (its directories, [`Repository::objects`], names as
//!   git reads them with [`Repository::resolve`]: `HEAD~2`, `main:src/lib.rs`, ..., and
//!   [`Repository::count_objects`]). git's path quoting is [`gix_quote::ansi_c::quote`](https://docs.rs/gix-quote/0.10/gix_quote/ansi_c/fn.quote.html).
//! - Open with [`Objects::open`] (default [`Options`]: [`IncompleteMode::Error`]) or [`Objects::open_with`] (a
//!   batch front end answering as git passes `Options::default().incomplete(IncompleteMode::Miss)`). An
//!   [`Objects`] is one thread's; [`Clone`] it for another thread (the clones share the store and its opened
//!   packs).
//! - One object: [`Objects::read_by_name`] (hex, full or abbreviated, by git's rules: [`Objects::lookup_name`]),
//!   [`Objects::read`] by id, or, headers only, [`Objects::info`]. The buffer is cleared first and holds exactly
//!   the object.
//! - One id type: gix's [`ObjectId`] (re-exported from gix-hash), taken as `&ObjectId` or `&gix_hash::oid` and
//!   answered ([`Info::id`], [`Answer::id`], [`Objects::lookup_name`], ...), so gix code passes what it holds.
//!   The lookups also take the store's id ([`convert::AnyId`]), for a caller holding ids from a [`Handle`].
//! - One error type: this crate's [`Error`], returned by every inherent method, with `From` for odb-index's and
//!   gix's, so `?` serves both; gix-object's traits box it into gix's error, and [`Error`] says how to get it
//!   back.
//! - From a lookup to bytes: [`Objects::place`] turns the store's [`Location`] into a [`Place`] (the `.pack`
//!   path and offset, or the loose file's path); [`Objects::header_at`] and [`Objects::read_at`] read what is
//!   there.
//! - Iteration, counts and the rest of the store's API: [`Objects::handle`] (a new handle, the caller's own).
//!
//! The store's types a client needs are re-exported ([`Store`], [`Options`], [`Location`], ...; the store's
//! own API, [`Handle`]'s, speaks odb-index's id: [`odb_index::ObjectId`], reached through the re-exported
//! [`odb_index`]), and so are the gix crates whose traits [`Objects`] implements ([`gix_object`](https://docs.rs/gix-object/0.66/gix_object/), [`gix_hash`](https://docs.rs/gix-hash/0.28/gix_hash/)), so a client needs no
//! second dependency.
#![warn(missing_docs)]
// The modelled facade is the library's (its protocol runs under loom): the adapter's caches use std's locks;
// its file reads still go through odb_index::data (`disallowed-methods`, .clippy.toml).
#![allow(clippy::disallowed_types)]

mod answer;
mod base_cache;
mod base_kinds;
mod batch;
pub mod convert;
mod count;
mod delta_fallback;
mod delta_size;
mod discover;
mod error;
mod find;
mod hex_name;
mod list;
mod loose;
mod message_search;
pub mod names;
mod objects;
mod pack;
mod packed_refs;
mod place;
mod read;
mod ref_rules;
mod repeated;
mod repository;
mod rev;
mod tree_path;

/// For the fuzz targets only (`fuzz/`, built with `--cfg fuzzing`): the prefix decoder, compared there with zlib.
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    /// How many bytes [`first_bytes`] decodes.
    pub const LEN: usize = crate::delta_size::LEN;

    /// The first [`LEN`] bytes of the zlib stream at the start of `input`, where zlib would write them and
    /// neither err nor end the stream; `None` where the decoder leaves the entry to gix-pack.
    pub fn first_bytes(input: &[u8]) -> Option<[u8; LEN]> {
        crate::delta_size::first_bytes(input)
    }

    /// What zlib-rs writes for the same request, as gix-pack asks it: the bytes when it writes all [`LEN`] and
    /// neither errs nor ends the stream. Where [`first_bytes`] answers, it must answer this.
    pub fn zlib_first_bytes(input: &[u8]) -> Option<[u8; LEN]> {
        crate::delta_size::zlib_first_bytes(input)
    }
}

pub use answer::{Answer, MAX_MOVES, Want};
pub use count::Counts;
pub use error::Error;
/// The object id of this crate's surface: gix-hash's, what gix code holds (its borrowed form is
/// [`gix_hash::oid`](https://docs.rs/gix-hash/0.28/gix_hash/struct.oid.html)).
pub use gix_hash::ObjectId;
pub use names::Refs;
pub use objects::Objects;
/// The store this crate reads through, for its own API ([`Handle`]'s lookups take [`odb_index::ObjectId`]).
pub use odb_index;
/// The store's types a client of [`Objects`] needs (no second dependency on `odb-index` for them).
pub use odb_index::{
    Handle, HashKind, IncompleteMode, Location, Options, PackId, PrefixLookup, Store,
};
pub use place::Place;
pub use read::Info;
pub use repository::Repository;
/// The gix crates whose traits and types [`Objects`] implements and returns, at the versions it was built with
/// (a client naming `gix_object::Find` through another version of gix-object would find it not implemented).
/// gix-quote too: [`gix_quote::ansi_c::quote`] is git's `quote_c_style` (`core.quotePath` on, git's default), how
/// `ls-tree`, `diff` and `count-objects` print a path.
pub use {gix_hash, gix_object, gix_quote};
