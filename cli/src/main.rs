//! The `odb-index` command: look objects up, verify index files. (The benchmark is the `odb-index-bench`
//! package.)

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use odb_index::{Error, LooseMode, Options, RefreshMode, Store};
use odb_index_gix::Objects;

mod batch_check;
use batch_check::Format;

const USAGE: &str = "usage:
  odb-index batch-check [--batch-check[=FORMAT]] [--batch-all-objects [--unordered]] [--buffer]
                        [--threads N] [--no-refresh] [--loose probe|cached|none] PATH
      As `git cat-file --batch-check`: read object names from stdin, one per line (full ids, or hex prefixes
      of at least 4 digits); print for each `<id> <type> <size>` (or FORMAT expanded: %(objectname),
      %(objecttype), %(objectsize), %(objectsize:disk), %(deltabase), %(rest), %(objectpack),
      %(objectoffset)), `<name> missing`, `<name> ambiguous` or `<name> error <message>`. HEAD, ref
      names and rev:path are not resolved: they print `<name> missing`. %(objectsize:disk) and
      %(deltabase) read the pack's .rev file where git wrote one, else sort the .idx's offsets;
      %(objectpack) is `pack-<hash>.pack` or `loose`, %(objectoffset) empty for loose objects. With
      --batch-all-objects, print every object instead (buffered, as git), sorted by id without repeats,
      or with --unordered in storage order (loose first, then each pack), each where it was found.
  odb-index verify PATH
      Check every pack index and multi-pack-index fully; print `ok <file> <n> objects` or
      `error <file>: <reason>` for each; exit 1 if any failed.
PATH is a work tree, a .git directory, a bare repository or an objects directory.";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("odb-index: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_env();
    let cmd = match parser.next().map_err(|e| e.to_string())? {
        Some(Value(v)) => v
            .into_string()
            .map_err(|_| "command is not UTF-8".to_owned())?,
        Some(Long("help")) | Some(Short('h')) => {
            println!("{USAGE}");
            return Ok(ExitCode::SUCCESS);
        }
        Some(other) => return Err(format!("{}\n{USAGE}", other.unexpected())),
        None => return Err(format!("no command given\n{USAGE}")),
    };
    let mut path: Option<PathBuf> = None;
    let mut buffer = false;
    let mut threads = 1usize;
    let mut format = batch_check::DEFAULT_FORMAT.to_owned();
    let mut all = false;
    let mut unordered = false;
    let mut options = Options::default();
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("buffer") if cmd == "batch-check" => buffer = true,
            Long("batch-check") if cmd == "batch-check" => {
                if let Some(v) = parser.optional_value() {
                    format = v
                        .into_string()
                        .map_err(|v| format!("--batch-check format is not UTF-8: {v:?}"))?;
                }
            }
            Long("batch-all-objects") if cmd == "batch-check" => all = true,
            Long("unordered") if cmd == "batch-check" => unordered = true,
            Long("no-refresh") if cmd == "batch-check" => {
                options = options.refresh(RefreshMode::Never)
            }
            Long("threads") if cmd == "batch-check" => {
                let v = parser.value().map_err(|e| e.to_string())?;
                threads = v
                    .to_str()
                    .and_then(|s| s.parse().ok())
                    .filter(|&n: &usize| (1..=1024).contains(&n))
                    .ok_or_else(|| format!("--threads takes a number from 1 to 1024, not {v:?}"))?;
            }
            Long("loose") if cmd == "batch-check" => {
                let v = parser.value().map_err(|e| e.to_string())?;
                let mode = match v.to_str() {
                    Some("probe") => LooseMode::Probe,
                    Some("cached") => LooseMode::Cached,
                    Some("none") => LooseMode::None,
                    _ => return Err(format!("--loose takes probe, cached or none, not {v:?}")),
                };
                options = options.loose(mode);
            }
            Value(v) if path.is_none() => path = Some(PathBuf::from(v)),
            Long("help") | Short('h') => {
                println!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            other => return Err(format!("{}\n{USAGE}", other.unexpected())),
        }
    }
    match cmd.as_str() {
        "batch-check" => {
            let path = path.ok_or_else(|| format!("batch-check needs a PATH\n{USAGE}"))?;
            let format = Format::parse(&format)?;
            let store = Store::open(&path, options).map_err(|e| e.to_string())?;
            let objects = || Objects::new(store.handle());
            let result = if all {
                let stdout = std::io::stdout();
                let mut out = std::io::BufWriter::new(stdout.lock());
                // Buffered whatever `--buffer` says, as git does for --batch-all-objects.
                match batch_check::all_objects(&objects(), &format, unordered, true, &mut out) {
                    Ok(()) => out.flush(),
                    Err(batch_check::AllError::Write(e)) => Err(e),
                    Err(batch_check::AllError::List(e)) => return Err(e.to_string()),
                }
            } else {
                batch_check(objects, &format, buffer, threads)
            };
            match result {
                Ok(()) => Ok(ExitCode::SUCCESS),
                // The reader went away (`| head`): stop quietly, like git.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
                Err(e) => Err(format!("writing output: {e}")),
            }
        }
        "verify" => {
            let path = path.ok_or_else(|| format!("verify needs a PATH\n{USAGE}"))?;
            verify(&path)
        }
        other => Err(format!("unknown command {other:?}\n{USAGE}")),
    }
}

