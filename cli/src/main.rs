//! The `odb-index` command: look objects up, verify index files. (The benchmark is the `odb-index-bench`
//! package.)

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use odb_index::{
    Error, Handle, IncompleteMode, LoadMode, LooseMode, MidxCheck, Options, RefreshMode, Store,
};
use odb_index_gix::Objects;

mod ambiguous;
mod batch_check;
mod batch_command;
mod replace;
use batch_check::{Fatal, Format};

const USAGE: &str = "usage:
  odb-index batch-check [--batch-check[=FORMAT] | --batch[=FORMAT] | --batch-command[=FORMAT]]
                        [--batch-all-objects [--unordered]] [--buffer]
                        [--threads N] [--no-refresh] [--no-events | --events-after N]
                        [--loose watched|probe|cached|none] [--load mmap|read] [--midx-check bounds|pack-index] [--midx-checksum] PATH
      As `git cat-file --batch-check`: read object names from stdin, one per line (full ids, or hex prefixes
      of at least 4 digits); print for each `<id> <type> <size>` (or FORMAT expanded: %(objectname),
      %(objecttype), %(objectsize), %(objectsize:disk), %(deltabase), %(rest), %(objectpack),
      %(objectoffset)), `<name> missing`, `<name> ambiguous` (git's error: and hint: lines on stderr) or
      `<name> error <message>`; --batch adds the contents and a newline; --batch-command reads git's
      commands (`info <name>`, `contents <name>`, `flush` under --buffer). A bad FORMAT or a loose object of
      an unknown type is `fatal: ...` (exit 128), as git. HEAD, ref names, rev:path and replace refs are
      not resolved: they print `<name> missing` (a replaced id: its own type and size).
      %(objectsize:disk) and %(deltabase) read the pack's .rev file where git wrote one, else sort the .idx's offsets;
      %(objectpack) is `pack-<hash>.pack` or `loose`, %(objectoffset) empty for loose objects. With
      --batch-all-objects, print every object instead (buffered, as git), sorted by id without repeats,
      or with --unordered in git's order (loose objects, then each pack's in offset order). An index
      file or directory that cannot be read is reported once on stderr (`odb-index: warning: ...`) and its
      objects are `missing`, as git does.
  odb-index verify [--load mmap|read] PATH
      Check every pack index (against its pack's trailer and length) and multi-pack-index (against the
      indices of its packs, as `git multi-pack-index verify` does) fully; print `ok <file> <n> objects`
      or `error <file>: <reason>` for each; exit 1 if any failed.
--loose watched (the default) answers loose objects from fan-out listings kept current by inotify (Linux,
local file systems; elsewhere it probes, like probe); --no-refresh never re-reads the pack directories;
--no-events uses no inotify (stat the pack directories on a miss, probe loose objects); --events-after N sets
inotify up after N misses (default 2048; 0: at start), before which it stats and probes as --no-events.
--load read reads index files into memory instead of mapping them (for files rewritten in place).
--midx-check pack-index checks every multi-pack-index location against its pack's own .idx (a second search
per hit) and answers a wrong entry from the .idx files; bounds (the default) checks it against the pack's size.
--midx-checksum hashes each multi-pack-index whole when it is loaded and, if its trailing checksum does not
match, warns and answers from the .idx files (catches random corruption; costs a read of the whole file).
PATH is a work tree, a .git directory, a bare repository or an objects directory.";

/// Why the command stops (exit status 2, or git's 128).
enum Failure {
    /// A command-line mistake: one line, with a pointer to `--help`.
    Usage(String),
    /// Anything else (the repository cannot be opened, input or output failed): one line.
    Fatal(String),
    /// What git dies on, with git's message and exit status: `fatal: <message>`, exit 128.
    Git(String),
}

impl From<Fatal> for Failure {
    fn from(Fatal(msg): Fatal) -> Failure {
        Failure::Git(msg)
    }
}

fn usage(msg: impl Into<String>) -> Failure {
    Failure::Usage(msg.into())
}

