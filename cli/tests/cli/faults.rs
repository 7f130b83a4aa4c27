//! The command under faults (docs/RELIABILITY.md, "The command under faults"): the built binary, run with
//! `ODB_INDEX_FAULT=CALL:N:ERRNO[:always]` (the seam `odb_index::fault`), answers as git does or reports an
//! error for what it could not answer; never a silent `missing`, never a panic, never a hang. git is the control
//! (`git cat-file` on the same input, without a fault).
//!
//! The rule for one run, per answer (input line, or listed object under `--batch-all-objects`):
//! - git's answer, byte for byte (the contents too under `--batch`): held;
//! - `<name> error <message>` on stdout, or `<name> missing` with an `error:` line naming it on stderr (git's
//!   form): reported;
//! - anything else (a `missing` for an object git finds, with nothing or only a warning on stderr; another
//!   type, size or contents): a failure.
//!
//! A run that stops (exit status 128, git's `fatal:`, or 2, the command's own `odb-index: ...` line) is reported
//! if what it printed before is held or reported by the same rule; a panic (101, 134, a signal) or a run that
//! does not end is a failure.

use super::*;

use std::time::SystemTime;

pub(crate) use odb_index::fault::{Call, FIRED_PREFIX};

/// How long one run may take before it counts as a hang (a repository of a few hundred objects: the command
/// takes milliseconds).
pub(crate) const HANG: Duration = Duration::from_secs(60);

/// The call positions walked at most per call kind, errno and mode.
pub(crate) const MAX_POSITIONS: u64 = 64;

/// A repository with every place an object or a name can come from: two packs from fast-import and one from a
/// repack, a multi-pack-index over two of them, loose objects, an alternate (with a pack and loose objects of
/// its own), loose and packed refs, a tag and a symbolic ref. Returns it and the alternate (kept alive).
pub(crate) fn fault_repo() -> (tempfile::TempDir, tempfile::TempDir) {
    let alt = init_repo("sha1", true);
    fast_import_blobs(alt.path(), 20, 71, "alt");
    add_loose(alt.path(), 3, "alternate");
    let repo = init_repo("sha1", false);
    let r = repo.path();
    std::fs::write(r.join("a"), "a\n").unwrap();
    std::fs::create_dir(r.join("d")).unwrap();
    std::fs::write(r.join("d/b"), "b\n").unwrap();
    git(r, &["add", "a", "d/b"]);
    git(r, &["commit", "-qm", "one"]);
    git(r, &["repack", "-adq"]);
    fast_import_blobs(r, 30, 72, "p1");
    fast_import_blobs(r, 30, 73, "p2");
    git(r, &["multi-pack-index", "write"]);
    std::fs::write(r.join("a"), "a two\n").unwrap();
    git(r, &["commit", "-qam", "two"]);
    add_loose(r, 4, "fault");
    git(r, &["tag", "-a", "-m", "t", "t1", "HEAD~1"]);
    git(r, &["pack-refs", "--all"]);
    git(r, &["branch", "loose-branch", "HEAD~1"]);
    git(r, &["symbolic-ref", "refs/heads/sym", "refs/heads/main"]);
    let info = objects_dir(r).join("info");
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(
        info.join("alternates"),
        format!("{}\n", objects_dir(alt.path()).display()),
    )
    .unwrap();
    (repo, alt)
}

/// Set the modification time of the objects directories of `repos` and of every directory in them to `t`.
pub(crate) fn set_dirs_mtime(repos: &[&std::path::Path], t: SystemTime) {
    for repo in repos {
        odb_index_testkit::set_objects_dirs_mtime(repo, t);
    }
}

/// A mode of the command: its options and what it reads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mode {
    pub(crate) name: &'static str,
    pub(crate) args: &'static [&'static str],
    /// `--batch`: contents follow each line.
    pub(crate) contents: bool,
    /// Standard input: object ids (and absent ones), or names, or nothing (`--batch-all-objects`).
    pub(crate) input: Input,
    /// Run with the objects directories timestamped in the future, as in a repository younger than its
    /// timestamps' resolution: every listing is too recent to trust, so a miss lists again.
    pub(crate) racy: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Input {
    Ids,
    Names,
    All,
}

