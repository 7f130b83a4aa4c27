//! Alternates (`objects/info/alternates`, `GIT_ALTERNATE_OBJECT_DIRECTORIES`) as git follows them.

use super::*;

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
