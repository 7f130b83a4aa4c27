//! Odd directories: the store answers exactly as git does, without errors.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// Odd directories: the store answers exactly as git does, without errors.
// ---------------------------------------------------------------------------------------------------------

#[test]
fn idx_without_its_pack_is_ignored_like_git() {
    for format in ["sha1", "sha256"] {
        let f = Fixture::new(format);
        let gone = f.only_in(1);
        std::fs::remove_file(f.idx(1).with_extension("pack")).unwrap();
        let store = open(&f);
        assert_eq!(
            store.packs().len(),
            2,
            "{format}: an idx without a pack listed"
        );
        assert_agrees_with_git(&f, &store, &everything(&f));
        // The objects of the lost pack are missing for git, too: not an error.
        assert!(git_has(f.path(), &gone).iter().all(|p| !p));
        assert_eq!(
            store.metrics().index_loads,
            2,
            "{format}: the orphan idx was opened"
        );
    }
}

#[test]
fn pack_without_its_idx_is_ignored_like_git() {
    let f = Fixture::new("sha1");
    std::fs::remove_file(f.idx(0)).unwrap();
    let store = open(&f);
    assert_eq!(store.packs().len(), 2);
    assert_agrees_with_git(&f, &store, &everything(&f));
    assert!(store.problems().is_empty(), "{:?}", store.problems());
}

#[test]
fn temporary_and_auxiliary_files_are_ignored() {
    let f = Fixture::new("sha1");
    let d = f.pack_dir();
    let stem = f.idx(0).file_stem().unwrap().to_str().unwrap().to_owned();
    // What git leaves around: temporaries of an interrupted index-pack or repack, and per-pack side files.
    let garbage: &[u8] = b"\xff\x74\x4f\x63 this is not an index";
    for name in [
        "tmp_pack_XqZ3a1".to_owned(),
        "tmp_idx_XqZ3a1".to_owned(),
        "tmp_rev_XqZ3a1".to_owned(),
        ".tmp-1234-pack-deadbeef.idx".to_owned(),
        "multi-pack-index.lock".to_owned(),
        format!("{stem}.keep"),
        format!("{stem}.promisor"),
        format!("{stem}.rev"),
        format!("{stem}.bitmap"),
        format!("{stem}.mtimes"),
        format!("{stem}.idx.lock"),
        format!("{stem}.idx~"),
        "pack-.idx".to_owned(),
    ] {
        std::fs::write(d.join(&name), garbage).unwrap();
    }
    let store = open(&f);
    assert_eq!(store.packs().len(), 3);
    assert_agrees_with_git(&f, &store, &everything(&f));
    assert!(store.problems().is_empty(), "{:?}", store.problems());
    assert_eq!(store.metrics().index_loads, 3);
}

#[test]
fn directories_named_like_pack_files_are_skipped() {
    let f = Fixture::new("sha1");
    let d = f.pack_dir();
    let fake = format!("pack-{}", "ab".repeat(20));
    // An idx that is a directory, with a real-looking pack; and a real-looking idx whose pack is a directory.
    std::fs::create_dir(d.join(format!("{fake}.idx"))).unwrap();
    std::fs::write(d.join(format!("{fake}.pack")), b"PACK").unwrap();
    let fake2 = format!("pack-{}", "cd".repeat(20));
    std::fs::copy(f.idx(0), d.join(format!("{fake2}.idx"))).unwrap();
    std::fs::create_dir(d.join(format!("{fake2}.pack"))).unwrap();
    std::fs::create_dir(d.join("multi-pack-index.d")).unwrap();
    let store = open(&f);
    assert_eq!(store.packs().len(), 3);
    // git 2.47 itself dies here ("fatal: mmap failed: No such device" on the directory named like an idx), so
    // the answers are checked against the index files, not against git.
    assert_serves_everything(&f, &store);
    assert_eq!(store.metrics().index_loads, 3);
}

#[test]
fn multi_pack_index_that_is_a_directory_is_reported_not_fatal() {
    let f = Fixture::new("sha1");
    std::fs::create_dir(f.pack_dir().join("multi-pack-index")).unwrap();
    let store = open(&f);
    // git dies on this one ("fatal: mmap failed"): checked against the index files instead.
    assert_serves_everything(&f, &store);
    let problems = store.problems();
    assert!(problems.iter().any(is_midx_problem), "{problems:?}");
}

