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
mod differences;
mod flapping;
mod formats;
mod freshness;
mod git_identity;
mod listing;
mod maintenance;
mod midx_check;
mod names;
mod pack_names;
mod unordered;

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
// 3: multi-pack-index

#[test]
fn multi_pack_index_with_uncovered_packs_agrees_with_git() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let objects = objects_dir(r);
    let idx = idx_files(&objects);
    // Cover two of the three packs, then add a fourth pack after the multi-pack-index.
    let covered: Vec<String> = idx[..2]
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    git_stdin(
        r,
        &["multi-pack-index", "write", "--stdin-packs"],
        format!("{}\n", covered.join("\n")).as_bytes(),
    );
    assert!(objects.join("pack/multi-pack-index").is_file());
    fast_import_blobs(r, 250, 4, "four");
    let all_idx = idx_files(&objects);
    assert_eq!(all_idx.len(), 4);

    let input = objects_and_absent(r, 40, 2000, 11);
    let out = batch_check(r, &[], &input);
    assert!(
        !out.contains("multi-pack-index"),
        "answers must name packs, never the multi-pack-index"
    );
    let truth = Truth::read(&objects, "sha1");
    let per_pack = check_answers(&input, &out, &truth, Loose::Found);
    for idx in &all_idx {
        let name = pack_name(idx);
        assert!(
            per_pack.get(&name).is_some_and(|&n| n > 0),
            "no answer named {name} (covered: {covered:?})"
        );
    }

    // The same after a multi-pack-index over all four, with a fifth pack added after it.
    git(r, &["multi-pack-index", "write"]);
    fast_import_blobs(r, 150, 5, "five");
    let input = objects_and_absent(r, 40, 500, 12);
    let out = batch_check(r, &[], &input);
    assert!(!out.contains("multi-pack-index"));
    let truth = Truth::read(&objects, "sha1");
    let per_pack = check_answers(&input, &out, &truth, Loose::Found);
    assert_eq!(per_pack.len(), 5, "answers should name all five packs");
}

// ---------------------------------------------------------------------------------------------------------
// 4: threads, buffering, refresh and loose modes give the same answers

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

#[test]
fn threads_buffer_and_modes_give_identical_output() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let truth = Truth::read(&objects_dir(r), "sha1");
    let input = mixed_input(r, 40);
    let base = batch_check(r, &[], &input);
    check_answers(&input, &base, &truth, Loose::Found);
    assert!(
        base.lines().any(|l| l.ends_with(" loose")),
        "the input should reach loose objects"
    );
    for flags in [
        &["--threads", "4"][..],
        &["--threads", "3"],
        &["--buffer"],
        &["--buffer", "--threads", "4"],
        &["--no-refresh"],
        &["--no-events"],
        &["--events-after", "0"],
        &["--events-after", "5", "--buffer"],
        &["--loose", "probe"],
        &["--loose", "cached"],
        &["--loose", "cached", "--threads", "4", "--buffer"],
    ] {
        let out = batch_check(r, flags, &input);
        assert!(
            out == base,
            "batch-check {flags:?} differs from the single-threaded output (first difference at line {:?})",
            first_difference(&out, &base)
        );
    }
    // Without loose objects: exactly the loose-only answers change, to `missing`.
    let none = batch_check(r, &["--loose", "none"], &input);
    check_answers(&input, &none, &truth, Loose::Ignored);
    let none4 = batch_check(r, &["--loose", "none", "--threads", "4"], &input);
    assert!(
        none4 == none,
        "--loose none --threads 4 differs (line {:?})",
        first_difference(&none4, &none)
    );
    let changed = base
        .lines()
        .zip(none.lines())
        .filter(|(a, b)| a != b)
        .count();
    let loose_lines = base.lines().filter(|l| l.ends_with(" loose")).count();
    assert_eq!(
        changed, loose_lines,
        "--loose none should change exactly the `loose` answers"
    );
}

/// `--loose none` holds for abbreviated ids too: a prefix of a loose-only object is `missing`, of a packed one
/// still found; `--batch-all-objects` lists no loose object.
#[test]
fn loose_none_applies_to_prefixes_and_listing() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let truth = Truth::read(&objects_dir(r), "sha1");
    let loose: Vec<String> = truth
        .loose
        .iter()
        .filter(|id| !truth.packed.contains_key(*id))
        .cloned()
        .collect();
    let packed = truth.packed.keys().next().unwrap().clone();
    assert!(!loose.is_empty());
    let input: Vec<String> = [&loose[0][..12], &packed[..12]].map(str::to_owned).to_vec();
    let found = batch_check(r, &[], &input);
    assert_eq!(
        found.lines().next(),
        Some(format!("{} loose", loose[0]).as_str())
    );
    let none = batch_check(r, &["--loose", "none"], &input);
    let lines: Vec<&str> = none.lines().collect();
    assert_eq!(lines[0], format!("{} missing", &loose[0][..12]));
    assert!(lines[1].starts_with(&format!("{packed} pack-")), "{none}");
    let all = batch_check(r, &["--loose", "none", "--batch-all-objects"], &[]);
    assert_eq!(all.lines().count(), truth.packed.len());
    assert!(!all.contains(" loose"), "{all}");
}

