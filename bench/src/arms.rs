//! The things measured: odb-index handles in each loose mode, a bare `PackIndex`, and gix-odb 0.83 / 0.87
//! (`gix_odb::Cache<Handle>` with `refresh_never()` and a pack cache set, asked `contains`).

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use odb_index::idx::PackIndex;
use odb_index::testing::PackIndexExt;
use odb_index::{
    Handle, HashKind, Location, LooseMode, MissFilterMode, ObjectId, Options, RefreshMode, Store,
};

/// Ids to look up, as odb-index ids and as raw bytes (for gix), converted once outside the loops.
pub struct Ids {
    pub oids: Vec<ObjectId>,
    pub raw: Vec<[u8; 20]>,
}

impl Ids {
    pub fn new(oids: Vec<ObjectId>) -> Ids {
        let raw = oids
            .iter()
            .map(|o| o.as_bytes().try_into().expect("SHA-1 ids only"))
            .collect();
        Ids { oids, raw }
    }
    pub fn len(&self) -> usize {
        self.oids.len()
    }
}

/// Which implementation an arm runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    OdbProbe,
    OdbNone,
    OdbCached,
    /// `LooseMode::None` with `MissFilterMode::Off`: every miss searches every index.
    OdbNoneNoFilter,
    /// `LooseMode::Probe`, ids looked up with `Handle::locate_many` in batches of [`BATCH`].
    OdbProbeBatch,
    /// `Options::default()`: `RefreshMode::OnMiss` + `LooseMode::Watched` (inotify where it works), what users
    /// and `batch-check` run.
    OdbDefault,
    /// `RefreshMode::OnMiss` + `LooseMode::Probe` without change events: the default before them (a `stat` per
    /// pack directory and a probe per objects directory on every miss).
    OdbOnMissProbe,
    /// `RefreshMode::OnMiss` + `LooseMode::None` (change events where available): the refresh check alone.
    OdbOnMissNone,
    IdxLookup,
    IdxBinary,
    Gix083,
    Gix087,
}

impl Kind {
    pub const fn name(self) -> &'static str {
        match self {
            Kind::OdbProbe => "odb-index loose=probe",
            Kind::OdbNone => "odb-index loose=none",
            Kind::OdbCached => "odb-index loose=cached",
            Kind::OdbNoneNoFilter => "odb-index loose=none filter=off",
            Kind::OdbProbeBatch => "odb-index loose=probe locate_many",
            Kind::OdbDefault => "odb-index default (on-miss, watched)",
            Kind::OdbOnMissProbe => "odb-index on-miss loose=probe stat",
            Kind::OdbOnMissNone => "odb-index on-miss loose=none",
            Kind::IdxLookup => "PackIndex::lookup",
            Kind::IdxBinary => "PackIndex::lookup_binary",
            Kind::Gix083 => "gix-odb 0.83",
            Kind::Gix087 => "gix-odb 0.87",
        }
    }
    /// The short name of `--arm`.
    pub fn from_flag(s: &str) -> Option<Kind> {
        Some(match s {
            "odb-probe" => Kind::OdbProbe,
            "odb-none" => Kind::OdbNone,
            "odb-cached" => Kind::OdbCached,
            "odb-none-nofilter" => Kind::OdbNoneNoFilter,
            "odb-probe-batch" => Kind::OdbProbeBatch,
            "odb-default" => Kind::OdbDefault,
            "odb-onmiss-probe" => Kind::OdbOnMissProbe,
            "odb-onmiss-none" => Kind::OdbOnMissNone,
            "gix083" => Kind::Gix083,
            "gix087" => Kind::Gix087,
            _ => return None,
        })
    }
    pub fn flag(self) -> &'static str {
        match self {
            Kind::OdbProbe => "odb-probe",
            Kind::OdbNone => "odb-none",
            Kind::OdbCached => "odb-cached",
            Kind::OdbNoneNoFilter => "odb-none-nofilter",
            Kind::OdbProbeBatch => "odb-probe-batch",
            Kind::OdbDefault => "odb-default",
            Kind::OdbOnMissProbe => "odb-onmiss-probe",
            Kind::OdbOnMissNone => "odb-onmiss-none",
            Kind::IdxLookup => "idx",
            Kind::IdxBinary => "idx-binary",
            Kind::Gix083 => "gix083",
            Kind::Gix087 => "gix087",
        }
    }
}

