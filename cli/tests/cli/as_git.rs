//! The command's answers where git's are unusual, each compared with `git cat-file` itself (stdout, stderr and
//! exit status): names of 41 to 64 hex digits in a SHA-1 repository, a NUL inside a line, ambiguous prefixes
//! (git's `error:` and `hint:` lines), bad formats, a loose object of an unknown type, `--batch` contents,
//! `--batch-command`, `--unordered`'s order, replace refs, and a `.rev` file that cannot be used.

use std::path::Path;
use std::process::Stdio;

use odb_index_testkit::{all_objects, fast_import_blobs, git, git_cmd, git_stdin, init_repo};

use super::{add_loose, odb};

/// (stdout, stderr, exit status) of a run.
pub(crate) type Run = (Vec<u8>, String, Option<i32>);

/// `git cat-file <args>` on `input`.
pub(crate) fn git_run(repo: &Path, args: &[&str], input: &[u8]) -> Run {
    git_run_env(repo, args, input, &[])
}

/// `git cat-file <args>` on `input`, with `env` set.
pub(crate) fn git_run_env(repo: &Path, args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Run {
    use std::io::Write as _;
    let mut child = git_cmd(repo)
        .envs(env.iter().copied())
        .arg("cat-file")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run git");
    let mut si = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = si.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// `odb-index batch-check <args> <repo>` on `input`.
pub(crate) fn odb_run(repo: &Path, args: &[&str], input: &[u8]) -> Run {
    odb_run_env(repo, args, input, &[])
}

/// `odb-index batch-check <args> <repo>` on `input`, with `env` set.
pub(crate) fn odb_run_env(repo: &Path, args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Run {
    let mut all: Vec<&std::ffi::OsStr> = vec!["batch-check".as_ref()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    all.push(repo.as_os_str());
    let out = if env.is_empty() {
        odb(&all, input)
    } else {
        use std::io::Write as _;
        let mut child = std::process::Command::new(super::BIN)
            .args(&all)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(input);
        child.wait_with_output().unwrap()
    };
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// Both runs alike, byte for byte; returns git's.
pub(crate) fn same(repo: &Path, args: &[&str], input: &[u8]) -> Run {
    same_env(repo, args, input, &[])
}

/// Both runs alike with `env` set.
pub(crate) fn same_env(repo: &Path, args: &[&str], input: &[u8], env: &[(&str, &str)]) -> Run {
    let g = git_run_env(repo, args, input, env);
    let o = odb_run_env(repo, args, input, env);
    assert_eq!(
        (String::from_utf8_lossy(&o.0), &o.1, o.2),
        (String::from_utf8_lossy(&g.0), &g.1, g.2),
        "odb-index batch-check {args:?} differs from git cat-file (left: odb-index)"
    );
    assert!(o.0 == g.0);
    g
}

#[test]
fn names_of_41_to_64_hex_digits_in_a_sha1_repository_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 20, 1, "main");
    let loose = add_loose(r, 3, "long");
    let packed: Vec<String> = all_objects(r)
        .into_iter()
        .filter(|i| !loose.contains(i))
        .collect();
    let absent = "0123456789abcdef0123456789abcdef01234567";
    let mut names = Vec::new();
    for (i, id) in packed
        .iter()
        .take(6)
        .chain(&loose)
        .chain([&absent.to_owned()])
        .enumerate()
    {
        for extra in [1, 2, 9, 23, 24, 25] {
            names.push(format!("{id}{}", "0".repeat(extra)));
            names.push(format!("{id}{}", "f".repeat(extra)));
            names.push(format!("{id}{}1", "0".repeat(extra - 1)));
        }
        names.push(format!("{}{}", id.to_uppercase(), "0".repeat(i + 1)));
        names.push(format!("{id}0g"));
    }
    let (out, _, _) = same(r, &["--batch-check"], (names.join("\n") + "\n").as_bytes());
    let out = String::from_utf8(out).unwrap();
    // Packed: the digits after the 40th are not compared; loose: only zeros are accepted.
    assert!(!out.contains(&format!("{}f missing", packed[0])), "{out}");
    assert!(out.contains(&format!("{}f missing", loose[0])), "{out}");
    assert!(!out.contains(&format!("{}0 missing", loose[0])), "{out}");
}

#[test]
fn a_nul_inside_a_line_ends_the_name_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 20, 2, "main");
    let ids = all_objects(r);
    let mut input = Vec::new();
    for line in [
        format!("{}\0junk", ids[0]),
        format!("{}\0", &ids[1][..8]),
        format!("\0{}", ids[2]),
        format!("{}\0 {}", &ids[3][..20], ids[4]),
        format!("{} rest\0more", ids[5]),
    ] {
        input.extend_from_slice(line.as_bytes());
        input.push(b'\n');
    }
    same(r, &["--batch-check"], &input);
    same(r, &["--batch-check=%(objectname) [%(rest)]"], &input);
    same(r, &["--batch"], &input);
}

/// Commits (with multi-line subjects and several time zones), annotated tags, trees and blobs enough that many
/// 4-digit prefixes are shared, across the kinds.
fn many_kinds(r: &Path) {
    let mut s = String::new();
    for c in 0..300 {
        let tz = ["+0000", "+0230", "-0700", "+1400", "-1100"][c % 5];
        let msg = format!("subject {c}\nsecond line\n\nbody {c}\n");
        s.push_str(&format!(
            "commit refs/heads/main\nauthor a <a@x> {} {tz}\ncommitter c <c@x> {} +0000\ndata {}\n{msg}\nM 100644 inline f{}\ndata 3\n{c:02}\n\n",
            1_600_000_000 + c * 40_000,
            1_700_000_000 + c,
            msg.len(),
            c % 40
        ));
        if c % 3 == 0 {
            s.push_str(&format!(
                "tag v{c}\nfrom refs/heads/main\ntagger t <t@x> {} -0300\ndata 4\ntag\n\n",
                1_650_000_000 + c * 1000
            ));
        }
    }
    git_stdin(r, &["fast-import", "--quiet"], s.as_bytes());
    fast_import_blobs(r, 3000, 3, "blobs");
}

#[test]
fn ambiguous_prefixes_are_reported_on_stderr_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    many_kinds(r);
    let ids = all_objects(r);
    let mut prefixes: Vec<String> = ids.iter().map(|i| i[..4].to_owned()).collect();
    prefixes.sort();
    prefixes.dedup();
    // Upper case too: git prints the prefix lower-cased.
    prefixes.extend(ids.iter().step_by(50).map(|i| i[..4].to_uppercase()));
    let (out, err, _) = same(
        r,
        &["--batch-check"],
        (prefixes.join("\n") + "\n").as_bytes(),
    );
    let out = String::from_utf8(out).unwrap();
    assert!(out.lines().filter(|l| l.ends_with(" ambiguous")).count() > 100);
    for kind in [" commit 2", " tag 2", " tree\n", " blob\n"] {
        assert!(err.contains(kind), "a candidate of each kind{kind:?}");
    }
}