fn first_difference(a: &str, b: &str) -> Option<usize> {
    let (a, b): (Vec<_>, Vec<_>) = (a.lines().collect(), b.lines().collect());
    (0..a.len().max(b.len()))
        .find(|&i| a.get(i) != b.get(i))
        .map(|i| i + 1)
}

// ---------------------------------------------------------------------------------------------------------
// 5: invalid lines

#[test]
fn invalid_lines_are_reported_and_processing_continues() {
    for format in ["sha1", "sha256"] {
        let repo = init_repo(format, false);
        let r = repo.path();
        fast_import_blobs(r, 150, 1, "main");
        let loose = add_loose(r, 1, "x").remove(0);
        let truth = Truth::read(&objects_dir(r), format);
        let hex_len = truth.hex_len;
        let present: Vec<String> = truth.packed.keys().take(8).cloned().collect();
        let other_len = if hex_len == 40 { 64 } else { 40 };
        let absent = absent_ids(1, hex_len, 3).remove(0);
        let invalid = [
            String::new(),
            present[0][..hex_len - 1].to_owned(),
            // One digit too many: missing for a loose object (git reads 41-64 digits as a padded id: `as_git`).
            format!("{loose}1"),
            format!("{}z", &present[0][..hex_len - 1]),
            "-".repeat(hex_len),
            absent_ids(1, other_len, 5).remove(0),
            format!("{} ", present[1]),
            format!(" {}", present[1]),
            "not an id at all".to_owned(),
        ];
        let mut input = Vec::new();
        for (i, bad) in invalid.iter().enumerate() {
            input.push(bad.clone());
            input.push(present[i % present.len()].clone());
        }
        input.push(absent.clone());
        input.push(String::new());
        input.push(loose.clone());
        // A CRLF line ending is not part of the id.
        input.push(format!("{}\r", present[2]));
        let out = batch_check(r, &[], &input);
        check_answers(&input, &out, &truth, Loose::Found);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], " missing", "{format}: an empty line");
        // One digit short of a full id: an abbreviated id, answered with the full one.
        assert!(
            lines[2].starts_with(&format!("{} ", present[0])),
            "{format}: {}",
            lines[2]
        );
        assert_eq!(
            lines[2 * invalid.len()],
            format!("{absent} missing"),
            "{format}"
        );
        assert_eq!(
            lines.last().unwrap().split(' ').count(),
            3,
            "{format}: CRLF"
        );
    }
}

#[test]

fn non_utf8_line_is_missing_and_processing_continues() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    let id = add_loose(r, 1, "x").remove(0);
    let mut input = Vec::new();
    input.extend_from_slice(format!("{id}\n").as_bytes());
    input.extend_from_slice(b"\xff\xfe not utf-8\n");
    input.extend_from_slice(format!("{id}\n").as_bytes());
    let out = odb(
        &[
            OsStr::new("batch-check"),
            OsStr::new(LOCATION),
            r.as_os_str(),
        ],
        &input,
    );
    assert!(
        out.status.success(),
        "batch-check failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = located(&String::from_utf8_lossy(&out.stdout));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "one answer per input line: {text:?}");
    assert_eq!(lines[0], format!("{id} loose"));
    assert!(
        lines[1].ends_with(" missing"),
        "a non-UTF-8 line names no object: {:?}",
        lines[1]
    );
    assert_eq!(lines[2], format!("{id} loose"));
}

// ---------------------------------------------------------------------------------------------------------
// 6: verify

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

/// Issue 21: `verify` ignored incremental chain layers (a layer with a flipped byte, or truncated, passed with
/// exit 0); `git multi-pack-index verify` reports "incorrect checksum". Now each layer has its line.
#[test]
fn verify_checks_each_incremental_chain_layer_as_git() {
    for damage in ["flip", "truncate"] {
        let repo = init_repo("sha1", true);
        let r = repo.path();
        for l in 0..2u64 {
            fast_import_blobs(r, 50, 70 + l, &format!("l{l}"));
            git(r, &["multi-pack-index", "write", "--incremental"]);
        }
        let chain_dir = objects_dir(r).join("pack/multi-pack-index.d");
        let (code, files, _) = verify(r);
        assert_eq!(code, 0);
        let layers: Vec<&String> = files.keys().filter(|n| n.ends_with(".midx")).collect();
        assert_eq!(layers.len(), 2, "{files:?}");
        assert!(files.contains_key("multi-pack-index-chain") || layers.len() == 2);
        let chain = std::fs::read_to_string(chain_dir.join("multi-pack-index-chain")).unwrap();
        let top = chain_dir.join(format!(
            "multi-pack-index-{}.midx",
            chain.lines().last().unwrap()
        ));
        let mut bytes = std::fs::read(&top).unwrap();
        if damage == "flip" {
            let at = bytes.len() / 2;
            bytes[at] ^= 0x40;
        } else {
            bytes.truncate(bytes.len() - 7);
        }
        replace_file(&top, &bytes);
        // git reports the flipped byte ("incorrect checksum"); a truncated layer it drops from the chain.
        if damage == "flip" {
            assert!(
                !git_cmd_ok(r, &["multi-pack-index", "verify"]),
                "{damage}: git's verify fails"
            );
        }
        let (code, files, _) = verify(r);
        assert_eq!(code, 1, "{damage}: {files:?}");
        let name = top.file_name().unwrap().to_str().unwrap();
        assert!(files[name].is_err(), "{damage}: {files:?}");
    }
}