pub(crate) const MODES: [Mode; 9] = [
    Mode {
        name: "default",
        args: &[],
        contents: false,
        input: Input::Ids,
        racy: false,
    },
    Mode {
        name: "--buffer",
        args: &["--buffer"],
        contents: false,
        input: Input::Ids,
        racy: false,
    },
    Mode {
        name: "--threads 2",
        args: &["--threads", "2"],
        contents: false,
        input: Input::Ids,
        racy: false,
    },
    Mode {
        name: "--batch",
        args: &["--batch"],
        contents: true,
        input: Input::Ids,
        racy: false,
    },
    Mode {
        name: "--batch-all-objects",
        args: &["--batch-all-objects"],
        contents: false,
        input: Input::All,
        racy: false,
    },
    Mode {
        name: "names",
        args: &[],
        contents: false,
        input: Input::Names,
        racy: false,
    },
    Mode {
        name: "names --batch",
        args: &["--batch"],
        contents: true,
        input: Input::Names,
        racy: false,
    },
    Mode {
        name: "--no-events",
        args: &["--no-events"],
        contents: false,
        input: Input::Ids,
        racy: false,
    },
    // Issue 47, found by CI in the first second of the matrix: a handle moved to a listing another thread's
    // re-listing made, whose loose sources it had not probed (`store::edge_tests` has it deterministic).
    Mode {
        name: "--threads 2 racy",
        args: &["--threads", "2"],
        contents: false,
        input: Input::Ids,
        racy: true,
    },
];

/// The names git reads beyond hex ids, each naming an object of [`fault_repo`].
pub(crate) const NAMES: [&str; 9] = [
    "HEAD",
    "main",
    "HEAD~1",
    "HEAD:a",
    "HEAD:d/b",
    "sym",
    "t1",
    "heads/loose-branch",
    "t1^{commit}",
];

/// One answer: the line, and the contents under `--batch`.
pub(crate) type Record = (String, Vec<u8>);

/// Split `out` into answers: a line, and if `contents` and the line is `<id> <type> <size>`, that many bytes
/// and a newline. A cut-off last answer is kept as far as it goes.
pub(crate) fn records(out: &[u8], contents: bool) -> Vec<Record> {
    let mut rs = Vec::new();
    let mut rest = out;
    while !rest.is_empty() {
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let line = String::from_utf8_lossy(&rest[..end]).into_owned();
        rest = &rest[(end + 1).min(rest.len())..];
        let words: Vec<&str> = line.split(' ').collect();
        let size = match words[..] {
            [_, "blob" | "tree" | "commit" | "tag", size] if contents => size.parse().ok(),
            _ => None,
        };
        let data = match size {
            Some(n) => {
                let n = usize::min(n, rest.len());
                let d = rest[..n].to_vec();
                rest = &rest[(n + 1).min(rest.len())..];
                d
            }
            None => Vec::new(),
        };
        rs.push((line, data));
    }
    rs
}

/// A fixture, its inputs and git's answers to them in every mode.
pub(crate) struct Control {
    pub(crate) repo: tempfile::TempDir,
    alt: tempfile::TempDir,
    pub(crate) ids: Vec<u8>,
    names: Vec<u8>,
}

impl Control {
    pub(crate) fn new() -> Control {
        let (repo, alt) = fault_repo();
        let r = repo.path();
        let mut ids = git(
            r,
            &[
                "cat-file",
                "--batch-all-objects",
                "--batch-check=%(objectname)",
            ],
        );
        for absent in absent_ids(3, 40, 47) {
            ids.push_str(&absent);
            ids.push('\n');
        }
        let names: String = NAMES.iter().map(|n| format!("{n}\n")).collect();
        // At rest: no listing too recent to trust (a run's answers must not depend on how long ago the fixture
        // was made; the racy mode asks for that explicitly).
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        set_dirs_mtime(&[r, alt.path()], hour_ago);
        Control {
            repo,
            alt,
            ids: ids.into_bytes(),
            names: names.into_bytes(),
        }
    }

    fn input(&self, mode: &Mode) -> &[u8] {
        match mode.input {
            Input::Ids => &self.ids,
            Input::Names => &self.names,
            Input::All => b"",
        }
    }

    /// git's answers in `mode`.
    pub(crate) fn git(&self, mode: &Mode) -> Vec<Record> {
        let mut args = vec!["cat-file"];
        args.push(if mode.contents {
            "--batch"
        } else {
            "--batch-check"
        });
        if mode.input == Input::All {
            args.push("--batch-all-objects");
        }
        let mut c = odb_index_testkit::git_cmd(self.repo.path());
        c.args(&args);
        let out = run_with_stdin(c, self.input(mode));
        assert!(out.status.success(), "git {args:?}: {out:?}");
        records(&out.stdout, mode.contents)
    }
}

