//! Repository discovery, alternates, loose objects (probe and cache).
use std::path::{Path, PathBuf};

use odb_index::repo::{self, AlternateProblem, Repository};
use odb_index::testing::{LooseCache, LooseDb};
use odb_index::{Error, HashKind, ObjectId};
use odb_index_testkit::{
    absent_ids, all_objects, fast_import_blobs, git, git_cmd, git_stdin, init_repo, objects_dir,
};

fn allocations_on_this_thread() -> u64 {
    odb_index_testkit::alloc::thread_allocs()
}

// ---------------------------------------------------------------------------------------------------------
// Helpers.

fn canon(p: &Path) -> PathBuf {
    p.canonicalize()
        .unwrap_or_else(|e| panic!("canonicalize {}: {e}", p.display()))
}

fn id(hex: &str) -> ObjectId {
    hex.trim().parse().unwrap()
}

/// `git hash-object -w --stdin` in `repo`.
fn write_blob(repo: &Path, data: &str) -> ObjectId {
    id(&git_stdin(
        repo,
        &["hash-object", "-w", "--stdin"],
        data.as_bytes(),
    ))
}

/// `git hash-object --stdin` (compute only) in `repo`.
fn hash_blob(repo: &Path, data: &str) -> ObjectId {
    id(&git_stdin(
        repo,
        &["hash-object", "--stdin"],
        data.as_bytes(),
    ))
}

/// Whether `git cat-file -e <id>` in `repo` succeeds.
fn git_has(repo: &Path, oid: &ObjectId) -> bool {
    git_cmd(repo)
        .args(["cat-file", "-e", &oid.to_string()])
        .output()
        .expect("run git")
        .status
        .success()
}

fn expect_not_a_repo(path: &Path) {
    match repo::discover(path) {
        Err(Error::NotARepository { path: p, reason }) => {
            assert_eq!(p, path);
            assert!(!reason.is_empty());
            let msg = Error::NotARepository { path: p, reason }.to_string();
            assert!(msg.contains(&path.display().to_string()), "{msg}");
        }
        other => panic!("{}: expected NotARepository, got {other:?}", path.display()),
    }
}

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

// ---------------------------------------------------------------------------------------------------------
// alternates

/// `n` bare repositories in one temp dir, each with one loose blob of its own; returns (dir, repo paths, ids).
fn bare_repos(n: usize) -> (tempfile::TempDir, Vec<PathBuf>, Vec<ObjectId>) {
    let top = tempfile::tempdir().unwrap();
    let mut repos = Vec::new();
    let mut ids = Vec::new();
    for i in 0..n {
        let name = format!("r{i}.git");
        git(top.path(), &["init", "-q", "--bare", &name]);
        let r = top.path().join(&name);
        ids.push(write_blob(&r, &format!("only in repo {i}\n")));
        repos.push(r);
    }
    (top, repos, ids)
}

fn set_alternates(repo: &Path, content: &str) {
    std::fs::write(repo.join("objects/info/alternates"), content).unwrap();
}

fn objs(repo: &Path) -> PathBuf {
    canon(&repo.join("objects"))
}

#[test]
fn alternates_none() {
    let (_t, r, _) = bare_repos(1);
    let a = repo::alternates(&r[0].join("objects")).unwrap();
    assert!(a.dirs.is_empty());
    assert!(a.problems.is_empty());
}

#[test]
fn alternates_clone_shared() {
    let t = init_repo("sha1", false);
    fast_import_blobs(t.path(), 5, 7, "main");
    let dst = tempfile::tempdir().unwrap();
    let clone = dst.path().join("clone");
    git(
        dst.path(),
        &[
            "clone",
            "-q",
            "--shared",
            t.path().to_str().unwrap(),
            "clone",
        ],
    );
    let a = repo::alternates(&objects_dir(&clone)).unwrap();
    assert_eq!(a.dirs, vec![canon(&objects_dir(t.path()))]);
    assert!(a.problems.is_empty(), "{:?}", a.problems);
    // Every object of the source is visible from the clone through git too.
    for o in all_objects(t.path()) {
        assert!(git_has(&clone, &id(&o)));
    }
}

#[test]
fn alternates_chain_of_three() {
    let (_t, r, ids) = bare_repos(3);
    set_alternates(&r[0], &format!("{}\n", objs(&r[1]).display()));
    set_alternates(&r[1], &format!("{}\n", objs(&r[2]).display()));
    let a = repo::alternates(&r[0].join("objects")).unwrap();
    assert_eq!(a.dirs, vec![objs(&r[1]), objs(&r[2])]);
    assert!(a.problems.is_empty(), "{:?}", a.problems);
    assert!(ids.iter().all(|i| git_has(&r[0], i)));
}