/// t5313: a pack whose header claims another object count than its index: `verify` reports the `.idx` (it said
/// ok), with git's message.
#[test]
fn verify_reports_a_pack_whose_header_count_differs_from_its_index() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 10, 90, "b");
    let idx = idx_files(&objects_dir(r)).remove(0);
    let pack = idx.with_extension("pack");
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[8..12].copy_from_slice(b"\xff\0\0\0");
    replace_file(&pack, &bytes);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1);
    let e = files[idx.file_name().unwrap().to_str().unwrap()]
        .as_ref()
        .unwrap_err();
    assert!(
        e.contains("claims to have 4278190080 objects while index indicates"),
        "{e}"
    );
}

/// `verify` printed paths unquoted (a newline in a name split its line); now as git quotes them.
#[test]
fn verify_quotes_paths_as_git() {
    let top = tempfile::tempdir().unwrap();
    let odd = top.path().join("a\nb \"c\" \u{e9}");
    std::fs::create_dir(&odd).unwrap();
    git(&odd, &["init", "-q", "--bare", "."]);
    fast_import_blobs(&odd, 5, 91, "b");
    let out = odb(&[OsStr::new("verify"), odd.as_os_str()], b"");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text:?}");
    let expected_dir = format!(
        "\"{}/a\\nb \\\"c\\\" \\303\\251/objects/pack/pack-",
        top.path().display()
    );
    assert!(text.starts_with(&format!("ok {expected_dir}")), "{text:?}");
    // git quotes the same name the same way (`git ls-files --others` of a file with that name).
    let work = init_repo("sha1", false);
    std::fs::write(work.path().join(odd.file_name().unwrap()), b"").unwrap();
    let listed = git(work.path(), &["ls-files", "--others"]);
    let git_quoted = listed.trim().trim_matches('"');
    assert_eq!(git_quoted, "a\\nb \\\"c\\\" \\303\\251");
    assert!(
        text.contains(&format!("/{git_quoted}/objects/")),
        "{text:?}"
    );
}

#[test]
fn verify_healthy_then_corrupted_and_truncated_indices() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let objects = objects_dir(r);
    git(r, &["multi-pack-index", "write"]);
    let idx = idx_files(&objects);
    let counts: HashMap<String, u64> = idx
        .iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_str().unwrap().to_owned(),
                show_index(p, "sha1").len() as u64,
            )
        })
        .collect();
    // The multi-pack-index covers every pack: its count is the number of distinct packed objects.
    let distinct = Truth::read(&objects, "sha1").packed.len() as u64;

    let (code, files, stderr) = verify(r);
    assert_eq!(code, 0, "healthy repository: {files:?} {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
    assert_eq!(
        files.len(),
        idx.len() + 1,
        "one line per index file: {files:?}"
    );
    for (name, n) in &counts {
        assert_eq!(
            files.get(name),
            Some(&Ok(*n)),
            "{name}: git show-index lists {n}"
        );
    }
    assert_eq!(files.get("multi-pack-index"), Some(&Ok(distinct)));

    // A flipped byte in the middle of one index.
    let victim = &idx[1];
    let name = victim.file_name().unwrap().to_str().unwrap().to_owned();
    let original = std::fs::read(victim).unwrap();
    let mut bad = original.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    replace_file(victim, &bad);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "a corrupt index must fail verify: {files:?}");
    assert!(
        matches!(files.get(&name), Some(Err(_))),
        "{name} should be reported as an error: {files:?}"
    );
    for (other, n) in counts.iter().filter(|(o, _)| **o != name) {
        assert_eq!(files.get(other), Some(&Ok(*n)), "{other} is intact");
    }

    // The same index truncated.
    replace_file(victim, &original[..original.len() * 2 / 3]);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "a truncated index must fail verify: {files:?}");
    assert!(
        matches!(files.get(&name), Some(Err(_))),
        "{name} should be reported as an error: {files:?}"
    );

    // Restored: healthy again; then a truncated multi-pack-index.
    replace_file(victim, &original);
    let (code, ..) = verify(r);
    assert_eq!(code, 0, "the restored index verifies");
    let midx = objects.join("pack/multi-pack-index");
    let m = std::fs::read(&midx).unwrap();
    replace_file(&midx, &m[..m.len() - 7]);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "a truncated multi-pack-index fails verify");
    assert!(
        matches!(files.get("multi-pack-index"), Some(Err(_))),
        "{files:?}"
    );
}

