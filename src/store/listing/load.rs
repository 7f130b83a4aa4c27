//! Loading a slot: what a slot holds once loaded ([`Loaded`]), and the load itself, run by whichever thread
//! claimed the slot (see [`crate::protocol`]).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::plan::{OpenedMidx, SlotSpec};
use crate::data::{Data, LoadMode};
use crate::error::Error;
use crate::fanout::{BucketState, Confirmed};
use crate::ids::PackId;
use crate::idx::PackIndex;
use crate::midx::{MidxProblem, MultiPackIndex};
use crate::oid::{HashKind, ObjectId};
use crate::protocol::{SlotMap, SlotRef};
use crate::store::listing::Listing;
use crate::store::options::{MidxCheck, Options};
use crate::sync::{AtomicU64, OnceLock, Ordering};
// The load counter is a metric (no answer depends on it).
use crate::sync::plain::atomic as plain_atomic;
#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: `wrong`'s report list, which no answer reads"
)]
use crate::sync::plain::{Arc, Mutex, lock};

/// A loaded pack index.
#[derive(Debug)]
pub(in crate::store) struct LoadedPack {
    pub(in crate::store) id: PackId,
    pub(in crate::store) mtime: SystemTime,
    pub(in crate::store) idx: PackIndex,
    /// The `.pack` mapped right after the `.idx` under [`Options::pack_data`] (`None` without it, or if the file
    /// could not be mapped then: a reader opens it when it reads).
    pub(in crate::store) data: Option<Arc<Data>>,
}

/// A loaded multi-pack-index with its pack-int-id → pack map, and each pack's length as listed (`u64::MAX`
/// for a pack the listing does not have), or for a pack the listing did not `stat` ([`ListedPack::stated`]), as
/// read on the first lookup that needs it: every offset it answers is checked against its pack's length.
///
/// [`ListedPack::stated`]: super::scan::ListedPack
#[derive(Debug)]
pub(in crate::store) struct LoadedMidx {
    pub(in crate::store) midx: Arc<MultiPackIndex>,
    pub(in crate::store) packs: Box<[Option<PackId>]>,
    pack_lens: Box<[u64]>,
    /// `pack_lens` as the lookup takes them ([`MultiPackIndex::offset_bounds`]); 0 (no offset passes, so the
    /// lookup takes its slow path) for a pack whose length is not read yet. Relaxed: each cell only ever goes
    /// from 0 to the bound of a length read through `unread_lens` (a `OnceLock`, which publishes it), so a stale
    /// 0 only sends a lookup to that slow path, which reads the `OnceLock`.
    bounds: Box<[AtomicU64]>,
    /// For each pack the listing did not `stat`: its `.pack` path and its length, read once on first need.
    unread_lens: Box<[Option<UnreadLen>]>,
    /// How far its locations are trusted.
    pub(in crate::store) check: MidxCheck,
    /// How its packs' own indices are opened.
    kind: HashKind,
    mode: LoadMode,
    /// The covered packs' own indices, by pack int id, opened on first need: to check a location
    /// ([`MidxCheck::PackIndex`]) or to look up an id whose entry is wrong. Each is opened by one thread; others
    /// asking meanwhile block on the `OnceLock` (never spin).
    own: Box<[OwnIndex]>,
    /// Entries found wrong at lookup (reported by `Store::problems`; the first few, each once).
    #[expect(
        clippy::disallowed_types,
        reason = "sync::plain: a report list under one lock, which no answer reads"
    )]
    pub(in crate::store) wrong: Mutex<Vec<Arc<Error>>>,
    /// Fanout buckets checked in order (a miss there is certain) or out of order (a miss there is confirmed in
    /// the packs' own indices).
    pub(in crate::store) buckets: BucketState,
}

/// The length of a pack the listing did not `stat`, read on first need ([`LoadedMidx::read_len_at`]).
#[derive(Debug)]
struct UnreadLen {
    pack_path: PathBuf,
    len: OnceLock<u64>,
}

