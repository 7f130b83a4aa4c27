//! Issue 38: every answer as right as the lookup, in every mode, when git moves objects between a lookup and the
//! read of its file, and from another copy where the first is corrupt (git's t5303). git is the control.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use odb_index_testkit::{git, git_stdin, init_repo};

use super::{BIN, odb};

/// A work tree with `n` commits, each of one new file, packed into one pack per commit; every object's id.
fn commits_in_packs(p: &Path, n: usize) -> Vec<String> {
    for i in 0..n {
        std::fs::write(p.join(format!("f{i}")), format!("{i}\n")).unwrap();
        git(p, &["add", &format!("f{i}")]);
        git(p, &["commit", "-qm", &format!("c{i}")]);
        git(p, &["repack", "-dq"]);
    }
    odb_index_testkit::all_objects(p)
}

/// git's answers to `input` (`cat-file` with `args`).
fn git_answers(p: &Path, args: &[&str], input: &str) -> String {
    let mut a = vec!["cat-file"];
    a.extend_from_slice(args);
    git_stdin(p, &a, input.as_bytes())
}

/// Issue 38, 1: the batch modes after a repack replaced the packs the batch's handle had loaded, while the same
/// batch's abbreviated name moved the reader's own handle to the new listing (before: `<id> error pack
/// PackId(0) is no longer in the repository (refresh and locate again)` for every id after the name).
#[test]
fn batches_after_a_repack_answer_as_git() {
    for mode in [
        &["--threads", "2"][..],
        &["--buffer"][..],
        &["--threads", "2", "--buffer"][..],
        &[][..],
    ] {
        let repo = init_repo("sha1", false);
        let p = repo.path();
        let ids = commits_in_packs(p, 5);
        // The first batch: under --buffer a full one (4 096 lines), so that it is answered before the input ends.
        let first: Vec<&String> = ids.iter().cycle().take(4096).collect();
        let first_len = if mode.contains(&"--buffer") {
            first.len()
        } else {
            1
        };
        let mut child = Command::new(BIN)
            .arg("batch-check")
            .args(mode)
            .arg(p)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        for id in &first[..first_len] {
            writeln!(stdin, "{id}").unwrap();
        }
        stdin.flush().unwrap();
        let mut line = String::new();
        for _ in 0..first_len {
            line.clear();
            stdout.read_line(&mut line).unwrap();
            assert!(
                line.ends_with(" blob 2\n") || !line.contains("error"),
                "{mode:?}: {line}"
            );
        }
        git(p, &["repack", "-adfq"]);
        // An abbreviated name first (it moves the reader's handle to the new listing), then every id.
        let mut second = format!("{}\n", &ids[1][..10]);
        for id in &ids {
            second.push_str(&format!("{id}\n"));
        }
        stdin.write_all(second.as_bytes()).unwrap();
        drop(stdin);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
        assert!(child.wait().unwrap().success());
        assert_eq!(
            rest,
            git_answers(p, &["--batch-check"], &second),
            "{mode:?}: the answers after the repack"
        );
        assert!(!rest.contains("PackId"), "{mode:?}: a stale pack id shown");
    }
}

/// Issue 38, 3: a format whose only atom reads the file (`%(objectsize:disk)`), and the same with
/// `%(deltabase)`, when the loose file found by the lookup is gone when it is opened (strace makes its first
/// open fail with "No such file", as if git had just pruned it; before: `<id> error ... No such file or
/// directory`).
#[test]
fn disk_size_alone_of_a_file_gone_since_the_lookup_answers_as_git() {
    if !super::freshness::have_strace() {
        eprintln!("SKIPPED: strace is not available here");
        return;
    }
    let repo = init_repo("sha1", false);
    let p = repo.path();
    std::fs::write(p.join("a"), "a\n").unwrap();
    let x = git(p, &["hash-object", "-w", "a"]).trim().to_owned();
    let loose = p.join(".git/objects").join(&x[..2]).join(&x[2..]);
    for format in [
        "--batch-check=%(objectsize:disk)",
        "--batch-check=%(objectsize:disk) %(deltabase)",
    ] {
        for mode in [&[][..], &["--buffer"][..], &["--threads", "2"][..]] {
            let mut args = vec![format];
            args.extend_from_slice(mode);
            assert_eq!(
                with_opens_failing(p, &loose, "1", &args, &format!("{x}\n")),
                git_answers(p, &[format], &format!("{x}\n")),
                "{format} {mode:?}"
            );
        }
    }
}

/// The offset of `id` in the pack whose `.idx` is `idx` (git show-index).
fn offset_in(p: &Path, idx: &Path, id: &str) -> u64 {
    let data = std::fs::read(idx).unwrap();
    git_stdin(p, &["show-index"], &data)
        .lines()
        .find(|l| l.split(' ').nth(1) == Some(id))
        .and_then(|l| l.split(' ').next()?.parse().ok())
        .expect("listed")
}

