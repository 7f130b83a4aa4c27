//! The store-wide miss filter: a split-block Bloom filter over the ids of a recorded set of loaded packs.
//!
//! A miss in a store with many packs (or one huge index) costs one index search per pack. The filter answers
//! "certainly absent from every pack it covers" with one 32-byte block read, so a steady-state miss searches
//! only the packs outside the filter (none, usually) and the multi-pack-indices (one search each).
//!
//! - **Immutable, write-once.** A filter is built once from the packs loaded in one slot map, by the first
//!   lookup that finds that map settled (every slot loaded or failed), outside every lock; it is published in the
//!   map's [`FilterCell`] with [`OnceLock::set`] (a racing builder's copy is dropped; nobody waits for it). A
//!   handle caches it in its snapshot, so a steady-state miss still reads shared state with one Acquire load (P4).
//! - **Never a subset.** The filter records which packs it covers ([`PackId`]s: a pack keeps its id exactly while
//!   its `.idx` is the same file); every id of a covered pack was inserted. Packs outside that set (loaded after
//!   the filter was built, in a successor map) and multi-pack-indices are always searched. A failed slot covers
//!   nothing and still makes a miss [`Incomplete`](crate::Error::Incomplete).
//! - **Inherited across refreshes.** A successor map starts with its predecessor's filter restricted to the packs
//!   it carries over. Ids of packs that are gone stay in the bits (false positives only). The successor's first
//!   settled lookup keeps the inherited filter unless [`needs_rebuild`] says it has drifted too far.
//!
//! Why a split-block Bloom filter rather than a binary fuse filter (both measured by `odb-index-bench`, scenario
//! `filter-build`): one cache line per query (a binary fuse filter reads three), a build that is one pass with no
//! failure or retry and that tolerates duplicate ids (an object in several packs), 1.5 bytes per id and about
//! 0.55% false positives; a binary fuse filter (xorf's `BinaryFuse8`) is smaller (1.13 bytes per id) with fewer
//! false positives (0.39%), but builds about five times slower and needs its keys deduplicated first.

use std::time::{Duration, Instant};

use crate::ids::PackId;
use crate::idx::PackIndex;
// The cell that publishes a filter is the facade's (modelled under loom and shuttle); the bits behind it are
// immutable once published.
use crate::sync::OnceLock;
// The `Arc` of immutable bits, shared after their publication (the cell above orders it).
use crate::sync::plain::Arc;

use super::bloom::SplitBlockBloom;

/// A published filter: the bits, and which packs they cover in the map that holds it.
pub(in crate::store) struct MissFilter {
    bits: Arc<SplitBlockBloom>,
    /// Packs every id of which is in `bits`, sorted (a restriction of the packs the bits were built from).
    covered: Box<[PackId]>,
    /// Ids of the covered packs (the rest of `bits.ids()` belong to packs that are gone: stale).
    live_ids: u64,
    /// How long building the bits took.
    build: Duration,
    /// Whether this map built the bits (false: inherited from a predecessor).
    built_here: bool,
}

impl MissFilter {
    #[inline(always)]
    pub(in crate::store) fn may_contain(&self, id: &[u8]) -> bool {
        self.bits.may_contain(id)
    }

    /// The bits [`may_contain`](Self::may_contain) reads for `id` (a batch prefetches them).
    #[inline(always)]
    pub(in crate::store) fn block_of_id(&self, id: &[u8]) -> Option<&[u64; 4]> {
        self.bits.block_of_id(id)
    }

    pub(in crate::store) fn covers(&self, pack: PackId) -> bool {
        self.covered.binary_search(&pack).is_ok()
    }

    /// Build the filter of a settled map from every pack loaded in it (and check the order of their fan-out
    /// buckets on the way, [`PackIndex::confirm_miss`]). `None` if there is none.
    pub(in crate::store) fn build(packs: &[(PackId, &PackIndex)]) -> Option<MissFilter> {
        if packs.is_empty() {
            return None;
        }
        let t = Instant::now();
        let total: u64 = packs.iter().map(|(_, idx)| u64::from(idx.len())).sum();
        let capacity = usize::try_from(total).unwrap_or(usize::MAX);
        // Reading every id anyway, the pass also checks each fan-out bucket's order (one compare per id) and
        // marks the buckets found in order: a miss there is then certain without checking the bucket again.
        let mut bits = SplitBlockBloom::from_ids(capacity, []);
        for (_, idx) in packs {
            idx.for_each_id_checking_order(|id| bits.insert(id));
        }
        let mut covered: Vec<PackId> = packs.iter().map(|(id, _)| *id).collect();
        covered.sort_unstable();
        covered.dedup();
        Some(MissFilter {
            bits: Arc::new(bits),
            covered: covered.into(),
            live_ids: total,
            build: t.elapsed(),
            built_here: true,
        })
    }

