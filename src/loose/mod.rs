// Over 600 lines: 191 of them are tests; the probe, the cache and the fan-out listing share one directory handle.
//! Loose objects: the `xx/yyyy…` files of one objects directory.
//!
//! Two ways to ask "is this object stored loose here?":
//!
//! - [`LooseDb::contains`] probes the file system every time: one `fstatat` of the relative path `xx/yyyy…`
//!   against the objects directory, which [`LooseDb`] keeps open. The path is built in a stack buffer, so a
//!   probe allocates nothing. It sees an object the moment its file has been renamed into place.
//! - [`LooseCache::contains`] lists each fan-out directory (`xx/`) once, on first use, and answers from memory
//!   afterwards, like git's `OBJECT_INFO_QUICK` loose-object cache. It costs no system call per lookup once a
//!   fan-out directory is loaded, and accepts staleness until [`LooseCache::refresh`] (see its docs).
//!
//! Like git (`stat_loose_object` in `object-file.c`), a probe does not follow a symbolic link in the last path
//! component (`lstat`, here `AT_SYMLINK_NOFOLLOW`) and counts any directory entry with the object's name as the
//! object, whatever its type: it checks existence, not validity.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::oid::{HashKind, ObjectId};
// The loose cache is outside the models (each bucket is listed once under its std mutex and published by std's
// `OnceLock`; 256 modelled cells per cache would swamp the store models). Not yet modelled.
#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: the loose cache, outside the models"
)]
use crate::sync::plain::{Mutex, OnceLock, lock};

/// Longest relative path of a loose object: `xx/` plus 62 hex digits (SHA-256), plus a NUL terminator.
const MAX_REL_PATH: usize = 2 + 1 + 62 + 1;

/// Write `xx/yyyy…` (lower-case hex) for `id` into `buf`, followed by a NUL byte. Returns the path's length
/// without the NUL.
#[inline]
fn write_rel_path(id: &ObjectId, buf: &mut [u8; MAX_REL_PATH]) -> usize {
    // One table lookup per byte (two hex digits), written straight into place: this runs on every miss.
    let bytes = id.as_bytes();
    buf[..2].copy_from_slice(&HEX_PAIRS[bytes[0] as usize]);
    buf[2] = b'/';
    for (dst, b) in buf[3..].chunks_exact_mut(2).zip(&bytes[1..]) {
        dst.copy_from_slice(&HEX_PAIRS[*b as usize]);
    }
    let n = 2 * bytes.len() + 1;
    buf[n] = 0;
    n
}

/// The name of fan-out directory `b` (`0x3f` -> `"3f"`).
pub(crate) fn fanout_name(b: u8) -> [u8; 2] {
    HEX_PAIRS[b as usize]
}

/// `HEX_PAIRS[b]` is the two lower-case hex digits of `b`.
const HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [DIGITS[i >> 4], DIGITS[i & 15]];
        i += 1;
    }
    t
};

/// The loose objects of one objects directory, probed with one `fstatat` per lookup.
///
/// The directory is opened once ([`LooseDb::open`]) and kept open (on Unix), so a probe resolves a short
/// relative path against the open directory: no allocation, no path joining. If the objects directory is
/// renamed or replaced after opening, probes keep looking in the directory that was opened.
///
/// ```
/// use std::process::Command;
/// use odb_index::testing::LooseDb;
/// use odb_index::{HashKind, ObjectId};
///
/// let tmp = tempfile::tempdir()?;
/// let git = |args: &[&str]| {
///     let out = Command::new("git")
///         .args(args)
///         .current_dir(tmp.path())
///         .env("GIT_CONFIG_GLOBAL", "/dev/null")
///         .env("GIT_CONFIG_NOSYSTEM", "1")
///         .output()
///         .expect("git runs");
///     assert!(out.status.success());
///     String::from_utf8(out.stdout).unwrap()
/// };
/// git(&["init", "-q", "--bare", "."]);
/// let db = LooseDb::open(&tmp.path().join("objects"), HashKind::Sha1)?;
///
/// let empty_blob: ObjectId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse()?;
/// assert!(!db.contains(&empty_blob)?);
/// // Written after the database was opened: a probe sees it at once.
/// std::fs::write(tmp.path().join("empty"), b"")?;
/// let written = git(&["hash-object", "-w", "empty"]);
/// assert_eq!(written.trim(), empty_blob.to_string());
/// assert!(db.contains(&empty_blob)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct LooseDb {
    path: PathBuf,
    kind: HashKind,
    #[cfg(unix)]
    dir: std::os::fd::OwnedFd,
}

