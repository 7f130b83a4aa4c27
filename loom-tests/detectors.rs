//! Change detection under loom (docs/FRESHNESS.md): the watch's invariant (a lookup that
//! begins after a write returned never answers from a listing that lacks it), freshness F1 and F2 (a pack renamed
//! in before a lookup began is found; a pack removed and put back is loaded again) and batches' B1 (one change
//! check per batch, made after the batch began). What could go wrong: a drain that loses an event, a listing whose
//! detector is made after its scan, a relisting that confirms a vanished pack, or a batch answering its misses
//! from a check made before it began (witnessed below). The models themselves are in `watch.rs`, `freshness.rs`
//! and `batch.rs`, compiled into the modules they check.

use super::*;

/// The change detector's invariant (docs/FRESHNESS.md, section 1) on the real `Inotify` state word, versions and
/// drain, the kernel queue stood in for by a loom mutex: a lookup that begins after a write returned never
/// answers from a listing that lacks it, whatever a concurrent drain is doing.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn watch_lookup_after_a_write_sees_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    std::fs::create_dir_all(tmp.path().join("ab")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder()
        .check(move || odb_index::testing::model::watch::lookup_after_a_write_sees_it(&objects));
}

/// The same invariant for a pack: a new `.idx` renamed into `pack/` while another handle drains its event. The
/// lookup's check must not answer `Quiet` for the listing made before it, and its drain's pack count must differ
/// from that listing's token (so the miss refreshes). The one model where only the state word's pack count
/// carries the change.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn watch_lookup_after_a_pack_write_sees_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        odb_index::testing::model::watch::lookup_after_a_pack_write_sees_it(&objects)
    });
}

/// F1 (docs/FRESHNESS.md, section 2), `stat` detector: a pack renamed into place while another thread refreshes
/// is found by a lookup that began after the rename returned (the real `Freshness`, the file system behind its
/// seam).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn freshness_stat_pack_written_during_a_refresh_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        odb_index::testing::model::freshness::stat_pack_written_during_a_refresh_is_found(&objects)
    });
}

/// F1 with events: the concurrent refresh may drain the pack's event; the listing's token (taken before its
/// scan) must not vouch for a listing that lacks the pack.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn freshness_events_pack_written_during_a_refresh_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        odb_index::testing::model::freshness::events_pack_written_during_a_refresh_is_found(
            &objects,
        )
    });
}

/// F1 across the deferred switch: the concurrent refresh sets events up (its detector made before its scan).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn freshness_switch_pack_written_during_a_refresh_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        odb_index::testing::model::freshness::switch_pack_written_during_a_refresh_is_found(
            &objects,
        )
    });
}

/// F2 (docs/FRESHNESS.md, section 2): a pack removed and put back while a lookup loads it; a refresh after the
/// failed load must not keep the listing (and its recorded failure).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn freshness_vanished_pack_back_is_loaded_again() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        odb_index::testing::model::freshness::vanished_pack_back_is_loaded_again(&objects)
    });
}

/// B1 (docs/FRESHNESS.md, section 2), events: a pack renamed into place while another thread refreshes is found
/// by a batch that began after the rename returned, whose misses share one check made after its searches.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn batch_events_finds_a_pack_written_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        odb_index::testing::model::batch::events_batch_finds_a_pack_written_before_it(&objects)
    });
}

/// B1 with the `stat` detector: the batch's one `stat` of the pack directory.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn batch_stat_finds_a_pack_written_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    builder().check(move || {
        odb_index::testing::model::batch::stat_batch_finds_a_pack_written_before_it(&objects)
    });
}

/// B1's witness: the batch answers its misses from a check made before it began (a handle keeping its last
/// check). loom must find the false miss; this test passes only because it does.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn witness_batch_check_before_the_batch() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("pack")).unwrap();
    let objects = tmp.path().to_path_buf();
    let result = catch_unwind(|| {
        builder().check(move || {
            odb_index::testing::model::batch::events_batch_with_an_earlier_check_misses(&objects)
        });
    });
    assert!(
        result.is_err(),
        "loom did not find the false miss of a batch whose check was made before it began"
    );
}
