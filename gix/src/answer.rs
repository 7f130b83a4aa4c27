//! From a location to an answer: [`Objects::answer_at`], the one way this crate and the `odb-index` command
//! turn where the store found an object into what was asked of it (type and size, contents, size on disk, delta
//! base).
//!
//! Between a lookup and the read of its file, git may move the object (`repack -d` packs loose objects and prunes
//! them; `repack -a -d` and `gc` replace packs). Every part of an answer is read inside one loop that handles
//! that once, for every part and every caller:
//!
//! - **Gone**: a file not found, or a pack the store no longer lists ([`Error::is_gone`]): the object is located
//!   again ([`Handle::locate_again`](odb_index::Handle::locate_again), which lists the repository again) and the
//!   whole answer is read from there, at most [`MAX_MOVES`] times; then [`Error::KeptMoving`], naming the
//!   objects directory, never a stale pack id. A loose name found again at the same place whose file still
//!   cannot be opened (a dangling symbolic link) is read twice, then its error is the answer.
//! - **Transient**: a system call that failed in a way that may not last ([`Error::is_transient`]: EIO, EMFILE,
//!   ENOMEM, EINTR, EACCES, ... opening or reading the object's file): the object is located again (the
//!   repository listed again, as git re-prepares its packs after a miss) and read once more; if that fails too,
//!   the error is the answer, never "absent" (docs/RELIABILITY.md, the fault policy).
//! - **Corrupt**: a pack entry that cannot be decoded, or a pack file that is not a pack ([`Error::is_corrupt`]):
//!   the answer is read from another copy if the repository has one
//!   ([`Handle::locate_other`](odb_index::Handle::locate_other): the other packs, then the loose directories), as
//!   git does after `mark_bad_packed_object` (git's t5303); with no other copy, the first error.
//!
//! Every part is read at the same place, so an answer never mixes two copies. The reads by id
//! ([`Objects::info`], [`Objects::read`], [`Objects::place`]) are answers too, and are here.

use gix_hash::ObjectId;
use gix_object::Kind;
use odb_index::Location;

use crate::Error;
use crate::convert::{AnyId, oid_to_gix};
use crate::objects::Objects;
use crate::place::Place;
use crate::read::Info;

/// How many times one answer locates its object again after finding its file gone. Each relocation lists the
/// repository again and waits for the file's successor (up to 8 listings); git moving the same object four times
/// within one read is maintenance running in a tight loop, which the caller is told of ([`Error::KeptMoving`]).
pub const MAX_MOVES: usize = 4;

/// What to read of an object: each field asks for one part of an [`Answer`]. `Want::default()` reads nothing but
/// the object's place (its `.pack` is opened, so that a pack removed since the lookup is noticed).
///
/// ```
/// use odb_index_gix::Want;
///
/// // `git cat-file --batch-check='%(objectsize:disk) %(deltabase)'`
/// let want = Want { disk_size: true, delta_base: true, ..Want::default() };
/// assert!(!want.header && !want.contents);
/// assert_eq!(Want::HEADER, Want { header: true, ..Want::default() });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Want {
    /// The type and size, from headers only ([`Answer::kind`], [`Answer::size`]).
    pub header: bool,
    /// The contents, into the caller's buffer (type and size from that read).
    pub contents: bool,
    /// The size on disk, git's `%(objectsize:disk)` ([`Answer::disk_size`]).
    pub disk_size: bool,
    /// The delta base, git's `%(deltabase)` ([`Answer::delta_base`]).
    pub delta_base: bool,
}

impl Want {
    /// Type and size only.
    pub const HEADER: Want = Want {
        header: true,
        contents: false,
        disk_size: false,
        delta_base: false,
    };
    /// Contents (and so type and size).
    pub const CONTENTS: Want = Want {
        header: false,
        contents: true,
        disk_size: false,
        delta_base: false,
    };
}