#[test]
fn alternates_cycle() {
    let (_t, r, ids) = bare_repos(2);
    set_alternates(&r[0], &format!("{}\n", objs(&r[1]).display()));
    set_alternates(&r[1], &format!("{}\n", objs(&r[0]).display()));
    let a = repo::alternates(&r[0].join("objects")).unwrap();
    assert_eq!(a.dirs, vec![objs(&r[1])]);
    match &a.problems[..] {
        [AlternateProblem::Cycle { listed_in, path }] => {
            assert_eq!(path, &objs(&r[0]));
            assert_eq!(listed_in, &objs(&r[1]).join("info/alternates"));
        }
        other => panic!("unexpected {other:?}"),
    }
    // A directory listing itself.
    set_alternates(&r[1], "../objects\n");
    let a = repo::alternates(&r[1].join("objects")).unwrap();
    assert!(a.dirs.is_empty());
    assert!(
        matches!(&a.problems[..], [AlternateProblem::Cycle { .. }]),
        "{:?}",
        a.problems
    );
    assert!(git_has(&r[0], &ids[1]));
}

#[test]
fn alternates_diamond_is_listed_once() {
    let (_t, r, _) = bare_repos(4);
    set_alternates(
        &r[0],
        &format!("{}\n{}\n", objs(&r[1]).display(), objs(&r[2]).display()),
    );
    set_alternates(&r[1], &format!("{}\n", objs(&r[3]).display()));
    set_alternates(&r[2], &format!("{}\n", objs(&r[3]).display()));
    let a = repo::alternates(&r[0].join("objects")).unwrap();
    // Depth-first in file order: r1, then r1's r3, then r2.
    assert_eq!(a.dirs, vec![objs(&r[1]), objs(&r[3]), objs(&r[2])]);
    assert!(
        matches!(&a.problems[..], [AlternateProblem::Duplicate { .. }]),
        "{:?}",
        a.problems
    );
}

#[test]
fn alternates_missing_is_not_fatal() {
    let (t, r, ids) = bare_repos(2);
    let gone = t.path().join("gone/objects");
    set_alternates(
        &r[0],
        &format!("{}\n{}\n", gone.display(), objs(&r[1]).display()),
    );
    let a = repo::alternates(&r[0].join("objects")).unwrap();
    assert_eq!(a.dirs, vec![objs(&r[1])]);
    match &a.problems[..] {
        [p @ AlternateProblem::Missing { listed_in, path }] => {
            assert_eq!(path, &gone);
            assert_eq!(listed_in, &objs(&r[0]).join("info/alternates"));
            assert!(p.to_string().contains("does not exist"), "{p}");
        }
        other => panic!("unexpected {other:?}"),
    }
    // git, too, carries on.
    assert!(git_has(&r[0], &ids[1]));
}

#[test]
fn alternates_relative_comments_blank_lines_and_quotes() {
    let (t, r, ids) = bare_repos(4);
    // A directory name that needs quoting.
    let spaced = t.path().join("with \"quote\" dir");
    std::fs::rename(&r[3], &spaced).unwrap();
    // r0 -> r1 (relative, as git writes for `clone --shared` of a relative path), and r2 via comment-laden
    // file; r2 -> the quoted one, relative at depth 1.
    set_alternates(
        &r[0],
        &format!(
            "# a comment\n\n../../r1.git/objects\n\n#{}\n{}\n",
            "x",
            objs(&r[2]).display()
        ),
    );
    set_alternates(&r[2], "\"../../with \\\"quote\\\" dir/objects\"\n");
    let a = repo::alternates(&r[0].join("objects")).unwrap();
    assert_eq!(a.dirs, vec![objs(&r[1]), objs(&r[2]), objs(&spaced)]);
    assert!(a.problems.is_empty(), "{:?}", a.problems);
    // git resolves the same way: every object is visible from r0.
    for i in &ids {
        assert!(git_has(&r[0], i), "git cannot see {i}");
    }
}

