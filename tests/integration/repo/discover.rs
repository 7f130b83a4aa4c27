//! Repository discovery against `git rev-parse`.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// discover

#[test]
fn discover_work_tree_dot_git_and_objects_dir() {
    let t = init_repo("sha1", false);
    let root = t.path();
    let want = Repository {
        objects_dir: canon(&root.join(".git/objects")),
        hash_kind: HashKind::Sha1,
        git_dir: Some(canon(&root.join(".git"))),
    };
    assert_eq!(repo::discover(root).unwrap(), want);
    assert_eq!(repo::discover(&root.join(".git")).unwrap(), want);
    // An objects directory inside a git dir: the git dir is found, and its config read.
    assert_eq!(repo::discover(&root.join(".git/objects")).unwrap(), want);
}

#[test]
fn discover_bare_and_sha256() {
    for (fmt, kind) in [("sha1", HashKind::Sha1), ("sha256", HashKind::Sha256)] {
        let t = init_repo(fmt, true);
        let r = repo::discover(t.path()).unwrap();
        assert_eq!(r.hash_kind, kind);
        assert_eq!(r.objects_dir, canon(&t.path().join("objects")));
        assert_eq!(r.git_dir, Some(canon(t.path())));
        assert_eq!(repo::discover(&r.objects_dir).unwrap(), r);

        let t = init_repo(fmt, false);
        let r = repo::discover(t.path()).unwrap();
        assert_eq!(r.hash_kind, kind);
        assert_eq!(repo::object_format(&t.path().join(".git")).unwrap(), kind);
    }
}

#[test]
fn discover_standalone_objects_dir() {
    let t = init_repo("sha256", true);
    // Copy nothing: make an objects directory that does not live in a git dir.
    let other = tempfile::tempdir().unwrap();
    let objs = other.path().join("store");
    std::fs::create_dir_all(objs.join("pack")).unwrap();
    let r = repo::discover(&objs).unwrap();
    assert_eq!(
        r,
        Repository {
            objects_dir: canon(&objs),
            hash_kind: HashKind::Sha1,
            git_dir: None
        }
    );
    let r = repo::discover_with_hash_kind(&objs, HashKind::Sha256).unwrap();
    assert_eq!(r.hash_kind, HashKind::Sha256);

    // Only fan-out directories.
    let objs2 = other.path().join("loose-only");
    std::fs::create_dir_all(objs2.join("ab")).unwrap();
    assert_eq!(repo::discover(&objs2).unwrap().objects_dir, canon(&objs2));
    // A directory with a two-character but non-hex subdirectory is not an objects dir.
    let not = other.path().join("not");
    std::fs::create_dir_all(not.join("zz")).unwrap();
    expect_not_a_repo(&not);

    // The override also wins over the config of an enclosing git dir.
    let r = repo::discover_with_hash_kind(&t.path().join("objects"), HashKind::Sha1).unwrap();
    assert_eq!(r.hash_kind, HashKind::Sha1);
}

#[test]
fn discover_linked_worktree() {
    let t = init_repo("sha256", false);
    let main = t.path();
    fast_import_blobs(main, 3, 1, "main");
    let wt_parent = tempfile::tempdir().unwrap();
    let wt = wt_parent.path().join("wt");
    git(
        main,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            wt.to_str().unwrap(),
            "main",
        ],
    );
    assert!(wt.join(".git").is_file());

    let want = Repository {
        objects_dir: canon(&main.join(".git/objects")),
        hash_kind: HashKind::Sha256,
        git_dir: Some(canon(&main.join(".git"))),
    };
    assert_eq!(repo::discover(&wt).unwrap(), want);
    // The worktree's private git dir (HEAD + commondir, no objects) leads to the same place.
    let private = main.join(".git/worktrees/wt");
    assert!(private.join("commondir").is_file());
    assert_eq!(repo::discover(&private).unwrap(), want);
    // And so does the .git file itself.
    assert_eq!(repo::discover(&wt.join(".git")).unwrap(), want);
}

#[test]
fn discover_gitfile_with_relative_path() {
    let top = tempfile::tempdir().unwrap();
    git(top.path(), &["init", "-q", "--bare", "store.git"]);
    let work = top.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join(".git"), "gitdir: ../store.git\n").unwrap();
    let r = repo::discover(&work).unwrap();
    assert_eq!(r.objects_dir, canon(&top.path().join("store.git/objects")));
    assert_eq!(r.git_dir, Some(canon(&top.path().join("store.git"))));
    // git agrees that this is a repository.
    assert_eq!(
        git(&work, &["rev-parse", "--git-dir"]).trim(),
        canon(&top.path().join("store.git")).to_str().unwrap()
    );

    // A broken .git file is a typed error naming it.
    let bad = top.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(bad.join(".git"), "not a gitfile\n").unwrap();
    match repo::discover(&bad) {
        Err(Error::BadGitFile { path, .. }) => assert_eq!(path, bad.join(".git")),
        other => panic!("unexpected {other:?}"),
    }
    std::fs::write(bad.join(".git"), "gitdir: ../nowhere\n").unwrap();
    assert!(matches!(
        repo::discover(&bad),
        Err(Error::BadGitFile { .. })
    ));
}

#[test]
fn discover_rejects_missing_and_plain_paths() {
    let top = tempfile::tempdir().unwrap();
    expect_not_a_repo(&top.path().join("does-not-exist"));
    let plain = top.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    std::fs::write(plain.join("README"), "hi").unwrap();
    expect_not_a_repo(&plain);
    expect_not_a_repo(top.path());
}

#[test]
fn discover_bad_object_format() {
    let t = init_repo("sha1", true);
    git(t.path(), &["config", "extensions.objectFormat", "sha3"]);
    match repo::discover(t.path()) {
        Err(Error::UnknownObjectFormat { path, source }) => {
            assert_eq!(path, t.path().join("config"));
            assert!(source.to_string().contains("sha3"), "{source}");
        }
        other => panic!("unexpected {other:?}"),
    }
}
