//! Issue 49: names, refs, options and odd repositories read exactly as git reads them, each case built with git
//! in a temporary directory and compared with `git cat-file` itself (stdout, stderr's first word, exit status).

use odb_index_testkit::{git, init_repo};

use super::as_git::{git_run, odb_run, same};

/// A repository of two commits on `main`: `a`, `dir/b`, `dir/sub/c`.
fn small_repo() -> tempfile::TempDir {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    std::fs::create_dir_all(r.join("dir/sub")).unwrap();
    std::fs::write(r.join("a"), "a\n").unwrap();
    std::fs::write(r.join("dir/b"), "b\n").unwrap();
    std::fs::write(r.join("dir/sub/c"), "c\n").unwrap();
    git(r, &["add", "."]);
    git(r, &["commit", "-qm", "one"]);
    std::fs::write(r.join("a"), "a2\n").unwrap();
    git(r, &["commit", "-qam", "two"]);
    repo
}

/// (item 8) git's option parser takes any unique prefix of a long option (`--buf`, `--batch-all`, `--unord`,
/// `--batch-che=FORMAT`); a prefix of several is its "ambiguous option" (git: exit 129; the command, as for every
/// command-line mistake: exit 2).
#[test]
fn unique_prefixes_of_long_options_are_taken_as_git_takes_them() {
    let repo = small_repo();
    let r = repo.path();
    let input = b"HEAD\nHEAD:a\nHEAD~1:dir/b\nnope\n";
    for args in [
        &["--batch-che"][..],
        &["--batch-che=%(objectname) %(objecttype)"],
        &["--batch-check", "--buf"],
        &["--batch", "--bu"],
        &["--batch-check", "--batch-all"],
        &["--batch-check", "--batch-all", "--unord"],
        &["--batch-check", "--batch-all-o", "--un", "--buf"],
    ] {
        let (out, _, code) = same(r, args, input);
        assert_eq!(code, Some(0), "{args:?}");
        assert!(!out.is_empty(), "{args:?}");
    }
    let (_, _, code) = same(
        r,
        &["--batch-com"],
        b"info HEAD\ninfo HEAD:a\ncontents HEAD:dir/b\n",
    );
    assert_eq!(code, Some(0));
    for args in [&["--batch-c"][..], &["--bat"], &["--b"], &["--ba"]] {
        let (_, git_err, git_code) = git_run(r, args, input);
        assert_eq!(git_code, Some(129), "{args:?}: {git_err}");
        let git_says = git_err.lines().next().unwrap().strip_prefix("error: ");
        let git_says = git_says.expect("git's error line");
        assert!(git_says.starts_with("ambiguous option: "), "{git_says}");
        let (out, err, code) = odb_run(r, args, input);
        assert!(out.is_empty());
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert_eq!(
            err,
            format!("odb-index: {git_says} (try `odb-index --help`)\n")
        );
    }
}
