//! Unreadable pack directories and alternates.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// Unreadable pack directories and alternates.
// ---------------------------------------------------------------------------------------------------------

/// A pack directory that cannot be listed (a symbolic link to itself: ELOOP, which root cannot bypass, unlike a
/// mode-000 directory), in the repository and in an alternate, and an alternate that cannot be resolved: the
/// store opens, reports the directory in `problems()`, finds every object elsewhere (like git, which warns
/// and answers from the rest), and a miss is `Error::Incomplete` naming the directory.
#[cfg(unix)]
#[test]
fn unreadable_pack_directories_and_alternates() {
    let base = Repo::new("sha1");
    // A repository borrowing `base`'s objects, with its own loose objects.
    let borrower = init_repo("sha1", true);
    let own: Vec<String> = (0..3)
        .map(|i| {
            git_stdin(
                borrower.path(),
                &["hash-object", "-w", "--stdin"],
                format!("own {i}\n").as_bytes(),
            )
            .trim()
            .to_owned()
        })
        .collect();
    let base_objects = std::fs::canonicalize(objects_dir(base.path())).unwrap();
    std::fs::write(
        objects_dir(borrower.path()).join("info/alternates"),
        format!("{}\n", base_objects.display()),
    )
    .unwrap();
    let absent = base.absent();
    let check = |store: &Arc<Store>, found: &[String], dir: &Path| {
        let mut hd = store.handle();
        for id in found {
            assert!(hd.locate(&oid(id)).unwrap().is_some(), "{id}");
        }
        let problems = store.problems();
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains(dir.to_str().unwrap())),
            "{} not reported: {problems:?}",
            dir.display()
        );
        incomplete_for(&hd.locate(&oid(&absent[0])), dir);
    };
    // 1. The borrower's own pack directory is a loop: the alternate's packs and the loose objects answer.
    let own_pack = std::fs::canonicalize(objects_dir(borrower.path()))
        .unwrap()
        .join("pack");
    std::fs::remove_dir_all(&own_pack).unwrap();
    std::os::unix::fs::symlink(&own_pack, &own_pack).unwrap();
    let store = Store::open(borrower.path(), Options::default()).unwrap();
    let mut found = own.clone();
    found.extend(base.all.iter().cloned());
    check(&store, &found, &own_pack);
    assert!(
        git_has(borrower.path(), &found).iter().all(|&p| p),
        "git finds them too"
    );
    std::fs::remove_file(&own_pack).unwrap();
    std::fs::create_dir(&own_pack).unwrap();
    // 2. The alternate's pack directory is a loop: own objects and the alternate's loose ones answer.
    let base_pack = base_objects.join("pack");
    let moved = base_objects.join("pack-moved");
    std::fs::rename(&base_pack, &moved).unwrap();
    std::os::unix::fs::symlink(&base_pack, &base_pack).unwrap();
    let store = Store::open(borrower.path(), Options::default()).unwrap();
    let mut found = own.clone();
    found.extend(base.loose.iter().cloned());
    check(&store, &found, &base_pack);
    std::fs::remove_file(&base_pack).unwrap();
    std::fs::rename(&moved, &base_pack).unwrap();
    // 3. The alternate itself cannot be resolved (a loop): own objects answer.
    let looped = borrower.path().join("looped");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    std::fs::write(
        objects_dir(borrower.path()).join("info/alternates"),
        format!("{}\n", looped.display()),
    )
    .unwrap();
    let store = Store::open(borrower.path(), Options::default()).unwrap();
    check(&store, &own, &looped);
}

/// Under `IncompleteMode::Miss` (git's behaviour for callers that only read), an unreadable pack directory makes
/// a miss `None` (still reported in `problems()`), but an entry whose offset lies is still an error, never a
/// location or a miss.
#[cfg(unix)]
#[test]
fn incomplete_mode_miss_covers_unreadable_directories_not_lying_entries() {
    let r = Repo::new("sha1");
    let kind = r.kind();
    // A lying entry in pack 0.
    let idx = r.idx(0);
    let target = r.only_in(0)[0].clone();
    let pos = r.packs[&idx]
        .iter()
        .position(|(i, _)| *i == target)
        .unwrap();
    let original = std::fs::read(&idx).unwrap();
    replace_by_rename(&idx, &idx_with_offset(&original, kind, pos, 1 << 40));
    // A borrower whose own pack directory is a loop, with `r` as its alternate.
    let borrower = init_repo("sha1", true);
    let own_pack = std::fs::canonicalize(objects_dir(borrower.path()))
        .unwrap()
        .join("pack");
    std::fs::remove_dir_all(&own_pack).unwrap();
    std::os::unix::fs::symlink(&own_pack, &own_pack).unwrap();
    std::fs::write(
        objects_dir(borrower.path()).join("info/alternates"),
        format!(
            "{}\n",
            std::fs::canonicalize(objects_dir(r.path()))
                .unwrap()
                .display()
        ),
    )
    .unwrap();
    let store = Store::open(
        borrower.path(),
        Options::default().incomplete(IncompleteMode::Miss),
    )
    .unwrap();
    assert!(store.problems().iter().any(|p| p.path() == own_pack));
    let mut hd = store.handle();
    assert_eq!(hd.locate(&oid(&r.absent()[0])).unwrap(), None);
    let e = hd
        .locate(&oid(&target))
        .expect_err("a lying offset was answered");
    assert!(matches!(
        corrupt_index_problem(&e, &idx),
        IdxProblem::OffsetPastPackEnd { .. }
    ));
    for id in r.all_but(std::slice::from_ref(&target)) {
        assert!(hd.locate(&oid(&id)).unwrap().is_some(), "{id}");
    }
}

/// The same with permissions (mode 000), which only a user other than root can test; under root (as CI
/// runs) the case cannot be made and the test says so and checks nothing.
#[cfg(unix)]
#[test]
fn unreadable_pack_directory_by_permission() {
    use std::os::unix::fs::PermissionsExt as _;
    let r = Repo::new("sha1");
    let pack_dir = r.pack_dir();
    std::fs::set_permissions(&pack_dir, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read_dir(&pack_dir).is_ok() {
        std::fs::set_permissions(&pack_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        eprintln!(
            "running as root: a mode-000 directory is readable, the case cannot be made here"
        );
        return;
    }
    // Checked while the directory is unreadable; its mode is restored whatever happens (the temporary
    // directory must be removable).
    let outcome = std::panic::catch_unwind(|| {
        let store = Store::open(r.path(), Options::default()).unwrap();
        let problems = store.problems();
        assert!(
            problems.iter().any(|p| p.path() == pack_dir),
            "{problems:?}"
        );
        // The loose objects answer; a miss cannot be claimed.
        r.assert_found(&store, &r.loose);
        incomplete_for(&store.handle().locate(&oid(&r.absent()[0])), &pack_dir);
    });
    std::fs::set_permissions(&pack_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    if let Err(e) = outcome {
        std::panic::resume_unwind(e);
    }
}
