//! Integration tests of the `odb-index` command, checked against the real `git`.
#![cfg(not(any(loom, shuttle)))]
// .clippy.toml's rules (the facade, the guarded read, 80-line functions) are for the shipped code, not tests.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::too_many_lines
)]

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use odb_index_testkit::{
    absent_ids, all_objects, fast_import_blobs, git, git_stdin, idx_files, init_repo,
    loose_names_that_are_not_objects, objects_dir, show_index,
};

mod answers;
mod as_git;
mod as_git_reads;
mod as_git_repos;
mod differences;
mod errors;
mod fault_cases;
mod faults;
mod flapping;
mod formats;
mod freshness;
mod git_identity;
mod listing;
mod maintenance;
mod midx_check;
mod modes;
mod names;
mod pack_names;
mod pack_refs;
mod running;
mod unordered;
mod verify;

const BIN: &str = env!("CARGO_BIN_EXE_odb-index");

// ---------------------------------------------------------------------------------------------------------
// Running the command

/// Run `odb-index` with `args`, feeding `stdin` from another thread (the output may fill its pipe before the
/// input is all written).
fn odb<S: AsRef<OsStr>>(args: &[S], stdin: &[u8]) -> Output {
    let mut c = Command::new(BIN);
    c.args(args);
    run_with_stdin(c, stdin)
}

/// Run `c` with `stdin` fed from another thread; its output, whatever its status.
fn run_with_stdin(mut c: Command, stdin: &[u8]) -> Output {
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {:?}: {e}", c.get_program()));
    let mut si = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The command may exit early (an error): its status tells.
        let _ = si.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for the command");
    writer.join().unwrap();
    out
}

/// The format these tests ask for: where each object is, `<id> <pack> <offset>` or `<id> loose ` (the trailing
/// space of a loose answer is removed by [`located`]). The git-identity tests of the default and other formats
/// are in `git_identity.rs`.
const LOCATION: &str = "--batch-check=%(objectname) %(objectpack) %(objectoffset)";

/// Output in [`LOCATION`] format with each line's trailing space (loose objects: empty offset) removed.
fn located(out: &str) -> String {
    out.lines()
        .map(|l| format!("{}\n", l.trim_end_matches(' ')))
        .collect()
}

/// `odb-index batch-check --batch-check=<LOCATION> <flags> <path>` on `input` lines; asserts success and an empty
/// stderr, returns stdout (through [`located`]).
fn batch_check(path: &Path, flags: &[&str], input: &[String]) -> String {
    let mut args: Vec<&OsStr> = vec![OsStr::new("batch-check"), OsStr::new(LOCATION)];
    args.extend(flags.iter().map(OsStr::new));
    args.push(path.as_os_str());
    let mut text = input.join("\n");
    text.push('\n');
    let out = odb(&args, text.as_bytes());
    assert!(
        out.status.success(),
        "batch-check {flags:?} {} failed ({}): {}",
        path.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "batch-check {flags:?} wrote to stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    located(&String::from_utf8(out.stdout).expect("batch-check output is UTF-8"))
}

// ---------------------------------------------------------------------------------------------------------
// What git says

/// Where git says every object is.
struct Truth {
    hex_len: usize,
    /// id → every `(pack file name, offset)` that holds it, per `git show-index`.
    packed: HashMap<String, Vec<(String, u64)>>,
    /// Ids that exist as loose object files.
    loose: HashSet<String>,
}

impl Truth {
    fn read(objects: &Path, format: &str) -> Truth {
        let hex_len = if format == "sha256" { 64 } else { 40 };
        let mut packed: HashMap<String, Vec<(String, u64)>> = HashMap::new();
        for idx in idx_files(objects) {
            let pack = pack_name(&idx);
            for (id, off) in show_index(&idx, format) {
                packed.entry(id).or_default().push((pack.clone(), off));
            }
        }
        let mut loose = HashSet::new();
        for e in std::fs::read_dir(objects).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            if name.len() != 2 || !e.path().is_dir() {
                continue;
            }
            for f in std::fs::read_dir(e.path()).unwrap() {
                let f = f.unwrap().file_name().into_string().unwrap();
                if f.len() == hex_len - 2 {
                    loose.insert(format!("{name}{f}"));
                }
            }
        }
        Truth {
            hex_len,
            packed,
            loose,
        }
    }

    /// What git makes of an input line: the full id it names, or the status it prints after the line
    /// (`missing`, `ambiguous`). Hex prefixes of 4 digits or more are abbreviated ids.
    fn resolve(&self, line: &str) -> Result<String, &'static str> {
        if line.len() < 4
            || line.len() > self.hex_len
            || !line.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return Err("missing");
        }
        let prefix = line.to_ascii_lowercase();
        if prefix.len() == self.hex_len {
            let known = self.packed.contains_key(&prefix) || self.loose.contains(&prefix);
            return if known { Ok(prefix) } else { Err("missing") };
        }
        let mut found: Vec<&String> = self
            .packed
            .keys()
            .chain(self.loose.iter())
            .filter(|id| id.starts_with(&prefix))
            .collect();
        found.sort();
        found.dedup();
        match found.as_slice() {
            [] => Err("missing"),
            [one] => Ok((*one).clone()),
            _ => Err("ambiguous"),
        }
    }
}

