//! Names, refs, options and odd repositories read exactly as git reads them, each case built with git
//! in a temporary directory and compared with `git cat-file` itself (stdout, stderr's first word, exit status).

use odb_index_testkit::{git, git_stdin, init_repo};

use super::as_git::{git_run, odb_run, same};

/// A repository of two commits on `main`: `a`, `dir/b`, `dir/sub/c`.
pub(super) fn small_repo() -> tempfile::TempDir {
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

/// git's option parser takes any unique prefix of a long option (`--buf`, `--batch-all`, `--unord`,
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

/// `--buffer` honours replace refs as the line-by-line path does (its batch path locates plain ids
/// together and must leave a replaced one to the replacement): `blob 24`, not the original's `blob 16`.
#[test]
fn buffer_honours_replace_refs_as_git() {
    let repo = small_repo();
    let r = repo.path();
    let blob = |text: &str| {
        let id = git_stdin(r, &["hash-object", "-w", "--stdin"], text.as_bytes());
        id.trim().to_owned()
    };
    let (a, b) = (blob("original 16 byte"), blob("the replacement, 24 byte"));
    git(r, &["replace", "-f", &a, &b]);
    let head = git(r, &["rev-parse", "HEAD"]).trim().to_owned();
    let input = format!("{a}\n{head}\n{b}\n{a}\nHEAD:a\n");
    for args in [
        &["--batch-check", "--buffer"][..],
        &["--batch", "--buffer"],
        &["--batch-check=%(objectname) %(objectsize)", "--buffer"],
        &["--batch-check", "--buffer", "--threads", "2"],
    ] {
        let (out, _, code) = if args.contains(&"--threads") {
            let (out, err, code) = odb_run(r, args, input.as_bytes());
            let (want, _, _) = git_run(r, &args[..2], input.as_bytes());
            assert_eq!(
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&want),
                "{args:?}: {err}"
            );
            (out, err, code)
        } else {
            same(r, args, input.as_bytes())
        };
        assert_eq!(code, Some(0));
        let out = String::from_utf8_lossy(&out);
        assert!(out.starts_with(&format!("{a} ")), "{args:?}: {out}");
        assert!(
            !out.contains(" 16\n"),
            "{args:?}: the original's size: {out}"
        );
    }
}

/// `--batch-all-objects --unordered` lists an object once, whether it sits in two packs or packed and
/// loose, as git does.
#[test]
fn unordered_listing_names_an_object_in_two_places_once_as_git() {
    let repo = small_repo();
    let r = repo.path();
    git(r, &["repack", "-dq"]); // the loose objects into a pack of their own, the loose files removed
    std::fs::write(r.join("a"), "a3\n").unwrap();
    git(r, &["commit", "-qam", "three"]);
    let loose = git(r, &["rev-parse", "HEAD"]).trim().to_owned();
    // Everything in one more pack, the old one and the loose files kept: the first commits' objects in two packs,
    // the third's packed and loose.
    git(r, &["repack", "-aq"]);
    std::fs::write(r.join("a"), "a4\n").unwrap();
    git(r, &["commit", "-qam", "four"]); // loose only
    let objects = r.join(".git/objects");
    assert!(
        objects.join(&loose[..2]).join(&loose[2..]).is_file(),
        "still loose"
    );
    assert_eq!(odb_index_testkit::idx_files(&objects).len(), 2);
    for format in ["--batch-check", "--batch-check=%(objectname)"] {
        let (out, _, code) = same(r, &[format, "--batch-all-objects", "--unordered"], b"");
        assert_eq!(code, Some(0));
        let out = String::from_utf8(out).unwrap();
        let mut lines: Vec<&str> = out.lines().collect();
        let n = lines.len();
        lines.sort_unstable();
        lines.dedup();
        assert_eq!(lines.len(), n, "git lists each once");
        assert!(out.contains(&loose));
    }
}

