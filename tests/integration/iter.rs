//! Iteration and counts against git: [`Handle::objects_sorted`] lists what `git cat-file --batch-all-objects`
//! lists, in the same order, each where the files say; [`Handle::for_each_object`] visits every entry of every
//! source; [`Handle::count_objects`] agrees with `git count-objects -v`; [`Handle::locate_in_pack`] answers
//! every entry `git show-index` lists for that pack. SHA-1 and SHA-256, with and without a multi-pack-index.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::Path;

use odb_index::{Location, Options, Store};
use odb_index_testkit::*;

use crate::api_common::*;

fn check_iteration(repo: &Path, format: &str, midx: bool) {
    let store = Store::open(repo, Options::default()).unwrap();
    let mut h = store.handle();
    let dirs = store.objects_dirs();
    let t = truth(&dirs, format);
    let listed = all_objects(repo);
    let sorted = h.objects_sorted().unwrap();
    let ours: Vec<String> = sorted.iter().map(|(id, _)| id.to_string()).collect();
    assert_eq!(ours, listed, "same objects, same order as git");
    for (id, loc) in &sorted {
        let hex = id.to_string();
        match *loc {
            Location::Packed { pack, offset } => {
                let info = store.pack(pack).unwrap();
                let at = (canon(&info.pack_path), offset);
                assert!(t.packed[&hex].contains(&at), "{hex} at {at:?}");
            }
            Location::Loose { dir } => {
                assert!(!t.packed.contains_key(&hex), "{hex}: packed first");
                let path = store.loose_path(dir, id).unwrap();
                assert!(path.is_file(), "{}", path.display());
                assert!(t.loose[&hex].contains(&canon(&store.objects_dir_of(dir).unwrap())));
            }
        }
    }
    // Unordered: every entry of every source; as a set, the same objects.
    let mut seen = HashSet::new();
    let mut entries = 0u64;
    h.for_each_object(|id, _| {
        seen.insert(id.to_string());
        entries += 1;
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(seen, listed.iter().cloned().collect::<HashSet<_>>());
    // Counts: loose as git counts them; packed as the index files hold them (a multi-pack-index lists each
    // object of its packs once).
    let counts = h.count_objects().unwrap();
    assert_eq!(counts.total(), entries);
    let v = git(repo, &["count-objects", "-v"]);
    let field = |k: &str| -> u64 {
        v.lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(counts.loose, field("count:"));
    if midx {
        let m = odb_index::midx::MultiPackIndex::open(
            &objects_dir(repo).join("pack/multi-pack-index"),
            store.hash_kind(),
        )
        .unwrap();
        assert_eq!(counts.packed, u64::from(m.len()));
    } else {
        let in_packs: u64 = t.packed.values().map(|s| s.len() as u64).sum();
        assert_eq!(counts.packed, in_packs);
        assert_eq!(counts.packed, field("in-pack:"));
    }
    // Stop early.
    let mut n = 0;
    h.for_each_object(|_, _| {
        n += 1;
        if n == 10 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .unwrap();
    assert_eq!(n, 10);
}

/// Every entry `git show-index` lists for a pack is found in that pack at that offset, even when a
/// multi-pack-index lists the object under another pack; absent ids are not.
fn check_in_pack(repo: &Path, format: &str) {
    let store = Store::open(repo, Options::default()).unwrap();
    let mut h = store.handle();
    let absent = absent_ids(200, if format == "sha256" { 64 } else { 40 }, 3);
    for info in store.pack_infos() {
        for (id, offset) in show_index(&info.idx_path, format) {
            assert_eq!(
                h.locate_in_pack(info.id, &oid(&id)).unwrap(),
                Some(offset),
                "{id} in {}",
                info.file_name()
            );
        }
        for id in &absent {
            assert_eq!(h.locate_in_pack(info.id, &oid(id)).unwrap(), None);
        }
    }
}

#[test]
fn iteration_matches_git() {
    for format in FORMATS {
        let repo = mixed_repo(format);
        check_iteration(repo.path(), format, false);
        check_in_pack(repo.path(), format);
    }
}

#[test]
fn iteration_with_multi_pack_index() {
    for format in FORMATS {
        let repo = mixed_repo(format);
        git(repo.path(), &["multi-pack-index", "write"]);
        check_iteration(repo.path(), format, true);
        check_in_pack(repo.path(), format);
    }
}