#[test]
fn alternates_depth_limit_matches_git() {
    // main -> a0 -> a1 -> ... -> a7; the alternate listed by main is depth 0.
    let (_t, r, ids) = bare_repos(9);
    for w in r.windows(2) {
        set_alternates(&w[0], &format!("{}\n", objs(&w[1]).display()));
    }
    let a = repo::alternates(&r[0].join("objects")).unwrap();
    let want: Vec<PathBuf> = r[1..=6].iter().map(|p| objs(p)).collect();
    assert_eq!(a.dirs, want, "six alternates deep, as git");
    match &a.problems[..] {
        [AlternateProblem::TooDeep { listed_in, depth }] => {
            assert_eq!(*depth, 5, "git's limit: five levels below the repository");
            assert_eq!(listed_in, &objs(&r[6]).join("info/alternates"));
        }
        other => panic!("unexpected {other:?}"),
    }
    // Check against git itself: an object is visible iff its directory is in our list (or is main's own).
    for (i, (p, oid)) in r.iter().zip(&ids).enumerate() {
        let ours = i == 0 || a.dirs.contains(&objs(p));
        assert_eq!(
            git_has(&r[0], oid),
            ours,
            "repo {i}: git and odb-index disagree"
        );
    }
}

// ---------------------------------------------------------------------------------------------------------
// loose objects

fn loose_roundtrip(fmt: &str, kind: HashKind) {
    let t = init_repo(fmt, true);
    let objects = t.path().join("objects");
    let ids: Vec<ObjectId> = (0..40)
        .map(|i| write_blob(t.path(), &format!("loose {i}\n")))
        .collect();
    assert!(ids.iter().all(|i| i.kind() == kind));
    let db = LooseDb::open(&objects, kind).unwrap();
    assert_eq!(db.path(), objects);
    let cache = LooseCache::new(LooseDb::open(&objects, kind).unwrap());
    for i in &ids {
        assert!(db.contains(i).unwrap(), "{i}");
        assert!(cache.contains(i).unwrap(), "{i}");
    }
    for hex in absent_ids(200, kind.hex_len(), 42) {
        let a = id(&hex);
        assert!(!db.contains(&a).unwrap(), "{a}");
        assert!(!cache.contains(&a).unwrap(), "{a}");
    }
    // Each id's neighbours (last byte changed) are absent: the comparison uses every byte.
    for i in &ids {
        let mut b = i.as_bytes().to_vec();
        *b.last_mut().unwrap() ^= 1;
        let n = ObjectId::from_bytes(&b).unwrap();
        assert!(!db.contains(&n).unwrap());
        assert!(!cache.contains(&n).unwrap());
    }
}

#[test]
fn loose_sha1() {
    loose_roundtrip("sha1", HashKind::Sha1);
}

#[test]
fn loose_sha256() {
    loose_roundtrip("sha256", HashKind::Sha256);
}

#[test]
fn loose_written_after_open() {
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    let db = LooseDb::open(&objects, HashKind::Sha1).unwrap();
    let mut cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1).unwrap());

    let x = hash_blob(t.path(), "x\n");
    // Loads x's fan-out directory (absent).
    assert!(!cache.contains(&x).unwrap());
    assert!(!db.contains(&x).unwrap());
    assert_eq!(write_blob(t.path(), "x\n"), x);
    assert!(
        db.contains(&x).unwrap(),
        "a probe sees a new object at once"
    );
    assert!(
        !cache.contains(&x).unwrap(),
        "the cache is stale until refresh"
    );

    // An object in a fan-out directory that the cache has not read yet is seen without refresh.
    let (y_content, y) = (0..)
        .map(|i| {
            let c = format!("y{i}\n");
            let h = hash_blob(t.path(), &c);
            (c, h)
        })
        .find(|(_, y)| y.first_byte() != x.first_byte())
        .unwrap();
    assert_eq!(write_blob(t.path(), &y_content), y);
    assert!(
        cache.contains(&y).unwrap(),
        "unread fan-out directory is read on first use"
    );

    cache.refresh();
    assert!(cache.contains(&x).unwrap(), "refresh makes it visible");

    // Deleted objects stay visible in the cache until refresh; a probe sees the deletion at once.
    let mut hex = x.to_string();
    let rest = hex.split_off(2);
    std::fs::remove_file(objects.join(&hex).join(&rest)).unwrap();
    assert!(!db.contains(&x).unwrap());
    assert!(cache.contains(&x).unwrap(), "deleted but still cached");
    cache.refresh();
    assert!(!cache.contains(&x).unwrap());
}

