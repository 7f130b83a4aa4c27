//! Loading a slot: what a slot holds once loaded ([`Loaded`]), and the load itself, run by whichever thread
//! claimed the slot (see [`crate::protocol`]).

use std::path::Path;
use std::time::SystemTime;

use super::listing::{Generation, SlotSpec};
use crate::data::LoadMode;
use crate::error::Error;
use crate::ids::PackId;
use crate::idx::PackIndex;
use crate::midx::MultiPackIndex;
use crate::oid::HashKind;
use crate::protocol::{SlotMap, SlotRef};
use crate::sync::plain::Arc;
use crate::sync::{AtomicU64, Ordering};

/// A loaded pack index.
#[derive(Debug)]
pub(super) struct LoadedPack {
    pub(super) id: PackId,
    pub(super) mtime: SystemTime,
    pub(super) idx: PackIndex,
}

/// A loaded multi-pack-index with its pack-int-id → pack map, and each pack's length as listed (`u64::MAX`
/// for a pack the listing does not have): every offset it answers is checked against its pack's length.
#[derive(Debug)]
pub(super) struct LoadedMidx {
    pub(super) midx: Arc<MultiPackIndex>,
    pub(super) packs: Box<[Option<PackId>]>,
    pub(super) pack_lens: Box<[u64]>,
}

impl LoadedMidx {
    /// `midx` with the packs of `g` that `packs` (pack int id → index in `g.packs`) names.
    pub(super) fn new(midx: Arc<MultiPackIndex>, packs: &[Option<usize>], g: &Generation) -> Self {
        LoadedMidx {
            midx,
            packs: packs.iter().map(|p| p.map(|p| g.packs[p].id)).collect(),
            pack_lens: packs
                .iter()
                .map(|p| p.map_or(u64::MAX, |p| g.packs[p].pack_size))
                .collect(),
        }
    }
}

/// What a slot holds once loaded.
#[derive(Clone, Debug)]
pub(super) enum Loaded {
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

pub(super) type Map = SlotMap<Loaded, Generation>;

/// Load what slot `slot` of `map` describes, for a repository of hash `kind`, bringing files in as `mode` says
/// and counting each file opened in `loads`. Runs outside every lock, in whichever thread claimed the slot.
pub(super) fn load_slot(
    map: &Map,
    slot: usize,
    kind: HashKind,
    mode: LoadMode,
    loads: &AtomicU64,
) -> Loaded {
    let g = map.meta();
    match &g.slots[slot] {
        SlotSpec::Midx {
            path,
            packs,
            names,
            layer,
            ..
        } => {
            loads.fetch_add(1, Ordering::Relaxed);
            let opened = match layer {
                // A layer of an incremental chain must also end with the checksum it is named after.
                Some(checksum) => crate::midx::chain::Layer {
                    checksum: *checksum,
                    path: path.clone(),
                }
                .open(kind, mode),
                None => MultiPackIndex::open_with(path, kind, mode),
            };
            match opened {
                // Replaced since the listing (git renames a new one over it): its pack numbers mean other packs
                // than `packs` says. Do not use it; the packs it covers load their own indices, and the next
                // refresh lists the new file.
                Ok(midx) if midx.pack_names() != &names[..] => Loaded::Failed {
                    error: Arc::new(Error::MultiPackIndexRewritten { path: path.clone() }),
                    midx: true,
                },
                Ok(midx) => Loaded::Midx(Arc::new(LoadedMidx::new(Arc::new(midx), packs, g))),
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
            let p = &g.packs[*pack];
            loads.fetch_add(1, Ordering::Relaxed);
            let idx = match PackIndex::open_with(&p.idx_path, kind, mode) {
                Ok(idx) => idx,
                Err(e) => {
                    return Loaded::Failed {
                        error: Arc::new(name_wrong_hash_kind(e, &p.idx_path, kind, mode)),
                        midx: false,
                    };
                }
            };
            // Like git when it opens a pack: its last hash-length bytes must be the pack checksum the index
            // records (one positioned read; the pack is never hashed). A pack removed since the listing is an
            // I/O error "not found": a vanished pack, which makes the lookup refresh and search again.
            match idx.check_pack(&p.idx_path.with_extension("pack")) {
                Ok(pack_len) => Loaded::Pack(Arc::new(LoadedPack {
                    id: p.id,
                    mtime: p.mtime,
                    idx: idx.with_pack_len(pack_len),
                })),
                Err(e) => Loaded::Failed {
                    error: Arc::new(e),
                    midx: false,
                },
            }
        }
    }
}

/// A `.idx` carries no hash id: one written for the other hash function just looks malformed. If it is a
/// valid index of the other kind, say so instead of "corrupt" (only on this failure path).
fn name_wrong_hash_kind(e: Error, path: &Path, kind: HashKind, mode: LoadMode) -> Error {
    let other = match kind {
        HashKind::Sha1 => HashKind::Sha256,
        HashKind::Sha256 => HashKind::Sha1,
    };
    match e {
        Error::CorruptIndex { .. } if PackIndex::open_with(path, other, mode).is_ok() => {
            Error::WrongHashKind {
                path: path.to_path_buf(),
                expected: kind,
                found: other,
            }
        }
        e => e,
    }
}