fn one_line(e: &Error) -> String {
    e.to_string().replace('\n', " ")
}

/// The next input line without its terminator (`\n` or `\r\n`), as bytes; `None` at end of input.
fn next_line(input: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    if input.read_until(b'\n', &mut line)? == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
    }
    Ok(Some(line))
}

fn batch_check(
    objects: impl Fn() -> Objects,
    format: &Format,
    buffer: bool,
    threads: usize,
) -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if threads <= 1 {
        let objects = objects();
        let mut buf = Vec::new();
        while let Some(line) = next_line(&mut input)? {
            buf.clear();
            batch_check::answer_line(&objects, &line, format, &mut buf);
            out.write_all(&buf)?;
            if !buffer {
                out.flush()?;
            }
        }
        return out.flush();
    }
    // Several threads: read a batch, split it into one contiguous chunk per thread (one handle each), print
    // the answers in input order.
    let mut handles: Vec<Objects> = (0..threads).map(|_| objects()).collect();
    loop {
        let mut batch = Vec::with_capacity(4096);
        while batch.len() < 4096 {
            match next_line(&mut input)? {
                Some(l) => batch.push(l),
                None => break,
            }
        }
        if batch.is_empty() {
            break;
        }
        let chunk = batch.len().div_ceil(threads);
        let results: Vec<Vec<u8>> = std::thread::scope(|s| {
            let workers: Vec<_> = batch
                .chunks(chunk)
                .zip(handles.iter_mut())
                .map(|(lines, h)| {
                    s.spawn(move || {
                        let mut buf = Vec::new();
                        for l in lines {
                            batch_check::answer_line(h, l, format, &mut buf);
                        }
                        buf
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("lookup thread panicked"))
                .collect()
        });
        for r in &results {
            out.write_all(r)?;
        }
        if !buffer {
            out.flush()?;
        }
    }
    out.flush()
}

fn verify(path: &std::path::Path) -> Result<ExitCode, String> {
    let store = Store::open(
        path,
        Options::default()
            .refresh(RefreshMode::Never)
            .loose(LooseMode::None),
    )
    .map_err(|e| e.to_string())?;
    let kind = store.hash_kind();
    let mut failed = false;
    let mut any = false;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();

    for dir in store.objects_dirs() {
        let pack_dir = dir.join("pack");
        let mut files: Vec<PathBuf> = match std::fs::read_dir(&pack_dir) {
            Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{}: {e}", pack_dir.display())),
        };
        files.sort();
        for f in files {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let result = if name.ends_with(".idx") && f.is_file() {
                odb_index::idx::PackIndex::open(&f, kind)
                    .and_then(|i| i.verify().map(|()| i.len() as u64))
            } else if name == "multi-pack-index" {
                odb_index::midx::MultiPackIndex::open(&f, kind)
                    .and_then(|m| m.verify().map(|()| m.len() as u64))
            } else {
                continue;
            };
            any = true;
            let written = match result {
                Ok(n) => writeln!(out, "ok {} {n} objects", f.display()),
                Err(e) => {
                    failed = true;
                    // The error names the file already.
                    writeln!(
                        out,
                        "error {}: {}",
                        f.display(),
                        strip_path(&one_line(&e), &f)
                    )
                }
            };
            match written {
                Ok(()) => {}
                // The reader went away (`verify . | head`): stop quietly.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    return Ok(exit_code(failed));
                }
                Err(e) => return Err(format!("writing output: {e}")),
            }
        }
    }
    if !any {
        eprintln!(
            "odb-index: no index files found under {}",
            store.objects_dir().display()
        );
    }
    Ok(exit_code(failed))
}

fn exit_code(failed: bool) -> ExitCode {
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `"<path>: reason"` → `"reason"` (the line already names the file).
fn strip_path(msg: &str, path: &std::path::Path) -> String {
    let prefix = format!("{}: ", path.display());
    msg.strip_prefix(&prefix).unwrap_or(msg).to_owned()
}