fn fatal(msg: impl Into<String>) -> Failure {
    Failure::Fatal(msg.into())
}

impl From<lexopt::Error> for Failure {
    fn from(e: lexopt::Error) -> Failure {
        usage(e.to_string())
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(Failure::Usage(msg)) => {
            eprintln!("odb-index: {} (try `odb-index --help`)", one_line_str(&msg));
            ExitCode::from(2)
        }
        Err(Failure::Fatal(msg)) => {
            eprintln!("odb-index: {}", one_line_str(&msg));
            ExitCode::from(2)
        }
        Err(Failure::Git(msg)) => {
            eprintln!("fatal: {msg}");
            ExitCode::from(128)
        }
    }
}

fn one_line_str(s: &str) -> String {
    s.replace('\n', " ")
}

fn run() -> Result<ExitCode, Failure> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_env();
    let cmd = match parser.next()? {
        Some(Value(v)) => v.into_string().map_err(|_| usage("command is not UTF-8"))?,
        Some(Long("help")) | Some(Short('h')) => {
            println!("{USAGE}");
            return Ok(ExitCode::SUCCESS);
        }
        Some(other) => return Err(usage(other.unexpected().to_string())),
        None => return Err(usage("no command given")),
    };
    if cmd != "batch-check" && cmd != "verify" {
        return Err(usage(format!("unknown command {cmd:?}")));
    }
    let mut path: Option<PathBuf> = None;
    let mut buffer = false;
    let mut threads = 1usize;
    let mut format = batch_check::DEFAULT_FORMAT.to_owned();
    let mut contents = false;
    let mut commands = false;
    let mut all = false;
    let mut unordered = false;
    let mut options = Options::default();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("buffer") if cmd == "batch-check" => buffer = true,
            Long(mode @ ("batch-check" | "batch" | "batch-command")) if cmd == "batch-check" => {
                contents = mode == "batch";
                commands = mode == "batch-command";
                let mode = mode.to_owned();
                format = batch_check::DEFAULT_FORMAT.to_owned();
                if let Some(v) = parser.optional_value() {
                    format = v
                        .into_string()
                        .map_err(|v| usage(format!("--{mode} format is not UTF-8: {v:?}")))?;
                }
            }
            Long("batch-all-objects") if cmd == "batch-check" => all = true,
            Long("unordered") if cmd == "batch-check" => unordered = true,
            Long("no-refresh") if cmd == "batch-check" => {
                options = options.refresh(RefreshMode::Never)
            }
            Long("no-events") if cmd == "batch-check" => options = options.change_events(false),
            Long("events-after") if cmd == "batch-check" => {
                let v = parser.value()?;
                let n = v.to_str().and_then(|s| s.parse().ok()).ok_or_else(|| {
                    usage(format!(
                        "--events-after takes a number from 0 to {}, not {v:?}",
                        u32::MAX
                    ))
                })?;
                options = options.change_events_after(n);
            }
            Long("threads") if cmd == "batch-check" => {
                let v = parser.value()?;
                threads = v
                    .to_str()
                    .and_then(|s| s.parse().ok())
                    .filter(|&n: &usize| (1..=1024).contains(&n))
                    .ok_or_else(|| {
                        usage(format!(
                            "--threads takes a number from 1 to 1024, not {v:?}"
                        ))
                    })?;
            }
            Long("loose") if cmd == "batch-check" => {
                let v = parser.value()?;
                let mode = match v.to_str() {
                    Some("watched") => LooseMode::Watched,
                    Some("probe") => LooseMode::Probe,
                    Some("cached") => LooseMode::Cached,
                    Some("none") => LooseMode::None,
                    _ => {
                        return Err(usage(format!(
                            "--loose takes watched, probe, cached or none, not {v:?}"
                        )));
                    }
                };
                options = options.loose(mode);
            }
            Long("load") => {
                let v = parser.value()?;
                let mode = match v.to_str() {
                    Some("mmap") => LoadMode::Mmap,
                    Some("read") => LoadMode::Read,
                    _ => return Err(usage(format!("--load takes mmap or read, not {v:?}"))),
                };
                options = options.load(mode);
            }
            Long("midx-check") if cmd == "batch-check" => {
                let v = parser.value()?;
                let mode = match v.to_str() {
                    Some("bounds") => MidxCheck::Bounds,
                    Some("pack-index") => MidxCheck::PackIndex,
                    _ => {
                        return Err(usage(format!(
                            "--midx-check takes bounds or pack-index, not {v:?}"
                        )));
                    }
                };
                options = options.midx_check(mode);
            }
            Long("midx-checksum") if cmd == "batch-check" => {
                options = options.midx_checksum(true);
            }
            Value(v) if path.is_none() => path = Some(PathBuf::from(v)),
            Long("help") | Short('h') => {
                println!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            other => return Err(usage(other.unexpected().to_string())),
        }
    }
    let path = path.ok_or_else(|| usage(format!("{cmd} needs a PATH")))?;
    if cmd == "verify" {
        return verify(&path, options.load);
    }
    let format = Format::parse(&format, contents).map_err(Failure::Git)?;
    // As git: an index file that cannot be read is warned about once, and the objects only it lists are missing.
    let options = options.incomplete(IncompleteMode::Miss);
    let store = Store::open(&path, options).map_err(|e| fatal(e.to_string()))?;
    // git disables replace refs for --batch-all-objects.
    let format = match store.objects_dir().parent() {
        Some(git_dir) if !all => {
            format.with_replacements(replace::Replacements::read(git_dir, store.hash_kind()))
        }
        _ => format,
    };
    let mut warnings = Warnings::default();
    warnings.report(&store);
    let objects = || Objects::new(store.handle());
    let result = if commands && !all {
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let objects = objects();
        let ran = batch_command::run(
            &objects,
            &format,
            buffer,
            &mut stdin.lock(),
            &mut out,
            |r| next_line(r),
            &mut || {
                warnings.report(&store);
                warnings.report_objects(&objects);
            },
        );
        warnings.report(&store);
        warnings.report_objects(&objects);
        match ran {
            Ok(()) => out.flush().map_err(Stream::Output),
            Err(batch_command::Stop::Input(e)) => Err(Stream::Input(e)),
            Err(batch_command::Stop::Output(e)) => Err(Stream::Output(e)),
            Err(batch_command::Stop::Fatal(e)) => Err(Stream::Git(e)),
        }
    } else if all {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        // Buffered whatever `--buffer` says, as git does for --batch-all-objects.
        let objects = objects();
        let listed = batch_check::all_objects(&objects, &format, unordered, true, &mut out);
        warnings.report(&store);
        warnings.report_objects(&objects);
        match listed {
            Ok(()) => out.flush().map_err(Stream::Output),
            Err(batch_check::AllError::Write(e)) => Err(Stream::Output(e)),
            Err(batch_check::AllError::List(e)) => return Err(fatal(e.to_string())),
            Err(batch_check::AllError::Fatal(e)) => {
                out.flush()
                    .map_err(|e| fatal(format!("writing output: {e}")))?;
                return Err(e.into());
            }
        }
    } else {
        let answered = batch_check(&store, objects, &format, buffer, threads, &mut warnings);
        // Problems found on hits (a wrong multi-pack-index entry) load nothing new: ask once more at the end.
        warnings.seen = None;
        warnings.report(&store);
        answered
    };
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // The reader went away (`| head`): stop quietly, like git.
        Err(Stream::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Ok(ExitCode::SUCCESS)
        }
        Err(Stream::Output(e)) => Err(fatal(format!("writing output: {e}"))),
        Err(Stream::Input(e)) => Err(fatal(format!("reading standard input: {e}"))),
        Err(Stream::Git(e)) => Err(e.into()),
    }
}