/// `pack-….idx` → `pack-….pack`.
fn pack_name(idx: &Path) -> String {
    idx.with_extension("pack")
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

/// How the answers are expected to differ from plain lookups.
#[derive(Clone, Copy, PartialEq)]
enum Loose {
    /// Loose objects are found (`--loose probe|cached`).
    Found,
    /// Loose objects are not looked at (`--loose none`).
    Ignored,
}

/// Check `out` line by line against `input`: one answer per line, in order, each agreeing with git.
/// Returns how many answers named each pack (for callers that check coverage).
fn check_answers(
    input: &[String],
    out: &str,
    truth: &Truth,
    loose: Loose,
) -> HashMap<String, usize> {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.len(),
        input.len(),
        "expected one output line per input line"
    );
    assert!(
        out.is_empty() || out.ends_with('\n'),
        "output must end with a newline"
    );
    let mut per_pack: HashMap<String, usize> = HashMap::new();
    for (n, (line, got)) in input.iter().zip(&lines).enumerate() {
        let line = line.trim_end_matches('\r');
        let ctx = || format!("input line {} {line:?}: got {got:?}", n + 1);
        let id = match truth.resolve(line) {
            Ok(id) => id,
            Err(status) => {
                assert_eq!(*got, format!("{line} {status}"), "{}", ctx());
                continue;
            }
        };
        if let Some(places) = truth.packed.get(&id) {
            let rest = got
                .strip_prefix(&format!("{id} "))
                .unwrap_or_else(|| panic!("answer does not start with the id; {}", ctx()));
            let (pack, off) = rest
                .split_once(' ')
                .unwrap_or_else(|| panic!("expected `<id> <pack> <offset>`; {}", ctx()));
            let off: u64 = off
                .parse()
                .unwrap_or_else(|_| panic!("offset is not a number; {}", ctx()));
            assert!(
                places.iter().any(|(p, o)| p == pack && *o == off),
                "{}: git show-index has it at {places:?}",
                ctx()
            );
            *per_pack.entry(pack.to_owned()).or_default() += 1;
        } else if truth.loose.contains(&id) && loose == Loose::Found {
            assert_eq!(*got, format!("{id} loose"), "{}", ctx());
        } else {
            assert_eq!(*got, format!("{line} missing"), "{}", ctx());
        }
    }
    per_pack
}

// ---------------------------------------------------------------------------------------------------------
// Fixtures

/// Write `n` loose blobs with `git hash-object -w --stdin`; returns their ids.
fn add_loose(repo: &Path, n: usize, tag: &str) -> Vec<String> {
    let objects = objects_dir(repo);
    (0..n)
        .map(|i| {
            let content = format!("loose {tag} {i}\n");
            let id = git_stdin(repo, &["hash-object", "-w", "--stdin"], content.as_bytes())
                .trim()
                .to_owned();
            assert!(
                objects.join(&id[..2]).join(&id[2..]).is_file(),
                "hash-object -w did not write {id} loose"
            );
            id
        })
        .collect()
}

/// Make `ids` (blobs) reachable from `refs/heads/<branch>` through a new tree and commit (written loose), so
/// that `git repack` packs them.
fn make_reachable(repo: &Path, ids: &[String], branch: &str) {
    let entries: String = ids
        .iter()
        .enumerate()
        .map(|(i, id)| format!("100644 blob {id}\tf{i}\n"))
        .collect();
    let tree = git_stdin(repo, &["mktree"], entries.as_bytes());
    let commit = git(repo, &["commit-tree", "-m", branch, tree.trim()]);
    git(
        repo,
        &["update-ref", &format!("refs/heads/{branch}"), commit.trim()],
    );
}

