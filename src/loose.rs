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

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::oid::{HashKind, ObjectId};
use crate::sync::{AtomicU64, Condvar, Mutex, Ordering, cell, lock, wait};

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
/// use odb_index::loose::LooseDb;
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
            let dir = rustix::fs::open(
                objects_dir,
                access | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .map_err(|e| Error::io(objects_dir, e.into()))?;
            Ok(LooseDb {
                path: objects_dir.to_path_buf(),
                kind,
                dir,
            })
        }
        #[cfg(not(unix))]
        {
            let md = std::fs::metadata(objects_dir).map_err(|e| Error::io(objects_dir, e))?;
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

    /// The objects directory this database was opened on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The hash kind of the ids this database is asked about.
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
        debug_assert!(std::ffi::CStr::from_bytes_with_nul(&buf[..n + 1]).is_ok());
        // SAFETY: `write_rel_path` wrote `n` bytes of hex digits and one '/' (no NUL among them) and a NUL at
        // `n`, so `buf[..n + 1]` is a C string with exactly one NUL, at its end. (The checked constructor scans
        // the buffer for that NUL on every miss; this is the hottest path of a miss.)
        let rel = unsafe { std::ffi::CStr::from_bytes_with_nul_unchecked(&buf[..n + 1]) };
        match rustix::fs::statat(&self.dir, rel, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(rustix::io::Errno::NOENT) | Err(rustix::io::Errno::NOTDIR) => Ok(false),
            Err(e) => Err(Error::io(self.path.join(rel_str(buf, n)), e.into())),
        }
    }

    #[cfg(not(unix))]
    fn probe(&self, buf: &[u8; MAX_REL_PATH], n: usize) -> Result<bool, Error> {
        let p = self.path.join(rel_str(buf, n));
        match std::fs::symlink_metadata(&p) {
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

    /// Read the ids in fan-out directory `xx/` (`first` is its byte), sorted, as zero-padded 32-byte arrays.
    /// Entries that are not loose-object names (wrong length, not lower-case-or-upper-case hex, `tmp_obj_*`,
    /// `.`/`..`) are skipped. A missing fan-out directory is empty.
    fn read_fanout(&self, first: u8) -> Result<Box<[[u8; 32]]>, Error> {
        let name_len = self.kind.hex_len() - 2;
        let mut ids: Vec<[u8; 32]> = Vec::new();
        let mut push = |name: &[u8]| {
            if name.len() != name_len {
                return;
            }
            let mut key = [0u8; 32];
            key[0] = first;
            for (i, pair) in name.chunks_exact(2).enumerate() {
                match (crate::oid::hex_val(pair[0]), crate::oid::hex_val(pair[1])) {
                    (Some(hi), Some(lo)) => key[i + 1] = (hi << 4) | lo,
                    _ => return,
                }
            }
            ids.push(key);
        };
        let sub = HEX_PAIRS[first as usize];
        let sub_path = || self.path.join(std::str::from_utf8(&sub).unwrap_or("??"));
        #[cfg(unix)]
        {
            use rustix::fs::{Mode, OFlags};
            let sub_c = [sub[0], sub[1], 0];
            let Ok(sub_c) = std::ffi::CStr::from_bytes_with_nul(&sub_c) else {
                return Ok(Box::new([]));
            };
            let fd = match rustix::fs::openat(
                &self.dir,
                sub_c,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            ) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) | Err(rustix::io::Errno::NOTDIR) => {
                    return Ok(Box::new([]));
                }
                Err(e) => return Err(Error::io(sub_path(), e.into())),
            };
            let dir = rustix::fs::Dir::new(fd).map_err(|e| Error::io(sub_path(), e.into()))?;
            for entry in dir {
                let entry = entry.map_err(|e| Error::io(sub_path(), e.into()))?;
                push(entry.file_name().to_bytes());
            }
        }
        #[cfg(not(unix))]
        {
            let p = sub_path();
            let rd = match std::fs::read_dir(&p) {
                Ok(rd) => rd,
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        || e.kind() == std::io::ErrorKind::NotADirectory =>
                {
                    return Ok(Box::new([]));
                }
                Err(e) => return Err(Error::io(p, e)),
            };
            for entry in rd {
                let entry = entry.map_err(|e| Error::io(&p, e))?;
                if let Some(name) = entry.file_name().to_str() {
                    push(name.as_bytes());
                }
            }
        }
        ids.sort_unstable();
        ids.dedup();
        Ok(ids.into_boxed_slice())
    }
}