/// An I/O error of `batch-check`, on the side it happened.
enum Stream {
    /// Reading standard input.
    Input(std::io::Error),
    /// Writing standard output.
    Output(std::io::Error),
    /// An object git dies on: the output so far was written.
    Git(Fatal),
}

fn one_line(e: &Error) -> String {
    e.to_string().replace('\n', " ")
}

/// The next input line without its terminator (`\n` or `\r\n`), as bytes; `None` at end of input.
fn next_line(input: &mut (impl BufRead + ?Sized)) -> std::io::Result<Option<Vec<u8>>> {
    // Room for a SHA-256 name and its terminator: one allocation per line, not four as the buffer doubles.
    let mut line = Vec::with_capacity(80);
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

/// The store's [`problems`](Store::problems) (an index that cannot be read, a missing alternate) and the
/// adapter's (a `.rev` file that cannot be used: [`Objects::take_problems`]), each written to stderr once.
#[derive(Default)]
struct Warnings {
    reported: std::collections::HashSet<String>,
    /// (`metrics().index_loads`, `listing_version`) when last asked: problems appear only when one of them moves,
    /// or when a file named like a loose object was found not to be one ([`batch_check::LOOSE_PROBLEM`]).
    seen: Option<(u64, u64)>,
}

impl Warnings {
    /// Files the adapter found unusable and answered around since the last call.
    fn report_objects(&mut self, objects: &Objects) {
        for e in objects.take_problems() {
            let text = e.to_string().replace('\n', " ");
            if self.reported.insert(text.clone()) {
                eprintln!("odb-index: warning: {text}");
            }
        }
    }

    fn report(&mut self, store: &Store) {
        let now = (store.metrics().index_loads, store.listing_version());
        let loose = batch_check::LOOSE_PROBLEM.swap(false, std::sync::atomic::Ordering::Relaxed);
        if self.seen == Some(now) && !loose {
            return;
        }
        self.seen = Some(now);
        for p in store.problems() {
            let text = p.to_string().replace('\n', " ");
            if self.reported.insert(text.clone()) {
                eprintln!("odb-index: warning: {text}");
            }
        }
    }
}

/// Lines read and answered at a time under `--buffer` or `--threads`.
const BATCH: usize = 4096;

/// Replace `batch` with the next (up to) [`BATCH`] lines of `input`; empty at the end of the input.
fn next_batch(input: &mut impl BufRead, batch: &mut Vec<Vec<u8>>) -> std::io::Result<()> {
    batch.clear();
    while batch.len() < BATCH {
        match next_line(input)? {
            Some(l) => batch.push(l),
            None => break,
        }
    }
    Ok(())
}

fn batch_check(
    store: &Store,
    objects: impl Fn() -> Objects,
    format: &Format,
    buffer: bool,
    threads: usize,
    warnings: &mut Warnings,
) -> Result<(), Stream> {
    let read = Stream::Input;
    let write = Stream::Output;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if threads <= 1 {
        let objects = objects();
        let mut buf = Vec::new();
        if buffer {
            // Buffered: answer a batch of lines at a time (`Handle::locate_many`, one handle for every batch),
            // output in input order.
            let mut handle = objects.handle();
            let mut batch = Vec::with_capacity(BATCH);
            loop {
                next_batch(&mut input, &mut batch).map_err(read)?;
                if batch.is_empty() {
                    break;
                }
                buf.clear();
                let answered =
                    batch_check::answer_lines(&objects, &mut handle, &batch, format, &mut buf);
                out.write_all(&buf).map_err(write)?;
                if let Err(e) = answered {
                    out.flush().map_err(write)?;
                    return Err(Stream::Git(e));
                }
                warnings.report_objects(&objects);
            }
            return out.flush().map_err(write);
        }
        while let Some(line) = next_line(&mut input).map_err(read)? {
            buf.clear();
            let answered = batch_check::answer_line(&objects, &line, format, &mut buf);
            out.write_all(&buf).map_err(write)?;
            if let Err(e) = answered {
                out.flush().map_err(write)?;
                return Err(Stream::Git(e));
            }
            out.flush().map_err(write)?;
            warnings.report(store);
            warnings.report_objects(&objects);
        }
        return out.flush().map_err(write);
    }
    // Several threads: read a batch, split it into one contiguous chunk per thread (one handle each, kept from
    // batch to batch), print the answers in input order.
    let mut handles: Vec<(Objects, Handle)> = (0..threads)
        .map(|_| {
            let o = objects();
            let h = o.handle();
            (o, h)
        })
        .collect();
    loop {
        let mut batch = Vec::with_capacity(BATCH);
        next_batch(&mut input, &mut batch).map_err(read)?;
        if batch.is_empty() {
            break;
        }
        let chunk = batch.len().div_ceil(threads);
        let results: Vec<(Vec<u8>, Option<Fatal>)> = std::thread::scope(|s| {
            let workers: Vec<_> = batch
                .chunks(chunk)
                .zip(handles.iter_mut())
                .map(|(lines, (o, h))| {
                    s.spawn(move || {
                        let mut buf = Vec::new();
                        let answered = batch_check::answer_lines(o, h, lines, format, &mut buf);
                        // On an error the lines after the one that failed are not answered: git dies there.
                        (buf, answered.err())
                    })
                })
                .collect();
            workers
                .into_iter()
                .map(|w| w.join().expect("lookup thread panicked"))
                .collect()
        });
        for (r, fatal) in results {
            out.write_all(&r).map_err(write)?;
            if let Some(e) = fatal {
                out.flush().map_err(write)?;
                return Err(Stream::Git(e));
            }
        }
        if !buffer {
            out.flush().map_err(write)?;
        }
        warnings.report(store);
        for (o, _) in &handles {
            warnings.report_objects(o);
        }
    }
    out.flush().map_err(write)
}

fn verify(path: &std::path::Path, load: LoadMode) -> Result<ExitCode, Failure> {
    let store = Store::open(
        path,
        Options::default()
            .refresh(RefreshMode::Never)
            .loose(LooseMode::None)
            .load(load),
    )
    .map_err(|e| fatal(e.to_string()))?;
    let mut failed = false;
    let mut any = false;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut emit = |line: String, failed_line: bool| -> Result<bool, Failure> {
        failed |= failed_line;
        match writeln!(out, "{line}") {
            Ok(()) => Ok(true),
            // The reader went away (`verify . | head`): stop quietly.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
            Err(e) => Err(fatal(format!("writing output: {e}"))),
        }
    };

    for v in store.verify() {
        any = true;
        let line = match &v.result {
            Ok(n) => format!("ok {} {n} objects", quote_path(&v.path)),
            // The error names the file already.
            Err(e) => format!(
                "error {}: {}",
                quote_path(&v.path),
                strip_path(&one_line(e), &v.path)
            ),
        };
        if !emit(line, v.result.is_err())? {
            return Ok(exit_code(failed));
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

/// `path` as git prints it (`quote_c_style` with `core.quotePath` on): as is when it holds only printable ASCII
/// other than `"` and `\`, else in double quotes with C escapes (`\n`, `\t`, `\"`, `\\`, ...) and every other
/// byte outside printable ASCII in octal (`\303\251`), so that a name with a newline stays on its line.
fn quote_path(path: &std::path::Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    let plain = |b: u8| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\';
    if bytes.iter().all(|&b| plain(b)) {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let mut q = String::from("\"");
    for &b in bytes {
        match b {
            b'\x07' => q.push_str("\\a"),
            b'\x08' => q.push_str("\\b"),
            b'\t' => q.push_str("\\t"),
            b'\n' => q.push_str("\\n"),
            b'\x0b' => q.push_str("\\v"),
            b'\x0c' => q.push_str("\\f"),
            b'\r' => q.push_str("\\r"),
            b'"' => q.push_str("\\\""),
            b'\\' => q.push_str("\\\\"),
            b if plain(b) => q.push(char::from(b)),
            b => q.push_str(&format!("\\{b:03o}")),
        }
    }
    q.push('"');
    q
}
