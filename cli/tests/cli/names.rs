//! Names other than hex (`HEAD`, `HEAD~2`, `HEAD:path`, refs, ...) answered as `git cat-file` answers them, on
//! SHA-1 and SHA-256, in every batch mode; a linked worktree's own `HEAD`.

use std::ffi::OsStr;
use std::path::Path;

use odb_index_testkit::{fast_import_blobs, git, init_repo};

use super::as_git::git_run;
use super::odb;

/// Two imports on two branches (one commit each), three commits on `main` on top, an annotated tag, a remote
/// with its `HEAD`, refs packed and loose.
fn repo(format: &str) -> tempfile::TempDir {
    let repo = init_repo(format, false);
    let r = repo.path();
    fast_import_blobs(r, 20, 40, "main");
    fast_import_blobs(r, 10, 41, "other");
    for i in 0..3 {
        std::fs::write(r.join(format!("file {i}.txt")), format!("{i}\n")).unwrap();
        git(r, &["add", "."]);
        git(r, &["commit", "-qm", &format!("c{i}")]);
    }
    git(r, &["tag", "-a", "-m", "t", "v1", "HEAD~1"]);
    git(r, &["update-ref", "refs/remotes/origin/main", "HEAD~2"]);
    git(
        r,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/main",
        ],
    );
    git(r, &["pack-refs", "--all"]);
    git(r, &["branch", "loose", "HEAD~1"]);
    repo
}

const NAMES: &[&str] = &[
    "HEAD",
    "HEAD~2",
    "HEAD~1:file 1.txt",
    "HEAD:file 2.txt",
    "HEAD:f0/0",
    "HEAD:f3",
    "HEAD:absent",
    "main",
    "other",
    "other:f1/1",
    "refs/heads/main",
    "heads/other",
    "v1",
    "v1^{}",
    "v1^{tree}",
    "tags/v1",
    "origin",
    "origin/main",
    "loose",
    "loose^",
    "HEAD^{tree}",
    "HEAD~9",
    "no-such",
    "HEAD^2",
    "",
];

#[test]
fn names_answer_as_git() {
    for format in ["sha1", "sha256"] {
        let repo = repo(format);
        let r = repo.path();
        let head = git(r, &["rev-parse", "HEAD"]);
        let mut names: Vec<String> = NAMES.iter().map(|s| s.to_string()).collect();
        names.push(head[..8].to_owned());
        names.push(format!("{}~1", &head[..10]));
        let input = names.join("\n") + "\n";
        for mode in ["--batch-check", "--batch"] {
            let (want, _, code) = git_run(r, &[mode], input.as_bytes());
            assert_eq!(code, Some(0));
            let text = String::from_utf8_lossy(&want);
            assert!(
                text.matches(" missing").count() <= 7,
                "{format}: git resolves most: {text}"
            );
            for flags in [&[][..], &["--buffer"], &["--buffer", "--threads", "3"]] {
                let mut args = vec![OsStr::new("batch-check"), OsStr::new(mode)];
                args.extend(flags.iter().map(OsStr::new));
                args.push(r.as_os_str());
                let out = odb(&args, input.as_bytes());
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                assert_eq!(
                    String::from_utf8_lossy(&out.stdout),
                    text,
                    "{format} {mode} {flags:?}"
                );
            }
        }
        // In --batch-command too.
        let commands: String = names.iter().map(|n| format!("info {n}\n")).collect();
        let commands = commands.replace("info \n", "");
        let (want, _, _) = git_run(r, &["--batch-command"], commands.as_bytes());
        let args = [
            OsStr::new("batch-check"),
            OsStr::new("--batch-command"),
            r.as_os_str(),
        ];
        let out = odb(&args, commands.as_bytes());
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&want),
            "{format}"
        );
    }
}

/// A linked worktree answers `HEAD` with its own branch, as git run there does; the objects are the common
/// directory's.
#[test]
fn a_linked_worktree_answers_its_own_head() {
    let repo = repo("sha1");
    let r = repo.path();
    let linked = r.join("wt");
    git(r, &["worktree", "add", "-q", "wt", "other"]);
    let input = b"HEAD\nHEAD:f1/1\nmain\n";
    let (want, _, _) = git_run(&linked, &["--batch-check"], input);
    let out = odb(&[OsStr::new("batch-check"), linked.as_os_str()], input);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&want)
    );
    let (main_head, _, _) = git_run(r, &["--batch-check"], b"HEAD\n");
    assert_ne!(
        want[..40],
        main_head[..40],
        "the worktree's HEAD is not the main one's"
    );
    assert!(Path::new(&linked).join(".git").is_file());
}

/// An objects directory of its own inside another repository's work tree: git's discovery from it finds that
/// repository, whose `HEAD` does not name these objects; names other than ids are not resolved there.
#[test]
fn an_objects_directory_inside_another_repository_resolves_ids_only() {
    let repo = repo("sha1");
    let r = repo.path();
    let other = init_repo("sha1", true);
    fast_import_blobs(other.path(), 5, 42, "main");
    let inside = r.join("copy");
    std::fs::create_dir(&inside).unwrap();
    let copy = inside.join("objects");
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(other.path().join("objects"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let other_head = git(other.path(), &["rev-parse", "main"]);
    let size = git(other.path(), &["cat-file", "-s", "main"]);
    // A ref of the outer repository naming an object of the copy: not read.
    std::fs::write(r.join(".git/refs/heads/theirs"), &other_head).unwrap();
    let input = format!("HEAD\nmain\ntheirs\n{other_head}");
    let out = odb(
        &[OsStr::new("batch-check"), copy.as_os_str()],
        input.as_bytes(),
    );
    let id = other_head.trim();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("HEAD missing\nmain missing\ntheirs missing\n{id} commit {size}")
    );
}