/// The relative path in `buf` as text (it is ASCII by construction).
fn rel_str(buf: &[u8; MAX_REL_PATH], n: usize) -> &str {
    std::str::from_utf8(&buf[..n]).unwrap_or("")
}

/// `id`'s bytes zero-padded to 32: the key a [`LooseCache`] bucket is sorted by.
#[inline]
fn key_of(id: &ObjectId) -> [u8; 32] {
    let mut k = [0u8; 32];
    let b = id.as_bytes();
    k[..b.len()].copy_from_slice(b);
    k
}

/// One fan-out directory's listing: its ids, sorted and zero-padded to 32 bytes. Immutable once built.
///
/// The ids sit in a [`cell::UnsafeCell`] only so that loom (under `--cfg loom`) checks that a reader which
/// found the listing through a bucket word also sees its contents; outside loom the cell costs nothing.
struct Listing {
    ids: cell::UnsafeCell<Box<[[u8; 32]]>>,
}

impl Listing {
    fn new(ids: Box<[[u8; 32]]>) -> Box<Listing> {
        Box::new(Listing {
            ids: cell::UnsafeCell::new(ids),
        })
    }

    #[inline]
    fn contains(&self, key: &[u8; 32]) -> bool {
        // SAFETY: a listing's ids are written only by `UnsafeCell::new`, before the listing is published; after
        // that every access is a shared read, so no `&mut` can coexist with this `&`.
        self.ids
            .with(|ids| unsafe { &*ids }.binary_search(key).is_ok())
    }
}

/// Bucket word: nothing listed yet (or forgotten by a refresh).
const EMPTY: u64 = 0;
/// Bucket word: one thread is listing the directory; others wait on [`LooseCache::wake`].
const LOADING: u64 = 1;
// Any other bucket word is the address of a published `Listing` (exposed with `expose_provenance`). A `Listing`
// is aligned to at least 4 and `Box` never yields null, so an address is never `EMPTY` or `LOADING`.
const _: () = assert!(std::mem::align_of::<Listing>() >= 2);

/// A published listing's address, or `None` for `EMPTY` / `LOADING`.
#[inline]
fn listing_ptr(word: u64) -> Option<*mut Listing> {
    // The word came from `Box::into_raw(..).expose_provenance()`, so the address fits in `usize`.
    (word > LOADING).then(|| std::ptr::with_exposed_provenance_mut::<Listing>(word as usize))
}