/// What [`Objects::answer_at`] read of an object: the parts [`Want`] asked for (the others `None`), all read at
/// one place.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Answer {
    /// The object's id.
    pub id: ObjectId,
    /// Where every part was read: the lookup's place, or where the object was found again after its file went
    /// (or after a corrupt copy).
    pub place: Place,
    /// Its type, if asked ([`Want::header`] or [`Want::contents`]).
    pub kind: Option<Kind>,
    /// Its size in bytes, inflated and with deltas applied, if asked.
    pub size: Option<u64>,
    /// Its size on disk, if asked ([`Want::disk_size`]; see [`Objects::disk_size`]).
    pub disk_size: Option<u64>,
    /// Its delta base, if asked and it has one ([`Want::delta_base`]; see [`Objects::delta_base`]).
    pub delta_base: Option<ObjectId>,
}

impl Objects {
    /// Locate `id` and read what `want` asks of it ([`Objects::answer_at`]); `None` if the repository does not
    /// have it (an id of the other hash kind is not there either).
    ///
    /// ```
    /// # let repo = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    /// # git(&["init", "-q"])?;
    /// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    /// # git(&["hash-object", "-w", "hello.txt"])?;
    /// use odb_index_gix::{Objects, ObjectId, Want, gix_object::Kind};
    ///
    /// let objects = Objects::open(repo.path())?;
    /// let id: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
    /// let mut data = Vec::new();
    /// let want = Want { contents: true, disk_size: true, ..Want::default() };
    /// let answer = objects.answer(&id, want, &mut data)?.expect("present");
    /// assert_eq!((answer.kind, answer.size, &data[..]), (Some(Kind::Blob), Some(6), &b"hello\n"[..]));
    /// assert!(answer.disk_size.is_some_and(|n| n > 0)); // the loose file's size
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn answer(
        &self,
        id: &(impl AnyId + ?Sized),
        want: Want,
        out: &mut Vec<u8>,
    ) -> Result<Option<Answer>, Error> {
        let id = id.to_object_id();
        if id.kind() != self.store_kind() {
            return Ok(None);
        }
        self.forget_dead_packs();
        // The borrow ends here, before anything below can re-enter.
        let loc = self.handle.borrow_mut().locate(&id)?;
        match loc {
            Some(loc) => self.answer_at(&id, loc, want, out),
            None => Ok(None),
        }
    }

