//! Prefixes and iteration across repacks, and file names git reads or refuses.

use super::*;

#[test]
fn prefix_after_repack_ad_finds_the_object_its_packs_vanished_from() {
    for mode in [IncompleteMode::Error, IncompleteMode::Miss] {
        let repo = three_packs();
        let x = head(repo.path());
        let store = Store::open(repo.path(), Options::default().incomplete(mode)).unwrap();
        let mut h = store.handle();
        // The store listed the three packs; none is loaded before they vanish.
        git(repo.path(), &["repack", "-adfq"]);
        assert_eq!(
            h.lookup_prefix(&prefix(&x[..10])).unwrap(),
            PrefixLookup::Unique(oid(&x)),
            "{mode:?}: prefix after repack -adf"
        );
        assert!(h.locate(&oid(&x)).unwrap().is_some());
        assert_eq!(
            h.prefix_candidates(&prefix(&x[..10])).unwrap(),
            vec![oid(&x)]
        );
        assert!(h.shortest_unique_len(&oid(&x), 4).is_ok());
    }
}

#[test]
fn prefix_in_a_pack_added_after_the_first_lookup_is_found() {
    let repo = three_packs();
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let mut h = store.handle();
    let x = head(repo.path());
    assert_eq!(
        h.lookup_prefix(&prefix(&x[..8])).unwrap(),
        PrefixLookup::Unique(oid(&x))
    );
    let before = all_objects(repo.path());
    // New objects, written by fast-import straight into a new pack (never loose).
    fast_import_blobs(repo.path(), 5, 77, "extra");
    let added: Vec<String> = all_objects(repo.path())
        .into_iter()
        .filter(|a| !before.contains(a))
        .collect();
    assert!(added.len() >= 5);
    for a in &added {
        // Each new object's first lookup is by prefix.
        assert_eq!(
            h.lookup_prefix(&prefix(&a[..12])).unwrap(),
            PrefixLookup::Unique(oid(a)),
            "{a}"
        );
    }
}

#[test]
fn iteration_after_repack_ad_lists_every_object_as_git() {
    for mode in [IncompleteMode::Error, IncompleteMode::Miss] {
        let repo = three_packs();
        let store = Store::open(repo.path(), Options::default().incomplete(mode)).unwrap();
        let mut h = store.handle();
        // Listed, not loaded, when the packs vanish.
        git(repo.path(), &["repack", "-adfq"]);
        let listed = sorted_ids(&mut h);
        assert_eq!(listed, all_objects(repo.path()), "{mode:?}");
        let counts = h.count_objects().unwrap();
        assert_eq!(counts.packed as usize, listed.len(), "{mode:?}");
    }
}

/// Make `objects/<xx>` a symbolic link to itself: listing it fails (`ELOOP`), whoever runs the test.
fn break_fanout(repo: &Path, first: &str) {
    let fan = objects_dir(repo).join(first);
    let _ = std::fs::remove_dir_all(&fan);
    std::os::unix::fs::symlink(first, &fan).unwrap();
}

#[test]
fn prefix_of_a_packed_object_resolves_when_its_loose_fanout_cannot_be_read() {
    let repo = three_packs();
    let x = head(repo.path());
    break_fanout(repo.path(), &x[..2]);
    // git resolves the prefix (and warns).
    assert_eq!(git(repo.path(), &["rev-parse", &x[..10]]).trim(), x);
    for mode in [IncompleteMode::Error, IncompleteMode::Miss] {
        let store = Store::open(repo.path(), Options::default().incomplete(mode)).unwrap();
        let mut h = store.handle();
        assert_eq!(
            h.lookup_prefix(&prefix(&x[..10])).unwrap(),
            PrefixLookup::Unique(oid(&x)),
            "{mode:?}"
        );
        // A prefix nothing has in that fan-out: the unreadable directory might hold it.
        let absent = format!(
            "{}{}",
            &x[..2],
            if &x[2..3] == "0" { "1" } else { "0" }.repeat(8)
        );
        let r = h.lookup_prefix(&prefix(&absent));
        match mode {
            IncompleteMode::Error => {
                assert!(
                    matches!(&r, Err(Error::Incomplete { failed }) if format!("{failed:?}").contains(&format!("objects/{}", &x[..2]))),
                    "{r:?}"
                )
            }
            _ => assert_eq!(r.unwrap(), PrefixLookup::NotFound),
        }
    }
}