    /// This filter restricted to the packs among `carried` (`(pack, ids)` of a successor map's ready slots).
    fn restrict_to(&self, carried: impl Iterator<Item = (PackId, u32)>) -> Option<MissFilter> {
        let mut covered = Vec::new();
        let mut live_ids = 0u64;
        for (id, len) in carried {
            if self.covers(id) {
                covered.push(id);
                live_ids += u64::from(len);
            }
        }
        if covered.is_empty() {
            return None;
        }
        covered.sort_unstable();
        covered.dedup();
        Some(MissFilter {
            bits: Arc::clone(&self.bits),
            covered: covered.into(),
            live_ids,
            build: self.build,
            built_here: false,
        })
    }

    /// Figures for [`Store::miss_filter`](crate::store::Store::miss_filter).
    pub(in crate::store) fn stats(&self) -> MissFilterStats {
        MissFilterStats {
            ids: self.bits.ids(),
            live_ids: self.live_ids,
            packs: self.covered.len(),
            bytes: self.bits.bytes(),
            build_time: self.build,
            inherited: !self.built_here,
        }
    }
}

/// What [`Store::miss_filter`](crate::store::Store::miss_filter) reports about the current map's miss filter.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{MissFilterMode, ObjectId, Options, Store};
///
/// let store = Store::open(repo.path(), Options::default().miss_filter(MissFilterMode::Eager))?;
/// let absent: ObjectId = "0123456789012345678901234567890123456789".parse()?;
/// let mut handle = store.handle();
/// for _ in 0..2 {
///     assert!(!handle.contains(&absent)?);
/// }
/// let stats = store.miss_filter().expect("built by the miss");
/// assert_eq!((stats.packs, stats.live_ids), (1, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissFilterStats {
    /// Ids inserted into the filter's bits (stale ones of removed packs included).
    pub ids: u64,
    /// Ids of the packs the filter covers in the current map.
    pub live_ids: u64,
    /// Packs the filter covers (a miss skips their index search when the filter says "absent").
    pub packs: usize,
    /// Memory of the bits.
    pub bytes: usize,
    /// How long building the bits took (in the map that built them).
    pub build_time: Duration,
    /// The filter was built for an earlier map and carried over by a refresh.
    pub inherited: bool,
}

/// The write-once filter slot of one slot map (held in its metadata).
#[derive(Default)]
pub(in crate::store) struct FilterCell {
    published: OnceLock<Arc<MissFilter>>,
    /// The predecessor's filter restricted to the packs this map carried over (set when the map is built).
    inherited: Option<Arc<MissFilter>>,
}

impl FilterCell {
    /// The published filter, if any.
    pub(in crate::store) fn get(&self) -> Option<&Arc<MissFilter>> {
        self.published.get()
    }

    /// Publish `f` unless another thread did first; returns the filter that is published.
    pub(in crate::store) fn publish(&self, f: Arc<MissFilter>) -> &Arc<MissFilter> {
        // A racing builder's copy is dropped: both were built from the same settled map.
        let _ = self.published.set(f);
        self.published.get().expect("set just above")
    }

    /// The filter a successor map of `old` starts from, restricted to the packs it carries over (`(pack, ids)`).
    pub(in crate::store) fn inherit(
        old: &FilterCell,
        carried: impl Iterator<Item = (PackId, u32)>,
    ) -> FilterCell {
        let from = old.published.get().or(old.inherited.as_ref());
        FilterCell {
            published: OnceLock::new(),
            inherited: from.and_then(|f| f.restrict_to(carried)).map(Arc::new),
        }
    }

    /// The inherited filter, if the settled map whose loaded packs are `loaded` (`(pack, ids)`) should use it
    /// as it is (see [`needs_rebuild`]).
    pub(in crate::store) fn reusable(
        &self,
        loaded: impl Iterator<Item = (PackId, u32)>,
    ) -> Option<Arc<MissFilter>> {
        let f = self.inherited.as_ref()?;
        (!needs_rebuild(f, loaded)).then(|| Arc::clone(f))
    }
}