    /// Read what `want` asks of `id`, which the store located at `loc` (with [`Handle::locate`],
    /// [`Handle::locate_many`] or an iteration, on this store: from any of its handles): the one way a location
    /// becomes an answer (the module documentation says how a file gone since the lookup and a corrupt copy are
    /// handled). `out` receives the contents under [`Want::contents`] (cleared first; it holds exactly the
    /// object's bytes on success; unspecified otherwise). `None`: the object is gone from the repository.
    ///
    /// [`Handle::locate`]: odb_index::Handle::locate
    /// [`Handle::locate_many`]: odb_index::Handle::locate_many
    ///
    /// ```
    /// # let repo = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    /// # git(&["init", "-q"])?;
    /// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    /// # git(&["add", "hello.txt"])?;
    /// # git(&["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "one"])?;
    /// # git(&["repack", "-adq"])?;
    /// use odb_index_gix::{Objects, Want, odb_index};
    ///
    /// // A store without `Options::pack_data` (`Objects::open` sets it, and would read the old pack's `.pack`,
    /// // mapped with its index, as a git process that looked the object up reads the pack it opened).
    /// let objects = Objects::new(odb_index::Store::open(repo.path(), odb_index::Options::default())?.handle());
    /// // The store's id, as its `Handle` takes and gives them (`answer_at` takes it too, or gix's).
    /// let id: odb_index::ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?;
    /// let loc = objects.handle().locate(&id)?.expect("packed");
    /// // git replaces the pack (with one more object) before the object is read:
    /// # std::fs::write(repo.path().join("more.txt"), "more\n")?;
    /// # git(&["add", "more.txt"])?;
    /// # git(&["-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "two"])?;
    /// git(&["repack", "-adfq"])?;
    /// let answer = objects.answer_at(&id, loc, Want::HEADER, &mut Vec::new())?.expect("still there");
    /// assert_eq!(answer.size, Some(6));
    /// assert_ne!(answer.place.location(), loc); // read from the new pack
    /// assert_eq!(answer.id.to_string(), id.to_string()); // the answer's id is gix's
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn answer_at(
        &self,
        id: &(impl AnyId + ?Sized),
        loc: Location,
        want: Want,
        out: &mut Vec<u8>,
    ) -> Result<Option<Answer>, Error> {
        let id = &id.to_object_id();
        let mut loc = loc;
        let mut moves = 0;
        // Copies found corrupt, and the first such error (reported if no copy is left).
        let mut bad: Vec<Location> = Vec::new();
        let mut first_bad: Option<Error> = None;
        // Whether a transient failure ([`Error::is_transient`]) was read around once already.
        let mut retried = false;
        loop {
            let e = match self.read_at_location(id, loc, want, out) {
                Ok(answer) => return Ok(Some(answer)),
                Err(e) => e,
            };
            let next = if e.is_gone() {
                if moves == MAX_MOVES {
                    return Err(Error::KeptMoving {
                        id: oid_to_gix(id),
                        objects_dir: self.store().objects_dir().to_owned(),
                        moves,
                    });
                }
                moves += 1;
                let again = self.relocate(id, loc, &e, moves)?;
                self.forget_dead_packs();
                // The same loose file again: its name is there (`locate_again` checked) but it cannot be
                // opened, a dangling symbolic link rather than a move. Read once more, as git reads it, then
                // its error is the answer (git's `missing`, with the file named as a problem).
                if again == Some(loc) && matches!(loc, Location::Loose { .. }) && moves > 1 {
                    return Err(e);
                }
                again
            } else if e.is_transient() && !retried {
                // A failure that may not last is no evidence that the object is gone: list again and read once
                // more, as git re-prepares its packs after a miss; then the error is the answer, never "absent".
                retried = true;
                let again = self.handle.borrow_mut().locate_again(id, loc)?;
                self.forget_dead_packs();
                match again {
                    Some(again) => Some(again),
                    None => return Err(e),
                }
            } else if e.is_corrupt() {
                bad.push(loc);
                let other = self.handle.borrow_mut().locate_other(id, &bad)?;
                let first = first_bad.take().unwrap_or(e);
                match other {
                    Some(other) => {
                        first_bad = Some(first);
                        Some(other)
                    }
                    None => return Err(first),
                }
            } else {
                return Err(e);
            };
            match next {
                Some(next) => loc = next,
                None => return Ok(None),
            }
        }
    }

