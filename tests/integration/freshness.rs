//! Issue 28: files that vanish between a listing and their use. A loose object moved into a pack (`repack -d`
//! packs it and prunes the file) and a pack replaced (`repack -a -d`) are found where they are now, by a lookup
//! after the move (`LooseMode::Cached` too) and by [`Handle::locate_again`] for a caller whose read of the old
//! file failed; git's temporary `.tmp-*` packs are listed, as git lists them. Each step is made by git itself, between the
//! calls of the test: deterministic, no sleep.

use odb_index::{Location, LooseMode, ObjectId, Options, Store};
use odb_index_testkit::*;

/// A repository with one pack (one commit, `repack -ad`) and a second commit whose objects are loose; the id of
/// that commit (loose).
fn packed_then_loose() -> (tempfile::TempDir, ObjectId) {
    let repo = init_repo("sha1", false);
    let p = repo.path();
    std::fs::write(p.join("a"), "a\n").unwrap();
    git(p, &["add", "a"]);
    git(p, &["commit", "-qm", "a"]);
    git(p, &["repack", "-adq"]);
    std::fs::write(p.join("b"), "b\n").unwrap();
    git(p, &["add", "b"]);
    git(p, &["commit", "-qm", "b"]);
    let x = git(p, &["rev-parse", "HEAD"]).trim().parse().unwrap();
    (repo, x)
}

/// Issue 28, 2: `LooseMode::Cached` listed the fan-out directory once; after `repack -ad` moved the object into a
/// pack (and pruned the loose file), every later lookup answered `Loose` (a file that is gone) or, reading it,
/// missing, for the rest of the process. A cached name is confirmed by a probe: the file is gone, the lookup goes
/// on and finds the pack. The other loose modes too, and a new handle.
#[test]
fn a_loose_object_moved_into_a_pack_is_found_in_the_pack_in_every_loose_mode() {
    for mode in [LooseMode::Cached, LooseMode::Watched, LooseMode::Probe] {
        for events_after in [0, Options::DEFAULT_CHANGE_EVENTS_AFTER] {
            let (repo, x) = packed_then_loose();
            let p = repo.path();
            let store = Store::open(
                p,
                Options::default()
                    .loose(mode)
                    .change_events_after(events_after),
            )
            .unwrap();
            let mut h = store.handle();
            assert!(matches!(
                h.locate(&x).unwrap(),
                Some(Location::Loose { .. })
            ));
            git(p, &["repack", "-adq"]);
            let hex = x.to_string();
            assert!(
                !p.join(".git/objects")
                    .join(&hex[..2])
                    .join(&hex[2..])
                    .exists()
            );
            for (what, found) in [
                ("the same handle", h.locate(&x)),
                ("a new handle", store.handle().locate(&x)),
            ] {
                assert!(
                    matches!(found, Ok(Some(Location::Packed { .. }))),
                    "{mode:?}, events after {events_after}, {what}: {found:?}"
                );
            }
        }
    }
}

/// Issue 28, 1: a lookup answered `Loose`; `repack -d` packed the object and pruned the file before the caller
/// opened it. `locate_again` with the location that failed answers where the object is now (every loose mode),
/// and a pack replaced by `repack -ad` likewise gives the new pack.
#[test]
fn locate_again_finds_an_object_whose_file_vanished_after_the_lookup() {
    for mode in [LooseMode::Cached, LooseMode::Watched, LooseMode::Probe] {
        let (repo, x) = packed_then_loose();
        let p = repo.path();
        let store = Store::open(p, Options::default().loose(mode)).unwrap();
        let mut h = store.handle();
        let loose = h.locate(&x).unwrap().unwrap();
        assert!(matches!(loose, Location::Loose { .. }));
        git(p, &["repack", "-adq"]);
        let packed = h.locate_again(&x, loose).unwrap();
        let Some(Location::Packed { pack, .. }) = packed else {
            panic!("{mode:?}: {packed:?}");
        };
        assert!(store.pack_path(pack).unwrap().exists());
        // The pack replaced (a new object makes its name change): the old location's pack is gone.
        std::fs::write(p.join("c"), "c\n").unwrap();
        git(p, &["add", "c"]);
        git(p, &["commit", "-qm", "c"]);
        git(p, &["repack", "-adq"]);
        let again = h.locate_again(&x, packed.unwrap()).unwrap();
        match again {
            Some(Location::Packed { pack: new, .. }) => {
                assert_ne!(new, pack, "{mode:?}");
                assert!(store.pack_path(new).unwrap().exists());
            }
            other => panic!("{mode:?}: {other:?}"),
        }
    }
}