#[test]
fn upper_case_loose_names_are_not_objects_for_any_reader() {
    let repo = init_repo("sha1", true);
    let id = git_stdin(repo.path(), &["hash-object", "-w", "--stdin"], b"upper\n");
    let id = id.trim();
    let dir = objects_dir(repo.path()).join(&id[..2]);
    std::fs::rename(dir.join(&id[2..]), dir.join(id[2..].to_uppercase())).unwrap();
    // git does not find it under an upper-case name.
    assert_eq!(
        git_stdin(
            repo.path(),
            &["cat-file", "--batch-check"],
            format!("{id}\n").as_bytes()
        )
        .trim(),
        format!("{id} missing")
    );
    for loose in [LooseMode::Probe, LooseMode::Cached] {
        let store = Store::open(repo.path(), Options::default().loose(loose)).unwrap();
        let mut h = store.handle();
        assert_eq!(h.locate(&oid(id)).unwrap(), None, "{loose:?}");
        assert_eq!(
            h.lookup_prefix(&prefix(&id[..8])).unwrap(),
            PrefixLookup::NotFound,
            "{loose:?}"
        );
        assert!(h.objects_sorted().unwrap().is_empty(), "{loose:?}");
    }
}

/// t5319: git reads every `*.idx` with a `.pack` beside it, whatever the name (`test-64-<hash>.idx`); the
/// store ignored those not named `pack-*.idx` and reported their objects missing.
#[test]
fn packs_whose_index_is_not_named_pack_star_are_read_as_git() {
    let repo = init_repo("sha1", true);
    for p in 0..3 {
        fast_import_blobs(repo.path(), 10, 500 + p, &format!("b{p}"));
    }
    let pack_dir = objects_dir(repo.path()).join("pack");
    let idx = idx_files(&objects_dir(repo.path())).remove(0);
    let stem = idx
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .replace("pack-", "test-64-");
    for ext in ["idx", "pack", "rev"] {
        let from = idx.with_extension(ext);
        if from.exists() {
            std::fs::rename(&from, pack_dir.join(format!("{stem}.{ext}"))).unwrap();
        }
    }
    let all = all_objects(repo.path());
    assert!(all.len() >= 30, "git lists the renamed pack's objects too");
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let mut h = store.handle();
    for id in &all {
        assert!(h.locate(&oid(id)).unwrap().is_some(), "{id}");
    }
    assert_eq!(sorted_ids(&mut h), all);
}

/// t5313: a pack whose header claims another object count than its `.idx` is not answered from; git says
/// `missing` ("packfile ... claims to have 4278190080 objects while index indicates N objects").
#[test]
fn pack_whose_header_claims_another_object_count_is_not_used() {
    let repo = init_repo("sha1", true);
    fast_import_blobs(repo.path(), 10, 600, "b");
    let idx = idx_files(&objects_dir(repo.path())).remove(0);
    let pack = idx.with_extension("pack");
    let ids: Vec<String> = show_index(&idx, "sha1")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[8..12].copy_from_slice(b"\xff\0\0\0");
    std::fs::write(&pack, &bytes).unwrap();
    let git_says = git_stdin(
        repo.path(),
        &["cat-file", "--batch-check"],
        format!("{}\n", ids[0]).as_bytes(),
    );
    assert_eq!(git_says.trim(), format!("{} missing", ids[0]));
    for mode in [IncompleteMode::Miss, IncompleteMode::Error] {
        let store = Store::open(repo.path(), Options::default().incomplete(mode)).unwrap();
        let mut h = store.handle();
        for id in &ids {
            match (mode, h.locate(&oid(id))) {
                (IncompleteMode::Miss, Ok(None)) => {}
                (IncompleteMode::Error, Err(Error::Incomplete { failed })) => {
                    assert!(failed.iter().any(|(p, _)| *p == idx), "{failed:?}")
                }
                other => panic!("{id}: {other:?}"),
            }
        }
        let problems = store.problems();
        let text = format!("{problems:?} {}", problems[0]);
        assert!(
            text.contains(&format!(
                "claims to have 4278190080 objects while index indicates {} objects",
                ids.len()
            )),
            "{text}"
        );
    }
}
