//! Alternates: shared clones, chains, cycles, missing ones, and the search order.

use super::*;

/// `git clone --shared`: the clone's own objects are dir 0; the source's loose objects are `Loose { dir: 1 }`,
/// its packed ones are found in the source's packs.
#[test]
fn clone_shared_finds_the_sources_objects() {
    for format in ["sha1", "sha256"] {
        let src = init_repo(format, false);
        let s = src.path();
        fast_import_blobs(s, 50, 40, "main");
        let src_loose = write_loose(s, "src", 25);
        let top = tempfile::tempdir().unwrap();
        let dst = top.path().join("dst");
        git(
            top.path(),
            &["clone", "-q", "--shared", s.to_str().unwrap(), "dst"],
        );
        assert!(objects_dir(&dst).join("info/alternates").is_file());
        // Objects of the clone itself: a pack and loose ones.
        fast_import_blobs(&dst, 30, 41, "own");
        write_loose(&dst, "dst", 15);
        let dirs = [objects_dir(&dst), objects_dir(s)];
        for (i, options) in all_modes().into_iter().enumerate() {
            let store = Store::open(&dst, options).unwrap();
            let found = check(&dst, &store, format, &dirs, 40 + i as u64);
            assert_eq!(found.loose.get(&0), Some(&15), "{found:?}");
            assert_eq!(found.loose.get(&1), Some(&25), "{found:?}");
            assert!(found.packed >= 80, "{found:?}");
            assert!(store.problems().is_empty(), "{:?}", store.problems());
            let mut h = store.handle();
            let one: ObjectId = src_loose[0].parse().unwrap();
            assert_eq!(h.locate(&one).unwrap(), Some(Location::Loose { dir: 1 }));
        }
    }
}

/// A → B → C, each with its own pack and loose objects.
#[test]
fn chain_of_three_alternates() {
    let repos: Vec<_> = (0..3).map(|_| init_repo("sha1", true)).collect();
    for (k, r) in repos.iter().enumerate() {
        fast_import_blobs(r.path(), 20, 50 + k as u64, "main");
        write_loose(r.path(), &format!("chain{k}"), 10 + k);
    }
    let dirs: Vec<PathBuf> = repos.iter().map(|r| objects_dir(r.path())).collect();
    set_alternates(repos[0].path(), &[&dirs[1]]);
    set_alternates(repos[1].path(), &[&dirs[2]]);
    for (i, options) in all_modes().into_iter().enumerate() {
        let store = Store::open(repos[0].path(), options).unwrap();
        let found = check(repos[0].path(), &store, "sha1", &dirs, 50 + i as u64);
        for d in 0..3 {
            assert_eq!(found.loose.get(&d), Some(&(10 + d)), "{found:?}");
        }
        assert!(store.problems().is_empty(), "{:?}", store.problems());
    }
}

/// A → B → A: the store opens (no hang), searches each directory once and finds everything.
#[test]
fn alternates_cycle() {
    let a = init_repo("sha1", true);
    let b = init_repo("sha1", true);
    fast_import_blobs(a.path(), 20, 60, "main");
    fast_import_blobs(b.path(), 20, 61, "main");
    write_loose(a.path(), "cycle-a", 7);
    write_loose(b.path(), "cycle-b", 9);
    let dirs = [objects_dir(a.path()), objects_dir(b.path())];
    set_alternates(a.path(), &[&dirs[1]]);
    set_alternates(b.path(), &[&dirs[0]]);
    let a_path = a.path().to_path_buf();
    let store = within(Duration::from_secs(120), move || {
        Store::open(&a_path, Options::default()).unwrap()
    });
    // git skips an alternate that leads back to a directory already searched; the store says so.
    let problems = store.problems();
    assert!(
        problems.len() == 1
            && matches!(
                &problems[0],
                Problem::Alternate(a) if matches!(**a, AlternateProblem::Cycle { .. })
            )
            && problems[0].to_string().contains("cycle"),
        "{problems:?}"
    );
    let found = check(a.path(), &store, "sha1", &dirs, 60);
    assert_eq!(found.loose.get(&0), Some(&7), "{found:?}");
    assert_eq!(found.loose.get(&1), Some(&9), "{found:?}");
    // Seen from B, the cycle is the other way round.
    let store = Store::open(b.path(), Options::default()).unwrap();
    let found = check(
        b.path(),
        &store,
        "sha1",
        &[dirs[1].clone(), dirs[0].clone()],
        61,
    );
    assert_eq!(found.loose.get(&0), Some(&9), "{found:?}");
}