#[test]
fn bad_formats_exit_128_with_gits_message() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 5, 4, "main");
    let input = all_objects(r).join("\n") + "\n";
    for format in [
        "%(foo)",
        "%(objectname",
        "%(objectname) %(",
        "x %()",
        "%(objectmode)",
        "%(objectname) %(objectmode) %(objecttype)",
        "%(objectsize:disk",
    ] {
        let (_, err, code) = same(r, &[&format!("--batch-check={format}")], input.as_bytes());
        assert_eq!(code, Some(128), "{format}");
        assert!(err.starts_with("fatal: bad cat-file format: "), "{err}");
        same(r, &[&format!("--batch={format}")], input.as_bytes());
    }
}

#[test]
fn a_loose_object_of_unknown_type_is_fatal_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 5, 5, "main");
    let good = all_objects(r);
    let bogus = git_stdin(
        r,
        &["hash-object", "--literally", "-t", "bogus", "-w", "--stdin"],
        b"what\n",
    );
    let bogus = bogus.trim();
    for name in [bogus, &bogus[..10]] {
        let input = format!("{}\n{name}\n{}\n", good[0], good[1]);
        for args in [
            &["--batch-check"][..],
            &["--batch"],
            &["--batch-check", "--buffer"],
        ] {
            let (out, err, code) = same(r, args, input.as_bytes());
            assert_eq!(
                (code, err.as_str()),
                (Some(128), "fatal: invalid object type\n")
            );
            assert!(
                out.starts_with(good[0].as_bytes()),
                "the lines before are written"
            );
        }
    }
}

