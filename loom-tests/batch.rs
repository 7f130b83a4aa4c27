//! B1 under loom (docs/PROTOCOL.md, section 8c): one change check per batch. The real `Freshness::listing`,
//! `steady`, `changed` and `confirm` (`src/store/freshness.rs`) on loom's atomics, with the file system behind
//! the module's `Fs` seam; the model file system is `loom-tests/freshness.rs`'s (one pack directory under a loom
//! mutex, whose writes queue an event for each detector with events made on it, inside the lock), copied here so
//! that each file of models stands alone. The batch is stood in for by the steps of `Handle::locate_many`
//! (`src/store/batch.rs`): search every id in the listing the batch starts from, holding the misses; then one
//! check for them all (`steady`, then `changed`); if it is not quiet, refresh and search each held miss in the
//! listing then current.
//!
//! The property, B1: an object renamed into place before the batch began is found by it, whatever a concurrent
//! refresh is doing. What would go wrong: a batch that answers its misses from a check made before it began (a
//! handle that keeps the answer of its last check, "one check per handle" instead of "per batch"), or from none
//! ("a settled miss is certain"): the pack's event is then never asked about, and the misses are false.
//! `witness_batch_check_before_the_batch` (loom-tests/main.rs) runs that mutant and must find the false miss.

use std::path::{Path, PathBuf};

use loom::sync::Mutex;
use loom::thread;

use super::{Detector, Freshness, Fs, Scanned, Stamp, Tally};
use crate::store::watch::{Check, Watch};
// plain: an `Arc` of values immutable once shared (a count, no protocol: slots and cells publish them).
use crate::sync::plain::Arc;

/// The model's pack directory (as `loom-tests/freshness.rs`'s).
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

    /// Rename pack `n`'s `.idx` into `pack/`: the directory changes and each detector gets its event, in one step.
    fn write_pack(&self, n: u32) {
        let mut d = self.dir.lock().unwrap();
        d.packs.push(n);
        d.version += 1;
        let name = format!("pack-{n}.idx");
        for (w, wd) in d.watchers.clone() {
            w.model_pack_event(wd, name.as_bytes(), || {});
        }
    }

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
        let mut d = self.dir.lock().unwrap();
        let w = Arc::new(Watch::model(&self.objects));
        d.watchers.push((Arc::clone(&w), w.model_pack_wd()));
        w
    }
}

struct Listing {
    packs: Vec<u32>,
    fresh: Freshness,
}

/// The store's current listing behind its refresh lock, refreshed as `Store::refresh_from` does.
struct Store {
    fs: ModelFs,
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
            current: Mutex::new(std::sync::Arc::new(Listing { packs, fresh })),
        }
    }

    fn current(&self) -> std::sync::Arc<Listing> {
        std::sync::Arc::clone(&self.current.lock().unwrap())
    }

    fn refresh(&self, detector: Detector) {
        let mut cur = self.current.lock().unwrap();
        let dirs = [self.fs.objects.clone()];
        let (packs, fresh) =
            Freshness::listing(Some(&cur.fresh), detector, &dirs, &self.fs, true, || {
                self.fs.scan()
            });
        let same = packs == cur.packs;
        if !cur.fresh.confirm(&fresh, same, false) {
            *cur = std::sync::Arc::new(Listing { packs, fresh });
        }
    }

    /// A batch asking for the objects of `ids` (pack numbers), from listing `l`: every search first, the misses
    /// held; then the batch's one check, `check` (`None`: made now, after the searches, as `locate_many` makes
    /// it; `Some`: an answer of `steady` taken earlier, the mutant). Which ids it found.
    fn batch(
        &self,
        l: &Listing,
        ids: &[u32],
        check: Option<Check>,
        detector: Detector,
    ) -> Vec<bool> {
        let mut found: Vec<bool> = ids.iter().map(|n| l.packs.contains(n)).collect();
        if found.iter().all(|&f| f) {
            return found;
        }
        let quiet = check.unwrap_or_else(|| l.fresh.steady()) == Check::Quiet;
        if quiet || !l.fresh.changed(&Tally::default(), 1, &self.fs) {
            return found;
        }
        self.refresh(detector);
        let now = self.current();
        for (f, n) in found.iter_mut().zip(ids) {
            *f = *f || now.packs.contains(n);
        }
        found
    }
}

/// One execution of B1: a store listed pack 0 with `detector`; a writer renames pack 1 into place while another
/// thread refreshes; after the write returned, a batch asks for packs 0 and 1 from the listing then current.
/// `early`: the mutant, whose batch uses an answer of `steady` taken before the write (before the batch began).
fn batch_after_a_write(objects: &Path, detector: Detector, early: bool) {
    let fs = ModelFs::new(objects, &[0]);
    let store = std::sync::Arc::new(Store::open(fs, detector));
    let before = early.then(|| store.current().fresh.steady());
    let s1 = std::sync::Arc::clone(&store);
    let writer = thread::spawn(move || s1.fs.write_pack(1));
    let s2 = std::sync::Arc::clone(&store);
    let refresher = thread::spawn(move || s2.refresh(detector));
    writer.join().unwrap();
    // The batch begins after the write returned.
    let l = store.current();
    let found = store.batch(&l, &[0, 1], before, detector);
    refresher.join().unwrap();
    // Asserted after every thread joined (a panic with loom threads alive may abort the test binary).
    assert!(
        found == [true, true],
        "false miss: pack 1, renamed into place before the batch began, missed (found {found:?}, listing \
         token {})",
        l.fresh.token()
    );
}

/// B1 with events (inotify): the batch's one `ioctl`, made after its searches.
pub fn events_batch_finds_a_pack_written_before_it(objects: &Path) {
    batch_after_a_write(objects, Detector::Events, false);
}

/// B1 with the `stat` detector: the batch's one `stat` of the pack directory.
pub fn stat_batch_finds_a_pack_written_before_it(objects: &Path) {
    batch_after_a_write(objects, Detector::Stat, false);
}

/// The mutant: the batch answers its misses from a check made before it began. loom must find the false miss.
pub fn events_batch_with_an_earlier_check_misses(objects: &Path) {
    batch_after_a_write(objects, Detector::Events, true);
}