/// `locate_again` of an object that is really gone answers `None` (after listing again), not the stale location.
#[test]
fn locate_again_of_a_deleted_object_is_none() {
    let (repo, x) = packed_then_loose();
    let p = repo.path();
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = store.handle();
    let loose = h.locate(&x).unwrap().unwrap();
    let hex = x.to_string();
    std::fs::remove_file(p.join(".git/objects").join(&hex[..2]).join(&hex[2..])).unwrap();
    assert_eq!(h.locate_again(&x, loose).unwrap(), None);
}

/// Issue 28, 4, then issue 38, 11: git's `repack` writes its new pack as `.tmp-<pid>-pack-<hash>.{pack,idx}` and
/// renames them into place. git 2.47 lists such a pack (`prepare_packed_git_one` skips only `.` and `..`), and so
/// does the store now (a listing whose `.tmp-*` index is renamed away before it is loaded lists again, as for any
/// vanished pack); `cli/tests/cli/pack_names.rs` checks an object only such a pack holds against git.
#[test]
fn temporary_packs_of_repack_are_listed_as_git_lists_them() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 20, 1, "a");
    let pack_dir = p.join("objects/pack");
    let idx = std::fs::read_dir(&pack_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|f| f.extension().is_some_and(|e| e == "idx"))
        .unwrap();
    let stem = idx.file_stem().unwrap().to_str().unwrap().to_owned();
    for ext in ["idx", "pack"] {
        std::fs::copy(
            pack_dir.join(format!("{stem}.{ext}")),
            pack_dir.join(format!(".tmp-4242-{stem}.{ext}")),
        )
        .unwrap();
    }
    let store = Store::open(p, Options::default()).unwrap();
    let packs = store.packs();
    assert_eq!(packs.len(), 2, "{packs:?}");
    let mut stems: Vec<String> = packs
        .iter()
        .map(|p| p.1.file_stem().unwrap().to_str().unwrap().to_owned())
        .collect();
    stems.sort();
    assert_eq!(stems, [format!(".tmp-4242-{stem}"), stem]);
    let x: ObjectId = all_objects(p)[0].parse().unwrap();
    assert!(store.handle().locate(&x).unwrap().is_some());
}

/// Issue 38, 5: a pack renamed away and back (a flapping file) lost its objects whenever a re-listing after a
/// miss ran while it was away: the listing dropped it, where git keeps a pack it has opened (`reprepare_packed_git`
/// never prunes its list). Now a re-listing after a miss keeps a pack whose index is loaded, under its id; a
/// reader that finds its file gone asks `locate_again`, whose re-listing keeps nothing, so the location is then
/// recognised as stale (P5); put back, it is found again.
#[test]
fn a_loaded_pack_a_relisting_misses_is_kept_until_a_reader_finds_it_gone() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 10, 1, "a");
    let idx = idx_files(&p.join("objects"))[0].clone();
    fast_import_blobs(p, 10, 2, "b");
    let x: ObjectId = show_index(&idx, "sha1")[0].0.parse().unwrap();
    let absent: ObjectId = absent_ids(1, 40, 7)[0].parse().unwrap();
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = store.handle();
    let at = h.locate(&x).unwrap().unwrap();
    let Location::Packed { pack, .. } = at else {
        panic!("{at:?}")
    };
    let away = |from: &str, to: &str| {
        for ext in ["idx", "pack"] {
            let f = idx.with_extension(ext);
            let (a, b) = (
                f.with_extension(format!("{ext}{from}")),
                f.with_extension(format!("{ext}{to}")),
            );
            std::fs::rename(a, b).unwrap();
        }
    };
    away("", "away");
    let listings = store.metrics().listings;
    assert_eq!(h.locate(&absent).unwrap(), None);
    assert!(store.metrics().listings > listings, "the miss listed again");
    assert_eq!(
        h.locate(&x).unwrap(),
        Some(at),
        "its index is loaded: kept, as git keeps a pack it opened"
    );
    assert!(store.is_pack_live(pack));
    // A reader that cannot open it: listed again without it, the location is stale.
    assert_eq!(h.locate_again(&x, at).unwrap(), None);
    assert!(matches!(
        store.pack_path(pack),
        Err(odb_index::Error::StalePack { .. })
    ));
    away("away", "");
    assert!(h.locate(&x).unwrap().is_some(), "back: found again");
}