impl LooseDb {
    /// Open the objects directory `objects_dir`, whose objects are named with `kind` ids.
    ///
    /// Fails with [`Error::Io`] naming the directory if it cannot be opened or is not a directory.
    pub fn open(objects_dir: &Path, kind: HashKind) -> Result<LooseDb, Error> {
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            // O_PATH (Linux) needs only search permission on the directory and is enough for `fstatat` and
            // `openat`; elsewhere a read-only descriptor does the same job.
            #[cfg(any(target_os = "linux", target_os = "android"))]
            let access = OFlags::PATH;
            #[cfg(not(any(target_os = "linux", target_os = "android")))]
            let access = OFlags::RDONLY;
            let dir = crate::fault::check_rustix(crate::fault::Call::Open)
                .and_then(|()| {
                    rustix::fs::open(
                        objects_dir,
                        access | OFlags::DIRECTORY | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                })
                .map_err(|e| Error::io(objects_dir, e.into()))?;
            Ok(LooseDb {
                path: objects_dir.to_path_buf(),
                kind,
                dir,
            })
        }
        #[cfg(not(unix))]
        {
            let md = crate::fault::check(crate::fault::Call::Stat)
                .and_then(|()| std::fs::metadata(objects_dir))
                .map_err(|e| Error::io(objects_dir, e))?;
            if !md.is_dir() {
                return Err(Error::io(
                    objects_dir,
                    std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
                ));
            }
            Ok(LooseDb {
                path: objects_dir.to_path_buf(),
                kind,
            })
        }
    }