/// Issue 38, 6 (git's t5303): a pack entry whose data is corrupt, where the object has another copy (in
/// another pack, or loose): git answers from that copy, and so does the command (before: `<id> error <pack>:
/// cannot decode the entry ...`). Without another copy, still an error line, never a wrong answer.
#[test]
fn a_corrupt_pack_entry_is_read_from_another_copy_as_git() {
    for other in ["pack", "loose", "none"] {
        let repo = init_repo("sha1", true);
        let p = repo.path();
        let blob = "a blob long enough to have some compressed bytes worth corrupting\n".repeat(8);
        let x = git_stdin(p, &["hash-object", "-w", "--stdin"], blob.as_bytes())
            .trim()
            .to_owned();
        let loose = p.join("objects").join(&x[..2]).join(&x[2..]);
        let saved = std::fs::read(&loose).unwrap();
        let name = git_stdin(
            p,
            &["pack-objects", "-q", "objects/pack/pack"],
            x.as_bytes(),
        );
        let pack = p.join(format!("objects/pack/pack-{}.pack", name.trim()));
        let idx = pack.with_extension("idx");
        std::fs::remove_file(&loose).unwrap();
        // Corrupt the entry's zlib data (past its 2-byte header and the stream's 2-byte header).
        let at = offset_in(p, &idx, &x) as usize + 6;
        let mut data = std::fs::read(&pack).unwrap();
        for b in &mut data[at..at + 8] {
            *b ^= 0x5a;
        }
        std::fs::write(&pack, &data).unwrap();
        match other {
            "pack" => {
                // Another pack with the object, older than the corrupt one (listed after it).
                std::fs::write(&loose, &saved).unwrap();
                let n2 = git_stdin(
                    p,
                    &["pack-objects", "-q", "objects/pack/other"],
                    x.as_bytes(),
                );
                std::fs::remove_file(&loose).unwrap();
                for ext in ["pack", "idx"] {
                    let f = p.join(format!("objects/pack/other-{}.{ext}", n2.trim()));
                    let st = Command::new("touch")
                        .args(["-d", "2001-01-01"])
                        .arg(&f)
                        .status()
                        .unwrap();
                    assert!(st.success());
                }
            }
            "loose" => std::fs::write(&loose, &saved).unwrap(),
            _ => {}
        }
        let input = format!("{x}\n");
        for mode in [&[][..], &["--buffer"][..], &["--threads", "2"][..]] {
            let mut args = vec!["batch-check", "--batch"];
            args.extend_from_slice(mode);
            let path = p.to_str().unwrap();
            args.push(path);
            let out = odb(&args, input.as_bytes());
            let got = String::from_utf8_lossy(&out.stdout).into_owned();
            if other == "none" {
                assert!(
                    got.starts_with(&format!("{x} error ")) && got.contains("cannot decode"),
                    "{other} {mode:?}: {got}"
                );
            } else {
                assert_eq!(
                    got,
                    git_answers(p, &["--batch"], &input),
                    "{other} {mode:?}"
                );
                assert_eq!(got, format!("{x} blob {}\n{blob}\n", blob.len()));
            }
        }
    }
}

/// `odb-index batch-check <args> <repo>` on `input` under strace, the opens of `path` failing with "No such file"
/// as `when` says (strace's syntax: `2..4`, the second to the fourth; `2+`, every one from the second).
fn with_opens_failing(repo: &Path, path: &Path, when: &str, args: &[&str], input: &str) -> String {
    let out = Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=open,openat"])
        .arg("-P")
        .arg(path)
        .args([
            "-e",
            &format!("inject=open,openat:error=ENOENT:when={when}"),
        ])
        .arg(BIN)
        .arg("batch-check")
        .args(args)
        .arg(repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(input.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Issue 38, 10: the object's file found gone again when it is read at the place the first relocation answered
/// (git replacing the pack twice within one answer): located and read again, as often as `MAX_MOVES` allows
/// (before: one retry, then an error line); past that an error naming the objects directory, never a pack id.
#[test]
fn a_pack_gone_again_during_the_retry_is_located_again() {
    if !super::freshness::have_strace() {
        eprintln!("SKIPPED: strace is not available here");
        return;
    }
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let x = git_stdin(p, &["hash-object", "-w", "--stdin"], b"x\n")
        .trim()
        .to_owned();
    let name = git_stdin(
        p,
        &["pack-objects", "-q", "objects/pack/pack"],
        x.as_bytes(),
    );
    let pack = p.join(format!("objects/pack/pack-{}.pack", name.trim()));
    std::fs::remove_file(p.join("objects").join(&x[..2]).join(&x[2..])).unwrap();
    let input = format!("{x}\n");
    for args in [&[][..], &["--batch"][..], &["--buffer"][..]] {
        // The store opens the `.pack` once as it loads its index (the first open); the reads' opens come after:
        // the first read's and two retries' fail.
        let got = with_opens_failing(p, &pack, "2..4", args, &input);
        let mut a = vec!["cat-file"];
        a.extend_from_slice(if args == ["--batch"] {
            &["--batch"][..]
        } else {
            &["--batch-check"][..]
        });
        assert_eq!(got, git_stdin(p, &a, input.as_bytes()), "{args:?}");
        // Gone at every read: the answer gives up after `MAX_MOVES` relocations, naming the directory.
        let got = with_opens_failing(p, &pack, "2+", args, &input);
        assert!(
            got.starts_with(&format!("{x} error ")) && got.contains("moved 4 times"),
            "{args:?}: {got}"
        );
        assert!(!got.contains("PackId"), "{args:?}: {got}");
    }
}