/// The length of the `.pack` at `path` for [`LoadedMidx::read_len_at`]: 0 if it is not a regular file,
/// unbounded (`u64::MAX`) if it cannot be `stat`ed.
fn pack_len(path: &Path) -> u64 {
    match crate::fault::check(crate::fault::Call::Stat).and_then(|()| std::fs::metadata(path)) {
        Ok(md) if md.is_file() => md.len(),
        Ok(_) => 0,
        Err(_) => u64::MAX,
    }
}

/// A covered pack's own index, for a multi-pack-index's checks and fallback.
#[derive(Debug)]
struct OwnIndex {
    /// The pack as listed (`None`: the listing does not have it).
    pack: Option<PackSpec>,
    loaded: OnceLock<Result<LoadedPack, Arc<Error>>>,
}

/// What opening a pack's index needs.
#[derive(Debug)]
struct PackSpec {
    id: PackId,
    idx_path: PathBuf,
    mtime: SystemTime,
}

/// How many wrong entries one multi-pack-index keeps for `Store::problems` (each lookup of one still finds its
/// object through the `.idx` files).
const WRONG_KEPT: usize = 16;

impl LoadedMidx {
    /// `midx` with the packs of `g` that `packs` (pack int id → index in `g.packs`) names.
    pub(in crate::store) fn new(
        midx: Arc<MultiPackIndex>,
        packs: &[Option<usize>],
        g: &Listing,
        kind: HashKind,
        mode: LoadMode,
        check: MidxCheck,
    ) -> Self {
        let pack_lens: Box<[u64]> = packs
            .iter()
            .map(|p| p.map_or(u64::MAX, |p| g.packs[p].pack_size))
            .collect();
        let unread_lens: Box<[Option<UnreadLen>]> = packs
            .iter()
            .map(|p| {
                let p = &g.packs[(*p)?];
                (!p.stated).then(|| UnreadLen {
                    pack_path: p.idx_path.with_extension("pack"),
                    len: OnceLock::new(),
                })
            })
            .collect();
        let bounds = midx
            .offset_bounds(&pack_lens)
            .iter()
            .zip(&unread_lens)
            .map(|(&b, unread)| AtomicU64::new(if unread.is_some() { 0 } else { b }))
            .collect();
        LoadedMidx {
            packs: packs.iter().map(|p| p.map(|p| g.packs[p].id)).collect(),
            bounds,
            unread_lens,
            pack_lens,
            midx,
            check,
            kind,
            mode,
            own: packs
                .iter()
                .map(|p| OwnIndex {
                    pack: p.map(|p| PackSpec {
                        id: g.packs[p].id,
                        idx_path: g.packs[p].idx_path.clone(),
                        mtime: g.packs[p].mtime,
                    }),
                    loaded: OnceLock::new(),
                })
                .collect(),
            #[expect(clippy::disallowed_types, reason = "sync::plain: see the field")]
            wrong: Mutex::new(Vec::new()),
            buckets: BucketState::default(),
        }
    }

    /// The `.idx` path of the pack with int id `pack` (empty if the listing does not have it).
    pub(in crate::store) fn own_index_path(&self, pack: u32) -> PathBuf {
        self.own
            .get(pack as usize)
            .and_then(|o| o.pack.as_ref())
            .map_or_else(PathBuf::new, |p| p.idx_path.clone())
    }

    /// The own index of the pack with int id `pack`, opened now if it was not yet; `None` if the listing does
    /// not have the pack, `Err` if its index does not load.
    pub(in crate::store) fn own_index(
        &self,
        pack: u32,
    ) -> Option<Result<&LoadedPack, &Arc<Error>>> {
        let own = self.own.get(pack as usize)?;
        let spec = own.pack.as_ref()?;
        Some(
            own.loaded
                .get_or_init(|| {
                    load_pack(
                        spec.id,
                        spec.mtime,
                        &spec.idx_path,
                        self.kind,
                        self.mode,
                        false,
                    )
                    .map_err(Arc::new)
                })
                .as_ref(),
        )
    }

