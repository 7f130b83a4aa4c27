//! [`Place`]: where an object's bytes are ([`Objects::place_at`], [`Objects::place_again`]; by id,
//! [`Objects::place`] in `answer.rs`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use odb_index::{Location, PackId};

use crate::Error;
use crate::convert::AnyId;
use crate::objects::Objects;

/// Where an object's bytes are: what [`Objects::place`] turns a [`Location`] into.
///
/// ```
/// use odb_index_gix::{Objects, Place};
/// use std::process::Command;
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let repo = tempfile::tempdir()?;
///     let git = |args: &[&str]| Command::new("git").arg("-C").arg(repo.path()).args(args).output();
///     git(&["init", "-q"])?;
///     std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
///     git(&["hash-object", "-w", "hello.txt"])?; // a loose object
///
///     let objects = Objects::open(repo.path())?;
///     let place = objects.place(&"ce013625030ba8dba906f756967f9e9ca394464a".parse::<odb_index_gix::ObjectId>()?)?;
///     let Some(Place::Loose { path, .. }) = place else { panic!("git wrote it loose") };
///     assert!(path.ends_with("ce/013625030ba8dba906f756967f9e9ca394464a"));
///
///     git(&["add", "hello.txt"])?;
///     git(&["repack", "-adq"])?; // now packed
///     let place = objects.place(&"ce013625030ba8dba906f756967f9e9ca394464a".parse::<odb_index_gix::ObjectId>()?)?;
///     let Some(place @ Place::Packed { offset: 12, .. }) = place else { panic!("the first entry of a pack") };
///     assert!(place.pack_name().is_some_and(|n| n.as_encoded_bytes().starts_with(b"pack-")));
///     let mut data = Vec::new();
///     objects.read_at(&place, &mut data)?;
///     assert_eq!(data, b"hello\n");
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// An entry of a pack.
    Packed {
        /// The store's id of the pack.
        pack: PackId,
        /// The `.pack` file.
        path: Arc<Path>,
        /// The entry's offset in it.
        offset: u64,
    },
    /// A loose object file (`<objects dir>/xx/yyyy...`).
    Loose {
        /// The stable number of its objects directory ([`Location::Loose`]).
        dir: usize,
        /// The file.
        path: PathBuf,
    },
}

impl Place {
    /// The store's [`Location`] this place was made from.
    pub fn location(&self) -> Location {
        match self {
            Place::Packed { pack, offset, .. } => Location::Packed {
                pack: *pack,
                offset: *offset,
            },
            Place::Loose { dir, .. } => Location::Loose { dir: *dir },
        }
    }

    /// The `.pack` file name (`pack-<hash>.pack`) for a packed object, `None` for a loose one. An [`OsStr`], as
    /// git reads every `*.idx` of a pack directory whatever its name's bytes (a name that is not UTF-8 too).
    pub fn pack_name(&self) -> Option<&OsStr> {
        match self {
            Place::Packed { path, .. } => path.file_name(),
            Place::Loose { .. } => None,
        }
    }
}

impl Objects {
    /// Where `id` is now, after reading it at `gone` (a place [`Objects::place`] answered for it) found the file
    /// missing: git moved the object and removed the file in between (`repack -d` packs loose objects and
    /// prunes them; `repack -a -d` replaces packs). The store lists the repository again
    /// ([`Handle::locate_again`](crate::Handle::locate_again)) and answers from what is there, as git does when a read fails; `None` if the
    /// object is gone. [`Objects::info`], [`Objects::read`] and the `gix_object` traits call it themselves;
    /// a caller reading a [`Place`] with [`Objects::header_at`] or [`Objects::read_at`] calls it when
    /// [`Error::is_gone`] says so, and reads what it answers ([`Objects::answer_at`] is that loop, bounded, with
    /// the fallback to another copy: prefer it).
    pub fn place_again(
        &self,
        id: &(impl AnyId + ?Sized),
        gone: &Place,
    ) -> Result<Option<Place>, Error> {
        let id = &id.to_object_id();
        let loc = self.handle.borrow_mut().locate_again(id, gone.location())?;
        self.forget_dead_packs();
        let Some(loc) = loc else { return Ok(None) };
        let place = self.place_at(id, loc)?;
        self.open_pack_of(&place)?;
        Ok(Some(place))
    }

    /// Open the `.pack` file of a packed place (so that a pack a repack removed is noticed before its bytes are
    /// needed); nothing for a loose one.
    pub(crate) fn open_pack_of(&self, place: &Place) -> Result<(), Error> {
        match place {
            Place::Packed { pack, .. } => self.pack(*pack)?.data().map(|_| ()),
            Place::Loose { .. } => Ok(()),
        }
    }

    /// The [`Place`] of a [`Location`] the store gave for `id` (from [`Handle::locate`](crate::Handle::locate) or the iteration of
    /// [`Handle::for_each_object`](crate::Handle::for_each_object)): the `.pack` file's path ([`Handle::pack`](crate::Handle::pack)) or the loose file's
    /// ([`Handle::loose_path`](crate::Handle::loose_path)). Nothing is opened; [`odb_index::Error::StalePack`] if the pack is gone.
    pub fn place_at(&self, id: &(impl AnyId + ?Sized), loc: Location) -> Result<Place, Error> {
        let id = &id.to_object_id();
        match loc {
            Location::Packed { pack, offset } => {
                let p = self.pack(pack)?;
                // An id its index lists more than once: the entry that holds it (`repeated.rs`).
                let offset = self.entry_of_id(&p, id, offset)?;
                Ok(Place::Packed {
                    pack,
                    path: Arc::clone(&p.path),
                    offset,
                })
            }
            Location::Loose { dir } => match self.handle.borrow().loose_path(dir, id) {
                Some(path) => Ok(Place::Loose { dir, path }),
                // Not a number this store gave (it never renumbers): a bug, reported as a missing file.
                None => Err(Error::Io {
                    path: self.store.objects_dir().to_owned(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("no objects directory numbered {dir}"),
                    ),
                }),
            },
        }
    }
}