/// Recompute the trailing SHA-1 checksum of an index file after an edit.
fn reseal_sha1(bytes: &mut [u8]) {
    let n = bytes.len() - 20;
    let sum = odb_index::HashKind::Sha1.digest(&bytes[..n]);
    bytes[n..].copy_from_slice(sum.as_bytes());
}

/// Files that are consistent in themselves but lie (issue 13): verify reports each one, like git
/// (`git multi-pack-index verify`, `git verify-pack`), and passes again once it is restored.
#[test]
fn verify_reports_indices_that_lie_about_their_packs() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let objects = objects_dir(r);
    git(r, &["multi-pack-index", "write"]);
    assert_eq!(verify(r).0, 0);
    let idx = idx_files(&objects);
    let victim = &idx[0];
    let name = victim.file_name().unwrap().to_str().unwrap().to_owned();
    let original = std::fs::read(victim).unwrap();
    let pack_len = std::fs::metadata(victim.with_extension("pack"))
        .unwrap()
        .len();
    // An .idx offset past the end of its pack (first entry's 32-bit offset).
    let n = u32::from_be_bytes(original[8 + 1020..8 + 1024].try_into().unwrap()) as usize;
    let table = 8 + 1024 + n * 24;
    let mut bad = original.clone();
    bad[table..table + 4].copy_from_slice(&(pack_len as u32 + 10).to_be_bytes());
    reseal_sha1(&mut bad);
    replace_file(victim, &bad);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "{files:?}");
    assert!(
        matches!(files.get(&name), Some(Err(e)) if e.contains("beyond the end")),
        "{files:?}"
    );
    // The multi-pack-index disagrees with that index now (its offset is the real one).
    assert!(
        matches!(files.get("multi-pack-index"), Some(Err(e)) if e.contains("incorrect offset")),
        "{files:?}"
    );
    assert!(
        !git_cmd_ok(r, &["multi-pack-index", "verify"]),
        "git agrees"
    );
    replace_file(victim, &original);
    assert_eq!(verify(r).0, 0);
    // Another pack's index copied over this one: does not match its pack.
    replace_file(victim, &std::fs::read(&idx[1]).unwrap());
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "{files:?}");
    assert!(
        matches!(files.get(&name), Some(Err(e)) if e.contains("does not match index")),
        "{files:?}"
    );
    replace_file(victim, &original);
    // A multi-pack-index entry off by one (its checksum resealed): only a check against the packs' indices
    // finds it, as git's does.
    let midx = objects.join("pack/multi-pack-index");
    let good = std::fs::read(&midx).unwrap();
    let chunks = usize::from(good[6]);
    let ooff = (0..chunks)
        .map(|i| 12 + 12 * i)
        .find(|&at| &good[at..at + 4] == b"OOFF")
        .map(|at| u64::from_be_bytes(good[at + 4..at + 12].try_into().unwrap()) as usize)
        .unwrap();
    let mut bad = good.clone();
    let off = u32::from_be_bytes(bad[ooff + 4..ooff + 8].try_into().unwrap());
    bad[ooff + 4..ooff + 8].copy_from_slice(&(off + 1).to_be_bytes());
    reseal_sha1(&mut bad);
    let all = all_objects(r);
    let truth = batch_check(r, &[], &all);
    replace_file(&midx, &bad);
    // batch-check answers the entry as written by default (as git's cat-file does: one line differs); with
    // `--midx-check pack-index` it checks each location against the pack's own .idx, answers the wrong entry
    // from there (every line as on the good file) and warns once, naming the multi-pack-index.
    let as_written = batch_check(r, &[], &all);
    let differ = lines_differing(&truth, &as_written);
    assert_eq!(
        differ, 1,
        "the lying entry is answered as written by default"
    );
    let mut args = vec!["batch-check", LOCATION, "--midx-check", "pack-index"];
    args.push(r.to_str().unwrap());
    let out = odb(&args, all.join("\n").as_bytes());
    assert!(out.status.success());
    assert_eq!(located(&String::from_utf8_lossy(&out.stdout)), truth);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("multi-pack-index entry wrong") && err.contains("incorrect offset"),
        "{err}"
    );
    assert!(
        !git_cmd_ok(r, &["multi-pack-index", "verify"]),
        "git verify fails"
    );
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "{files:?}");
    assert!(
        matches!(files.get("multi-pack-index"), Some(Err(e)) if e.contains("incorrect offset")),
        "{files:?}"
    );
    for i in &idx {
        let n = i.file_name().unwrap().to_str().unwrap();
        assert!(matches!(files.get(n), Some(Ok(_))), "{n}: {files:?}");
    }
}