    /// The same file for the packs of another listing (pack ids and lengths may differ): what a refresh carries
    /// over, with the entries found wrong. Own indices are opened again when needed.
    pub(in crate::store) fn for_listing(&self, packs: &[Option<usize>], listing: &Listing) -> Self {
        let mut m = LoadedMidx::new(
            Arc::clone(&self.midx),
            packs,
            listing,
            self.kind,
            self.mode,
            self.check,
        );
        // The same file: the entries found wrong are still wrong, and the buckets checked are checked.
        *lock(&m.wrong) = lock(&self.wrong).clone();
        m.buckets = self.buckets.copy();
        m
    }

    /// The bound of the pack with int id `pack` as the lookup reads it (see `bounds`).
    #[inline(always)]
    pub(in crate::store) fn bound(&self, pack: u32) -> Option<u64> {
        Some(self.bounds.get(pack as usize)?.load(Ordering::Relaxed))
    }

    /// Make sure the bound of the pack of the entry at position `i` is its length, if the listing did not `stat`
    /// it (a `stat` of its `.pack` on first need, as git's on first use of a pack): true if so (a lookup that
    /// found the entry out of bounds then searches once more, with this bound). A `.pack` that is not a regular
    /// file has length 0 (no offset in it is answered); one that cannot be `stat`ed is unbounded, as a pack whose
    /// length the listing does not have (a location in it names a pack that is gone or unreadable, and reading it
    /// fails there).
    ///
    /// The bound is stored by this thread whether or not another read the length first: between another
    /// thread's read (the `OnceLock` set) and its store of the bound, this thread's search saw the bound 0; had it
    /// taken "read already" for "out of bounds", the entry would have gone to the packs' own indices (a
    /// silent miss under `--threads` when those failed to open).
    #[cold]
    #[inline(never)]
    pub(in crate::store) fn read_len_at(&self, i: u32) -> bool {
        let Some(pack) = self.midx.pack_int_id_at(i) else {
            return false;
        };
        let Some(Some(unread)) = self.unread_lens.get(pack as usize) else {
            return false;
        };
        let len = *unread.len.get_or_init(|| pack_len(&unread.pack_path));
        // Relaxed: the length comes from the `OnceLock` (which publishes it); this thread's own search reads it
        // next, in program order.
        self.bounds[pack as usize].store(self.midx.offset_bound(len), Ordering::Relaxed);
        true
    }

    /// Set the length of every pack the listing did not `stat`, leaving its bound unread (0): what another
    /// thread's [`read_len_at`](Self::read_len_at) has done between its read and its store of the bound.
    #[cfg(all(test, not(any(loom, shuttle))))]
    pub(in crate::store) fn read_lens_without_bounds(&self) {
        for u in self.unread_lens.iter().flatten() {
            u.len.get_or_init(|| pack_len(&u.pack_path));
        }
    }

    /// Every pack's length now (those the listing did not `stat` read first).
    pub(in crate::store) fn pack_lens_now(&self) -> Box<[u64]> {
        (0..self.pack_lens.len())
            .map(|p| match &self.unread_lens[p] {
                Some(u) => *u.len.get_or_init(|| pack_len(&u.pack_path)),
                None => self.pack_lens[p],
            })
            .collect()
    }

    /// Number of packs the file names.
    pub(in crate::store) fn pack_count(&self) -> u32 {
        self.own.len() as u32
    }

    /// Record an entry found wrong at lookup (the first [`WRONG_KEPT`], each once).
    pub(in crate::store) fn record_wrong(&self, e: Arc<Error>) {
        let mut w = lock(&self.wrong);
        let text = e.to_string();
        if w.len() < WRONG_KEPT && !w.iter().any(|x| x.to_string() == text) {
            w.push(e);
        }
    }

