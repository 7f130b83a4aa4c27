//! The git peer: `git cat-file --batch-check --buffer` over a scenario's ids on the scenario's objects
//! directory, as a row beside the in-process arms (docs/BENCHMARKS.md, "The comparison table").
//!
//! git runs as a child process, so its time per lookup is measured as the front-end rows measure it: the wall
//! time of one run over every id minus the wall time of one run over no id (the process's start-up, its
//! binary, opening the repository), divided by the ids; minimum and median over the runs, the two inputs
//! alternating. Each answer also reads the object's type and size (a hit) and writes a line, which the
//! in-process arms do not: git's figure is an upper bound of its lookup.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use odb_index::ObjectId;

use super::fixture::TempDir;
use super::report::{Row, Val};

/// The arm's name in the rows.
pub const ARM: &str = "git cat-file --batch-check --buffer";

/// One row of `scenario`: git over `ids` on `objects` (through `GIT_OBJECT_DIRECTORY` and an empty bare
/// repository), `runs` runs; `found` is how many of the ids must be there. A row with a note if git fails.
pub fn row(scenario: &str, objects: &Path, ids: &[ObjectId], found: usize, runs: usize) -> Row {
    match measure(objects, ids, found, runs.max(1)) {
        Ok(r) => Row {
            scenario: scenario.into(),
            ..r
        },
        Err(e) => Row {
            note: format!("not measured: {e}"),
            ..Row::new(scenario, ARM)
        },
    }
}

fn measure(objects: &Path, ids: &[ObjectId], want: usize, runs: usize) -> Result<Row, String> {
    let tmp = TempDir::new("bench-git")?;
    let git_dir = tmp.path().join("peer.git");
    let st = Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&git_dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .map_err(|e| format!("git init: {e}"))?;
    if !st.success() {
        return Err(format!("git init: {st}"));
    }
    let mut input = Vec::with_capacity(ids.len() * 41);
    for id in ids {
        writeln!(input, "{id}").map_err(|e| e.to_string())?;
    }
    let objects = std::path::absolute(objects).map_err(|e| e.to_string())?;
    let run = |input: &[u8], want: usize| -> Result<f64, String> {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(&git_dir)
            .args(["cat-file", "--batch-check", "--buffer"])
            .env("GIT_OBJECT_DIRECTORY", &objects)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("git cat-file: {e}"))?;
        let t = Instant::now();
        let mut stdin = child.stdin.take().expect("piped stdin");
        let writer = std::thread::scope(|s| {
            let w = s.spawn(move || stdin.write_all(input));
            let out = child.wait_with_output();
            (w.join(), out)
        });
        let dt = t.elapsed().as_nanos() as f64;
        let o = writer.1.map_err(|e| format!("git cat-file: {e}"))?;
        let found = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.ends_with(" missing"))
            .count();
        if !o.status.success() || found != want {
            return Err(format!(
                "git cat-file found {found} of {want}: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
        }
        Ok(dt)
    };
    let (mut all, mut none) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        all.push(run(&input, want)?);
        none.push(run(b"", 0)?);
    }
    let (min_all, med_all) = min_median(&mut all);
    let (min_none, med_none) = min_median(&mut none);
    let n = ids.len().max(1) as f64;
    Ok(Row {
        ns_min: Some((min_all - min_none).max(0.0) / n),
        ns_median: Some((med_all - med_none).max(0.0) / n),
        runs,
        lookups: ids.len(),
        note: format!(
            "child process: (wall over {} ids - wall over none) / ids; start-up {:.1} ms",
            ids.len(),
            med_none / 1e6
        ),
        ..Row::new("", ARM)
    }
    .with("startup_ms", Val::Num(med_none / 1e6)))
}

fn min_median(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2])
}