/// `--midx-checksum` (`Options::midx_checksum`): a multi-pack-index with one bit flipped (the last object's
/// offset one byte off; the checksum not recomputed) is refused before it answers and warned about once, naming
/// the checksum mismatch; every line is as on the good file. Without it the flipped entry is answered as written,
/// as git's `cat-file` answers it.
#[test]
fn midx_checksum_refuses_a_flipped_bit_and_answers_from_the_idx_files() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    git(r, &["multi-pack-index", "write"]);
    let midx = objects_dir(r).join("pack/multi-pack-index");
    let all = all_objects(r);
    let truth = batch_check(r, &[], &all);
    let mut bad = std::fs::read(&midx).unwrap();
    let n = bad.len();
    // git writes `OOFF` last: the byte before the trailer is the last object's offset's lowest byte.
    bad[n - 20 - 1] ^= 1;
    replace_file(&midx, &bad);
    let as_written = batch_check(r, &[], &all);
    let differ = lines_differing(&truth, &as_written);
    assert_eq!(
        differ, 1,
        "the flipped entry is answered as written by default"
    );
    let out = odb(
        &[
            "batch-check",
            LOCATION,
            "--midx-checksum",
            r.to_str().unwrap(),
        ],
        all.join("\n").as_bytes(),
    );
    assert!(out.status.success());
    assert_eq!(located(&String::from_utf8_lossy(&out.stdout)), truth);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("multi-pack-index") && err.contains("checksum mismatch"),
        "{err}"
    );
}

/// Whether git succeeds in `dir` with `args`.
fn git_cmd_ok(dir: &Path, args: &[&str]) -> bool {
    odb_index_testkit::git_cmd(dir)
        .args(args)
        .output()
        .unwrap()
        .status
        .success()
}

// ---------------------------------------------------------------------------------------------------------
// 7: a broken index at lookup time

#[test]
fn broken_index_at_lookup_time_is_warned_about_once_and_its_objects_are_missing_as_git() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let objects = objects_dir(r);
    let truth = Truth::read(&objects, "sha1");
    let idx = idx_files(&objects);
    let victim = &idx[0];
    let victim_name = victim.file_name().unwrap().to_str().unwrap().to_owned();
    let victim_pack = pack_name(victim);
    let in_victim: HashSet<String> = show_index(victim, "sha1")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    // Listed before the index breaks (git would not list the objects only it holds).
    let input = objects_and_absent(r, 40, 1000, 21);
    let data = std::fs::read(victim).unwrap();
    replace_file(victim, &data[..data.len() / 2]);

    // What git answers with the broken index (it prints an error about the file on stderr, many times).
    let mut text = input.join("\n");
    text.push('\n');
    let git_out = odb_index_testkit::git_cmd(r)
        .args(["cat-file", "--batch-check=%(objectname)"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut c| {
            let mut si = c.stdin.take().unwrap();
            let t = text.clone();
            let w = std::thread::spawn(move || si.write_all(t.as_bytes()));
            let out = c.wait_with_output();
            w.join().unwrap().unwrap();
            out
        })
        .unwrap();
    let git_missing: HashSet<String> = String::from_utf8(git_out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_suffix(" missing").map(str::to_owned))
        .collect();
    for flags in [&[][..], &["--threads", "4"], &["--buffer"]] {
        let mut args: Vec<&OsStr> = vec![OsStr::new("batch-check"), OsStr::new(LOCATION)];
        args.extend(flags.iter().map(OsStr::new));
        args.push(r.as_os_str());
        let out = odb(&args, text.as_bytes());
        assert!(out.status.success(), "{flags:?}: {}", out.status);
        let stderr = String::from_utf8(out.stderr).unwrap();
        let warnings: Vec<&str> = stderr.lines().collect();
        assert_eq!(warnings.len(), 1, "{flags:?}: one warning: {stderr}");
        assert!(
            warnings[0].starts_with("odb-index: warning: ") && warnings[0].contains(&victim_name),
            "{flags:?}: the warning should name {victim_name}: {stderr}"
        );
        let out = located(&String::from_utf8(out.stdout).unwrap());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), input.len(), "{flags:?}: one line per input");
        let mut missing = HashSet::new();
        for (id, got) in input.iter().zip(&lines) {
            let ctx = format!("{flags:?} {id}: got {got:?}");
            if let Some(places) = truth.packed.get(id).filter(|_| !in_victim.contains(id)) {
                let rest = got.strip_prefix(&format!("{id} ")).expect(&ctx);
                let (pack, off) = rest.split_once(' ').expect(&ctx);
                assert!(
                    places
                        .iter()
                        .any(|(p, o)| p == pack && o.to_string() == off),
                    "{ctx}: git has it at {places:?}"
                );
                assert_ne!(pack, victim_pack, "{ctx}");
            } else if truth.loose.contains(id) {
                assert_eq!(*got, format!("{id} loose"), "{ctx}");
            } else {
                // In the broken pack only, or absent everywhere: missing, as git says.
                assert_eq!(*got, format!("{id} missing"), "{ctx}");
                missing.insert(id.clone());
            }
        }
        assert!(
            missing == git_missing,
            "{flags:?}: git says missing for other objects"
        );
    }
    assert!(
        input.iter().any(|id| in_victim.contains(id)
            && !truth.loose.contains(id)
            && truth.packed[id].len() == 1),
        "the input should reach objects only in the broken pack"
    );
}