    /// Whether a miss in fanout bucket `first` is certain ([`check_bucket`](Self::check_bucket), once per bucket
    /// and file; a bucket found wrong is reported). Otherwise lookups send its misses to the packs' own indices.
    pub(in crate::store) fn bucket_trusted(&self, first: u8) -> bool {
        match self.buckets.confirm(first, || self.check_bucket(first)) {
            Confirmed::Certain => true,
            Confirmed::OutOfOrder(problem) => {
                if let Some(problem) = problem {
                    self.record_wrong(Arc::new(Error::CorruptMultiPackIndex {
                        path: self.midx.path().to_path_buf(),
                        problem,
                    }));
                }
                false
            }
        }
    }

    /// The check of fanout bucket `first` before a miss there is trusted: the file's order
    /// ([`MultiPackIndex::check_bucket`]) and, under [`MidxCheck::PackIndex`], that the bucket lists exactly the
    /// ids of that bucket of the covered packs' own indices. One bit flipped in an id (`OIDL`) can leave the ids
    /// in order while the file no longer lists the object; this catches it, so misses in that bucket are looked
    /// up in the own indices. If a covered pack's own index does not load, the file's ids are not checked
    /// against the others (the missing pack's objects would look unknown). O(ids of the bucket in the file and
    /// the covered packs), once per bucket and file.
    pub(in crate::store) fn check_bucket(&self, first: u8) -> Result<(), MidxProblem> {
        self.midx.check_bucket(first)?;
        if self.check != MidxCheck::PackIndex {
            return Ok(());
        }
        let mut own: Vec<(&[u8], u32)> = Vec::new();
        let mut all_loaded = true;
        for pack in 0..self.pack_count() {
            match self.own_index(pack) {
                Some(Ok(p)) => own.extend(
                    p.idx
                        .bucket_range(first)
                        .filter_map(|i| p.idx.id_at(i))
                        .map(|id| (id, pack)),
                ),
                _ => all_loaded = false,
            }
        }
        own.sort_unstable();
        let m = &self.midx;
        let oid = |id: &[u8]| ObjectId::from_bytes(id).unwrap_or(ObjectId::null(self.kind));
        if all_loaded {
            for object in m.bucket_range(first) {
                let Some(id) = m.id_at(object) else { break };
                if own.binary_search_by(|(x, _)| (*x).cmp(id)).is_err() {
                    let pack = m.find(id).ok().flatten().map_or(u32::MAX, |(p, _)| p);
                    return Err(MidxProblem::ObjectNotInPack {
                        object,
                        id: oid(id),
                        pack,
                    });
                }
            }
        }
        match own.iter().find(|(id, _)| m.search(id, None).is_none()) {
            Some(&(id, pack)) => Err(MidxProblem::ObjectNotListed { id: oid(id), pack }),
            None => Ok(()),
        }
    }
}

/// What a slot holds once loaded.
#[derive(Clone, Debug)]
pub(in crate::store) enum Loaded {
    Pack(Arc<LoadedPack>),
    Midx(Arc<LoadedMidx>),
    /// A pack covered by a loaded multi-pack-index: nothing to load.
    Covered,
    /// The load failed; misses report [`Error::Incomplete`] (for a multi-pack-index: fall back to the packs).
    Failed {
        error: Arc<Error>,
        midx: bool,
    },
}

pub(in crate::store) type Map = SlotMap<Loaded, Listing>;