/// A missing alternate is reported in `problems()`, not fatal; the ones that exist are searched.
#[test]
fn missing_alternate_is_reported_not_fatal() {
    let (a, _b, dirs) = repo_with_missing_alternate();
    for (i, options) in all_modes().into_iter().enumerate() {
        let store = Store::open(a.path(), options).unwrap();
        assert_missing_alternate_reported(&store.problems());
        let found = check(a.path(), &store, "sha1", &dirs, 70 + i as u64);
        assert_eq!(found.loose.get(&1), Some(&5), "{found:?}");
    }
}

/// The alternate is still missing after a refresh, so it should still be reported.
#[test]
fn missing_alternate_is_still_reported_after_refresh() {
    let (a, _b, _dirs) = repo_with_missing_alternate();
    let store = Store::open(a.path(), Options::default()).unwrap();
    assert_missing_alternate_reported(&store.problems());
    store.refresh().unwrap();
    assert_missing_alternate_reported(&store.problems());
}

/// Repository A whose alternates list a missing directory, then B (which has 5 loose objects).
fn repo_with_missing_alternate() -> (tempfile::TempDir, tempfile::TempDir, [PathBuf; 2]) {
    let a = init_repo("sha1", true);
    let b = init_repo("sha1", true);
    fast_import_blobs(a.path(), 20, 70, "main");
    fast_import_blobs(b.path(), 20, 71, "main");
    write_loose(b.path(), "present-alt", 5);
    let gone = a.path().join("no-such-objects");
    let dirs = [objects_dir(a.path()), objects_dir(b.path())];
    set_alternates(a.path(), &[&gone, &dirs[1]]);
    (a, b, dirs)
}

fn assert_missing_alternate_reported(problems: &[Problem]) {
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        matches!(&problems[0], Problem::Alternate(a) if matches!(**a, AlternateProblem::Missing { .. })),
        "{problems:?}"
    );
    assert!(
        problems[0].to_string().contains("no-such-objects"),
        "the problem names the missing directory: {problems:?}"
    );
}

/// An object loose both in the repository and in its alternate is reported in the repository (dir 0).
#[test]
fn own_objects_are_searched_before_alternates() {
    let a = init_repo("sha1", true);
    let b = init_repo("sha1", true);
    // Written into A first: git would not write into A an object its alternate already has.
    let both = write_loose(a.path(), "both", 12);
    let both_in_b = write_loose(b.path(), "both", 12);
    assert_eq!(both, both_in_b);
    let only_b = write_loose(b.path(), "only-b", 6);
    fast_import_blobs(b.path(), 10, 80, "main");
    let dirs = [objects_dir(a.path()), objects_dir(b.path())];
    set_alternates(a.path(), &[&dirs[1]]);
    for (i, options) in all_modes().into_iter().enumerate() {
        let store = Store::open(a.path(), options).unwrap();
        let found = check(a.path(), &store, "sha1", &dirs, 80 + i as u64);
        assert_eq!(found.loose.get(&0), Some(&12), "{found:?}");
        assert_eq!(found.loose.get(&1), Some(&6), "{found:?}");
        let mut h = store.handle();
        for id in &both {
            assert_eq!(
                h.locate(&id.parse().unwrap()).unwrap(),
                Some(Location::Loose { dir: 0 })
            );
        }
        for id in &only_b {
            assert_eq!(
                h.locate(&id.parse().unwrap()).unwrap(),
                Some(Location::Loose { dir: 1 })
            );
        }
    }
}