#[test]
fn loose_cache_ignores_odd_directory_contents() {
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    let ids: Vec<ObjectId> = (0..20)
        .map(|i| write_blob(t.path(), &format!("odd {i}\n")))
        .collect();
    for i in &ids {
        let fan = objects.join(&i.to_string()[..2]);
        std::fs::write(fan.join("tmp_obj_Ab12Cd"), b"junk").unwrap();
        std::fs::write(fan.join("short"), b"").unwrap();
        std::fs::write(fan.join("g".repeat(38)), b"").unwrap();
        std::fs::write(fan.join("a".repeat(39)), b"").unwrap();
        std::fs::write(fan.join("b".repeat(62)), b"").unwrap();
        std::fs::create_dir_all(fan.join("subdir")).unwrap();
    }
    // Files at the top level and an odd fan-out-looking file.
    std::fs::write(objects.join("zz"), b"").unwrap();
    std::fs::write(objects.join("ff"), b"a file where a directory belongs").unwrap();
    let cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1).unwrap());
    for i in &ids {
        assert!(cache.contains(i).unwrap());
    }
    for hex in absent_ids(300, 40, 9) {
        assert!(!cache.contains(&id(&hex)).unwrap());
    }
    // git is not bothered either.
    assert!(ids.iter().all(|i| git_has(t.path(), i)));
}

#[test]
fn loose_cache_from_many_threads() {
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    let ids: Vec<ObjectId> = (0..60)
        .map(|i| write_blob(t.path(), &format!("mt {i}\n")))
        .collect();
    let absent: Vec<ObjectId> = absent_ids(300, 40, 3).iter().map(|h| id(h)).collect();
    let mut cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1).unwrap());
    // `refresh` takes `&mut self`: refresh between rounds of four threads that race for the first listings.
    for _ in 0..4 {
        std::thread::scope(|s| {
            for _ in 0..4 {
                let (cache, ids, absent) = (&cache, &ids, &absent);
                s.spawn(move || {
                    for _ in 0..5 {
                        for i in ids {
                            assert!(cache.contains(i).unwrap());
                        }
                        for a in absent {
                            assert!(!cache.contains(a).unwrap());
                        }
                    }
                });
            }
        });
        cache.refresh();
    }
}

#[cfg(unix)]
#[test]
fn loose_probe_error_names_the_path() {
    // A fan-out "directory" that is a symlink loop: fstatat fails with ELOOP, which is neither ENOENT nor
    // ENOTDIR, so it must surface as an error naming the object's path.
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    std::os::unix::fs::symlink("ab", objects.join("ab")).unwrap();
    let db = LooseDb::open(&objects, HashKind::Sha1).unwrap();
    let rest = "cd".repeat(19);
    let oid = id(&format!("ab{rest}"));
    match db.contains(&oid) {
        Err(Error::Io { path, .. }) => assert_eq!(path, objects.join("ab").join(&rest)),
        other => panic!("unexpected {other:?}"),
    }
    match LooseCache::new(db).contains(&oid) {
        Err(Error::Io { path, .. }) => assert_eq!(path, objects.join("ab")),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn loose_lookups_do_not_allocate() {
    let t = init_repo("sha1", true);
    let objects = t.path().join("objects");
    let present: Vec<ObjectId> = (0..10)
        .map(|i| write_blob(t.path(), &format!("alloc {i}\n")))
        .collect();
    let absent: Vec<ObjectId> = absent_ids(10, 40, 77).iter().map(|h| id(h)).collect();
    let db = LooseDb::open(&objects, HashKind::Sha1).unwrap();
    let cache = LooseCache::new(LooseDb::open(&objects, HashKind::Sha1).unwrap());
    // Warm up the cache (loads the buckets: allocates).
    for i in present.iter().chain(&absent) {
        cache.contains(i).unwrap();
    }

    let before = allocations_on_this_thread();
    let mut hits = 0usize;
    for _ in 0..50 {
        for i in &present {
            hits += usize::from(db.contains(i).unwrap());
        }
        for a in &absent {
            hits += usize::from(db.contains(a).unwrap());
        }
    }
    let db_allocs = allocations_on_this_thread() - before;
    assert_eq!(hits, 500);

    let before = allocations_on_this_thread();
    let mut hits = 0usize;
    for _ in 0..50 {
        for i in present.iter().chain(&absent) {
            hits += usize::from(cache.contains(i).unwrap());
        }
    }
    let cache_allocs = allocations_on_this_thread() - before;
    assert_eq!(hits, 500);

    // The counter works: a Vec allocates.
    let before = allocations_on_this_thread();
    let v: Vec<u8> = std::hint::black_box(Vec::with_capacity(16));
    drop(v);
    assert_eq!(
        allocations_on_this_thread() - before,
        1,
        "the counting allocator counts"
    );

    assert_eq!(db_allocs, 0, "LooseDb::contains allocated in 1000 probes");
    assert_eq!(
        cache_allocs, 0,
        "LooseCache::contains allocated in 1000 warm lookups"
    );
}