    /// Where to read `id` after its read at `loc` found the file gone (`e`, the `moves`-th time). A pack the store
    /// no longer lists (a location from a listing the store has left: a batch's, made by another handle, or an
    /// iteration's) is first looked up in the current listing, as [`Objects::answer`] looks up an id: a pack that
    /// listing kept (renamed away for a moment after it was read, as git keeps a pack it has opened) is read
    /// where it is, not re-listed away by [`Handle::locate_again`](odb_index::Handle::locate_again), which keeps
    /// nothing (a batch then lost such a pack's objects where a lookup by id did not). A file not
    /// found, a second move, or an id that lookup does not find: `locate_again`.
    fn relocate(
        &self,
        id: &odb_index::ObjectId,
        loc: Location,
        e: &Error,
        moves: usize,
    ) -> Result<Option<Location>, Error> {
        let stale = matches!(
            e.original(),
            Error::Lookup(odb_index::Error::StalePack { .. })
        );
        if moves == 1 && stale {
            let found = self.handle.borrow_mut().locate(id)?;
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(self.handle.borrow_mut().locate_again(id, loc)?)
    }

    /// Every part `want` asks of `id` at `loc`, read at that one place.
    fn read_at_location(
        &self,
        id: &odb_index::ObjectId,
        loc: Location,
        want: Want,
        out: &mut Vec<u8>,
    ) -> Result<Answer, Error> {
        let place = self.place_at(id, loc)?;
        self.open_pack_of(&place)?;
        let header = if want.contents {
            let kind = self.read_at(&place, out)?;
            Some((kind, out.len() as u64))
        } else if want.header {
            Some(self.header_at(&place)?)
        } else {
            None
        };
        let disk_size = match want.disk_size {
            true => Some(self.disk_size(&place)?),
            false => None,
        };
        let delta_base = match want.delta_base {
            true => self.delta_base(&place)?,
            false => None,
        };
        Ok(Answer {
            id: oid_to_gix(id),
            place,
            kind: header.map(|h| h.0),
            size: header.map(|h| h.1),
            disk_size,
            delta_base,
        })
    }
}

/// The reads by id, each one [`Objects::answer`].
impl Objects {
    /// Where `id` is, as a path and offset, or `None` if the repository does not have it (an id of the other
    /// hash kind is not there either). The `.pack` file of a packed object is opened now: a pack that
    /// disappeared between the lookup and its opening (a repack) is looked for again: [`Objects::answer`] asked
    /// for nothing but the place.
    pub fn place(&self, id: &(impl AnyId + ?Sized)) -> Result<Option<Place>, Error> {
        Ok(self
            .answer(id, Want::default(), &mut Vec::new())?
            .map(|a| a.place))
    }

    /// Type and size of `id` from headers only (a deltified entry's type from the end of its chain, its size
    /// from the delta's header), and where it is; `None` if absent. [`Objects::answer`] with [`Want::HEADER`].
    pub fn info(&self, id: &(impl AnyId + ?Sized)) -> Result<Option<Info>, Error> {
        self.info_of(self.answer(id, Want::HEADER, &mut Vec::new()))
    }

    /// Read object `id` into `out`: one lookup, then one read of the entry (its header read once), inflated
    /// and with deltas applied. `out` is cleared first: on success it holds exactly the object's bytes
    /// (`out.len()` is [`Info::size`]), and on `Ok(None)` (absent; an id of the other hash kind is absent too)
    /// or an error its contents are unspecified. Its capacity is reused, so one buffer serves a whole batch.
    ///
    /// ```
    /// # let repo = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
    /// # git(&["init", "-q"])?;
    /// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
    /// # git(&["add", "hello.txt"])?;
    /// use odb_index_gix::{ObjectId, Objects, gix_object::Kind};
    ///
    /// let objects = Objects::open(repo.path())?;
    /// let id: ObjectId = "ce013625030ba8dba906f756967f9e9ca394464a".parse()?; // hello.txt
    /// let mut buf = b"left over from before".to_vec();
    /// let info = objects.read(&id, &mut buf)?.expect("present");
    /// assert_eq!((info.kind, info.size, &buf[..]), (Kind::Blob, 6, &b"hello\n"[..]));
    /// let absent: ObjectId = "0123456789012345678901234567890123456789".parse()?;
    /// assert_eq!(objects.read(&absent, &mut buf)?, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read(
        &self,
        id: &(impl AnyId + ?Sized),
        out: &mut Vec<u8>,
    ) -> Result<Option<Info>, Error> {
        self.info_of(self.answer(id, Want::CONTENTS, out))
    }

    /// The [`Info`] of an answer with a type and size; `None` for a file that is not a loose object under
    /// [`IncompleteMode::Miss`] (git's `missing`).
    pub(crate) fn info_of(
        &self,
        answer: Result<Option<Answer>, Error>,
    ) -> Result<Option<Info>, Error> {
        match answer {
            Err(e) if e.is_not_a_loose_object() && self.answers_missing() => Ok(None),
            found => Ok(found?.map(|a| Info {
                id: a.id,
                kind: a.kind.expect("asked for"),
                size: a.size.expect("asked for"),
                place: a.place,
            })),
        }
    }
}
