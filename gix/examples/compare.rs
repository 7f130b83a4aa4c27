//! Side-by-side speed of `batch-check` clients (not a test; figures only, short runs).
//!
//! ```text
//! cargo build --release -p odb-index-cli -p odb-index-gix --example compare
//! target/release/examples/compare build /tmp/big          # ~200k objects with git fast-import
//! target/release/examples/compare all  /tmp/big target/release/odb-index
//! target/release/examples/compare miss /tmp/big target/release/odb-index 100000
//! ```
//!
//! `all`: `batch-check --batch-all-objects` of the command against `git cat-file --batch-check
//! --batch-all-objects` (both to /dev/null). `miss`: that many random absent ids (a pack about to be received)
//! through `git cat-file --batch-check`, the command, and in-process through the client of `batch_check.rs` on
//! odb-index-gix and the same client on gix-odb 0.87. Each run three times, interleaved; the median is printed.
#![allow(
    clippy::disallowed_methods,
    reason = "an example timing clients, not shipped code"
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use gix_object::FindHeader;
use odb_index_gix::{Error, Objects};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["build", dir] => build(Path::new(dir)),
        ["all", repo, cmd] => all(Path::new(repo), Path::new(cmd)),
        ["miss", repo, cmd, n] => miss(Path::new(repo), Path::new(cmd), n.parse()?),
        _ => Err("usage: compare build DIR | all REPO ODB_INDEX | miss REPO ODB_INDEX N".into()),
    }
}

fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    c
}

/// Run `cmd` with `input` on stdin and stdout to /dev/null; its wall time.
fn timed(cmd: &mut Command, input: &[u8]) -> Res<Duration> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    child.stdin.take().expect("piped").write_all(input)?;
    let status = child.wait()?;
    let t = start.elapsed();
    if !status.success() {
        return Err(format!("{cmd:?} failed: {status}").into());
    }
    Ok(t)
}

/// Median of three runs of each arm, run interleaved.
fn report(arms: &mut [(&str, &mut dyn FnMut() -> Res<Duration>)]) -> Res<()> {
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); arms.len()];
    for _ in 0..3 {
        for (i, (_, f)) in arms.iter_mut().enumerate() {
            times[i].push(f()?);
        }
    }
    for (i, (name, _)) in arms.iter().enumerate() {
        times[i].sort();
        println!(
            "{name:<48} {:>9.1} ms  (runs: {:?})",
            times[i][1].as_secs_f64() * 1e3,
            times[i]
        );
    }
    Ok(())
}

fn all(repo: &Path, cmd: &Path) -> Res<()> {
    let n = git(repo).args(["count-objects", "-v"]).output()?.stdout;
    println!("{}", String::from_utf8_lossy(&n).replace('\n', " "));
    report(&mut [
        (
            "git cat-file --batch-check --batch-all-objects",
            &mut || {
                timed(
                    git(repo).args(["cat-file", "--batch-check", "--batch-all-objects"]),
                    b"",
                )
            },
        ),
        ("odb-index batch-check --batch-all-objects", &mut || {
            timed(
                Command::new(cmd)
                    .args(["batch-check", "--batch-all-objects"])
                    .arg(repo),
                b"",
            )
        }),
    ])
}

fn miss(repo: &Path, cmd: &Path, n: usize) -> Res<()> {
    let objects = Objects::open(repo)?;
    let hex_len = objects.hash_kind().len_in_hex();
    let ids = odb_index_testkit::absent_ids(n, hex_len, 0);
    let input = ids.join("\n") + "\n";
    let objects_dir = objects.store().objects_dir().to_owned();
    let kind = objects.hash_kind();
    report(&mut [
        ("git cat-file --batch-check", &mut || {
            timed(
                git(repo).args(["cat-file", "--batch-check"]),
                input.as_bytes(),
            )
        }),
        ("odb-index batch-check", &mut || {
            timed(
                Command::new(cmd).arg("batch-check").arg(repo),
                input.as_bytes(),
            )
        }),
        ("client on odb-index-gix (in process)", &mut || {
            let start = Instant::now();
            let objects = Objects::open(repo)?;
            let mut out = Vec::new();
            for name in &ids {
                match objects.lookup_name(name) {
                    Ok(Some(id)) => match objects.info(&id)? {
                        Some(i) => writeln!(out, "{id} {} {}", i.kind, i.size)?,
                        None => writeln!(out, "{name} missing")?,
                    },
                    Err(Error::AmbiguousName { .. }) => writeln!(out, "{name} ambiguous")?,
                    Ok(None) | Err(Error::BadName { .. }) => writeln!(out, "{name} missing")?,
                    Err(e) => return Err(e.into()),
                }
            }
            std::hint::black_box(out);
            Ok(start.elapsed())
        }),
        ("client on gix-odb 0.87 (in process)", &mut || {
            let start = Instant::now();
            let odb = gix_odb::at(objects_dir.clone(), kind)?;
            let mut out = Vec::new();
            for name in &ids {
                let id = gix_hash::ObjectId::from_hex(name.as_bytes())?;
                match odb.try_header(&id)? {
                    Some(h) => writeln!(out, "{id} {} {}", h.kind, h.size)?,
                    None => writeln!(out, "{name} missing")?,
                }
            }
            std::hint::black_box(out);
            Ok(start.elapsed())
        }),
    ])
}

/// A repository of ~200k objects: the source files of the crates in `$CARGO_HOME/registry/src`, imported with
/// `git fast-import` as one commit, then 160 more commits each changing a rotating tenth of the files (those of at most 8 KiB).
fn build(dir: &Path) -> Res<()> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .ok_or("no CARGO_HOME")?;
    let mut files = Vec::new();
    let mut todo = vec![home.join("registry/src")];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d)? {
            let e = e?;
            let t = e.file_type()?;
            if t.is_dir() {
                todo.push(e.path());
            } else if t.is_file() && e.metadata()?.len() <= 8 * 1024 {
                files.push(e.path());
            }
        }
    }
    files.sort();
    let root = home.join("registry/src");
    std::fs::create_dir_all(dir)?;
    git(dir).args(["init", "-q", "."]).status()?;
    let mut fi = git(dir)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()?;
    let mut w = std::io::BufWriter::new(fi.stdin.take().expect("piped"));
    for round in 0..=160usize {
        write!(
            w,
            "commit refs/heads/main\ncommitter c <c@example.invalid> {} +0000\ndata 8\nround {:02}\n",
            1_700_000_000 + round,
            round % 100
        )?;
        for (i, f) in files.iter().enumerate() {
            if round > 0 && i % 10 != round % 10 {
                continue;
            }
            let mut data = std::fs::read(f)?;
            if round > 0 {
                data.extend_from_slice(format!("\nround {round}\n").as_bytes());
            }
            let path = f
                .strip_prefix(&root)?
                .to_string_lossy()
                .replace(['\n', '"'], "_");
            write!(w, "M 100644 inline \"{path}\"\ndata {}\n", data.len())?;
            w.write_all(&data)?;
            w.write_all(b"\n")?;
        }
        w.write_all(b"\n")?;
    }
    drop(w);
    if !fi.wait()?.success() {
        return Err("fast-import failed".into());
    }
    let out = git(dir).args(["count-objects", "-v"]).output()?.stdout;
    println!(
        "{} files; {}",
        files.len(),
        String::from_utf8_lossy(&out).replace('\n', " ")
    );
    Ok(())
}