/// Load what slot `slot` of `map` describes, for a repository of hash `kind`, as `options` say (how files are
/// brought in, how far a multi-pack-index is checked), counting each file opened in `loads`. Runs outside every
/// lock, in whichever thread claimed the slot.
#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: `loads` is a metric, no answer depends on it"
)]
pub(in crate::store) fn load_slot(
    map: &Map,
    slot: usize,
    kind: HashKind,
    options: &Options,
    loads: &plain_atomic::AtomicU64,
) -> Loaded {
    let (mode, check) = (options.load, options.midx_check);
    let listing = map.meta();
    match &listing.slots[slot] {
        SlotSpec::Midx {
            path,
            packs,
            names,
            layer,
            opened,
            ..
        } => {
            loads.fetch_add(1, plain_atomic::Ordering::Relaxed);
            let opened = open_listed_midx(path, layer, opened, kind);
            // Under `Options::midx_checksum`, the whole file is hashed once, here, before it answers anything: a
            // file that fails is a failed load like any other (the packs' own indices answer).
            let opened = opened.and_then(|m| {
                if options.midx_checksum {
                    m.verify_checksum()?;
                }
                Ok(m)
            });
            match opened {
                // Replaced since the listing (git renames a new one over it): its pack numbers mean other packs
                // than `packs` says. Do not use it; the packs it covers load their own indices, and the next
                // refresh lists the new file.
                Ok(midx) if midx.pack_names() != &names[..] => Loaded::Failed {
                    error: Arc::new(Error::MultiPackIndexRewritten { path: path.clone() }),
                    midx: true,
                },
                Ok(midx) => Loaded::Midx(Arc::new(LoadedMidx::new(
                    Arc::new(midx),
                    packs,
                    listing,
                    kind,
                    mode,
                    check,
                ))),
                Err(e) => Loaded::Failed {
                    error: Arc::new(e),
                    midx: true,
                },
            }
        }
        SlotSpec::Pack { pack, covered_by } => {
            if let Some(m) = covered_by {
                // Wait for the multi-pack-index that covers this pack (claimed before it) to finish loading: if
                // it loaded, this pack needs nothing; if it failed (or its loader was abandoned), load the pack's
                // own index. The wait is the protocol's (`SlotMap::wait_slot`, modelled in loom-tests).
                if let SlotRef::Ready(Loaded::Midx(_)) = map.wait_slot(*m) {
                    return Loaded::Covered;
                }
            }
            let p = &listing.packs[*pack];
            loads.fetch_add(1, plain_atomic::Ordering::Relaxed);
            match load_pack(p.id, p.mtime, &p.idx_path, kind, mode, options.pack_data) {
                Ok(p) => Loaded::Pack(Arc::new(p)),
                Err(e) => Loaded::Failed {
                    error: Arc::new(e),
                    midx: false,
                },
            }
        }
    }
}

/// The multi-pack-index of a slot, checked: the file its listing opened (once per listing), else (taken
/// already) the file at `path` opened now; a `layer` of an incremental chain must also end with the checksum it
/// is named after.
#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: `opened` is handed once to the one load of its slot"
)]
fn open_listed_midx(
    path: &Path,
    layer: &Option<ObjectId>,
    opened: &Mutex<Option<Box<OpenedMidx>>>,
    kind: HashKind,
) -> Result<MultiPackIndex, Error> {
    let listed = lock(opened).take();
    let midx = match listed.map(|o| *o) {
        Some(OpenedMidx::Mapped(data)) => MultiPackIndex::from_data(data, path.to_path_buf(), kind),
        Some(OpenedMidx::Read(m)) => Ok(*m),
        // Read into memory, as the listing reads it (`listing.rs`): never a mapping a truncation can fault.
        None => MultiPackIndex::open_with(path, kind, LoadMode::Read),
    }?;
    match layer {
        Some(checksum) => crate::midx::chain::Layer {
            checksum: *checksum,
            path: path.to_path_buf(),
        }
        .check(midx),
        None => Ok(midx),
    }
}

/// Open one pack's index, checked against its `.pack` ([`PackIndex::open_for_pack`]). A pack removed since the
/// listing is an I/O error "not found": a vanished pack, which makes the lookup refresh and search again.
/// Load the `.idx` at `idx_path`, and with `data` map its `.pack` right after it ([`Options::pack_data`]).
fn load_pack(
    id: PackId,
    mtime: SystemTime,
    idx_path: &Path,
    kind: HashKind,
    mode: LoadMode,
    data: bool,
) -> Result<LoadedPack, Error> {
    let idx = PackIndex::open_for_pack(idx_path, kind, mode)?;
    // A `.pack` that cannot be mapped now is no failure of the index: the reader opens it when it reads (and
    // reports what it meets then).
    let data = data
        .then(|| Data::open(&idx_path.with_extension("pack"), LoadMode::Mmap).ok())
        .flatten()
        .map(Arc::new);
    Ok(LoadedPack {
        id,
        mtime,
        idx,
        data,
    })
}