/// The rebuild threshold of an inherited filter in a settled map whose loaded packs are `loaded` (`(pack, ids)`):
/// rebuild when more than 4 loaded packs are outside it, or they hold more than 1/8 as many ids as it covers, or
/// its stale ids (of packs that are gone) exceed 1/4 of its live ones (each stale id adds false positives at the
/// rate of a live one).
pub(in crate::store) fn needs_rebuild(
    f: &MissFilter,
    loaded: impl Iterator<Item = (PackId, u32)>,
) -> bool {
    let (mut outside_packs, mut outside_ids) = (0u64, 0u64);
    for (id, len) in loaded {
        if !f.covers(id) {
            outside_packs += 1;
            outside_ids += u64::from(len);
        }
    }
    let stale = f.bits.ids().saturating_sub(f.live_ids);
    outside_packs > 4 || outside_ids > f.live_ids / 8 || stale > f.live_ids / 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oid::HashKind;

    #[test]
    fn no_false_negative_and_about_one_percent_false_positives() {
        let kind = HashKind::Sha1;
        let ids: Vec<_> = (0u32..20_000)
            .map(|i| kind.digest(&i.to_le_bytes()))
            .collect();
        let f = SplitBlockBloom::from_ids(ids.len(), ids.iter().map(|id| id.as_bytes()));
        assert!(ids.iter().all(|id| f.may_contain(id.as_bytes())));
        let fp = (0u32..20_000)
            .map(|i| kind.digest(format!("absent {i}").as_bytes()))
            .filter(|id| f.may_contain(id.as_bytes()))
            .count();
        // 12 bits per id: about 0.55% (110); far from 0 and far from 5%.
        assert!((10..1000).contains(&fp), "{fp} false positives");
        assert_eq!(f.ids(), 20_000);
        assert!(f.bytes() <= 20_000 * 12 / 8);
    }

    #[test]
    fn short_ids_are_maybe_present() {
        let f = SplitBlockBloom::from_ids(1, [&b"abc"[..]]);
        assert!(f.may_contain(b"abc"));
        assert_eq!(f.ids(), 0);
    }

    /// A filter of `inserted` ids covering packs 1..=`covered` (800 live ids in all), for `needs_rebuild`.
    fn filter(inserted: u64, covered: u64) -> MissFilter {
        MissFilter {
            bits: Arc::new(SplitBlockBloom::from_ids(
                1,
                (0..inserted)
                    .map(|i| HashKind::Sha1.digest(&i.to_le_bytes()))
                    .collect::<Vec<_>>()
                    .iter()
                    .map(|id| id.as_bytes()),
            )),
            covered: (1..=covered).map(PackId).collect(),
            live_ids: 800,
            build: Duration::ZERO,
            built_here: true,
        }
    }

    /// Each of the three thresholds, at its limit (kept) and one past it (rebuilt): more than 4 packs outside the
    /// filter, more than 1/8 of its live ids in packs outside it, more than 1/4 of its ids stale (from packs gone).
    #[test]
    fn needs_rebuild_at_its_thresholds() {
        let covered = |n: u64| (1..=n).map(|p| (PackId(p), 200u32)).collect::<Vec<_>>();
        let f = filter(800, 4);
        assert!(
            !needs_rebuild(&f, covered(4).into_iter()),
            "nothing outside"
        );
        // Packs outside: 4 kept, 5 rebuilt (one id each: far below the ids threshold).
        let outside = |n: u64, len: u32| (0..n).map(move |k| (PackId(100 + k), len));
        assert!(!needs_rebuild(
            &f,
            covered(4).into_iter().chain(outside(4, 1))
        ));
        assert!(needs_rebuild(
            &f,
            covered(4).into_iter().chain(outside(5, 1))
        ));
        // Ids outside: 800 / 8 = 100 kept, 101 rebuilt.
        assert!(!needs_rebuild(
            &f,
            covered(4).into_iter().chain(outside(1, 100))
        ));
        assert!(needs_rebuild(
            &f,
            covered(4).into_iter().chain(outside(1, 101))
        ));
        // Stale ids (inserted, no longer live): 800 / 4 = 200 kept, 201 rebuilt.
        assert!(!needs_rebuild(&filter(1000, 4), covered(4).into_iter()));
        assert!(needs_rebuild(&filter(1001, 4), covered(4).into_iter()));
    }
}
