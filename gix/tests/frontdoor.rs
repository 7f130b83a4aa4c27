//! The adapter as a front end's one dependency, against git: discovery (`git rev-parse --git-dir` and
//! friends), names (`git rev-parse --verify`), and the four examples (`ls-tree -r -l`, `cat-file --batch`,
//! `count-objects -v`, `rev-list`) byte for byte, on SHA-1 and SHA-256 repositories made with git.
// .clippy.toml's rules (the facade, the guarded read, 80-line functions) are for the shipped code, not tests.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::too_many_lines
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use odb_index_gix::{Error, Repository};
use odb_index_testkit::{git, git_cmd, git_stdin, init_repo, objects_dir};

/// The file names of the history: plain, nested, and ones git quotes (a tab, a non-ASCII byte, a `"`).
const FILES: [&str; 6] = [
    "a.txt",
    "dir/b.txt",
    "dir/sub/c.txt",
    "tab\there",
    "\u{e9}t\u{e9}.txt",
    "quote\"d",
];

/// fast-import's quoting of a path (C style, as git quotes it).
fn fi_path(p: &str) -> String {
    odb_index_gix::gix_quote::ansi_c::quote(p.as_bytes().into()).to_string()
}

/// A history of `main` (8 commits, a merge of `side` at the 7th), with an executable, a symbolic link, a
/// submodule entry, an annotated tag `v1`, a tag of that tag `v1-again`, a lightweight tag `light`, a remote
/// `origin` with its symbolic `HEAD`, a branch named like a hex abbreviation (`cafe`), and some refs packed.
/// Commit dates: increasing, two of them equal (git's walk order keeps their insertion order).
fn history(r: &Path, hex_len: usize) {
    let mut s = String::new();
    let commit = |s: &mut String, branch: &str, mark: usize, date: u64, from: Option<usize>| {
        s.push_str(&format!(
            "commit refs/heads/{branch}\nmark :{mark}\ncommitter t <t@example.invalid> {date} +0000\ndata 9\ncommit {mark}\n"
        ));
        if let Some(f) = from {
            s.push_str(&format!("from :{f}\n"));
        }
    };
    for c in 1..=6 {
        commit(
            &mut s,
            "main",
            c,
            1_700_000_000 + 10 * c as u64,
            (c > 1).then(|| c - 1),
        );
        for (i, f) in FILES.iter().enumerate() {
            if (i + c) % 3 == 0 || c == 1 {
                s.push_str(&format!(
                    "M 100644 inline {}\ndata <<END\n{f} in {c}\nEND\n",
                    fi_path(f)
                ));
            }
        }
        if c == 2 {
            s.push_str("M 100755 inline run.sh\ndata 10\necho run\n\n");
            s.push_str("M 120000 inline link\ndata 5\na.txt\n");
            s.push_str(&format!("M 160000 {} module\n", "1".repeat(hex_len)));
        }
        s.push('\n');
    }
    // `side` from 3, two commits, the second with the date of main's 5th.
    commit(&mut s, "side", 20, 1_700_000_035, Some(3));
    s.push_str("M 100644 inline side.txt\ndata 5\nside\n\n");
    commit(&mut s, "side", 21, 1_700_000_050, Some(20));
    s.push_str("M 100644 inline side.txt\ndata 6\nside2\n\n");
    commit(&mut s, "main", 7, 1_700_000_070, Some(6));
    s.push_str("merge :21\nM 100644 inline side.txt\ndata 6\nside2\n\n");
    commit(&mut s, "main", 8, 1_700_000_080, Some(7));
    s.push_str("D dir/sub/c.txt\n\n");
    s.push_str("tag v1\nfrom :4\ntagger t <t@example.invalid> 1700000100 +0000\ndata 3\nv1\n\n");
    s.push_str("reset refs/tags/light\nfrom :2\n\n");
    s.push_str("reset refs/heads/cafe\nfrom :5\n\n");
    s.push_str("reset refs/remotes/origin/main\nfrom :6\n\n");
    git_stdin(r, &["fast-import", "--quiet"], s.as_bytes());
    git(r, &["tag", "-a", "-m", "again", "v1-again", "v1"]);
    git(r, &["pack-refs", "--all"]);
    git(r, &["branch", "loose-branch", "main~2"]);
    let blob = git(r, &["rev-parse", "HEAD:a.txt"]);
    git(r, &["branch", &blob[..7], "side"]);
    git(
        r,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
        ],
    );
}