/// Loose objects answered from memory: each fan-out directory (`xx/`) is listed once, on first use, like git's
/// `OBJECT_INFO_QUICK` loose cache (`odb_loose_cache`).
///
/// # Staleness accepted
///
/// A fan-out directory is read (one `getdents` pass) the first time a lookup needs it, and the answer for every
/// id in it comes from that listing until [`refresh`](LooseCache::refresh):
///
/// - an object written **after** its fan-out directory was read is reported absent until `refresh`;
/// - an object deleted (say by `git prune-packed`) after the read is still reported present until `refresh`;
/// - an object written after the cache was created but **before** the first lookup in its fan-out directory is
///   seen, because nothing of that directory was read yet.
///
/// Callers that need "written a moment ago" to be visible use [`LooseDb::contains`] (or `refresh` first).
///
/// # Threads: lock-free lookups
///
/// `LooseCache` is `Sync`: lookups take `&self`. Each of the 256 fan-out buckets is one atomic word: `EMPTY`,
/// `LOADING`, or the address of an immutable, sorted listing. A lookup in a listed bucket is **one Acquire load
/// of that word and a binary search**: no lock, no read-modify-write, no reference count, no allocation, no
/// system call. So threads that miss in cached mode share nothing but read-only cache lines.
///
/// The first lookup in an `EMPTY` bucket claims it (`EMPTY` → `LOADING`, a compare-exchange), lists the
/// directory outside every lock, and publishes the listing with a Release store of its address. Lookups that
/// find the bucket `LOADING` block on a mutex and condition variable until the loader publishes (or fails: a
/// failed or panicking load puts the bucket back to `EMPTY` and wakes them; one of them then tries the load
/// itself). Nobody spins.
///
/// # Refresh and memory
///
/// A reader may be in the middle of a binary search over a listing when [`refresh`](LooseCache::refresh) puts
/// its bucket back to `EMPTY`, and readers announce themselves nowhere (that would cost a shared write per
/// lookup), so a listing can never be known to be unused while the cache is shared. `refresh` therefore
/// **retires** the listings it replaces into a list that is freed when the `LooseCache` is dropped. The cost is
/// bounded per refresh: at most one listing per fan-out directory that was loaded, i.e. 32 bytes per loose
/// object plus a few words per directory. A caller that refreshes very often over many loose objects should
/// make a new `LooseCache` instead (dropping the old one once no thread uses it) to give the memory back. The
/// [`Store`](crate::Store) does that: `Store::refresh` builds fresh caches in the new map, and the old ones are
/// dropped with the old map once no handle uses it.
///
/// ```
/// use odb_index::loose::{LooseCache, LooseDb};
/// use odb_index::{HashKind, ObjectId};
///
/// let tmp = tempfile::tempdir()?;
/// let objects = tmp.path().join("objects");
/// std::fs::create_dir_all(objects.join("e6"))?;
/// let id: ObjectId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse()?;
/// let cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1)?);
/// assert!(!cache.contains(&id)?); // reads e6/ now: empty
/// std::fs::write(objects.join("e6/9de29bb2d1d6434b8b29ae775ad8c2e48c5391"), b"")?;
/// assert!(!cache.contains(&id)?); // stale until refreshed
/// cache.refresh();
/// assert!(cache.contains(&id)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LooseCache {
    db: LooseDb,
    /// One word per fan-out directory: `EMPTY`, `LOADING` or a published listing's address.
    buckets: Box<[AtomicU64]>,
    /// Waiters for a `LOADING` bucket park here. The mutex guards no data: it orders "check the word, then
    /// sleep" against "change the word, then notify", so no wake-up is lost.
    wake: Mutex<()>,
    wake_cv: Condvar,
    /// Listings replaced by `refresh`, freed on drop. The mutex also serializes refreshes. Boxed: readers may
    /// still hold a retired listing's address, so it must not move.
    #[allow(clippy::vec_box, reason = "the listings must keep their addresses")]
    retired: Mutex<Vec<Box<Listing>>>,
}

impl std::fmt::Debug for LooseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let loaded = self
            .buckets
            .iter()
            .filter(|b| b.load(Ordering::Relaxed) > LOADING)
            .count();
        f.debug_struct("LooseCache")
            .field("db", &self.db)
            .field("loaded_buckets", &loaded)
            .finish_non_exhaustive()
    }
}

/// Puts a claimed bucket back to `EMPTY` and wakes its waiters unless disarmed: a failed or panicking load
/// leaves no bucket `LOADING` forever.
struct LoadGuard<'a> {
    cache: &'a LooseCache,
    bucket: &'a AtomicU64,
    armed: bool,
}

impl Drop for LoadGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            // Relaxed: nothing is published with `EMPTY`; a thread that sees it only tries to claim the bucket.
            self.bucket.store(EMPTY, Ordering::Relaxed);
            self.cache.notify();
        }
    }
}