pub fn odb_options(kind: Kind) -> Options {
    match kind {
        Kind::OdbDefault => return Options::default().hash_kind(HashKind::Sha1),
        Kind::OdbOnMissProbe | Kind::OdbOnMissNone => {
            let loose = if kind == Kind::OdbOnMissProbe {
                LooseMode::Probe
            } else {
                LooseMode::None
            };
            return Options::default()
                .refresh(RefreshMode::OnMiss)
                .loose(loose)
                .change_events(kind == Kind::OdbOnMissNone)
                .hash_kind(HashKind::Sha1);
        }
        _ => {}
    }
    let loose = match kind {
        Kind::OdbProbe | Kind::OdbProbeBatch => LooseMode::Probe,
        Kind::OdbCached => LooseMode::Cached,
        _ => LooseMode::None,
    };
    let filter = match kind {
        Kind::OdbNoneNoFilter => MissFilterMode::Off,
        _ => MissFilterMode::Auto,
    };
    Options::default()
        .refresh(RefreshMode::Never)
        .loose(loose)
        .miss_filter(filter)
        .hash_kind(HashKind::Sha1)
}

/// Ids per `locate_many` call in the batched arm.
pub const BATCH: usize = 256;

/// An opened arm. For odb-index the store is kept so more handles (threads) can be made.
pub enum Arm {
    Odb(Arc<Store>, Handle),
    OdbBatch(Arc<Store>, Handle, Vec<Option<Location>>),
    Idx(Arc<PackIndex>, bool),
    Gix087(gix_odb::HandleArc),
    Gix083(gix_odb_083::HandleArc),
}

// A gix handle is used by one thread at a time and moved, never shared: the same contract as `Handle`.
const _: () = {
    const fn send<T: Send>() {}
    send::<gix_odb::HandleArc>();
    send::<gix_odb_083::HandleArc>();
};

impl Arm {
    /// Open `kind` on the objects directory `objects`.
    pub fn open(kind: Kind, objects: &Path) -> Result<Arm, String> {
        match kind {
            Kind::OdbProbe
            | Kind::OdbNone
            | Kind::OdbCached
            | Kind::OdbNoneNoFilter
            | Kind::OdbDefault
            | Kind::OdbOnMissProbe
            | Kind::OdbOnMissNone => {
                let store = Store::open(objects, odb_options(kind)).map_err(|e| e.to_string())?;
                let h = store.handle();
                Ok(Arm::Odb(store, h))
            }
            Kind::OdbProbeBatch => {
                let store = Store::open(objects, odb_options(kind)).map_err(|e| e.to_string())?;
                let h = store.handle();
                Ok(Arm::OdbBatch(store, h, Vec::with_capacity(BATCH)))
            }
            Kind::IdxLookup | Kind::IdxBinary => {
                let store =
                    Store::open(objects, odb_options(Kind::OdbNone)).map_err(|e| e.to_string())?;
                let packs = store.packs();
                let [(_, idx)] = packs.as_slice() else {
                    return Err(format!(
                        "{}: the bare-index arms want exactly one pack",
                        objects.display()
                    ));
                };
                let idx = PackIndex::open(idx, HashKind::Sha1).map_err(|e| e.to_string())?;
                Ok(Arm::Idx(Arc::new(idx), kind == Kind::IdxBinary))
            }
            Kind::Gix087 => {
                let mut h = gix_odb::at(objects, gix_hash::Kind::Sha1)
                    .and_then(|h| h.into_arc())
                    .map_err(|e| format!("gix-odb 0.87 on {}: {e}", objects.display()))?;
                h.refresh_never();
                h.set_pack_cache(|| Box::new(gix_odb::pack::cache::Never));
                Ok(Arm::Gix087(h))
            }
            Kind::Gix083 => {
                let mut h = gix_odb_083::at(objects)
                    .and_then(|h| h.into_arc())
                    .map_err(|e| format!("gix-odb 0.83 on {}: {e}", objects.display()))?;
                h.refresh_never();
                h.set_pack_cache(|| Box::new(gix_odb_083::pack::cache::Never));
                Ok(Arm::Gix083(h))
            }
        }
    }