/// What one run of the command did.
pub(crate) struct Run {
    pub(crate) status: Option<i32>,
    pub(crate) stdout: Vec<u8>,
    pub(crate) stderr: String,
    pub(crate) hung: bool,
}

impl Run {
    pub(crate) fn fired(&self) -> bool {
        self.stderr.lines().any(|l| l.starts_with(FIRED_PREFIX))
    }
}

/// Run the command in `mode` on `control`'s repository with `fault` (`ODB_INDEX_FAULT`, none if empty) and
/// `env`; a run still going after [`HANG`] is killed.
pub(crate) fn run(control: &Control, mode: &Mode, fault: &str, env: &[(&str, &str)]) -> Run {
    let repos = [control.repo.path(), control.alt.path()];
    if mode.racy {
        set_dirs_mtime(&repos, SystemTime::now() + Duration::from_secs(3600));
    }
    let r = run_once(control, mode, fault, env);
    if mode.racy {
        set_dirs_mtime(&repos, SystemTime::now() - Duration::from_secs(3600));
    }
    r
}

/// [`run`] once, the directories' timestamps as they are.
fn run_once(control: &Control, mode: &Mode, fault: &str, env: &[(&str, &str)]) -> Run {
    let mut c = Command::new(BIN);
    c.arg("batch-check")
        .args(mode.args)
        .arg(control.repo.path());
    if !fault.is_empty() {
        c.env("ODB_INDEX_FAULT", fault);
    }
    c.envs(env.iter().copied());
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut si = child.stdin.take().unwrap();
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let input = control.input(mode).to_vec();
    let writer = std::thread::spawn(move || {
        let _ = si.write_all(&input);
    });
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let (done, wait) = mpsc::channel();
    let id = child.id();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = done.send(());
        status
    });
    let hung = wait.recv_timeout(HANG).is_err();
    if hung {
        // The child is ours: ended by its process id.
        let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
    }
    let status = waiter.join().unwrap().unwrap();
    writer.join().unwrap();
    Run {
        status: status.code(),
        stdout: out.join().unwrap(),
        stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
        hung,
    }
}

/// How one run ended, by the rule of the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Verdict {
    /// Every answer git's.
    Held,
    /// Some answer replaced by an error reported for it, or the run stopped with a fatal error.
    Reported,
    /// A failure (the reason is returned beside it).
    Failed,
}

/// Judge `run` against git's `want` answers.
pub(crate) fn judge(run: &Run, want: &[Record], mode: &Mode) -> (Verdict, String) {
    if run.hung {
        return (Verdict::Failed, "did not end".into());
    }
    let Some(status) = run.status else {
        return (Verdict::Failed, "killed by a signal".into());
    };
    if status != 0 && status != 128 && status != 2 {
        return (Verdict::Failed, format!("exit status {status}"));
    }
    let got = records(&run.stdout, mode.contents);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    // An answer for `name` (git's `want`) that is not git's: reported, or a failure.
    let replaced = |name: &str, line: &str| -> Result<(), String> {
        if line.starts_with(&format!("{name} error ")) {
            return Ok(());
        }
        if line == format!("{name} missing") && errors.iter().any(|e| e.contains(name)) {
            return Ok(());
        }
        Err(format!("{line:?} where git answers for {name}"))
    };
    let mut reported = status != 0;
    if status != 0
        && !run.stderr.lines().any(|l| {
            l.starts_with("fatal:") || l.starts_with("odb-index: ") && !l.contains("warning:")
        })
    {
        return (
            Verdict::Failed,
            format!("exit status {status} without an error line"),
        );
    }
    if mode.input == Input::All {
        // Listed objects: matched by id (the first word).
        let by_id: HashMap<&str, &Record> = want
            .iter()
            .map(|r| (r.0.split(' ').next().unwrap(), r))
            .collect();
        for g in &got {
            let id = g.0.split(' ').next().unwrap();
            match by_id.get(id) {
                Some(w) if *w == g => {}
                Some(_) => match replaced(id, &g.0) {
                    Ok(()) => reported = true,
                    Err(e) => return (Verdict::Failed, e),
                },
                None => return (Verdict::Failed, format!("{:?} is not listed by git", g.0)),
            }
        }
        if status == 0 && got.len() != want.len() {
            return (
                Verdict::Failed,
                format!("{} objects listed, git lists {}", got.len(), want.len()),
            );
        }
    } else {
        if got.len() > want.len() || (status == 0 && got.len() != want.len()) {
            return (
                Verdict::Failed,
                format!("{} answers for {} lines", got.len(), want.len()),
            );
        }
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            if g != w {
                // An answer that is not found is printed under the name asked for.
                let name = match mode.input {
                    Input::Names => NAMES[i],
                    _ => w.0.split(' ').next().unwrap(),
                };
                match replaced(name, &g.0) {
                    Ok(()) => reported = true,
                    Err(e) => return (Verdict::Failed, e),
                }
            }
        }
    }
    let verdict = if reported {
        Verdict::Reported
    } else {
        Verdict::Held
    };
    (verdict, String::new())
}