// ---------------------------------------------------------------------------------------------------------
// 8: command-line errors

#[test]
fn command_line_errors_exit_2_with_one_message() {
    let repo = init_repo("sha1", false);
    let r = repo.path().to_str().unwrap().to_owned();
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("hello.txt"), "hi\n").unwrap();
    std::fs::create_dir(plain.path().join("src")).unwrap();
    let plain = plain.path().to_str().unwrap().to_owned();
    let nowhere = format!("{r}/does/not/exist");

    // Errors about the path: exactly one line.
    for args in [
        vec!["batch-check", nowhere.as_str()],
        vec!["batch-check", plain.as_str()],
        vec!["verify", nowhere.as_str()],
        vec!["verify", plain.as_str()],
    ] {
        let out = odb(&args, b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: stderr {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout must be empty");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr:?}");
        assert!(stderr.starts_with("odb-index: "), "{args:?}: {stderr:?}");
        assert!(stderr.ends_with('\n'), "{args:?}: {stderr:?}");
    }
    // Usage errors: exactly one line, the message and a pointer to --help (not the whole usage text).
    for args in [
        vec!["batch-check", "--bogus", r.as_str()],
        vec!["verify", "--buffer", r.as_str()],
        vec!["batch-check"],
        vec!["verify"],
        vec!["frobnicate", r.as_str()],
        vec!["frobnicate"],
        vec![],
        vec!["--bogus"],
        vec!["-x"],
        vec!["batch-check", "--threads", "0", r.as_str()],
        vec!["batch-check", "--threads", "many", r.as_str()],
        vec!["batch-check", "--threads"],
        vec!["batch-check", "--events-after", "-1", r.as_str()],
        vec!["batch-check", "--events-after", "soon", r.as_str()],
        vec!["batch-check", "--events-after"],
        vec!["batch-check", "--loose", "sometimes", r.as_str()],
        vec!["batch-check", "--loose"],
        vec!["batch-check", "--load", "sometimes", r.as_str()],
        vec!["verify", "--load", "mapped", r.as_str()],
        vec!["batch-check", "--load"],
        vec!["batch-check", r.as_str(), r.as_str()],
        vec!["batch-check", "--buffer=yes", r.as_str()],
        vec!["verify", "--threads", "2", r.as_str()],
    ] {
        let out = odb(&args, b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: stderr {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout must be empty");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr:?}");
        assert!(
            stderr.starts_with("odb-index: ") && stderr.ends_with("(try `odb-index --help`)\n"),
            "{args:?}: {stderr:?}"
        );
    }
    // Bad formats: git's message and exit status (compared with git's in `as_git`).
    for format in ["%(bogus)", "%(objectname"] {
        let out = odb(
            &["batch-check", &format!("--batch-check={format}"), &r],
            b"",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128), "{format}: stderr {stderr}");
        assert!(
            stderr.starts_with("fatal: bad cat-file format: "),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // --help still prints the whole usage, on stdout.
    let out = odb(&["--help"], b"");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--load mmap|read"));
}

/// A read error on standard input is reported as such (not as "writing output"), in one line, exit 2.
#[test]
fn stdin_read_errors_are_named_as_such() {
    let repo = init_repo("sha1", false);
    // A directory as standard input: every read fails with EISDIR.
    let dir = std::fs::File::open(repo.path()).unwrap();
    for threads in ["1", "3"] {
        let out = Command::new(BIN)
            .args(["batch-check", "--threads", threads])
            .arg(repo.path())
            .stdin(Stdio::from(dir.try_clone().unwrap()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
        assert!(
            stderr.starts_with("odb-index: reading standard input: "),
            "{stderr:?}"
        );
        assert!(!stderr.contains("writing output"), "{stderr:?}");
    }
}

/// An unreadable pack directory (a symbolic-link loop, which root cannot read either): batch-check warns on
/// stderr naming it, answers the loose objects, and (like git, which warns and answers from the rest) says
/// "missing" for an absent id, since the command opens the store with `IncompleteMode::Miss`; verify reports
/// the directory and exits 1.
#[cfg(unix)]
#[test]
fn unreadable_pack_directory_is_a_warning_and_misses_are_missing_as_git() {
    let repo = init_repo("sha1", true);
    let loose = add_loose(repo.path(), 3, "u");
    let pack_dir = std::fs::canonicalize(objects_dir(repo.path()))
        .unwrap()
        .join("pack");
    let _ = std::fs::remove_dir_all(&pack_dir);
    std::os::unix::fs::symlink(&pack_dir, &pack_dir).unwrap();
    let absent = absent_ids(1, 40, 7).remove(0);
    let mut input = loose.join("\n");
    input.push('\n');
    input.push_str(&absent);
    input.push('\n');
    let out = odb(
        &[OsStr::new("batch-check"), repo.path().as_os_str()],
        input.as_bytes(),
    );
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("odb-index: warning: ") && stderr.contains(pack_dir.to_str().unwrap()),
        "{stderr:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    for (line, id) in lines.iter().zip(&loose) {
        assert!(line.starts_with(&format!("{id} blob ")), "{stdout}");
    }
    assert_eq!(lines[3], format!("{absent} missing"), "{stdout}");
    let out = odb(&[OsStr::new("verify"), repo.path().as_os_str()], b"");
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!("error {}: ", pack_dir.display())),
        "{stdout}"
    );
}

/// `--load read` answers exactly like the default (mapped) mode, for batch-check and verify.
#[test]
fn load_read_answers_like_mmap() {
    let repo = fixture("sha1", true);
    let input = mixed_input(repo.path(), 40);
    let mapped = batch_check(repo.path(), &[], &input);
    assert_eq!(
        batch_check(repo.path(), &["--load", "read"], &input),
        mapped
    );
    assert_eq!(
        batch_check(repo.path(), &["--load", "mmap"], &input),
        mapped
    );
    let (code, files, _) = verify(repo.path());
    let out = odb(
        &[
            OsStr::new("verify"),
            OsStr::new("--load"),
            OsStr::new("read"),
            repo.path().as_os_str(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(code));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        files.len()
    );
}

// ---------------------------------------------------------------------------------------------------------
// 9: refresh while running

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

/// Add a pack with new objects; returns its pack name and one (id, offset) only it holds, not loose.
fn add_pack(repo: &Path, seed: u64) -> (String, String, u64) {
    let objects = objects_dir(repo);
    let before: HashSet<PathBuf> = idx_files(&objects).into_iter().collect();
    fast_import_blobs(repo, 150, seed, &format!("b{seed}"));
    let new: Vec<PathBuf> = idx_files(&objects)
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(new.len(), 1, "fast-import should add one pack");
    let (id, off) = show_index(&new[0], "sha1").swap_remove(0);
    assert!(
        !objects.join(&id[..2]).join(&id[2..]).exists(),
        "{id} is loose"
    );
    for old in &before {
        assert!(!show_index(old, "sha1").iter().any(|(o, _)| *o == id));
    }
    (pack_name(&new[0]), id, off)
}

#[test]
fn refresh_on_miss_finds_a_pack_added_while_running() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 150, 1, "main");
    let absent = absent_ids(2, 40, 8);

    let mut s = Session::start(r, &[]);
    assert_eq!(s.ask(&absent[0]), format!("{} missing", absent[0]));
    let (pack, id, off) = add_pack(r, 2);
    assert_eq!(
        s.ask(&id),
        format!("{id} {pack} {off}"),
        "the store should re-list the pack directory on a miss"
    );
    assert_eq!(s.ask(&absent[1]), format!("{} missing", absent[1]));
    // A loose object written while running is found too (probe mode is always current).
    let loose = add_loose(r, 1, "later").remove(0);
    assert_eq!(s.ask(&loose), format!("{loose} loose"));
    // And a second new pack.
    let (pack, id, off) = add_pack(r, 3);
    assert_eq!(s.ask(&id), format!("{id} {pack} {off}"));
    s.finish();
}

