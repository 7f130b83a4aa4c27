//! `packed-refs` as [`Refs`](crate::Refs) reads it: a snapshot (gix-ref's own buffer,
//! [`gix_ref::file::Store::open_packed_buffer`]) kept with the `stat` stamp of the file it was read from, so that
//! a lookup can tell whether `packed-refs` was rewritten while it looked (`git pack-refs` writes the new
//! `packed-refs` before it deletes the loose files it packed) and look again, as git's `stat` of `packed-refs`
//! after the loose read does.
//!
//! The stamp is git's `stat_validity`: device, inode, size, modification and change times. gix-ref's own cache
//! compares the modification time only, and keeps a stale snapshot when the new file has the same time (a
//! file system with coarse timestamps, two writes in one tick); a rewrite by rename always has another inode.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::Error;

/// The identity of `packed-refs` as `stat` reports it: a change in any field means "rewritten".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: Option<SystemTime>,
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of `path`, `None` when there is no such file; any other failure is an error (a `stat` that
    /// failed is no evidence that the file is gone).
    fn of(path: &Path) -> Result<Option<Stamp>, Error> {
        let stat = odb_index::fault::check(odb_index::fault::Call::Stat)
            .and_then(|()| std::fs::metadata(path));
        let md = match stat {
            Ok(md) => md,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(Error::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        #[cfg(unix)]
        let (dev, ino, ctime) = {
            use std::os::unix::fs::MetadataExt as _;
            (md.dev(), md.ino(), (md.ctime(), md.ctime_nsec()))
        };
        #[cfg(not(unix))]
        let (dev, ino, ctime) = (0, 0, (0, 0));
        Ok(Some(Stamp {
            dev,
            ino,
            size: md.len(),
            mtime: md.modified().ok(),
            ctime,
        }))
    }
}

/// `packed-refs` as read once: the stamp taken before the read (`None`: there was no file) and the buffer
/// (`None`: there was none to read). The buffer is never older than the stamp.
#[derive(Clone, Debug)]
pub(crate) struct Snapshot {
    stamp: Option<Stamp>,
    buffer: Option<Arc<gix_ref::packed::Buffer>>,
}

impl Snapshot {
    /// The packed refs read, if there were any.
    pub(crate) fn buffer(&self) -> Option<&gix_ref::packed::Buffer> {
        self.buffer.as_deref()
    }

    /// Whether `now` is a snapshot of the same file as this one.
    pub(crate) fn same_file(&self, now: &Snapshot) -> bool {
        self.stamp == now.stamp
    }
}

/// The last [`Snapshot`] read, shared by the clones of a [`Refs`](crate::Refs) and their threads.
#[derive(Clone, Debug, Default)]
pub(crate) struct PackedRefs {
    last: Arc<Mutex<Option<Snapshot>>>,
}

impl PackedRefs {
    /// The last snapshot read (of a file that may have been rewritten since), or `packed-refs` as it is now if
    /// none was read yet.
    pub(crate) fn last(&self, store: &gix_ref::file::Store) -> Result<Snapshot, Error> {
        if let Some(last) = self.last.lock().expect("not poisoned").as_ref() {
            return Ok(last.clone());
        }
        self.now(store)
    }

    /// `packed-refs` as it is now: `stat` it, and read it again (gix-ref's reader) unless its stamp is the last
    /// snapshot's. Errors: a `stat` that failed otherwise than "no such file" ([`Error::Io`]), a file gix-ref
    /// cannot read ([`Error::Refs`]).
    pub(crate) fn now(&self, store: &gix_ref::file::Store) -> Result<Snapshot, Error> {
        let path = store.packed_refs_path();
        let stamp = Stamp::of(&path)?;
        if let Some(last) = self.last.lock().expect("not poisoned").as_ref()
            && last.stamp == stamp
        {
            return Ok(last.clone());
        }
        let buffer = match stamp {
            None => None,
            Some(_) => store
                .open_packed_buffer()
                .map_err(|source| Error::Refs {
                    path: store.git_dir().to_owned(),
                    source,
                })?
                .map(Arc::new),
        };
        let snapshot = Snapshot { stamp, buffer };
        *self.last.lock().expect("not poisoned") = Some(snapshot.clone());
        Ok(snapshot)
    }
}
