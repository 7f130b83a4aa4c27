//! Freshness under loom (docs/FRESHNESS.md, section 2): the real `Freshness::listing`, `steady`, `changed` and
//! `confirm` (`src/store/freshness.rs`) on loom's atomics, with the file system behind the module's `Fs` seam.
//! The model's file system is one pack directory: which packs it holds and a version standing for its `stat`,
//! under a loom mutex; a write ("rename a pack's `.idx` into `pack/`") changes both and queues an event for each
//! detector with events the file system has set up, inside the same lock (the kernel queues the event inside the
//! `rename`). The store's refresh is stood in for by the same steps as `Store::refresh_from`: under a mutex (the
//! refresh lock, which also guards the current listing), list with the current listing as `prev`, then keep it
//! if `confirm` says it is still true, else publish the new one.
//!
//! The property, F1: a pack renamed into place before a lookup began is found by that lookup: it is in the
//! listing the lookup starts from, or that listing's `steady` check is not Quiet and its `changed` check says so
//! (the lookup then refreshes, and the refreshed listing holds it), whatever a concurrent refresh is doing.
//!
//! Not modelled: the scan itself (the model's scan reads its directory under the lock; the real `scan_pack_dir`,
//! `src/store/listing/scan.rs`, stamps the directory from its descriptor before reading entries, argued in PROTOCOL.md),
//! the kernel (as in `src/store/watch/inotify/model.rs`), and coarse timestamps (the model's stamps change with every write;
//! `untrusted` covers the real ones and has unit tests).

use std::path::{Path, PathBuf};

use loom::sync::Mutex;
use loom::thread;

use super::{Detector, Freshness, Fs, Scanned, Stamp, Tally};
use crate::store::watch::{Check, Watch};
use crate::sync::plain::Arc;

/// B1's models (one change check per batch), on this file's model file system and store.
pub mod batch;

/// The model's pack directory: the packs it holds, its version (its `stat`), and the detectors with events
/// made on it (each write queues an event for each).
struct Dir {
    packs: Vec<u32>,
    version: u64,
    watchers: Vec<(Arc<Watch>, i32)>,
}

struct ModelFs {
    objects: PathBuf,
    dir: Mutex<Dir>,
}

impl ModelFs {
    fn new(objects: &Path, packs: &[u32]) -> ModelFs {
        ModelFs {
            objects: objects.to_path_buf(),
            dir: Mutex::new(Dir {
                packs: packs.to_vec(),
                version: 0,
                watchers: Vec::new(),
            }),
        }
    }

    /// Remove pack `n` (as `repack` removes an old pack), then put the same file back (a pack re-created under
    /// its name, or a `.pack` linked back): two changes of the directory, each with its event.
    fn remove_and_put_back(&self, n: u32) {
        for step in 0..2 {
            let mut d = self.dir.lock().unwrap();
            if step == 0 {
                d.packs.retain(|&p| p != n);
            } else {
                d.packs.push(n);
            }
            d.version += 1;
            let name = format!("pack-{n}.idx");
            for (w, wd) in d.watchers.clone() {
                w.model_pack_event(wd, name.as_bytes(), || {});
            }
        }
    }

    /// Whether pack `n` is there now (a load of its files).
    fn load(&self, n: u32) -> bool {
        self.dir.lock().unwrap().packs.contains(&n)
    }

    /// Rename pack `n`'s `.idx` into `pack/`.
    fn write_pack(&self, n: u32) {
        let mut d = self.dir.lock().unwrap();
        d.packs.push(n);
        d.version += 1;
        let name = format!("pack-{n}.idx");
        for (w, wd) in d.watchers.clone() {
            w.model_pack_event(wd, name.as_bytes(), || {});
        }
    }

    /// The listing's scan: the packs and the stamp, read together.
    fn scan(&self) -> Scanned<Vec<u32>> {
        let d = self.dir.lock().unwrap();
        Scanned {
            value: d.packs.clone(),
            pack_dirs: vec![self.objects.join("pack")],
            stamps: vec![stamp(d.version)],
        }
    }
}

fn stamp(version: u64) -> Option<Stamp> {
    Some(Stamp {
        mtime: None,
        size: version,
        ino: 1,
        dev: 1,
    })
}

impl Fs for ModelFs {
    fn stamp(&self, _dir: &Path) -> Option<Stamp> {
        stamp(self.dir.lock().unwrap().version)
    }

    fn events(&self, _dirs: &[PathBuf]) -> Arc<Watch> {
        // Adding the watch and registering for the model's writes is one step (the kernel adds the mark under
        // the inode's lock; a rename after it queues an event).
        let mut d = self.dir.lock().unwrap();
        let w = Arc::new(Watch::model(&self.objects));
        d.watchers.push((Arc::clone(&w), w.model_pack_wd()));
        w
    }
}

/// A listing as the store keeps it: what it lists and its freshness.
struct Listing {
    packs: Vec<u32>,
    fresh: Freshness,
}

/// The store's current listing, behind its refresh lock.
struct Store {
    fs: ModelFs,
    detector: Detector,
    current: Mutex<std::sync::Arc<Listing>>,
}

impl Store {
    fn open(fs: ModelFs, detector: Detector) -> Store {
        let (packs, fresh) = Freshness::listing(
            None,
            detector,
            std::slice::from_ref(&fs.objects),
            &fs,
            true,
            || fs.scan(),
        );
        Store {
            fs,
            detector,
            current: Mutex::new(std::sync::Arc::new(Listing { packs, fresh })),
        }
    }

    fn current(&self) -> std::sync::Arc<Listing> {
        std::sync::Arc::clone(&self.current.lock().unwrap())
    }