/// Issue 38, 10: a pack that git writes into an *alternate's* pack directory after the store listed it is found
/// by the next lookup of one of its objects, in each way a miss checks for changes: `stat` before events are
/// set up (the default defers them), `stat` for good (`change_events(false)`), and events (Linux). git, on the
/// same repository, is the control. Fails if a check looks at the repository's own pack directory only.
#[test]
fn a_pack_added_to_an_alternate_after_open_is_found_in_every_check_mode() {
    let mut modes = vec![
        ("before events", Options::default()),
        (
            "change_events(false)",
            Options::default().change_events(false),
        ),
    ];
    if cfg!(any(target_os = "linux", target_os = "android")) {
        modes.push(("events", Options::default().change_events_after(0)));
    }
    for (mode, options) in modes {
        let main = init_repo("sha1", true);
        let alt = init_repo("sha1", true);
        fast_import_blobs(main.path(), 3, 1, "a");
        fast_import_blobs(alt.path(), 3, 2, "a");
        let alt_objects = objects_dir(alt.path());
        std::fs::write(
            objects_dir(main.path()).join("info/alternates"),
            format!("{}\n", alt_objects.display()),
        )
        .unwrap();
        let store = Store::open(main.path(), options).unwrap();
        assert_eq!(store.change_events(), mode == "events", "{mode}");
        let mut h = store.handle();
        let absent: ObjectId = absent_ids(1, 40, 38)[0].parse().unwrap();
        // Settled on a listing that trusts its stamps (the first check of a listing made within a second of a
        // directory's change lists again, whatever changed).
        for _ in 0..3 {
            assert_eq!(h.locate(&absent).unwrap(), None, "{mode}");
        }
        let before = idx_files(&alt_objects);
        fast_import_blobs(alt.path(), 3, 3, "b");
        let idx = idx_files(&alt_objects)
            .into_iter()
            .find(|p| !before.contains(p))
            .expect("a new pack in the alternate");
        let x = &show_index(&idx, "sha1")[0].0;
        // git, on the repository that borrows: the object is there.
        let git_says = git_stdin(
            main.path(),
            &["cat-file", "--batch-check"],
            format!("{x}\n").as_bytes(),
        );
        assert!(
            git_says.starts_with(&format!("{x} ")) && !git_says.contains("missing"),
            "{git_says}"
        );
        let found = h.locate(&x.parse().unwrap()).unwrap();
        let Some(Location::Packed { pack, .. }) = found else {
            panic!("{mode}: {x} of a pack added to the alternate: {found:?}");
        };
        assert_eq!(
            store.pack_path(pack).unwrap(),
            idx.with_extension("pack"),
            "{mode}"
        );
        assert_eq!(store.change_events(), mode == "events", "{mode}");
    }
}

/// Issue 38, 10: `locate_again` under repeated churn: between a lookup and the relocation of its answer, git
/// replaces the packs several times (`repack -adf`, a new object before some of them, so the pack's name
/// changes or stays), and this for several rounds (bounded by count). Each relocation answers where git's
/// `show-index` puts the object in a pack that exists now. Fails if the relocation does not list again first
/// (the stale location is all it can answer).
#[test]
fn locate_again_follows_an_object_through_repeated_repacks() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 40, 1, "a");
    let objects = objects_dir(p);
    let x: ObjectId = show_index(&idx_files(&objects)[0], "sha1")[7]
        .0
        .parse()
        .unwrap();
    let store = Store::open(p, Options::default()).unwrap();
    let mut h = store.handle();
    let mut loc = h.locate(&x).unwrap().expect("packed");
    let mut seed = 100;
    for round in 0..4 {
        for k in 0..3 {
            if (round + k) % 2 == 0 {
                seed += 1;
                fast_import_blobs(p, 2, seed, &format!("c{seed}"));
            }
            git(p, &["repack", "-adfq"]);
        }
        let idx = idx_files(&objects);
        assert_eq!(idx.len(), 1, "round {round}: one pack after repack -ad");
        let at = show_index(&idx[0], "sha1")
            .into_iter()
            .find(|(id, _)| *id == x.to_string())
            .expect("git has it")
            .1;
        let again = h.locate_again(&x, loc).unwrap();
        let Some(Location::Packed { pack, offset }) = again else {
            panic!("round {round}: {again:?}");
        };
        assert_eq!(
            (store.pack_path(pack).unwrap(), offset),
            (idx[0].with_extension("pack"), at),
            "round {round}"
        );
        loc = again.unwrap();
    }
}