/// Issue 21: `(sleep 1; git repack -adfq; echo ${X:0:10}; echo $X; echo ${X:0:10}) | odb-index batch-check .`
/// printed `<prefix> missing` (the listed packs had vanished and prefixes never refreshed); git finds all three.
#[test]
fn prefix_after_repack_ad_is_found_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    for i in 1..=3 {
        std::fs::write(r.join(format!("f{i}")), format!("{i}\n")).unwrap();
        git(r, &["add", &format!("f{i}")]);
        git(r, &["commit", "-qm", &i.to_string()]);
        git(r, &["repack", "-dq"]);
    }
    let x = git(r, &["rev-parse", "HEAD"]).trim().to_owned();
    let mut s = Session::start(r, &[]);
    // An invalid line: answered without a lookup, once the store is open (its listing names the three packs).
    assert_eq!(s.ask("not-an-id"), "not-an-id missing");
    git(r, &["repack", "-adfq"]);
    let lines = [&x[..10], &x[..], &x[..10]];
    let git_says = git_stdin(
        r,
        &["cat-file", "--batch-check=%(objectname)"],
        format!("{}\n", lines.join("\n")).as_bytes(),
    );
    for (line, git_line) in lines.iter().zip(git_says.lines()) {
        assert_eq!(git_line, x, "git finds {line}");
        let ours = s.ask(line);
        assert!(ours.starts_with(&format!("{x} pack-")), "{line}: {ours}");
    }
    s.finish();
    // --batch-all-objects after the same repack lists what git lists.
    for i in 4..=5 {
        std::fs::write(r.join(format!("f{i}")), format!("{i}\n")).unwrap();
        git(r, &["add", &format!("f{i}")]);
        git(r, &["commit", "-qm", &i.to_string()]);
        git(r, &["repack", "-dq"]);
    }
    let out = odb(
        &[
            "batch-check",
            "--batch-check=%(objectname)",
            "--batch-all-objects",
            r.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        all_objects(r)
    );
}