    /// `Store::refresh_from`'s steps: list after the current listing; keep it if still true, else replace it.
    fn refresh(&self) {
        self.refresh_after(false);
    }

    /// [`refresh`](Self::refresh) after a load of the current listing found a file vanished (`vanished`).
    fn refresh_after(&self, vanished: bool) {
        let mut cur = self.current.lock().unwrap();
        let dirs = [self.fs.objects.clone()];
        // As `Detector::for_options` with `Freshness::keeps_deferring`: a deferred detector whose count is
        // reached is replaced by events.
        let detector = match self.detector {
            Detector::Deferred(_) if !cur.fresh.keeps_deferring() => Detector::Events,
            d => d,
        };
        let (packs, fresh) =
            Freshness::listing(Some(&cur.fresh), detector, &dirs, &self.fs, true, || {
                self.fs.scan()
            });
        let same = packs == cur.packs;
        if !cur.fresh.confirm(&fresh, same, vanished) {
            *cur = std::sync::Arc::new(Listing { packs, fresh });
        }
    }

    /// A lookup of pack `n`'s objects after a miss in `l`: the steady check, then the refresh check, as the
    /// handle makes them (`Handle::locate_steady`, `locate_slow`). Whether it found `n`.
    fn lookup(&self, l: &Listing, n: u32, tally: &Tally) -> bool {
        if l.packs.contains(&n) {
            return true;
        }
        if l.fresh.steady() == Check::Quiet {
            return false;
        }
        if !l.fresh.changed(tally, 1, &self.fs) {
            return false;
        }
        self.refresh();
        self.current().packs.contains(&n)
    }
}

/// One execution of F1: a store listed `pack/` (pack 0) with `detector`; a writer renames pack 1 into place while
/// another thread refreshes; after the write returned, a lookup from the listing then current must find pack 1.
/// With `switch`, the first listing's detector is deferred and has counted its misses: the concurrent refresh is
/// the one that sets events up. What would go wrong: the listing drains (or creates its detector) after its
/// scan, so a pack written in between has an event the token already counts (or none at all), `confirm` keeps
/// the old listing with the new token, and every later miss is Quiet without the pack.
fn pack_written_during_a_refresh_is_found(objects: &Path, detector: Detector, switch: bool) {
    let fs = ModelFs::new(objects, &[0]);
    let store = std::sync::Arc::new(Store::open(fs, detector));
    if switch {
        // The deferred count reached (one report of 64 misses on a count of 1): the next listing sets events up.
        let first = store.current();
        assert!(first.fresh.changed(&Tally::default(), 64, &store.fs));
    }
    let refresher = write_pack_during_a_refresh(&store);
    // The lookup begins after the write returned.
    let l = store.current();
    assert!(
        store.lookup(&l, 1, &Tally::default()),
        "pack 1, renamed into place before the lookup began, missed (listing token {}, steady {:?})",
        l.fresh.token(),
        l.fresh.steady()
    );
    refresher.join().unwrap();
}

/// F1 with the `stat` detector (events off, or not set up).
pub fn stat_pack_written_during_a_refresh_is_found(objects: &Path) {
    pack_written_during_a_refresh_is_found(objects, Detector::Stat, false);
}

/// F1 with events (inotify), the concurrent refresh draining the pack's event.
pub fn events_pack_written_during_a_refresh_is_found(objects: &Path) {
    pack_written_during_a_refresh_is_found(objects, Detector::Events, false);
}

/// F1 across the deferred switch: the concurrent refresh is the one that sets events up.
pub fn switch_pack_written_during_a_refresh_is_found(objects: &Path) {
    pack_written_during_a_refresh_is_found(objects, Detector::Deferred(1), true);
}

/// One execution of F2's step that a model can see: a store listed pack 0 (with events); a writer removes pack 0
/// and puts the same file back (git re-creating a pack under its name), while a lookup loads pack 0 from the
/// listing. A load that found the file gone makes the lookup refresh with `vanished`; after the writer is done
/// (the pack exists again), the listing then current must be a new one, whose slot for pack 0 loads again.
/// What would go wrong: the refresh lists the same packs, with the same detector and a token that vouches for
/// them, `confirm` keeps the listing, and with it the recorded failure: the pack's objects are missed for as long
/// as that listing lives (the bug found this round, with a `.pack` linked back).
pub fn vanished_pack_back_is_loaded_again(objects: &Path) {
    let fs = ModelFs::new(objects, &[0]);
    let store = std::sync::Arc::new(Store::open(fs, Detector::Events));
    let s1 = std::sync::Arc::clone(&store);
    let writer = thread::spawn(move || s1.fs.remove_and_put_back(0));
    let l = store.current();
    let loaded = store.fs.load(0);
    writer.join().unwrap();
    if !loaded {
        // The load failed: the file vanished since the listing. The miss refreshes, saying so.
        store.refresh_after(true);
        let now = store.current();
        assert!(
            !std::sync::Arc::ptr_eq(&l, &now),
            "the listing whose load of pack 0 failed was kept (its failure with it)"
        );
        assert!(now.packs.contains(&0) && store.fs.load(0));
    }
}

/// The race both F1 and B1 models start from: pack 1 renamed into place by one thread while another refreshes.
/// Returns once the write returned (the lookup or batch begins after it), with the refresher still running.
fn write_pack_during_a_refresh(store: &std::sync::Arc<Store>) -> thread::JoinHandle<()> {
    let s1 = std::sync::Arc::clone(store);
    let writer = thread::spawn(move || s1.fs.write_pack(1));
    let s2 = std::sync::Arc::clone(store);
    let refresher = thread::spawn(move || s2.refresh());
    writer.join().unwrap();
    refresher
}
