//! Issue 21: `odb-index batch-check` on abbreviated ids and with `--batch-all-objects` while git maintains the
//! repository underneath (the library's stress maintenance, `odb_index_testkit::Maintenance`), git as control.
//! Under maintenance, 5 of 1 207 runs once printed `missing` for every one of 3 490 prefixes, and
//! `--batch-all-objects` once printed nothing.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use odb_index_testkit::{
    FirstFailures, Maintenance, StopOnDrop, all_objects, git_stdin, maintenance_repo, stress_secs,
};

use super::{odb, run_with_stdin};

/// Prefix lengths asked (git's default abbreviation, 10, 12) and the full id.
const LENS: [usize; 4] = [7, 10, 12, 40];

/// Counts of one side (ours or git's) over the runs during maintenance.
#[derive(Default)]
struct Side {
    runs: AtomicU64,
    lines: AtomicU64,
    /// Lines `<name> missing` for a base object.
    missing: AtomicU64,
    /// Lines naming another object, or not the expected line at all.
    wrong: AtomicU64,
    /// `--batch-all-objects` listings lacking a base object.
    short_listings: AtomicU64,
    /// Runs that failed, or wrote to stderr what is not git's ambiguity message.
    failed_runs: AtomicU64,
    first_failures: FirstFailures,
}

impl Side {
    fn fail(&self, what: String) {
        self.first_failures.push(what);
    }

    fn summary(&self) -> String {
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "{} runs (prefixes and --batch-all-objects in turn), {} lines, {} missing, {} wrong, {} listings short, {} failed runs",
            l(&self.runs),
            l(&self.lines),
            l(&self.missing),
            l(&self.wrong),
            l(&self.short_listings),
            l(&self.failed_runs)
        )
    }
}

/// What could only be judged at the end, against every object that existed.
#[derive(Default)]
struct Later {
    /// Names answered `ambiguous` where the control before said which object.
    ambiguous: BTreeSet<String>,
    /// Ids listed by `--batch-all-objects` that are not base objects.
    extra: BTreeSet<String>,
}

/// Judge one `--batch-check=%(objectname)` run on `input` against `expected` (git's answers before the
/// maintenance, one line per input line).
fn judge_lines(side: &Side, later: &mut Later, input: &[String], expected: &[&str], out: &str) {
    side.runs.fetch_add(1, Ordering::Relaxed);
    let lines: Vec<&str> = out.lines().collect();
    if lines.len() != input.len() {
        side.failed_runs.fetch_add(1, Ordering::Relaxed);
        side.fail(format!("{} lines for {} names", lines.len(), input.len()));
    }
    for ((name, want), got) in input.iter().zip(expected).zip(&lines) {
        side.lines.fetch_add(1, Ordering::Relaxed);
        if got == want {
            continue;
        }
        if *got == format!("{name} ambiguous") {
            later.ambiguous.insert(name.clone());
        } else if *got == format!("{name} missing") {
            side.missing.fetch_add(1, Ordering::Relaxed);
            side.fail(format!("{name}: missing"));
        } else {
            side.wrong.fetch_add(1, Ordering::Relaxed);
            side.fail(format!("{name}: {got}, not {want}"));
        }
    }
}

/// Judge one `--batch-all-objects` listing: sorted without repeats, every base object in it and found. An
/// object listed and then removed before it was looked up again is printed `<id> missing`, by git too: only
/// objects that are not base objects may be.
fn judge_listing(side: &Side, later: &mut Later, base: &BTreeSet<String>, out: &str) {
    side.runs.fetch_add(1, Ordering::Relaxed);
    let mut listed = Vec::new();
    for line in out.lines() {
        let id = line.strip_suffix(" missing").unwrap_or(line);
        if id != line && base.contains(id) {
            side.missing.fetch_add(1, Ordering::Relaxed);
            side.fail(format!("--batch-all-objects: {line}"));
        }
        listed.push(id);
    }
    if !listed.windows(2).all(|w| w[0] < w[1]) {
        side.wrong.fetch_add(1, Ordering::Relaxed);
        side.fail("--batch-all-objects: not sorted without repeats".into());
    }
    let listed: BTreeSet<String> = listed.into_iter().map(str::to_owned).collect();
    let lacking = base.difference(&listed).count();
    if lacking > 0 {
        side.short_listings.fetch_add(1, Ordering::Relaxed);
        side.fail(format!(
            "--batch-all-objects: {} listed, {lacking} base objects lacking",
            listed.len()
        ));
    }
    later.extra.extend(listed.difference(base).cloned());
}