/// Three packs (one per `fast_import_blobs`; more than `transfer.unpackLimit` objects each, so they stay
/// packed) and some loose blobs.
fn fixture(format: &str, bare: bool) -> tempfile::TempDir {
    let repo = init_repo(format, bare);
    fast_import_blobs(repo.path(), 300, 1, "one");
    fast_import_blobs(repo.path(), 200, 2, "two");
    fast_import_blobs(repo.path(), 400, 3, "three");
    add_loose(repo.path(), 12, "a");
    assert_eq!(
        idx_files(&objects_dir(repo.path())).len(),
        3,
        "each fast-import should write one pack"
    );
    repo
}

/// Every object git lists, each followed now and then by an absent id: `n_absent` absent ids in all.
fn objects_and_absent(repo: &Path, hex_len: usize, n_absent: usize, seed: u64) -> Vec<String> {
    let objects = all_objects(repo);
    assert!(!objects.is_empty(), "git lists no objects");
    let absent = absent_ids(n_absent, hex_len, seed);
    let mut input = Vec::with_capacity(objects.len() + absent.len());
    let mut a = absent.into_iter();
    let ratio = n_absent.div_ceil(objects.len()).max(1);
    for id in objects {
        input.push(id);
        input.extend(a.by_ref().take(ratio));
    }
    input.extend(a);
    input
}

/// Look every object git lists (plus `n_absent` absent ids) up through `path` and check each answer.
fn check_repo(repo: &Path, format: &str, path: &Path, n_absent: usize) -> HashMap<String, usize> {
    let truth = Truth::read(&objects_dir(repo), format);
    let listed = all_objects(repo);
    for id in &listed {
        assert!(
            truth.packed.contains_key(id) || truth.loose.contains(id),
            "git lists {id}, found neither in an .idx nor loose"
        );
    }
    let input = objects_and_absent(repo, truth.hex_len, n_absent, 7);
    let out = batch_check(path, &[], &input);
    check_answers(&input, &out, &truth, Loose::Found)
}

// ---------------------------------------------------------------------------------------------------------
// 1, 2: lookups agree with git

#[test]
fn sha1_packs_and_loose_agree_with_git() {
    let repo = fixture("sha1", false);
    let per_pack = check_repo(repo.path(), "sha1", repo.path(), 3000);
    assert_eq!(per_pack.len(), 3, "answers should name all three packs");
}

#[test]
fn sha1_after_repack_with_duplicate_and_loose_copies_agrees_with_git() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let objects = objects_dir(r);
    // The loose blobs go into a pack of their own, and the loose files away.
    let first = all_objects(r)
        .into_iter()
        .filter(|id| objects.join(&id[..2]).join(&id[2..]).is_file())
        .collect::<Vec<_>>();
    make_reachable(r, &first, "loose-a");
    git(r, &["repack", "-d", "-q"]);
    let after_d = Truth::read(&objects, "sha1");
    assert!(after_d.loose.is_empty(), "repack -d left loose objects");
    // New loose blobs, then one pack of everything beside the old packs (no -d: every object is now in two
    // packs, and the new loose blobs are both loose and packed).
    let twice = add_loose(r, 8, "b");
    make_reachable(r, &twice, "loose-b");
    git(r, &["repack", "-a", "-q"]);
    let only_loose = add_loose(r, 8, "c");
    let truth = Truth::read(&objects, "sha1");
    assert!(idx_files(&objects).len() >= 5, "expected at least 5 packs");
    for id in &twice {
        assert!(
            truth.loose.contains(id) && truth.packed.contains_key(id),
            "{id} should be loose and packed"
        );
    }
    for id in &only_loose {
        assert!(!truth.packed.contains_key(id));
    }
    assert!(
        truth.packed.values().any(|v| v.len() > 1),
        "some objects should be in several packs"
    );
    check_repo(r, "sha1", r, 3000);
}

#[test]
fn sha256_repository_agrees_with_git() {
    let repo = fixture("sha256", false);
    let per_pack = check_repo(repo.path(), "sha256", repo.path(), 2000);
    assert_eq!(per_pack.len(), 3, "answers should name all three packs");
}

#[test]
fn bare_repository_agrees_with_git() {
    let repo = fixture("sha1", true);
    assert!(
        repo.path().join("objects").is_dir(),
        "not a bare repository"
    );
    check_repo(repo.path(), "sha1", repo.path(), 1000);
}

#[test]
fn path_may_be_the_git_dir_or_the_objects_dir() {
    for format in ["sha1", "sha256"] {
        let repo = fixture(format, false);
        let r = repo.path();
        check_repo(r, format, &r.join(".git"), 500);
        check_repo(r, format, &r.join(".git/objects"), 500);
    }
}