#[test]
fn batch_prints_contents_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    many_kinds(r);
    git(r, &["repack", "-adfq"]);
    add_loose(r, 5, "contents");
    let mut names = all_objects(r);
    names.extend(
        names
            .iter()
            .step_by(3)
            .map(|i| i[..5].to_owned())
            .collect::<Vec<_>>(),
    );
    names.extend(odb_index_testkit::absent_ids(10, 40, 6));
    let input = names.join("\n") + "\n";
    same(r, &["--batch"], input.as_bytes());
    same(
        r,
        &["--batch=%(objecttype) %(objectname) %(objectsize)"],
        input.as_bytes(),
    );
    same(r, &["--batch", "--buffer"], input.as_bytes());
    same(r, &["--batch", "--batch-all-objects"], b"");
}

/// git's `--unordered`: loose objects first, then each pack's objects in pack (offset) order. With one pack the
/// packed part is git's exactly; loose objects come in directory order in both (compared as a set).
#[test]
fn unordered_lists_loose_objects_first_then_packs_in_offset_order_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    many_kinds(r);
    git(r, &["repack", "-adq"]);
    let loose = add_loose(r, 30, "unordered");
    let args = ["--batch-check", "--batch-all-objects", "--unordered"];
    let (g, _, _) = git_run(r, &args, b"");
    let (o, err, code) = odb_run(r, &args, b"");
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let (g, o) = (String::from_utf8(g).unwrap(), String::from_utf8(o).unwrap());
    let split = |s: &str| -> (Vec<String>, Vec<String>) {
        let lines: Vec<String> = s.lines().map(str::to_owned).collect();
        let (l, p) = lines.split_at(loose.len());
        (l.to_vec(), p.to_vec())
    };
    let ((mut gl, gp), (mut ol, op)) = (split(&g), split(&o));
    gl.sort();
    ol.sort();
    assert_eq!(ol, gl, "the loose objects first");
    assert!(
        ol.iter()
            .all(|l| loose.iter().any(|id| l.starts_with(id.as_str())))
    );
    assert_eq!(op, gp, "then the pack in offset order");
}

/// Replace refs as git honours them: loose and packed `refs/replace/<id>`, chains of them (five deep is fatal),
/// `GIT_NO_REPLACE_OBJECTS`, `core.useReplaceRefs=false`, and none under `--batch-all-objects`.
#[test]
fn replace_refs_are_honoured_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 5, 7, "main");
    let blob = |text: &str| {
        git_stdin(r, &["hash-object", "-w", "--stdin"], text.as_bytes())
            .trim()
            .to_owned()
    };
    let (a, b, c) = (
        blob("original\n"),
        blob("the replacement, longer\n"),
        blob("c\n"),
    );
    let commit = git(r, &["rev-parse", "main"]).trim().to_owned();
    git(r, &["replace", "-f", &a, &b]);
    git(r, &["replace", "-f", &b, &c]); // a → b → c
    let input = format!("{a}\n{b}\n{}\n{c}\n{commit}\n", &a[..8]);
    let formats = [
        "--batch-check",
        "--batch",
        "--batch-check=%(objectname) %(objectsize:disk) %(rest)",
    ];
    let check = |env: &[(&str, &str)]| {
        for f in formats {
            same_env(r, &[f], input.as_bytes(), env);
        }
        same_env(r, &["--batch-check", "--batch-all-objects"], b"", env);
    };
    let (out, _, _) = same(r, &["--batch-check"], input.as_bytes());
    assert!(
        String::from_utf8(out)
            .unwrap()
            .starts_with(&format!("{a} blob 2\n")),
        "a answered with c"
    );
    check(&[]);
    check(&[("GIT_NO_REPLACE_OBJECTS", "1")]);
    git(r, &["pack-refs", "--all"]);
    assert!(!r.join(".git/refs/replace").join(&a).exists(), "packed");
    check(&[]);
    // A loose ref overrides its packed one.
    git(r, &["replace", "-f", &a, &commit]);
    check(&[]);
    git(r, &["config", "core.useReplaceRefs", "false"]);
    check(&[]);
    git(r, &["config", "core.useReplaceRefs", "true"]);
    // Five replacements in a row: git's fatal error.
    let chain: Vec<String> = (0..6).map(|i| blob(&format!("chain {i}\n"))).collect();
    for w in chain.windows(2) {
        git(r, &["replace", "-f", &w[0], &w[1]]);
    }
    let (_, err, code) = same(
        r,
        &["--batch-check"],
        format!("{}\n{}\n", chain[1], chain[0]).as_bytes(),
    );
    assert_eq!(code, Some(128), "{err}");
}