#[test]
fn no_refresh_does_not_see_a_pack_added_while_running() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 150, 1, "main");
    let absent = absent_ids(1, 40, 9).remove(0);

    let mut s = Session::start(r, &["--no-refresh"]);
    assert_eq!(s.ask(&absent), format!("{absent} missing"));
    let (_, id, _) = add_pack(r, 2);
    assert_eq!(
        s.ask(&id),
        format!("{id} missing"),
        "--no-refresh must not re-list the pack directory"
    );
    assert_eq!(s.ask(&id), format!("{id} missing"));
    // Loose objects are still probed every time.
    let loose = add_loose(r, 1, "later").remove(0);
    assert_eq!(s.ask(&loose), format!("{loose} loose"));
    s.finish();
    // A new process sees the pack.
    let out = batch_check(r, &["--no-refresh"], std::slice::from_ref(&id));
    assert!(
        out.starts_with(&format!("{id} pack-")),
        "a new process finds {id}: {out:?}"
    );
}

// ---------------------------------------------------------------------------------------------------------
// Closed output pipes

/// Start the command, read one line of its output, close the pipe; returns (status, stderr).
fn read_one_line_then_close<S: AsRef<OsStr>>(args: &[S], stdin: Vec<u8>) -> (Output, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start odb-index");
    let mut si = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = si.write_all(&stdin);
    });
    let mut first = String::new();
    {
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut first).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (out, first)
}

#[test]
fn batch_check_stops_quietly_when_the_reader_goes_away() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    let id = add_loose(r, 1, "x").remove(0);
    // Far more output than a pipe holds.
    let input = format!("{id}\n").repeat(100_000).into_bytes();
    let (out, first) = read_one_line_then_close(&[OsStr::new("batch-check"), r.as_os_str()], input);
    // The default format, git's: `<id> <type> <size>`.
    assert!(first.starts_with(&format!("{id} blob ")), "{first:?}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]

fn verify_stops_quietly_when_the_reader_goes_away() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 150, 1, "main");
    let objects = objects_dir(r);
    let idx = idx_files(&objects).remove(0);
    // verify checks every *.idx file: 1500 hard links make far more output than a pipe holds.
    for i in 0..1500 {
        std::fs::hard_link(&idx, objects.join(format!("pack/copy-{i:05}.idx"))).unwrap();
    }
    let (out, first) = read_one_line_then_close(&[OsStr::new("verify"), r.as_os_str()], vec![]);
    assert!(first.starts_with("ok "), "{first:?}");
    assert!(
        out.stderr.is_empty(),
        "a closed pipe should end verify quietly: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
}

/// Issue 21, bullet 9: files named like loose objects that are not ones (empty, garbage, a dangling symbolic
/// link, a directory) are `missing` for the full id and a prefix, with a warning naming the file on stderr, as git
/// answers the first three (git dies on the directory: "mmap failed"); before, the command printed `error <path>`.
#[test]
fn files_named_like_loose_objects_that_are_not_ones_are_missing_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    let made = loose_names_that_are_not_objects(r);
    let ids: Vec<String> = made.iter().map(|(id, _)| id.clone()).collect();
    let lines = |ids: &[String]| -> String {
        ids.iter()
            .flat_map(|id| [id.clone(), id[..10].to_owned()])
            .map(|l| l + "\n")
            .collect()
    };
    let expected = |ids: &[String]| -> String {
        ids.iter()
            .flat_map(|id| [id.clone(), id[..10].to_owned()])
            .map(|l| l + " missing\n")
            .collect()
    };
    let git_says = git_stdin(
        r,
        &["cat-file", "--batch-check"],
        lines(&ids[..3]).as_bytes(),
    );
    assert_eq!(git_says, expected(&ids[..3]));
    // git warns once per lookup that reads the file (here twice per file: the full id and the prefix; nothing
    // for the dangling symbolic link); the command warns once per file, in every mode.
    let commands =
        |ids: &[String]| -> String { lines(ids).lines().map(|l| format!("info {l}\n")).collect() };
    for (args, input) in [
        (&[][..], lines(&ids)),
        (&["--buffer"][..], lines(&ids)),
        (&["--threads", "2"][..], lines(&ids)),
        (&["--batch-command"][..], commands(&ids)),
    ] {
        let mut argv = vec!["batch-check"];
        argv.extend_from_slice(args);
        argv.push(r.to_str().unwrap());
        let out = odb(&argv, input.as_bytes());
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected(&ids));
        let stderr = String::from_utf8(out.stderr).unwrap();
        for (id, path) in &made {
            let name = format!("{}/{}", &id[..2], &id[2..]);
            assert_eq!(
                stderr.matches(&name).count(),
                1,
                "{args:?}: {path:?} not named exactly once on stderr: {stderr}"
            );
        }
        assert_eq!(
            stderr.lines().count(),
            made.len(),
            "{args:?}: one line per file: {stderr}"
        );
    }
}

/// How many lines of `a` and `b` differ, position by position.
fn lines_differing(a: &str, b: &str) -> usize {
    a.lines().zip(b.lines()).filter(|(x, y)| x != y).count()
}