    /// The objects directory `objects_dir` already opened as [`open`](Self::open) opens it (`dir`: `O_PATH`,
    /// a directory, close-on-exec; discovery's descriptor), without opening it again.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    pub(crate) fn with_dir(
        objects_dir: &Path,
        kind: HashKind,
        dir: std::os::fd::OwnedFd,
    ) -> LooseDb {
        LooseDb {
            path: objects_dir.to_path_buf(),
            kind,
            dir,
        }
    }

    /// The descriptor of the objects directory.
    #[cfg(unix)]
    pub(crate) fn dir(&self) -> &std::os::fd::OwnedFd {
        &self.dir
    }

    /// The objects directory this database was opened on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The hash kind of the ids this database is asked about.
    #[cfg_attr(not(any(test, feature = "test-support")), allow(dead_code))]
    pub fn hash_kind(&self) -> HashKind {
        self.kind
    }

    /// Whether `id` is stored loose in this directory, by one `fstatat(dir, "xx/yyyy…", AT_SYMLINK_NOFOLLOW)`.
    ///
    /// "Not found" (`ENOENT`, or `ENOTDIR` when `xx` is not a directory) is `Ok(false)`. Any other failure is
    /// [`Error::Io`] naming the object's path. An id of another hash kind than the database's is `Ok(false)`
    /// (no such file can exist under git's naming) without touching the file system.
    ///
    /// Allocates nothing, except on the error path.
    #[inline]
    pub fn contains(&self, id: &ObjectId) -> Result<bool, Error> {
        if id.kind() != self.kind {
            return Ok(false);
        }
        let mut buf = [0u8; MAX_REL_PATH];
        let n = write_rel_path(id, &mut buf);
        self.probe(&buf, n)
    }

    #[cfg(unix)]
    #[inline]
    fn probe(&self, buf: &[u8; MAX_REL_PATH], n: usize) -> Result<bool, Error> {
        use rustix::fs::AtFlags;
        let rel = rel_cstr(buf, n);
        let stat = crate::fault::check_rustix(crate::fault::Call::Stat)
            .and_then(|()| rustix::fs::statat(&self.dir, rel, AtFlags::SYMLINK_NOFOLLOW));
        match stat {
            Ok(_) => Ok(true),
            Err(rustix::io::Errno::NOENT) | Err(rustix::io::Errno::NOTDIR) => Ok(false),
            Err(e) => Err(Error::io(self.path.join(rel_str(buf, n)), e.into())),
        }
    }

    #[cfg(not(unix))]
    fn probe(&self, buf: &[u8; MAX_REL_PATH], n: usize) -> Result<bool, Error> {
        let p = self.path.join(rel_str(buf, n));
        match crate::fault::check(crate::fault::Call::Stat)
            .and_then(|()| std::fs::symlink_metadata(&p))
        {
            Ok(_) => Ok(true),
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.kind() == std::io::ErrorKind::NotADirectory =>
            {
                Ok(false)
            }
            Err(e) => Err(Error::io(p, e)),
        }
    }

    /// Read the ids in fan-out directory `xx/` (`first` is its byte), sorted, as zero-padded 32-byte arrays
    /// (through [`each_in_fanout`](Self::each_in_fanout)).
    pub(crate) fn read_fanout(&self, first: u8) -> Result<Box<[[u8; 32]]>, Error> {
        let mut ids: Vec<[u8; 32]> = Vec::new();
        let _always_continues = self.each_in_fanout(first, &mut |id| {
            ids.push(key_of(&id));
            ControlFlow::Continue(())
        })?;
        ids.sort_unstable();
        ids.dedup();
        Ok(ids.into_boxed_slice())
    }

    /// Call `f` with the id named by every entry of fan-out directory `xx/` (`first` is its byte), in directory
    /// order, until it breaks: the one reader of loose fan-out directories (the cache, prefix lookups and
    /// iteration use it). Only git's names count: lower-case hex of the right length; anything else (wrong
    /// length, upper case, `tmp_obj_*`, `.`/`..`) is skipped. A missing fan-out directory (or a file in its
    /// place) holds none; one that cannot be listed is an I/O error naming it.
    pub(crate) fn each_in_fanout(
        &self,
        first: u8,
        f: &mut dyn FnMut(ObjectId) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, Error> {
        let name_len = self.kind.hex_len() - 2;
        let sub = HEX_PAIRS[first as usize];
        let mut hex = [0u8; 64];
        hex[..2].copy_from_slice(&sub);
        let mut each = |name: &[u8]| {
            if name.len() != name_len
                || !name.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            {
                return ControlFlow::Continue(());
            }
            hex[2..2 + name_len].copy_from_slice(name);
            match ObjectId::from_hex_kind(&hex[..2 + name_len], self.kind) {
                Ok(id) => f(id),
                Err(_) => ControlFlow::Continue(()),
            }
        };
        let sub_path = || self.path.join(std::str::from_utf8(&sub).unwrap_or("??"));
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let sub_c = [sub[0], sub[1], 0];
            let Ok(sub_c) = std::ffi::CStr::from_bytes_with_nul(&sub_c) else {
                return Ok(ControlFlow::Continue(()));
            };
            // The open of a fan-out directory to read its entries is the listing's call (`Call::List`).
            let opened = crate::fault::check_rustix(crate::fault::Call::List).and_then(|()| {
                rustix::fs::openat(
                    &self.dir,
                    sub_c,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
            });
            let fd = match opened {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) | Err(rustix::io::Errno::NOTDIR) => {
                    return Ok(ControlFlow::Continue(()));
                }
                Err(e) => return Err(Error::io(sub_path(), e.into())),
            };
            let dir = rustix::fs::Dir::new(fd).map_err(|e| Error::io(sub_path(), e.into()))?;
            for entry in dir {
                let entry = entry.map_err(|e| Error::io(sub_path(), e.into()))?;
                if each(entry.file_name().to_bytes()).is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
        }
        #[cfg(not(unix))]
        {
            let p = sub_path();
            let rd = match crate::fault::check(crate::fault::Call::List)
                .and_then(|()| std::fs::read_dir(&p))
            {
                Ok(rd) => rd,
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        || e.kind() == std::io::ErrorKind::NotADirectory =>
                {
                    return Ok(ControlFlow::Continue(()));
                }
                Err(e) => return Err(Error::io(p, e)),
            };
            for entry in rd {
                let entry = entry.map_err(|e| Error::io(&p, e))?;
                if each(entry.file_name().as_encoded_bytes()).is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
        }
        Ok(ControlFlow::Continue(()))
    }
}

/// The relative path `write_rel_path` wrote into `buf` (`n` is what it returned), as a C string for `fstatat`,
/// without the checked constructor's scan for the NUL (this is the hottest path of a miss). Its own function so
/// that Miri runs the unchecked construction from memory (`tests::rel_cstr_is_the_written_path`), where the probe
/// itself needs a real directory.
#[cfg(unix)]
#[inline]
fn rel_cstr(buf: &[u8; MAX_REL_PATH], n: usize) -> &std::ffi::CStr {
    debug_assert!(std::ffi::CStr::from_bytes_with_nul(&buf[..n + 1]).is_ok());
    // SAFETY: `write_rel_path` wrote `n` bytes of hex digits and one '/' (no NUL among them) and a NUL at `n`,
    // so `buf[..n + 1]` is a C string with exactly one NUL, at its end.
    unsafe { std::ffi::CStr::from_bytes_with_nul_unchecked(&buf[..n + 1]) }
}

/// The relative path in `buf` as text (it is ASCII by construction).
fn rel_str(buf: &[u8; MAX_REL_PATH], n: usize) -> &str {
    std::str::from_utf8(&buf[..n]).unwrap_or("")
}

/// `id`'s bytes zero-padded to 32: the key a [`LooseCache`] bucket is sorted by.
#[inline]
pub(crate) fn key_of(id: &ObjectId) -> [u8; 32] {
    let mut k = [0u8; 32];
    let b = id.as_bytes();
    k[..b.len()].copy_from_slice(b);
    k
}

/// One fan-out directory's listing: its ids, sorted and zero-padded to 32 bytes. Immutable once built.
type Listing = Box<[[u8; 32]]>;

/// One fan-out directory of a [`LooseCache`]: its listing once read, and the mutex that one reader holds while
/// it lists the directory (others wait on it, blocking).
#[derive(Default)]
#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: the loose cache, outside the models"
)]
struct Bucket {
    listing: OnceLock<Listing>,
    loading: Mutex<()>,
}