/// `--batch-command` as git: `info`, `contents` and `flush`, with and without `--buffer`, with a format (and
/// `%(rest)`, empty there), and git's fatal errors (exit 128; under `--buffer` the queued answers are dropped).
#[test]
fn batch_command_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    many_kinds(r);
    add_loose(r, 3, "command");
    let ids = all_objects(r);
    let mut good = String::new();
    for (i, id) in ids.iter().step_by(97).enumerate() {
        let cmd = if i % 2 == 0 { "info" } else { "contents" };
        good.push_str(&format!("{cmd} {id}\n{cmd} {}\n", &id[..4]));
        if i % 5 == 4 {
            good.push_str("flush\n");
        }
    }
    good.push_str("info 0123456789012345678901234567890123456789\ncontents deadbeef\r\n");
    for args in [
        &["--batch-command"][..],
        &["--batch-command", "--buffer"],
        &[
            "--batch-command=%(objectname) %(objecttype) [%(rest)]",
            "--buffer",
        ],
    ] {
        let input = if args.contains(&"--buffer") {
            good.clone()
        } else {
            good.replace("flush\n", "")
        };
        let (out, _, code) = same(r, args, input.as_bytes());
        assert_eq!(code, Some(0));
        assert!(!out.is_empty());
    }
    let first = format!("info {}\n", ids[0]);
    for bad in [
        "\n",
        " info x\n",
        "bogus x\n",
        "info\n",
        "infox y\n",
        "contents\n",
        "flush now\n",
        "flushing\n",
    ] {
        for buffer in [false, true] {
            let mut args = vec!["--batch-command"];
            if buffer {
                args.push("--buffer");
            }
            let input = format!("{first}{bad}{first}");
            let (_, err, code) = same(r, &args, input.as_bytes());
            assert_eq!(code, Some(128), "{bad:?}: {err}");
        }
    }
    // git's test knob: what is not flushed under --buffer is dropped at the end.
    let knob = [("GIT_TEST_CAT_FILE_NO_FLUSH_ON_EXIT", "1")];
    let input = format!("{first}flush\n{first}");
    let (out, _, _) = same_env(r, &["--batch-command", "--buffer"], input.as_bytes(), &knob);
    assert_eq!(out.iter().filter(|&&c| c == b'\n').count(), 1);
    let (_, err, code) = same(
        r,
        &["--batch-command"],
        format!("{first}flush\n").as_bytes(),
    );
    assert_eq!(
        (code, err.as_str()),
        (Some(128), "fatal: flush is only for --buffer mode\n")
    );
}

/// A `.rev` file that cannot be used (here truncated): `%(objectsize:disk)` and `%(deltabase)` are git's answers
/// (from a reverse index built from the `.idx`, as git falls back), and the file is warned about once on stderr.
#[test]
fn a_broken_rev_file_is_warned_about_once_and_answers_are_gits() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    many_kinds(r);
    git(r, &["-c", "pack.writeReverseIndex=true", "repack", "-adfq"]);
    let rev = odb_index_testkit::pack_files(&odb_index_testkit::objects_dir(r), "rev")
        .pop()
        .expect("git wrote a .rev");
    let good = std::fs::read(&rev).unwrap();
    let input = all_objects(r).join("\n") + "\n";
    let format = "--batch-check=%(objectname) %(objectsize:disk) %(deltabase)";
    let expected = git_run(r, &[format], input.as_bytes());
    std::fs::write(&rev, &good[..good.len() / 2]).unwrap();
    for threads in ["1", "2"] {
        let (out, err, code) = odb_run(r, &[format, "--threads", threads], input.as_bytes());
        assert_eq!((code, out == expected.0), (Some(0), true), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("odb-index: warning: ") && err.contains(&*rev.to_string_lossy()),
            "{err}"
        );
    }
}