#[cfg(unix)]
#[test]
fn symlinked_pack_directory_is_followed() {
    let f = Fixture::new("sha1");
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("real-pack-dir");
    std::fs::rename(f.pack_dir(), &target).unwrap();
    std::os::unix::fs::symlink(&target, f.pack_dir()).unwrap();
    let store = open(&f);
    assert_eq!(store.packs().len(), 3);
    assert_agrees_with_git(&f, &store, &everything(&f));
}

#[cfg(unix)]
#[test]
fn symlinked_idx_and_pack_files_are_followed() {
    let f = Fixture::new("sha1");
    let elsewhere = tempfile::tempdir().unwrap();
    let idx = f.idx(2);
    for p in [idx.clone(), idx.with_extension("pack")] {
        let t = elsewhere.path().join(p.file_name().unwrap());
        std::fs::rename(&p, &t).unwrap();
        std::os::unix::fs::symlink(&t, &p).unwrap();
    }
    let store = open(&f);
    assert_eq!(store.packs().len(), 3);
    assert_agrees_with_git(&f, &store, &everything(&f));
}

#[cfg(unix)]
#[test]
fn dangling_symlink_named_like_an_idx_is_skipped() {
    let f = Fixture::new("sha1");
    let d = f.pack_dir();
    let fake = format!("pack-{}", "ef".repeat(20));
    std::os::unix::fs::symlink(d.join("no-such-file.idx"), d.join(format!("{fake}.idx"))).unwrap();
    std::fs::write(d.join(format!("{fake}.pack")), b"PACK").unwrap();
    // And a real idx whose pack is a dangling symlink.
    let pack = f.idx(1).with_extension("pack");
    std::fs::remove_file(&pack).unwrap();
    std::os::unix::fs::symlink(d.join("no-such-file.pack"), &pack).unwrap();
    // And a dangling symlink named like the multi-pack-index.
    std::os::unix::fs::symlink(d.join("no-such-midx"), d.join("multi-pack-index")).unwrap();
    let store = open(&f);
    assert_eq!(store.packs().len(), 2);
    assert_agrees_with_git(&f, &store, &everything(&f));
    assert_eq!(store.metrics().index_loads, 2);
}

#[test]
fn empty_repository_answers_none() {
    for format in ["sha1", "sha256"] {
        for bare in [true, false] {
            let repo = init_repo(format, bare);
            let kind: HashKind = format.parse().unwrap();
            for path in [repo.path().to_path_buf(), objects_dir(repo.path())] {
                let store = Store::open(&path, Options::default()).unwrap();
                assert_eq!(store.hash_kind(), kind, "{}", path.display());
                let mut h = store.handle();
                for id in absent_ids(20, kind.hex_len(), 5) {
                    assert_eq!(h.locate(&oid(&id)).unwrap(), None);
                }
                assert!(store.packs().is_empty());
                assert!(!store.refresh().unwrap());
            }
        }
    }
}

#[test]
fn missing_pack_directory_serves_loose_objects_then_finds_packs_after_refresh() {
    let f = Fixture::new("sha1");
    let aside = f.objects().join("pack-aside");
    std::fs::rename(f.pack_dir(), &aside).unwrap();
    let store = open(&f);
    assert!(store.packs().is_empty());
    assert_agrees_with_git(&f, &store, &everything(&f));
    let mut h = store.handle();
    for id in &f.loose {
        assert_eq!(
            h.locate(&oid(id)).unwrap(),
            Some(Location::Loose { dir: 0 })
        );
    }
    // The directory comes back (with its packs): an explicit refresh sees it.
    std::fs::rename(&aside, f.pack_dir()).unwrap();
    assert!(store.refresh().unwrap());
    assert_agrees_with_git(&f, &store, &everything(&f));
    assert_eq!(store.packs().len(), 3);
}

#[test]
fn objects_directory_opened_directly_works_without_pack_and_info() {
    let f = Fixture::new("sha1");
    std::fs::remove_dir_all(f.pack_dir()).unwrap();
    std::fs::remove_dir_all(f.objects().join("info")).unwrap();
    // Still an objects directory: it has fan-out directories of the loose objects.
    let store = Store::open(f.objects(), Options::default()).unwrap();
    assert_agrees_with_git(&f, &store, &everything(&f));
}
