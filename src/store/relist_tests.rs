//! Issue 21, found by `stress::prefixes` under real maintenance: git replaced a pack of the listing that a
//! prefix lookup or an iteration had just re-listed before its index was loaded (`repack` renames its
//! `.tmp-<pid>-pack-*` files away), and the call failed with `Incomplete` naming the vanished file. Made
//! deterministic here: a hook run right after each re-listing of [`Handle::load_all_relisted`] repacks once.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::path::Path;

use odb_index_testkit::{all_objects, fast_import_blobs, git, init_repo};

use super::*;
use crate::prefix::Prefix;
use crate::sync::plain::Arc;

thread_local! {
    /// Run once, right after the next re-listing of [`Handle::load_all_relisted`] on this thread.
    static AFTER_RELIST: RefCell<Option<Box<dyn FnOnce()>>> = const { RefCell::new(None) };
}

/// Called by [`Handle::load_all_relisted`] after each re-listing, before the new listing is loaded.
pub(super) fn after_relist() {
    if let Some(f) = AFTER_RELIST.with(|h| h.borrow_mut().take()) {
        f();
    }
}

/// A repository of two packs; a handle listed them; then git repacks them into a third (the handle's listing
/// vanished), and the hook makes sure the first re-listing's pack vanishes too, before it is loaded: new objects
/// are imported and everything is repacked again (another pack name).
fn listing_that_vanishes_twice(repo: &Path, store: &Arc<Store>) -> Handle {
    fast_import_blobs(repo, 30, 1, "a");
    fast_import_blobs(repo, 30, 2, "b");
    let h = store.handle();
    git(repo, &["repack", "-adq"]);
    let repo = repo.to_path_buf();
    AFTER_RELIST.with(|hook| {
        *hook.borrow_mut() = Some(Box::new(move || {
            fast_import_blobs(&repo, 5, 3, "c");
            git(&repo, &["repack", "-adq"]);
        }))
    });
    h
}

#[test]
fn iteration_lists_every_object_when_a_relisted_pack_vanishes_before_it_is_loaded() {
    for what in ["objects_sorted", "for_each_object", "count_objects"] {
        let repo = init_repo("sha1", true);
        let p = repo.path();
        let store = Store::open(p, Options::default()).unwrap();
        let mut h = listing_that_vanishes_twice(p, &store);
        let listed: Vec<String> = match what {
            "objects_sorted" => h.objects_sorted().unwrap(),
            "for_each_object" => {
                let mut all = Vec::new();
                h.for_each_object(|id, loc| {
                    all.push((*id, loc));
                    ControlFlow::Continue(())
                })
                .unwrap();
                all.sort_by_key(|e| e.0);
                all
            }
            _ => {
                let counts = h.count_objects().unwrap();
                assert_eq!(counts.total() as usize, all_objects(p).len());
                continue;
            }
        }
        .iter()
        .map(|(id, _)| id.to_string())
        .collect();
        assert!(AFTER_RELIST.with(|h| h.borrow().is_none()), "the hook ran");
        assert_eq!(listed, all_objects(p), "{what}");
    }
}

#[test]
fn prefix_is_found_when_a_relisted_pack_vanishes_before_it_is_loaded() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = listing_that_vanishes_twice(p, &store);
    let x = all_objects(p)[0].clone();
    let prefix = Prefix::from_hex(&x[..10], HashKind::Sha1).unwrap();
    assert_eq!(
        h.lookup_prefix(&prefix).unwrap(),
        PrefixLookup::Unique(x.parse().unwrap())
    );
    assert!(AFTER_RELIST.with(|h| h.borrow().is_none()), "the hook ran");
}
