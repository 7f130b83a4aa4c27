//! What a store has done since it was opened ([`Store::metrics`](super::Store::metrics)), in the manner of
//! gix-odb's `Store::metrics()`: one snapshot of counters, for monitoring and for tests that assert how much work
//! a path did.
//!
//! Every counter is a std atomic touched with `Relaxed` increments (statistics: nothing is published through them,
//! and a reader may see one counter ahead of another) at points that do work far larger than the increment (an index
//! opened, a directory listed, a filter built). Nothing on the lookup path writes shared memory for them: misses the
//! miss filter answers are counted in the handle and added to the store's total when the handle lets go of its
//! snapshot (a refresh, or the handle's drop).

#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: metrics, Relaxed counters no answer depends on"
)]
use crate::sync::plain::atomic::{AtomicU64, Ordering};

/// A snapshot of a store's counters ([`Store::metrics`](super::Store::metrics)). Each counts from the store's
/// opening; two snapshots taken around some work tell what that work did.
///
/// ```
/// # use std::process::Command;
/// # let tmp = tempfile::tempdir()?;
/// # let git = |args: &[&str]| {
/// #     let st = Command::new("git").args(args).current_dir(tmp.path())
/// #         .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").output().unwrap();
/// #     assert!(st.status.success());
/// #     String::from_utf8(st.stdout).unwrap()
/// # };
/// # git(&["init", "-q", "."]);
/// # git(&["-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "x"]);
/// # git(&["-c", "gc.auto=0", "repack", "-q", "-a", "-d"]); // one pack
/// use odb_index::{Options, Store};
///
/// let store = Store::open(tmp.path(), Options::default())?;
/// assert_eq!(store.metrics().index_loads, 0); // opening lists the packs, loads no index
/// assert_eq!(store.metrics().listings, 1);
/// let mut handle = store.handle();
/// let absent = "0123456789012345678901234567890123456789".parse()?;
/// assert_eq!(handle.locate(&absent)?, None);
/// assert_eq!(handle.locate(&absent)?, None);
/// let m = store.metrics();
/// assert_eq!(m.index_loads, 1); // the one .idx, loaded by the first miss, kept by the second
/// assert_eq!(m.listing_changes, 0); // misses re-checked the pack directory: nothing changed
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Metrics {
    /// Index files (`.idx` and multi-pack-index) opened, failed opens included. Each file is opened at most once
    /// while it is unchanged, however many threads, handles and refreshes there are.
    pub index_loads: u64,
    /// Listings of the pack directories (and alternates): one at open, one per refresh that re-read them.
    pub listings: u64,
    /// Refreshes that published a new pack listing (packs, stamps or loose caches changed).
    pub refreshes: u64,
    /// Refreshes whose listing differed (packs added or removed, a multi-pack-index replaced, alternates
    /// changed): [`Store::listing_version`](super::Store::listing_version).
    pub listing_changes: u64,
    /// Miss filters built ([`MissFilterMode`](super::MissFilterMode)); a filter carried over a refresh is not
    /// built again.
    pub filter_builds: u64,
    /// Misses the miss filter answered without searching the packs it covers, as counted by handles that have
    /// since refreshed or been dropped (a live handle adds its count when it lets go of its snapshot).
    pub filter_answers: u64,
}

/// The store's counters (see the module documentation).
#[derive(Debug, Default)]
#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: metrics, Relaxed counters no answer depends on"
)]
pub(super) struct Counters {
    pub(super) index_loads: AtomicU64,
    pub(super) listings: AtomicU64,
    pub(super) refreshes: AtomicU64,
    pub(super) listing_changes: AtomicU64,
    pub(super) filter_builds: AtomicU64,
    pub(super) filter_answers: AtomicU64,
}

#[expect(
    clippy::disallowed_types,
    reason = "sync::plain: metrics, Relaxed counters no answer depends on"
)]
impl Counters {
    /// Count one event (Relaxed: statistics, see the module documentation).
    pub(super) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(super) fn snapshot(&self) -> Metrics {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Metrics {
            index_loads: get(&self.index_loads),
            listings: get(&self.listings),
            refreshes: get(&self.refreshes),
            listing_changes: get(&self.listing_changes),
            filter_builds: get(&self.filter_builds),
            filter_answers: get(&self.filter_answers),
        }
    }
}