/// A full-length hex name is an id before it is a ref (git's `get_oid_basic`), even when a ref of that
/// name exists, and even when no object has that id (`missing`, also with `~0` or `^{commit}` after it).
#[test]
fn a_full_length_hex_name_is_an_id_before_a_ref_as_git() {
    for hash in ["sha1", "sha256"] {
        let repo = init_repo(hash, false);
        let r = repo.path();
        std::fs::write(r.join("a"), "a\n").unwrap();
        git(r, &["add", "."]);
        git(r, &["commit", "-qm", "one"]);
        let blob = git(r, &["rev-parse", "HEAD:a"]).trim().to_owned();
        let absent = "0123456789abcdef".repeat(4)[..blob.len()].to_owned();
        for name in [&blob, &absent] {
            // A ref spelled as the id, naming the commit (what `git switch -c "" $(...)` once made).
            let at = r.join(".git/refs/heads").join(name);
            std::fs::write(&at, git(r, &["rev-parse", "HEAD"])).unwrap();
        }
        let input: String = [
            blob.clone(),
            format!("{blob}^{{}}"),
            absent.clone(),
            format!("{absent}~0"),
            format!("{absent}^{{commit}}"),
            format!("{absent}:a"),
            format!("heads/{absent}"),
            blob[..12].to_owned(),
        ]
        .iter()
        .map(|n| format!("{n}\n"))
        .collect();
        for args in [&["--batch-check"][..], &["--batch-check", "--buffer"]] {
            let (out, _, _) = same(r, args, input.as_bytes());
            let out = String::from_utf8(out).unwrap();
            assert!(
                out.starts_with(&format!("{blob} blob 2\n")),
                "{hash}: {out}"
            );
            assert_eq!(out.matches(" missing").count(), 4, "{hash}: {out}");
        }
    }
}

/// A repository for `rev:path`: `a`, `dir/b`, `dir/sub/c`, a file named `caf\xe9` (not UTF-8), a symlink `ln` to
/// `a` and `lndir` to `dir`.
fn paths_repo() -> tempfile::TempDir {
    use std::os::unix::ffi::OsStrExt as _;
    let repo = small_repo();
    let r = repo.path();
    std::fs::write(r.join(std::ffi::OsStr::from_bytes(b"caf\xe9")), "x\n").unwrap();
    std::os::unix::fs::symlink("a", r.join("ln")).unwrap();
    std::os::unix::fs::symlink("dir", r.join("lndir")).unwrap();
    git(r, &["add", "."]);
    git(r, &["commit", "-qm", "paths"]);
    repo
}

/// `rev:path` is read literally, as git's `get_tree_entry` reads it: `dir/` is the tree, but `a/`,
/// `dir/b/`, `ln/`, `dir//b`, `dir/./b`, `sub/.`, `/a`, `//a` and `.` are `missing`; a path that is not UTF-8 is
/// found; `./` and `../` paths are relative to the work tree's top (normalised, as git), `../` above it is git's
/// fatal error, and outside a work tree (the git directory, a bare repository) so is `./`.
#[test]
fn rev_path_is_read_literally_as_git() {
    let repo = paths_repo();
    let r = repo.path();
    let mut input: Vec<u8> = [
        "HEAD:a",
        "HEAD:a/",
        "HEAD:dir",
        "HEAD:dir/",
        "HEAD:dir/b/",
        "HEAD:ln/",
        "HEAD:lndir/",
        "HEAD:lndir/b",
        "HEAD:dir//b",
        "HEAD:dir/./b",
        "HEAD:dir//",
        "HEAD:dir/.",
        "HEAD:sub/.",
        "HEAD:dir/sub/.",
        "HEAD:/a",
        "HEAD://a",
        "HEAD:.",
        "HEAD:",
        "HEAD:a//",
        "HEAD:.a",
        "HEAD:dir/../a",
        "HEAD:dir/sub/",
        "HEAD:dir/sub/c/",
        "HEAD:./a",
        "HEAD:./",
        "HEAD:./.",
        "HEAD:.//a",
        "HEAD:./dir/./b",
        "HEAD:./dir/",
        "HEAD:./dir/sub/../b",
        "HEAD^{tree}:dir/b",
        "HEAD~1:a",
        "nope:./a",
    ]
    .iter()
    .flat_map(|n| [n.as_bytes(), b"\n"].concat())
    .collect();
    input.extend_from_slice(b"HEAD:caf\xe9\nHEAD:caf\xe9/\nHEAD:./caf\xe9\n");
    let (out, _, code) = same(r, &["--batch-check"], &input);
    assert_eq!(code, Some(0));
    let out = String::from_utf8_lossy(&out);
    assert_eq!(out.matches(" missing").count(), 20, "{out}");
    assert!(
        !out.contains("HEAD:caf\u{fffd} missing"),
        "the blob is found: {out}"
    );
    same(r, &["--batch"], &input);
    same(r, &["--batch-check", "--buffer"], &input);
    // Above the top: git's fatal error after the answers before it.
    for tail in ["HEAD:../a\n", "HEAD:./..\n", "HEAD:./dir/../../a\n"] {
        let input = format!("HEAD:a\n{tail}HEAD:a\n");
        let (out, err, code) = same(r, &["--batch-check"], input.as_bytes());
        assert_eq!(code, Some(128), "{tail}: {err}");
        assert!(
            err.starts_with("fatal: ") && out.ends_with(b" blob 3\n"),
            "{tail}: {err}"
        );
    }
    // Outside a work tree `./` is refused too (git run in the git directory, the command given it).
    let git_dir = r.join(".git");
    let (out, err, code) = same(&git_dir, &["--batch-check"], b"HEAD:a\nHEAD:./a\n");
    assert_eq!(code, Some(128), "{err}");
    assert!(err.starts_with("fatal: ") && !out.is_empty(), "{err}");
}

