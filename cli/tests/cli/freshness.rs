//! Issue 28, 1: a loose file found by the lookup and gone when the command opened it (`repack -d` packed the
//! object and pruned the file in between) was answered `missing`. The first `open` of that one file is made to
//! fail with "No such file" by strace's fault injection (deterministic: no timing), as if git had just removed
//! it; the command looks the object up again and answers as git does. Also `--loose cached` across a
//! loose-to-pack move, the reproduction of issue 28, 2, with git as the control.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use odb_index_testkit::{git, init_repo};

use super::BIN;

/// A repository with a packed commit and a loose one; the loose commit's id.
fn packed_then_loose(p: &Path) -> String {
    for (f, c) in [("a", "a\n"), ("b", "b\n")] {
        std::fs::write(p.join(f), c).unwrap();
        git(p, &["add", f]);
        git(p, &["commit", "-qm", f]);
        if f == "a" {
            git(p, &["repack", "-adq"]);
        }
    }
    git(p, &["rev-parse", "HEAD"]).trim().to_owned()
}

pub(super) fn have_strace() -> bool {
    Command::new("strace")
        .args(["-qq", "-o", "/dev/null", "true"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_loose_file_gone_when_it_is_opened_is_looked_up_again() {
    if !have_strace() {
        // strace is in the machine image this project runs on (docs/RELIABILITY.md); say so if it is missing.
        eprintln!("SKIPPED: strace is not available here");
        return;
    }
    let repo = init_repo("sha1", false);
    let p = repo.path();
    let x = packed_then_loose(p);
    let loose = p.join(".git/objects").join(&x[..2]).join(&x[2..]);
    let control = {
        let mut c = Command::new("git")
            .args(["cat-file", "--batch-check"])
            .current_dir(p)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin
            .take()
            .unwrap()
            .write_all(format!("{x}\n").as_bytes())
            .unwrap();
        String::from_utf8(c.wait_with_output().unwrap().stdout).unwrap()
    };
    for format in [&[][..], &["--batch"][..]] {
        let out = Command::new("strace")
            .args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=open,openat"])
            .arg("-P")
            .arg(&loose)
            .args(["-e", "inject=open,openat:error=ENOENT:when=1"])
            .arg(BIN)
            .arg("batch-check")
            .args(format)
            .arg(p)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                c.stdin
                    .take()
                    .unwrap()
                    .write_all(format!("{x}\n").as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{format:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            stdout.lines().next().unwrap_or(""),
            control.trim_end(),
            "{format:?}: the first open failed with ENOENT; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `(echo $X; git repack -adq; echo $X) | odb-index batch-check --loose cached`: both answers are git's (the
/// second was `missing`, and `loose` with a location format, for the rest of the process).
#[test]
fn loose_cached_answers_an_object_moved_into_a_pack() {
    let repo = init_repo("sha1", false);
    let p = repo.path();
    let x = packed_then_loose(p);
    for format in ["--batch-check", "--batch-check=%(objectname) %(objecttype)"] {
        let mut c = Command::new(BIN)
            .args(["batch-check", "--loose", "cached", format])
            .arg(p)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = c.stdin.take().unwrap();
        let mut stdout = BufReader::new(c.stdout.take().unwrap());
        let mut first = String::new();
        writeln!(stdin, "{x}").unwrap();
        stdin.flush().unwrap();
        stdout.read_line(&mut first).unwrap();
        git(p, &["repack", "-adq"]);
        let mut second = String::new();
        writeln!(stdin, "{x}").unwrap();
        drop(stdin);
        stdout.read_line(&mut second).unwrap();
        assert!(c.wait().unwrap().success());
        assert_eq!(first, second, "{format}: before and after the move");
        assert!(!second.contains("missing"), "{format}: {second}");
    }
}
