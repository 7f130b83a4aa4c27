//! Issue 38, items 6b, 6c, 8 and 9: files git reads in its own way (a loose header over 32 bytes, a
//! multi-pack-index whose `LOFF` chunk was emptied, an `.idx` that names one id twice, a multi-pack-index
//! truncated in place), each compared with `git cat-file` itself (stdout and exit status).

use std::path::Path;

use odb_index_testkit::{all_objects, fast_import_blobs, git_stdin, init_repo};

use super::as_git::git_run;
use super::odb;

/// `odb-index batch-check <args> <repo>` on `input`: (stdout, stderr, exit status).
fn odb_run(repo: &Path, args: &[&str], input: &[u8]) -> (Vec<u8>, String, Option<i32>) {
    let mut all: Vec<&std::ffi::OsStr> = vec!["batch-check".as_ref()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    all.push(repo.as_os_str());
    let out = odb(&all, input);
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// The same stdout and exit status as `git cat-file <args>` (stderr differs: git's `error:` lines are the
/// command's warnings); returns the command's stderr.
fn same_answers(repo: &Path, args: &[&str], input: &[u8]) -> String {
    let (git_out, git_err, git_code) = git_run(repo, args, input);
    let (out, err, code) = odb_run(repo, args, input);
    assert_eq!(
        (String::from_utf8_lossy(&out), code),
        (String::from_utf8_lossy(&git_out), git_code),
        "odb-index batch-check {args:?} differs from git cat-file (left: odb-index); git said {git_err:?}, \
         odb-index {err:?}"
    );
    err
}

/// git's t1006 ("cat-file error on bogus full OID"): a loose object whose header (`<type> <size>\0`) is over
/// git's `MAX_HEADER_LEN`, 32 bytes, is not read (git: `error: header for <id> too long, exceeds 32 bytes`)
/// and answers `missing`, exit 0, in every mode; the command said `fatal: invalid object type`, exit 128. A
/// header of exactly 32 bytes is read, and its unknown type is fatal for both.
#[test]
fn a_loose_header_over_32_bytes_is_missing_as_git_t1006() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 3, 38, "main");
    let good = all_objects(r);
    let literally = |kind: &str, data: &[u8]| {
        git_stdin(
            r,
            &["hash-object", "--literally", "-t", kind, "-w", "--stdin"],
            data,
        )
        .trim()
        .to_owned()
    };
    // t1006's bogus long type: "abcdefghijklmnopqrstuvwxyz1234679 5\0" is 36 bytes.
    let long = literally("abcdefghijklmnopqrstuvwxyz1234679", b"bogus");
    // "abcdefghijklmnopqrstuvwxyz123 1\0": 32 bytes, the longest header git reads.
    let fits = literally("abcdefghijklmnopqrstuvwxyz123", b"x");
    let input = format!("{}\n{long}\n{}\n", good[0], good[1]);
    for args in [
        &["--batch-check"][..],
        &["--batch"],
        &["--batch-check", "--buffer"],
        &["--batch-check=%(objectname) %(objecttype)"],
    ] {
        let err = same_answers(r, args, input.as_bytes());
        assert!(err.contains("header too long, exceeds 32 bytes"), "{err}");
    }
    let input = format!("{}\n{fits}\n", good[0]);
    let (out, err, code) = odb_run(r, &["--batch-check"], input.as_bytes());
    assert_eq!((code, err.as_str()), (Some(128), "fatal: invalid object type\n"));
    assert_eq!(out, git_run(r, &["--batch-check"], input.as_bytes()).0);
}

/// git's t5319.94 (`odb_index_testkit::t5319_cleared_large_offsets`: a multi-pack-index whose `LOFF` chunk is
/// emptied, over an `.idx` whose entry for that object is past its pack's end): git answers the objects before
/// it, then dies at it, `fatal: multi-pack-index large offset out of bounds`, exit 128, whatever the format
/// (`%(objectname)` alone too, except under `--batch-all-objects`, where git looks nothing up), sorted or
/// `--unordered`, asked for or listed. The command printed `<id> error <the multi-pack-index>: ...` and went on,
/// exit 0.
#[test]
fn an_emptied_large_offset_chunk_is_fatal_at_its_object_as_git_t5319_94() {
    let (repo, bad) = odb_index_testkit::t5319_cleared_large_offsets();
    let r = repo.path();
    let ids = all_objects(r);
    let at = ids.iter().position(|i| *i == bad).unwrap();
    assert!(at > 0 && at + 1 < ids.len());
    let asked = format!("{}
{bad}
{}
", ids[at - 1], ids[at + 1]);
    for format in [
        "--batch-check",
        "--batch",
        "--batch-check=%(objectsize)",
        "--batch-check=%(objecttype)",
        "--batch-check=%(objectname)",
        "--batch-check=%(objectsize:disk)",
    ] {
        let mut runs = vec![
            (vec![format], asked.as_str()),
            (vec![format, "--buffer"], asked.as_str()),
        ];
        let disk = format.ends_with("%(objectsize:disk)");
        if format != "--batch-check=%(objectname)" && !disk {
            runs.push((vec![format, "--batch-all-objects"], ""));
        }
        if format != "--batch-check=%(objectname)" {
            // `--unordered` (and `%(objectsize:disk)` of the listed objects): git walks the pack in the order
            // of its `.rev` (written before the `.idx` was corrupted, so git finds no object at some offsets
            // and answers `missing` there) and dies at the object's `.idx` entry ("offset beyond end of
            // packfile"); the command follows the `.idx`'s offsets, where the object comes last. Both die,
            // having answered the others they reached first.
            let mut listed = vec![(vec![format, "--batch-all-objects", "--unordered"], !disk)];
            if disk {
                listed.push((vec![format, "--batch-all-objects"], false));
            }
            for (args, same_lines) in listed {
                let (git_out, _, git_code) = git_run(r, &args, b"");
                let (out, err, code) = odb_run(r, &args, b"");
                assert_eq!((code, git_code), (Some(128), Some(128)), "{args:?}");
                assert!(err.contains("\nfatal: ") || err.starts_with("fatal: "), "{err}");
                let (git_out, out) = (String::from_utf8(git_out).unwrap(), String::from_utf8(out).unwrap());
                assert!(!out.contains(&bad), "{out}");
                let ours: std::collections::HashSet<&str> = out.lines().collect();
                if same_lines {
                    assert!(git_out.lines().all(|l| ours.contains(l)), "{args:?}: {out}");
                }
            }
        }
        for (args, input) in runs {
            let err = same_answers(r, &args, input.as_bytes());
            assert!(
                err.ends_with("fatal: multi-pack-index large offset out of bounds\n"),
                "{args:?}: {err}"
            );
        }
    }
    // Listed, not looked up: all 63, exit 0.
    let err = same_answers(
        r,
        &["--batch-all-objects", "--batch-check=%(objectname)"],
        b"",
    );
    assert_eq!(err, "");
}