/// A range (`HEAD^!`, `HEAD..HEAD`, `^HEAD`, ...) is `missing`, as git's `get_oid` fails on it (it was an
/// error line); `rev^{/text}` and `:/text` find the youngest commit whose message matches, as git's walk by
/// commit date does (negated with `!-`, `!!` for a leading `!`, `^{/}` the commit itself, an invalid regular
/// expression or a tree `missing`).
#[test]
fn ranges_and_message_searches_as_git() {
    let repo = small_repo();
    let r = repo.path();
    // A side branch merged, with commit dates out of the parents' order, so that the walk's order matters.
    git(r, &["checkout", "-qb", "side", "HEAD~1"]);
    for (i, when) in [(1, "1700000300"), (2, "1700000100")] {
        std::fs::write(r.join("side"), format!("{i}\n")).unwrap();
        git(r, &["add", "side"]);
        let date = format!("{when} +0000");
        let mut c = odb_index_testkit::git_cmd(r);
        c.env("GIT_COMMITTER_DATE", &date)
            .env("GIT_AUTHOR_DATE", &date);
        let st = c
            .args(["commit", "-qm", &format!("side fix {i}\n\nbody line {i}")])
            .status()
            .unwrap();
        assert!(st.success());
    }
    git(r, &["checkout", "-q", "main"]);
    git(r, &["merge", "-q", "--no-ff", "-m", "merge fix", "side"]);
    git(r, &["tag", "-a", "-m", "t", "tagged", "HEAD~1"]);
    let names = [
        "HEAD^!",
        "HEAD..HEAD",
        "HEAD...HEAD",
        "^HEAD",
        "HEAD^@",
        "HEAD^-",
        "HEAD^-1",
        "..HEAD",
        "HEAD..",
        "HEAD^{/fix}",
        "HEAD^{/side}",
        "HEAD^{/side fix 2}",
        "HEAD^{/^side}",
        "HEAD^{/^one$}",
        "HEAD^{/body}",
        "HEAD^{/line 1$}",
        "HEAD^{/nomatch}",
        "HEAD^{/!-fix}",
        "HEAD^{/!!x}",
        "HEAD^{/}",
        "HEAD~1^{/two}",
        "HEAD^{tree}^{/x}",
        "HEAD^{/[}",
        "HEAD^{/f.x}",
        "tagged^{/one}",
        "side^{/fix 2}",
        ":/fix",
        ":/one",
        ":/!-fix",
        ":/nomatch",
        "HEAD^{/(side|merge) fix}",
        "HEAD^{/fix}:a",
        "HEAD^{/side}~1",
    ];
    let input: String = names.iter().map(|n| format!("{n}\n")).collect();
    for args in [&["--batch-check"][..], &["--batch-check", "--buffer"]] {
        let (out, _, code) = git_run(r, args, input.as_bytes());
        assert_eq!(code, Some(0));
        let (ours, err, our_code) = odb_run(r, args, input.as_bytes());
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&out),
            "{args:?}: {err}"
        );
        assert_eq!(our_code, code);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches(" missing").count(), 16, "{text}");
    }
}