    /// Another arm of the same kind on the same store, for another thread.
    pub fn another(&self) -> Arm {
        match self {
            Arm::Odb(s, _) => Arm::Odb(Arc::clone(s), s.handle()),
            Arm::OdbBatch(s, _, _) => {
                Arm::OdbBatch(Arc::clone(s), s.handle(), Vec::with_capacity(BATCH))
            }
            Arm::Idx(i, b) => Arm::Idx(Arc::clone(i), *b),
            Arm::Gix087(h) => Arm::Gix087(h.clone()),
            Arm::Gix083(h) => Arm::Gix083(h.clone()),
        }
    }

    /// The store of an odb-index arm.
    pub fn store(&self) -> Option<&Arc<Store>> {
        match self {
            Arm::Odb(s, _) | Arm::OdbBatch(s, _, _) => Some(s),
            _ => None,
        }
    }

    /// Look up `n` ids, cycling through `ids`; returns how many were found.
    pub fn run(&mut self, ids: &Ids, n: usize) -> usize {
        self.run_from(ids, 0, n)
    }

    /// Look up `n` ids, cycling through `ids` from position `start`; returns how many were found.
    #[inline(never)]
    pub fn run_from(&mut self, ids: &Ids, start: usize, n: usize) -> usize {
        let len = ids.len();
        assert!(len > 0);
        let mut found = 0usize;
        let mut j = start % len;
        match self {
            Arm::OdbBatch(_, h, out) => {
                let mut left = n;
                while left > 0 {
                    let k = left.min(BATCH).min(len - j);
                    out.clear();
                    if h.locate_many(black_box(&ids.oids[j..j + k]), out).is_ok() {
                        found += out.iter().filter(|l| l.is_some()).count();
                    }
                    left -= k;
                    j += k;
                    if j == len {
                        j = 0;
                    }
                }
            }
            Arm::Odb(_, h) => {
                for _ in 0..n {
                    if h.contains(black_box(&ids.oids[j])).unwrap_or(false) {
                        found += 1;
                    }
                    j += 1;
                    if j == len {
                        j = 0;
                    }
                }
            }
            Arm::Idx(idx, binary) => {
                let binary = *binary;
                for _ in 0..n {
                    let id = black_box(&ids.raw[j][..]);
                    let hit = if binary {
                        idx.lookup_binary(id)
                    } else {
                        idx.lookup(id)
                    };
                    if hit.is_some() {
                        found += 1;
                    }
                    j += 1;
                    if j == len {
                        j = 0;
                    }
                }
            }
            Arm::Gix087(h) => {
                use gix_odb::pack::Find as _;
                for _ in 0..n {
                    let id = gix_hash::oid::from_bytes_unchecked(black_box(&ids.raw[j][..]));
                    if h.contains(id) {
                        found += 1;
                    }
                    j += 1;
                    if j == len {
                        j = 0;
                    }
                }
            }
            Arm::Gix083(h) => {
                use gix_odb_083::pack::Find as _;
                for _ in 0..n {
                    let id = gix_hash_026::oid::from_bytes_unchecked(black_box(&ids.raw[j][..]));
                    if h.contains(id) {
                        found += 1;
                    }
                    j += 1;
                    if j == len {
                        j = 0;
                    }
                }
            }
        }
        found
    }
}