/// The repositories: per format, `history` packed, loose objects (two of them packed too), garbage in a fan-out
/// directory and in `pack/`, and an alternate.
fn repos() -> Vec<(tempfile::TempDir, tempfile::TempDir, &'static str)> {
    ["sha1", "sha256"]
        .into_iter()
        .map(|format| {
            let repo = init_repo(format, false);
            let r = repo.path();
            history(r, if format == "sha1" { 40 } else { 64 });
            for i in 0..2 {
                git_stdin(
                    r,
                    &["hash-object", "-w", "--stdin"],
                    format!("was loose {i}\n").as_bytes(),
                );
            }
            git(r, &["repack", "-aq"]); // no -d: the loose objects stay, packed too (prune-packable)
            git_stdin(r, &["hash-object", "-w", "--stdin"], b"only loose\n");
            let objects = objects_dir(r);
            std::fs::create_dir_all(objects.join("ab")).unwrap();
            std::fs::write(objects.join("ab/not-an-object"), vec![b'x'; 3000]).unwrap();
            std::fs::write(objects.join("pack/pack-1234.keep"), b"").unwrap();
            std::fs::write(objects.join("pack/junk"), vec![b'j'; 5000]).unwrap();
            let alt = init_repo(format, true);
            let alt_objects = objects_dir(alt.path()).canonicalize().unwrap();
            std::fs::write(
                objects.join("info/alternates"),
                format!("{}\n", alt_objects.display()),
            )
            .unwrap();
            (repo, alt, format)
        })
        .collect()
}

/// Run an example on `args` with `input` (`cargo run --example`, in the profile this test was built with: it
/// builds the example if `cargo test` did not, as with `--test frontdoor`); its stdout.
fn run_example(name: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut ex = odb_index_testkit::cargo_example("odb-index-gix", name)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut si = ex.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || si.write_all(&input));
    let out = ex.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "{name} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// git's stdout for `args` with `input`, as bytes.
fn git_bytes(r: &Path, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut c = git_cmd(r)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut si = c.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || si.write_all(&input));
    let out = c.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "git {args:?}");
    out.stdout
}

/// Names of every form the module resolves, and ones that name nothing.
fn names(r: &Path) -> Vec<String> {
    let head = git(r, &["rev-parse", "HEAD"]).trim().to_owned();
    let mut names: Vec<String> = [
        "HEAD",
        "main",
        "HEAD~2",
        "HEAD^",
        "HEAD^2",
        "HEAD^3",
        "HEAD~1^2~1",
        "main~20",
        "HEAD^{tree}",
        "HEAD^{commit}",
        "HEAD~3^{tree}",
        "HEAD^{}",
        "HEAD^0",
        "HEAD:a.txt",
        "HEAD:dir",
        "HEAD:dir/b.txt",
        "HEAD:dir/sub/c.txt",
        "HEAD~1:dir/sub/c.txt",
        "main:tab\there",
        "main:\u{e9}t\u{e9}.txt",
        "main:quote\"d",
        "main:link",
        "main:run.sh",
        "main:module",
        "main:nope",
        "HEAD:",
        "v1",
        "v1^{}",
        "v1^{commit}",
        "v1^{tree}",
        "v1:a.txt",
        "v1^{tag}",
        "v1-again",
        "v1-again^{}",
        "v1-again^{tag}",
        "tags/v1",
        "refs/tags/v1",
        "light",
        "light^{tag}",
        "heads/main",
        "refs/heads/main",
        "side",
        "side~1",
        "origin",
        "origin/main",
        "remotes/origin/HEAD",
        "loose-branch",
        "loose-branch^",
        "cafe",
        "cafe~1",
        "HEAD:a.txt^{blob}",
        "HEAD^{blob}",
        "no-such-ref",
        "v2",
        "refs/heads",
        "HEAD~",
        "main^^",
        "a.txt",
    ]
    .map(String::from)
    .to_vec();
    // A branch spelled like the abbreviation of another object: git takes the ref.
    let blob = git(r, &["rev-parse", "HEAD:a.txt"]);
    names.push(blob[..7].to_owned());
    names.push(format!("{}~1", &blob[..7]));
    names.push(head.clone());
    names.push(head[..7].to_owned());
    names.push(format!("{}~1", &head[..9]));
    names.push(format!("{}:a.txt", &head[..12]));
    names
}