/// Objects that lie: a tag whose `type` line claims another type than its target's is not peeled
/// through (`lie^{}`, `lie^{blob}`, `lie2^{commit}`, `lie2~1` are `missing`, as git's `deref_tag` finds the
/// target is not what the tag says), but `rev:path` goes by what the objects are (`lie3:a`, as git's
/// `read_object_with_reference`); a tree whose entries are out of order is searched as git searches it, stopping
/// at the first entry after the name (`unsorted:a` is `missing`). stdout as git's (git's `error:` lines about
/// the lies are not printed).
#[test]
fn lying_tags_and_unsorted_trees_as_git() {
    let repo = small_repo();
    let r = repo.path();
    let rev = |name: &str| git(r, &["rev-parse", name]).trim().to_owned();
    let (blob, commit, tree) = (rev("HEAD:a"), rev("HEAD"), rev("HEAD^{tree}"));
    for (name, target, claims) in [
        ("lie", &blob, "commit"),
        ("lie2", &commit, "blob"),
        ("lie3", &tree, "commit"),
    ] {
        let text = format!(
            "object {target}\ntype {claims}\ntag {name}\ntagger t <t@example.invalid> 1700000000 +0000\n\n{name}\n"
        );
        let args = ["hash-object", "-t", "tag", "-w", "--stdin", "--literally"];
        let id = git_stdin(r, &args, text.as_bytes()).trim().to_owned();
        git(r, &["update-ref", &format!("refs/tags/{name}"), &id]);
    }
    // A tree of `b` then `a`: out of order.
    let hex = |h: &str| -> Vec<u8> {
        (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect()
    };
    let mut entries = Vec::new();
    for (name, id) in [("b", rev("HEAD:dir/b")), ("a", blob.clone())] {
        entries.extend_from_slice(format!("100644 {name}\0").as_bytes());
        entries.extend(hex(&id));
    }
    let args = ["hash-object", "-t", "tree", "-w", "--stdin", "--literally"];
    let unsorted = git_stdin(r, &args, &entries).trim().to_owned();
    let c = git(r, &["commit-tree", "-m", "unsorted", &unsorted])
        .trim()
        .to_owned();
    git(r, &["update-ref", "refs/heads/unsorted", &c]);
    let names = [
        "lie",
        "lie^{}",
        "lie^{blob}",
        "lie^{commit}",
        "lie~1",
        "lie:a",
        "lie^{tag}",
        "lie2",
        "lie2^{}",
        "lie2^{commit}",
        "lie2^{tree}",
        "lie2~1",
        "lie2^",
        "lie2:a",
        "lie3^{}",
        "lie3^{tree}",
        "lie3:a",
        "lie3:dir/b",
        "lie3~0",
        "unsorted:a",
        "unsorted:b",
        "unsorted^{tree}",
    ];
    let input: String = names.iter().map(|n| format!("{n}\n")).collect();
    for args in [&["--batch-check"][..], &["--batch"]] {
        let (want, _, code) = git_run(r, args, input.as_bytes());
        let (out, err, our_code) = odb_run(r, args, input.as_bytes());
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want),
            "{args:?}: {err}"
        );
        assert_eq!(our_code, code);
        let text = String::from_utf8_lossy(&want);
        assert_eq!(text.matches(" missing").count(), 14, "{text}");
    }
}

/// A PATH that is a directory of the work tree is taken as `git -C <dir>` takes it (the command refused
/// it, exit 2): names are those of the repository above, `rev:./path` and `rev:../path` relative to the
/// directory, `../` above the top git's fatal error.
#[test]
fn a_work_tree_directory_is_taken_as_git_takes_it() {
    let repo = paths_repo();
    let dir = repo.path().join("dir");
    let input =
        b"HEAD:./b\nHEAD:../a\nHEAD:b\nHEAD:./\nHEAD:./sub/c\nHEAD:../dir/./b\nHEAD\nHEAD:a\n";
    for args in [&["--batch-check"][..], &["--batch"]] {
        let (out, _, code) = same(&dir, args, input);
        assert_eq!(code, Some(0));
        let out = String::from_utf8_lossy(&out);
        assert_eq!(out.matches(" missing").count(), 1, "{out}");
    }
    let (_, err, code) = same(&dir, &["--batch-check"], b"HEAD:a\nHEAD:../../a\n");
    assert_eq!(code, Some(128), "{err}");
    same(
        &dir.join("sub"),
        &["--batch-check"],
        b"HEAD:./c\nHEAD:../b\nHEAD:../../a\n",
    );
}