// ---------------------------------------------------------------------------------------------------------
// Shared by the topic modules

/// Run `odb-index verify <path>`; returns (exit code, `file name → Ok(count) | Err(reason)`, stderr).
fn verify(path: &Path) -> (i32, HashMap<String, Result<u64, String>>, String) {
    let out = odb(&[OsStr::new("verify"), path.as_os_str()], b"");
    let code = out.status.code().expect("verify exited by a signal");
    let stdout = String::from_utf8(out.stdout).expect("verify output is UTF-8");
    let mut files = HashMap::new();
    for line in stdout.lines() {
        let (file, result) = if let Some(rest) = line.strip_prefix("ok ") {
            let rest = rest
                .strip_suffix(" objects")
                .unwrap_or_else(|| panic!("bad ok line {line:?}"));
            let (file, n) = rest.rsplit_once(' ').unwrap();
            (file, Ok(n.parse::<u64>().unwrap()))
        } else if let Some(rest) = line.strip_prefix("error ") {
            let (file, reason) = rest
                .split_once(": ")
                .unwrap_or_else(|| panic!("bad error line {line:?}"));
            (file, Err(reason.to_owned()))
        } else {
            panic!("verify printed an unexpected line {line:?}");
        };
        let name = Path::new(file)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        assert!(
            Path::new(file).is_file(),
            "verify names {file}, which is not a file"
        );
        assert!(files.insert(name, result).is_none(), "{file} listed twice");
    }
    (
        code,
        files,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Replace `path` (read-only, like every file in objects/pack) with `data`: write a new file, rename it over.
fn replace_file(path: &Path, data: &[u8]) {
    let tmp = path.with_extension("tmp-odb-index-test");
    std::fs::write(&tmp, data).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Recompute the trailing SHA-1 checksum of an index file after an edit.
fn reseal_sha1(bytes: &mut [u8]) {
    let n = bytes.len() - 20;
    let sum = odb_index::HashKind::Sha1.digest(&bytes[..n]);
    bytes[n..].copy_from_slice(sum.as_bytes());
}

/// How many lines of `a` and `b` differ, position by position.
fn lines_differing(a: &str, b: &str) -> usize {
    a.lines().zip(b.lines()).filter(|(x, y)| x != y).count()
}

/// A running `batch-check`, asked one line at a time.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: mpsc::Receiver<String>,
}

impl Session {
    fn start(path: &Path, flags: &[&str]) -> Session {
        let mut c = Command::new(BIN);
        c.arg("batch-check").arg(LOCATION).args(flags).arg(path);
        Session::spawn(c)
    }

    /// `c` (odb-index or git), asked one line at a time.
    fn spawn(mut c: Command) -> Session {
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {:?}: {e}", c.get_program()));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line.trim_end_matches(' ').to_owned()).is_err() {
                    break;
                }
            }
        });
        Session {
            child,
            stdin,
            answers,
        }
    }

    fn ask(&mut self, line: &str) -> String {
        let si = self.stdin.as_mut().unwrap();
        writeln!(si, "{line}").unwrap();
        si.flush().unwrap();
        // Only a guard against a hang (an unflushed answer would block forever); not a performance bound.
        match self.answers.recv_timeout(Duration::from_secs(120)) {
            Ok(a) => a,
            Err(e) => {
                let _ = self.child.kill();
                panic!("no answer to {line:?} ({e}): is the answer flushed per line?");
            }
        }
    }

    fn finish(mut self) {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert!(status.success(), "batch-check failed: {stderr}");
        assert!(stderr.is_empty(), "stderr: {stderr}");
    }
}

/// ~20k lines: present (packed and loose), absent and invalid, deterministic.
fn mixed_input(repo: &Path, hex_len: usize) -> Vec<String> {
    let objects = all_objects(repo);
    let absent = absent_ids(6000, hex_len, 99);
    let bad = [
        String::new(),
        "0".repeat(hex_len - 1),
        "0".repeat(hex_len + 1),
        "g".repeat(hex_len),
        "x".to_owned(),
    ];
    (0..20_000)
        .map(|i| {
            if i % 10 < 3 {
                absent[(i / 10 * 3 + i % 10) % absent.len()].clone()
            } else if i % 37 == 5 {
                bad[i % bad.len()].clone()
            } else {
                objects[(i * 7919) % objects.len()].clone()
            }
        })
        .collect()
}

fn first_difference(a: &str, b: &str) -> Option<usize> {
    let (a, b): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
    (0..a.len().max(b.len()))
        .find(|&i| a.get(i) != b.get(i))
        .map(|i| i + 1)
}