/// Loose objects answered from memory: each fan-out directory (`xx/`) is listed once, on first use, like git's
/// `OBJECT_INFO_QUICK` loose cache (`odb_loose_cache`).
///
/// # Staleness accepted
///
/// A fan-out directory is read (one `getdents` pass) the first time a lookup needs it, and the answer for every
/// id in it comes from that listing until [`refresh`](LooseCache::refresh) (or until the cache is replaced by a
/// new one):
///
/// - an object written **after** its fan-out directory was read is reported absent until refreshed;
/// - an object deleted (say by `git prune-packed`) after the read is still reported present until refreshed;
/// - an object written after the cache was created but **before** the first lookup in its fan-out directory is
///   seen, because nothing of that directory was read yet.
///
/// Callers that need "written a moment ago" to be visible use [`LooseDb::contains`] (or refresh first).
///
/// # Threads: lock-free lookups, on std primitives
///
/// `LooseCache` is `Sync`: lookups take `&self`. Each of the 256 fan-out buckets is a [`std::sync::OnceLock`]
/// holding an immutable, sorted listing. A lookup in a listed bucket is **`OnceLock::get` (one Acquire load)
/// and a binary search**: no lock, no read-modify-write, no reference count, no allocation, no system call. So
/// threads that miss in cached mode share nothing but read-only cache lines.
///
/// The first lookup in an unlisted bucket takes that bucket's mutex, lists the directory, and sets the
/// `OnceLock`; lookups arriving meanwhile block on the mutex and then find the listing. A failed listing (an
/// I/O error) is returned and not cached, so the next lookup tries again; a panicking one leaves the bucket
/// unlisted. Nobody spins. The crate has no hand-made lock-free code here: `src/protocol.rs` is the only one.
///
/// # Refresh and memory
///
/// [`refresh`](LooseCache::refresh) takes `&mut self`: it drops every listing, which is safe only because no
/// other thread can be searching one. To refresh a cache that threads share, make a new `LooseCache` and put it
/// where they find it, dropping the old one once no thread uses it. The [`Store`](crate::Store) does that:
/// `Store::refresh` builds fresh caches in the new map, and the old ones are dropped with the old map once no
/// handle uses it. So memory never grows with refreshes.
///
/// ```
/// use odb_index::testing::{LooseCache, LooseDb};
/// use odb_index::{HashKind, ObjectId};
///
/// let tmp = tempfile::tempdir()?;
/// let objects = tmp.path().join("objects");
/// std::fs::create_dir_all(objects.join("e6"))?;
/// let id: ObjectId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse()?;
/// let mut cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1)?);
/// assert!(!cache.contains(&id)?); // reads e6/ now: empty
/// std::fs::write(objects.join("e6/9de29bb2d1d6434b8b29ae775ad8c2e48c5391"), b"")?;
/// assert!(!cache.contains(&id)?); // stale until refreshed
/// cache.refresh();
/// assert!(cache.contains(&id)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LooseCache {
    db: LooseDb,
    /// One per fan-out directory.
    buckets: Box<[Bucket]>,
}