impl LooseCache {
    /// A cache over `db` with nothing loaded yet.
    pub fn new(db: LooseDb) -> Self {
        let buckets = (0..256)
            .map(|_| AtomicU64::new(EMPTY))
            .collect::<Vec<_>>()
            .into_boxed_slice();
        LooseCache {
            db,
            buckets,
            wake: Mutex::new(()),
            wake_cv: Condvar::new(),
            retired: Mutex::new(Vec::new()),
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
    /// Once the bucket is loaded, a lookup is one Acquire load and a binary search: no lock, no shared write,
    /// no allocation.
    #[inline]
    pub fn contains(&self, id: &ObjectId) -> Result<bool, Error> {
        if id.kind() != self.db.kind {
            return Ok(false);
        }
        let first = id.first_byte();
        let key = key_of(id);
        let bucket = &self.buckets[first as usize];
        // Acquire: pairs with the Release store in `load_bucket` that published the listing, so its contents
        // (written before that store) are visible to the search below.
        if let Some(p) = listing_ptr(bucket.load(Ordering::Acquire)) {
            // SAFETY: a published listing is freed only by `Drop` (refresh retires it), and `Drop` cannot run
            // while `&self` is borrowed; its initialization happens-before this read (Acquire above).
            return Ok(unsafe { &*p }.contains(&key));
        }
        self.contains_slow(first, bucket, &key)
    }

    #[cold]
    fn contains_slow(&self, first: u8, bucket: &AtomicU64, key: &[u8; 32]) -> Result<bool, Error> {
        loop {
            // Acquire on success and failure: pairs with the publishing Release store (see `contains`).
            match bucket.compare_exchange(EMPTY, LOADING, Ordering::Relaxed, Ordering::Acquire) {
                // Relaxed on success: claiming publishes nothing and reads nothing others wrote; waiters learn
                // the outcome from the later Release store (or the guard's reset) and the mutex.
                Ok(_) => return self.load_bucket(first, bucket, key),
                Err(word) => {
                    if let Some(p) = listing_ptr(word) {
                        // SAFETY: as in `contains`; the failed compare-exchange read `word` with Acquire.
                        return Ok(unsafe { &*p }.contains(key));
                    }
                    if word == LOADING {
                        self.wait_while_loading(bucket);
                    }
                    // EMPTY (a load failed or a refresh reset it): try to claim it again.
                }
            }
        }
    }

    /// List fan-out directory `first` into the bucket this thread has just claimed (`LOADING`), publish it and
    /// answer from it.
    fn load_bucket(&self, first: u8, bucket: &AtomicU64, key: &[u8; 32]) -> Result<bool, Error> {
        let mut guard = LoadGuard {
            cache: self,
            bucket,
            armed: true,
        };
        // On error or panic the guard resets the bucket to EMPTY and wakes the waiters.
        let listing = Listing::new(self.db.read_fanout(first)?);
        let found = listing.contains(key);
        let word = Box::into_raw(listing).expose_provenance() as u64;
        // Release: pairs with the Acquire loads in `contains`, `contains_slow`, `wait_while_loading` and
        // `refresh`; everything written into the listing above happens-before a reader's search of it. A plain
        // store suffices: while the bucket is LOADING only its claimant changes it (`refresh` waits).
        bucket.store(word, Ordering::Release);
        guard.armed = false;
        self.notify();
        Ok(found)
    }

    /// Wake every thread waiting for a bucket to leave `LOADING`.
    fn notify(&self) {
        // Taking the mutex orders this wake-up after a waiter's "still LOADING" check (made under the mutex):
        // either the waiter saw the new word, or it is already waiting when `notify_all` runs.
        drop(lock(&self.wake));
        self.wake_cv.notify_all();
    }

    /// Block until `bucket` is no longer `LOADING`. Returns at once if it already is not.
    fn wait_while_loading(&self, bucket: &AtomicU64) {
        let mut g = lock(&self.wake);
        // Acquire: pairs with the publishing Release store, although the caller re-reads the word with Acquire
        // anyway; Relaxed would do for the loop condition alone.
        while bucket.load(Ordering::Acquire) == LOADING {
            g = wait(&self.wake_cv, g);
        }
    }

    /// Forget every listing: the next lookup in each fan-out directory reads it again, so every object written
    /// before `refresh` was called is seen by lookups that start after it returns. Lookups running concurrently
    /// with `refresh` see either the old or the new listing of their bucket.
    ///
    /// A listing being read in another thread cannot be freed here: replaced listings are kept until the cache
    /// is dropped (see "Refresh and memory" above). A bucket being loaded is waited for, then forgotten (its
    /// listing may have been read before the objects the caller wants to see were written).
    pub fn refresh(&self) {
        let mut retired = lock(&self.retired);
        for bucket in self.buckets.iter() {
            // Relaxed: only the decision is taken from this value; the compare-exchange below re-reads it.
            let mut word = bucket.load(Ordering::Relaxed);
            loop {
                if word == EMPTY {
                    break;
                }
                if word == LOADING {
                    self.wait_while_loading(bucket);
                    word = bucket.load(Ordering::Relaxed);
                    continue;
                }
                // Acquire on success: pairs with the publishing Release store, so the listing's initialization
                // happens-before this thread hands it to `retired` (and, through that mutex, to `Drop`).
                match bucket.compare_exchange(word, EMPTY, Ordering::Acquire, Ordering::Relaxed) {
                    Ok(_) => {
                        if let Some(p) = listing_ptr(word) {
                            // SAFETY: `word` came from `Box::into_raw` in `load_bucket`; this successful
                            // compare-exchange removed it from the bucket, so no other refresh retires it too
                            // and `Drop` will not see it in the bucket. Readers that still hold the address
                            // keep reading a live listing: retired ones are freed only by `Drop`.
                            retired.push(unsafe { Box::from_raw(p) });
                        }
                        break;
                    }
                    Err(now) => word = now,
                }
            }
        }
    }
}

impl Drop for LooseCache {
    fn drop(&mut self) {
        for bucket in self.buckets.iter() {
            // `&mut self`: no reader remains, and whatever made this thread the last owner ordered every
            // loader's writes before it.
            let word = bucket.load(Ordering::Relaxed);
            if let Some(p) = listing_ptr(word) {
                // SAFETY: `word` came from `Box::into_raw` in `load_bucket` and is still owned by the bucket
                // (refresh swaps it out before retiring it); nothing else can reach it any more.
                drop(unsafe { Box::from_raw(p) });
            }
        }
        // The retired listings drop with `self.retired`.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rel_path_layout() {
        let id: ObjectId = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391".parse().unwrap();
        let mut buf = [0xffu8; MAX_REL_PATH];
        let n = write_rel_path(&id, &mut buf);
        assert_eq!(&buf[..n], b"e6/9de29bb2d1d6434b8b29ae775ad8c2e48c5391");
        assert_eq!(buf[n], 0);
        let id: ObjectId = "ab".repeat(32).parse().unwrap();
        let n = write_rel_path(&id, &mut buf);
        assert_eq!(n, 65);
        assert_eq!(&buf[..3], b"ab/");
        assert_eq!(buf[n], 0);
    }

    #[test]
    fn cache_skips_odd_entries_and_finds_real_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let objects = tmp.path();
        let fan = objects.join("ab");
        std::fs::create_dir_all(&fan).unwrap();
        let good = "cd".repeat(19);
        std::fs::write(fan.join(&good), b"").unwrap();
        std::fs::write(fan.join("short"), b"").unwrap();
        std::fs::write(fan.join("tmp_obj_XXXXXX"), b"").unwrap();
        std::fs::write(fan.join("zz".repeat(19)), b"").unwrap();
        std::fs::write(fan.join(format!("{good}0")), b"").unwrap();
        std::fs::create_dir(fan.join("ef".repeat(19))).unwrap(); // a directory with an object's name
        let db = LooseDb::open(objects, HashKind::Sha1).unwrap();
        let cache = LooseCache::new(db);
        let id: ObjectId = format!("ab{good}").parse().unwrap();
        assert!(cache.contains(&id).unwrap());
        let other: ObjectId = format!("ab{}", "00".repeat(19)).parse().unwrap();
        assert!(!cache.contains(&other).unwrap());
        // git counts any entry with an object's name; so does the cache.
        let dir_named: ObjectId = format!("ab{}", "ef".repeat(19)).parse().unwrap();
        assert!(cache.contains(&dir_named).unwrap());
        // Missing fan-out directory: absent, not an error.
        let elsewhere: ObjectId = "11".repeat(20).parse().unwrap();
        assert!(!cache.contains(&elsewhere).unwrap());
        // Wrong hash kind: absent.
        let sha256: ObjectId = "ab".repeat(32).parse().unwrap();
        assert!(!cache.contains(&sha256).unwrap());
        assert!(!cache.db().contains(&sha256).unwrap());
    }

    #[test]
    fn fanout_that_is_a_file_is_empty() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("ab"), b"not a dir").unwrap();
        let db = LooseDb::open(tmp.path(), HashKind::Sha1).unwrap();
        let id: ObjectId = format!("ab{}", "cd".repeat(19)).parse().unwrap();
        assert!(!db.contains(&id).unwrap());
        assert!(!LooseCache::new(db).contains(&id).unwrap());
    }

    #[test]
    fn open_errors_name_the_path() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("nope");
        match LooseDb::open(&missing, HashKind::Sha1) {
            Err(Error::Io { path, .. }) => assert_eq!(path, missing),
            other => panic!("unexpected {other:?}"),
        }
        let file = tmp.path().join("file");
        std::fs::write(&file, b"").unwrap();
        assert!(matches!(
            LooseDb::open(&file, HashKind::Sha1),
            Err(Error::Io { .. })
        ));
    }

    /// Writes an empty file named like a loose object `hex` under `objects`.
    fn touch(objects: &Path, hex: &str) {
        let fan = objects.join(&hex[..2]);
        std::fs::create_dir_all(&fan).unwrap();
        std::fs::write(fan.join(&hex[2..]), b"").unwrap();
    }

    #[test]
    fn threads_hammer_contains_while_refreshing() {
        let tmp = tempfile::tempdir().unwrap();
        let objects = tmp.path();
        // Present ids spread over many fan-out directories; absent ids share their fan-out directories.
        let present: Vec<ObjectId> = (0..200u32)
            .map(|i| {
                let hex = format!("{:02x}{:038x}", (i * 7) % 256, i);
                touch(objects, &hex);
                hex.parse().unwrap()
            })
            .collect();
        let absent: Vec<ObjectId> = (0..200u32)
            .map(|i| {
                format!("{:02x}{:038x}", (i * 7) % 256, i + 1_000_000)
                    .parse()
                    .unwrap()
            })
            .collect();
        let cache = LooseCache::new(LooseDb::open(objects, HashKind::Sha1).unwrap());
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let readers: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        let mut rounds = 0u64;
                        while !stop.load(std::sync::atomic::Ordering::Relaxed) || rounds < 5 {
                            for id in &present {
                                assert!(cache.contains(id).unwrap(), "{id} lost");
                            }
                            for id in &absent {
                                assert!(!cache.contains(id).unwrap(), "{id} invented");
                            }
                            rounds += 1;
                        }
                        rounds
                    })
                })
                .collect();
            // The refresher writes a new object, checks it is stale until refreshed, then visible.
            for i in 0..100u32 {
                let hex = format!("{:02x}{:038x}", (i * 13) % 256, i + 2_000_000);
                let id: ObjectId = hex.parse().unwrap();
                // Load its bucket first, so that the write below happens after the listing.
                assert!(!cache.contains(&id).unwrap());
                touch(objects, &hex);
                // No refresh yet: the bucket stays as listed unless another refresh ran (none does).
                assert!(!cache.contains(&id).unwrap(), "{id} seen without a refresh");
                cache.refresh();
                assert!(cache.contains(&id).unwrap(), "{id} not seen after refresh");
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            for r in readers {
                assert!(r.join().unwrap() >= 5);
            }
        });
        // Refreshes retired the listings they replaced (freed when the cache drops, below).
        assert!(!lock(&cache.retired).is_empty());
    }

    #[test]
    fn failed_load_is_retried_and_wakes_nobody_forever() {
        // A fan-out "directory" that cannot be listed (a symlink loop): every lookup fails with an I/O error,
        // nothing is cached, and concurrent lookups all return (none waits on a bucket left LOADING).
        #[cfg(unix)]
        {
            let tmp = tempfile::tempdir().unwrap();
            std::os::unix::fs::symlink("ab", tmp.path().join("ab")).unwrap();
            let cache = LooseCache::new(LooseDb::open(tmp.path(), HashKind::Sha1).unwrap());
            let id: ObjectId = format!("ab{}", "cd".repeat(19)).parse().unwrap();
            std::thread::scope(|s| {
                for _ in 0..4 {
                    s.spawn(|| {
                        for _ in 0..200 {
                            assert!(matches!(cache.contains(&id), Err(Error::Io { .. })));
                        }
                    });
                }
            });
            assert_eq!(cache.buckets[0xab].load(Ordering::Relaxed), EMPTY);
            // Once fixed, the next lookup lists it.
            std::fs::remove_file(tmp.path().join("ab")).unwrap();
            touch(tmp.path(), &id.to_string());
            assert!(cache.contains(&id).unwrap());
        }
    }

    #[test]
    fn cache_is_send_sync() {
        fn check<T: Send + Sync>() {}
        check::<LooseCache>();
        check::<LooseDb>();
    }
}