/// `git rev-parse --verify -q <name>`, or `None` where git finds nothing.
fn rev_parse(r: &Path, name: &str) -> Option<String> {
    odb_index_testkit::try_git(r, &["rev-parse", "--verify", "-q", name], b"")
        .ok()
        .map(|s| s.trim().to_owned())
}

#[test]
fn names_resolve_as_git_rev_parse() {
    for (repo, _alt, format) in repos() {
        let r = repo.path();
        let found = Repository::discover(r).unwrap();
        let mut named = 0;
        for name in names(r) {
            let ours = found.resolve(&name).unwrap().map(|id| id.to_string());
            let want = rev_parse(r, &name);
            named += usize::from(want.is_some());
            assert_eq!(ours, want, "{format}: {name}");
        }
        assert!(named > 45, "{format}: git resolves most of them ({named})");
    }
}

#[test]
fn forms_not_resolved_are_errors_naming_them() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    history(r, 40);
    let found = Repository::discover(r).unwrap();
    for (name, what) in [
        ("HEAD@{1}", "reflog"),
        ("@{-1}", "previously checked-out"),
        ("main@{upstream}", "upstream"),
        (":a.txt", "index"),
    ] {
        match found.resolve(name) {
            Err(e @ Error::UnsupportedName { .. }) => {
                assert!(e.to_string().contains(what), "{name}: {e}")
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    // Message searches are resolved as git resolves them, ranges name nothing.
    for name in [
        ":/commit 3",
        "HEAD^{/commit}",
        "HEAD~1^{/commit 1}",
        ":/!-commit",
    ] {
        let ours = found.resolve(name).unwrap().map(|id| id.to_string());
        assert_eq!(ours, rev_parse(r, name), "{name}");
    }
    for name in ["HEAD~2..HEAD", "^HEAD", "HEAD^!"] {
        assert_eq!(found.resolve(name).unwrap(), None, "{name}");
    }
    // An abbreviation of two objects is ambiguous, as in git.
    let ids = odb_index_testkit::all_objects(r);
    let mut firsts: Vec<&str> = ids.iter().map(|id| &id[..4]).collect();
    firsts.sort_unstable();
    if let Some(w) = firsts.windows(2).find(|w| w[0] == w[1]) {
        assert!(matches!(
            found.resolve(w[0]),
            Err(Error::AmbiguousName { .. })
        ));
        assert_eq!(rev_parse(r, w[0]), None);
    }
}

#[test]
fn reftable_refs_are_an_error_naming_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q", "--ref-format=reftable", "."]);
    git(dir.path(), &["commit", "-q", "--allow-empty", "-m", "one"]);
    let head = git(dir.path(), &["rev-parse", "HEAD"]).trim().to_owned();
    let found = Repository::discover(dir.path()).unwrap();
    match found.resolve("HEAD") {
        Err(e @ Error::Reftable { .. }) => {
            assert!(e.to_string().contains("reftable"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // Its objects are read all the same.
    let id: odb_index_gix::ObjectId = head.parse().unwrap();
    assert!(found.objects().info(&id).unwrap().is_some());
}

/// What git says the directories are, run in `at`: git dir, common dir, top level (if any).
fn git_dirs(at: &Path) -> (PathBuf, PathBuf, Option<PathBuf>) {
    let q = |arg: &str| {
        odb_index_testkit::try_git(at, &["rev-parse", "--path-format=absolute", arg], b"")
            .ok()
            .map(|s| PathBuf::from(s.trim()).canonicalize().unwrap())
    };
    (
        q("--git-dir").unwrap(),
        q("--git-common-dir").unwrap(),
        q("--show-toplevel"),
    )
}

#[test]
fn discovery_finds_the_directories_git_finds() {
    for format in ["sha1", "sha256"] {
        let top = tempfile::tempdir().unwrap();
        let t = top.path();
        let work = t.join("work");
        std::fs::create_dir(&work).unwrap();
        git(
            &work,
            &["init", "-q", &format!("--object-format={format}"), "."],
        );
        history(&work, if format == "sha1" { 40 } else { 64 });
        git(&work, &["worktree", "add", "-q", "../linked", "side"]);
        git(t, &["clone", "-q", "--bare", "work", "bare.git"]);
        git(
            t,
            &[
                "init",
                "-q",
                &format!("--object-format={format}"),
                "--separate-git-dir",
                "sep.git",
                "sep",
            ],
        );
        std::fs::create_dir_all(work.join("dir/deeper")).unwrap();
        let at = [
            work.clone(),
            work.join("dir/deeper"),
            work.join(".git"),
            t.join("linked"),
            t.join("bare.git"),
            t.join("sep"),
        ];
        for path in at {
            let found = Repository::discover(&path).unwrap();
            let (git_dir, common, top_level) = git_dirs(&path);
            assert_eq!(found.git_dir(), git_dir, "{format} {}", path.display());
            assert_eq!(found.common_dir(), common, "{format} {}", path.display());
            assert_eq!(
                found.objects_dir(),
                common.join("objects"),
                "{}",
                path.display()
            );
            if path.ends_with(".git") {
                assert_eq!(
                    found.work_tree(),
                    Some(work.canonicalize().unwrap().as_path())
                );
            } else {
                assert_eq!(
                    found.work_tree().map(Path::to_owned),
                    top_level,
                    "{}",
                    path.display()
                );
            }
            // HEAD is the worktree's own.
            if let Some(head) = rev_parse(&path, "HEAD") {
                let ours = found.resolve("HEAD").unwrap().unwrap().to_string();
                assert_eq!(ours, head, "{format} {}", path.display());
            }
        }
        let linked = Repository::discover(t.join("linked")).unwrap();
        let side = rev_parse(&work, "side").unwrap();
        assert_eq!(linked.resolve("HEAD").unwrap().unwrap().to_string(), side);
        let outside = tempfile::tempdir().unwrap();
        match Repository::discover(outside.path()) {
            Err(e @ Error::NotARepository { .. }) => {
                assert!(
                    e.to_string()
                        .contains(&outside.path().display().to_string()),
                    "{e}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn examples_match_git_byte_for_byte() {
    for name in ["ls_tree", "batch", "count_objects", "rev_list"] {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/{name}.rs"));
        let lines = std::fs::read_to_string(&file).unwrap().lines().count();
        assert!(lines < 60, "{name}: {lines} lines");
    }
    for (repo, _alt, format) in repos() {
        let r = repo.path();
        let rs = r.to_str().unwrap();
        for rev in ["HEAD", "main~3", "v1", "HEAD~1", "side"] {
            let want = git_bytes(r, &["ls-tree", "-r", "-l", rev], b"");
            assert!(!want.is_empty());
            assert_eq!(
                String::from_utf8_lossy(&run_example("ls_tree", &[rs, rev], b"")),
                String::from_utf8_lossy(&want),
                "{format}: ls-tree -r -l {rev}"
            );
            let want = git_bytes(r, &["rev-list", rev], b"");
            assert_eq!(
                String::from_utf8_lossy(&run_example("rev_list", &[rs, rev], b"")),
                String::from_utf8_lossy(&want),
                "{format}: rev-list {rev}"
            );
        }
        let want = git_bytes(r, &["count-objects", "-v"], b"");
        let text = String::from_utf8_lossy(&want);
        for line in ["garbage: 3\n", "alternate: "] {
            assert!(text.contains(line), "{format}: {text}");
        }
        assert!(!text.contains("prune-packable: 0\n"), "{format}: {text}");
        assert_eq!(
            String::from_utf8_lossy(&run_example("count_objects", &[rs], b"")),
            text,
            "{format}: count-objects -v"
        );
        let mut input = names(r);
        input.extend(odb_index_testkit::all_objects(r));
        let input = input.join("\n") + "\n";
        let want = git_bytes(r, &["cat-file", "--batch"], input.as_bytes());
        assert!(
            run_example("batch", &[rs], input.as_bytes()) == want,
            "{format}: cat-file --batch"
        );
    }
}

/// The batch example answers a line that is not UTF-8 as git does, `<line> missing`, and goes
/// on; it aborted there (exit 1).
#[test]
fn batch_example_answers_a_line_that_is_not_utf8_as_git() {
    for (repo, _alt, format) in repos() {
        let r = repo.path();
        let input: &[u8] =
            b"HEAD\ncaf\xe9\nHEAD:caf\xe9x\n\xff\xfe\nmain~1\nHEAD:\xc3\xa9t\xc3\xa9.txt\n";
        let want = git_bytes(r, &["cat-file", "--batch"], input);
        assert_eq!(
            want.windows(7).filter(|w| w == b"missing").count(),
            3,
            "{format}: git says missing three times"
        );
        assert!(
            run_example("batch", &[r.to_str().unwrap()], input) == want,
            "{format}: cat-file --batch on lines that are not UTF-8"
        );
    }
}