impl std::fmt::Debug for LooseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loaded = self
            .buckets
            .iter()
            .filter(|b| b.listing.get().is_some())
            .count();
        f.debug_struct("LooseCache")
            .field("db", &self.db)
            .field("loaded_buckets", &loaded)
            .finish_non_exhaustive()
    }
}

impl LooseCache {
    /// A cache over `db` with nothing loaded yet.
    pub fn new(db: LooseDb) -> Self {
        LooseCache {
            db,
            buckets: (0..256).map(|_| Bucket::default()).collect(),
        }
    }

    /// The database the cache lists.
    pub fn db(&self) -> &LooseDb {
        &self.db
    }

    /// Whether `id` was in its fan-out directory when that directory was listed (listing it now if this is the
    /// first lookup there since creation or the last [`refresh`](LooseCache::refresh)).
    ///
    /// Fails with [`Error::Io`] naming the fan-out directory if it exists but cannot be read; nothing is cached
    /// then, so the next lookup tries again. An id of another hash kind than the database's is `Ok(false)`.
    /// Once the bucket is loaded, a lookup is one Acquire load (`OnceLock::get`) and a binary search: no lock,
    /// no shared write, no allocation.
    #[inline]
    pub fn contains(&self, id: &ObjectId) -> Result<bool, Error> {
        if id.kind() != self.db.kind {
            return Ok(false);
        }
        let first = id.first_byte();
        let key = key_of(id);
        let bucket = &self.buckets[first as usize];
        if let Some(ids) = bucket.listing.get() {
            return Ok(ids.binary_search(&key).is_ok());
        }
        self.contains_slow(first, bucket, &key)
    }

    #[cold]
    fn contains_slow(&self, first: u8, bucket: &Bucket, key: &[u8; 32]) -> Result<bool, Error> {
        // One lister per bucket; lookups arriving meanwhile block here until it is done, then find its listing.
        let _lister = lock(&bucket.loading);
        if let Some(ids) = bucket.listing.get() {
            return Ok(ids.binary_search(key).is_ok());
        }
        // On error (or panic) nothing is cached: the next lookup lists again.
        let ids = self.db.read_fanout(first)?;
        // This thread holds the bucket's mutex and found it unlisted, so its listing is the one set here.
        let ids = bucket.listing.get_or_init(|| ids);
        Ok(ids.binary_search(key).is_ok())
    }

    /// Forget every listing: the next lookup in each fan-out directory reads it again, so every object written
    /// before `refresh` was called is seen by lookups after it. Takes `&mut self` (no lookup can be running);
    /// a cache shared between threads is refreshed by replacing it with a new one (see the type's docs).
    #[cfg_attr(not(any(test, feature = "test-support")), allow(dead_code))]
    pub fn refresh(&mut self) {
        for b in self.buckets.iter_mut() {
            b.listing.take();
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests;