/// Counts of one row of the table: runs (the fault fired), held, reported, failed.
#[derive(Default, Debug, Clone, Copy)]
pub(crate) struct Row {
    pub(crate) runs: u64,
    pub(crate) held: u64,
    pub(crate) reported: u64,
    pub(crate) failed: u64,
}

/// Walk positions 1, 2, ... of `call` failing with `errno` (once, or from then on with `always`) in `mode`
/// until the fault no longer fires (at most [`MAX_POSITIONS`]); each run judged. Returns the row and the
/// failures (`ODB_INDEX_FAULT` value and reason).
pub(crate) fn walk(
    control: &Control,
    want: &[Record],
    mode: &Mode,
    call: Call,
    errno: &str,
    always: bool,
) -> (Row, Vec<String>) {
    let mut row = Row::default();
    let mut failures = Vec::new();
    for n in 1..=MAX_POSITIONS {
        let fault = format!(
            "{}:{n}:{errno}{}",
            call.name(),
            if always { ":always" } else { "" }
        );
        let r = run(control, mode, &fault, &[]);
        if !r.fired() && !r.hung {
            break;
        }
        row.runs += 1;
        match judge(&r, want, mode) {
            (Verdict::Held, _) => row.held += 1,
            (Verdict::Reported, _) => row.reported += 1,
            (Verdict::Failed, why) => {
                row.failed += 1;
                let err: String = r
                    .stderr
                    .lines()
                    .filter(|l| !l.starts_with(FIRED_PREFIX))
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" | ");
                failures.push(format!("{} {fault}: {why} (stderr: {err})", mode.name));
            }
        }
    }
    (row, failures)
}

/// Run the matrix over `modes` x `errnos` x every call kind (and `always` faults if asked), print the table,
/// and fail listing every failed run.
pub(crate) fn matrix(modes: &[Mode], errnos: &[&str], always: &[bool]) {
    let control = Control::new();
    let mut failures = Vec::new();
    let mut table = Vec::new();
    for mode in modes {
        let want = control.git(mode);
        // Without a fault: git's answers exactly.
        let clean = run(&control, mode, "", &[]);
        assert_eq!(
            judge(&clean, &want, mode).0,
            Verdict::Held,
            "{}: {}",
            mode.name,
            clean.stderr
        );
        for &errno in errnos {
            for call in Call::ALL {
                for &a in always {
                    let (row, f) = walk(&control, &want, mode, call, errno, a);
                    failures.extend(f);
                    table.push((mode.name, call.name(), errno, a, row));
                }
            }
        }
    }
    println!(
        "{:<20} {:<8} {:<7} {:<6} {:>5} {:>5} {:>9} {:>6}",
        "mode", "call", "errno", "always", "runs", "held", "reported", "failed"
    );
    for (mode, call, errno, a, r) in &table {
        println!(
            "{mode:<20} {call:<8} {errno:<7} {:<6} {:>5} {:>5} {:>9} {:>6}",
            if *a { "yes" } else { "no" },
            r.runs,
            r.held,
            r.reported,
            r.failed
        );
    }
    assert!(
        failures.is_empty(),
        "{} failed runs:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The short form (in the README's test command): one-shot EIO at every position of every call kind, in the
/// default mode and under `--batch-all-objects`.
#[test]
fn one_failed_call_is_answered_as_git_or_reported() {
    matrix(&[MODES[0], MODES[4], MODES[5]], &["EIO"], &[false]);
}

/// The full matrix: every mode, every errno class, one-shot and lasting faults (`.ci/run`; minutes).
#[test]
#[ignore = "the full fault matrix: minutes; run by .ci/run"]
fn every_failed_call_in_every_mode_is_answered_as_git_or_reported() {
    matrix(
        &MODES,
        &["EIO", "EMFILE", "ENOMEM", "EINTR", "EACCES"],
        &[false, true],
    );
}