/// stdout of a run that must succeed, with nothing on stderr but git's ambiguity message and hints.
fn output(side: &Side, what: &str, out: std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let unexpected = stderr
        .lines()
        .find(|l| !(l.starts_with("error: short object ID") || l.starts_with("hint:")));
    if !out.status.success() || unexpected.is_some() {
        side.failed_runs.fetch_add(1, Ordering::Relaxed);
        side.fail(format!("{what}: {}: {stderr}", out.status));
    }
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// git run like [`odb`]: its output whatever its status (for the control during maintenance).
fn git_run(repo: &std::path::Path, args: &[&str], stdin: &[u8]) -> std::process::Output {
    let mut c = odb_index_testkit::git_cmd(repo);
    c.args(args);
    run_with_stdin(c, stdin)
}

/// While the main thread runs git's maintenance, another runs `odb-index batch-check --batch-check=%(objectname)`
/// on abbreviations (7, 10, 12 hex digits) and full ids of every base object, then with `--batch-all-objects`,
/// and `git cat-file` the same way (the control, counted, not asserted). Ours: every answer is git's answer from
/// before the maintenance (the base objects are present throughout), or `ambiguous` where another object that
/// existed shares the prefix; every listing holds every base object, sorted without repeats, and only objects
/// that existed; no run fails. At the end, the repository quiet, both outputs are git's byte for byte.
/// `ODB_STRESS_SECS` sets the duration (default 3 s).
#[test]
fn prefixes_and_batch_all_objects_under_maintenance_as_git() {
    let repo = maintenance_repo();
    let p = repo.path();
    let base_list = all_objects(p);
    let base: BTreeSet<String> = base_list.iter().cloned().collect();
    let input: Vec<String> = base_list
        .iter()
        .flat_map(|h| LENS.map(|n| h[..n].to_owned()))
        .collect();
    let stdin = format!("{}\n", input.join("\n"));
    let expected_text = git_stdin(
        p,
        &["cat-file", "--batch-check=%(objectname)"],
        stdin.as_bytes(),
    );
    let expected: Vec<&str> = expected_text.lines().collect();
    assert_eq!(expected.len(), input.len());
    let path = p.to_str().unwrap();
    let (ours_args, ours_all_args) = (
        ["batch-check", "--batch-check=%(objectname)", path],
        [
            "batch-check",
            "--batch-check=%(objectname)",
            "--batch-all-objects",
            path,
        ],
    );
    let (git_args, git_all_args) = (
        ["cat-file", "--batch-check=%(objectname)"],
        [
            "cat-file",
            "--batch-check=%(objectname)",
            "--batch-all-objects",
        ],
    );
    let secs = stress_secs(3);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let max_steps = 200 * secs.max(1);
    let max_runs = 10_000 * secs.max(1);
    let stop = AtomicBool::new(false);
    let (ours, theirs) = (Side::default(), Side::default());
    let mut later = Later::default();
    let mut maintenance = Maintenance::new(p);
    std::thread::scope(|s| {
        let _stop = StopOnDrop(&stop);
        let (ours, theirs, later, stop) = (&ours, &theirs, &mut later, &stop);
        let (input, expected, base, stdin) = (&input, &expected, &base, &stdin);
        s.spawn(move || {
            let mut runs = 0;
            // Git's answers during the maintenance are judged the same way, into their own tally.
            let mut git_later = Later::default();
            while !stop.load(Ordering::Relaxed) && runs < max_runs {
                runs += 1;
                let out = output(ours, "prefixes", odb(&ours_args, stdin.as_bytes()));
                judge_lines(ours, later, input, expected, &out);
                let out = output(ours, "--batch-all-objects", odb(&ours_all_args, b""));
                judge_listing(ours, later, base, &out);
                let out = git_run(p, &git_args, stdin.as_bytes());
                let out = output(theirs, "git prefixes", out);
                judge_lines(theirs, &mut git_later, input, expected, &out);
                let out = output(
                    theirs,
                    "git --batch-all-objects",
                    git_run(p, &git_all_args, b""),
                );
                judge_listing(theirs, &mut git_later, base, &out);
            }
        });
        maintenance.run_until(deadline, max_steps, || {});
        stop.store(true, Ordering::Relaxed);
    });
    maintenance.finish();
    let existed = maintenance.seen();
    println!(
        "batch-check under maintenance: {secs} s, {} steps ({} repacks/gcs), {} objects existed; ours: {}; \
         git: {}; {} names ambiguous with a pushed object",
        maintenance.steps(),
        maintenance.repacks(),
        existed.len(),
        ours.summary(),
        theirs.summary(),
        later.ambiguous.len()
    );
    let failures = ours.first_failures.list();
    let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
    assert_eq!(
        (
            l(&ours.missing),
            l(&ours.wrong),
            l(&ours.short_listings),
            l(&ours.failed_runs)
        ),
        (0, 0, 0, 0),
        "{failures:#?}"
    );
    assert!(l(&ours.runs) >= 2 && maintenance.repacks() > 0);
    for name in &later.ambiguous {
        let with = existed
            .iter()
            .filter(|o| o.starts_with(name.as_str()))
            .count();
        assert!(
            with >= 2,
            "{name} was ambiguous; {with} object(s) with it existed"
        );
    }
    let never: Vec<&String> = later.extra.difference(existed).collect();
    assert!(never.is_empty(), "listed, never existed: {never:?}");
    // The control, the repository quiet: the same runs, git's output byte for byte.
    for (ours_args, git_args, stdin) in [
        (&ours_args[..], &git_args[..], stdin.as_bytes()),
        (&ours_all_args[..], &git_all_args[..], b"".as_slice()),
    ] {
        let ours = odb(ours_args, stdin);
        assert!(ours.status.success());
        assert_eq!(
            String::from_utf8(ours.stdout).unwrap(),
            git_stdin(p, git_args, stdin),
            "{ours_args:?}"
        );
    }
}
