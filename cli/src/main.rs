//! The `odb-index` command: look objects up, verify index files. (The benchmark is the `odb-index-bench`
//! package.) Its manual is `cli/README.md`.
// The modelled facade is the library's (its protocol runs under loom): the command's own threads use std's
// atomics; its file reads still go through odb_index::data (`disallowed-methods`, .clippy.toml).
#![allow(clippy::disallowed_types)]

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use odb_index::{Error, Handle, IncompleteMode, LoadMode, LooseMode, Options, RefreshMode, Store};
use odb_index_gix::Objects;

mod ambiguous;
mod args;
mod batch_check;
mod batch_command;
mod names;
mod quote;
mod replace;
mod stop;
use args::{BatchArgs, Command, Mode};
use batch_check::Format;
use quote::quote_path;
use stop::{GitFatal, Stop};

/// Why the command stops (exit status 2, or git's 128).
enum Failure {
    /// A command-line mistake: one line, with a pointer to `--help`.
    Usage(String),
    /// Anything else (the repository cannot be opened, input or output failed): one line.
    Error(String),
    /// What git dies on, with git's message and exit status: `fatal: <message>`, exit 128.
    Git(String),
}

impl From<GitFatal> for Failure {
    fn from(GitFatal(msg): GitFatal) -> Failure {
        Failure::Git(msg)
    }
}

fn failure(msg: impl Into<String>) -> Failure {
    Failure::Error(msg.into())
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(Failure::Usage(msg)) => {
            eprintln!("odb-index: {} (try `odb-index --help`)", one_line_str(&msg));
            ExitCode::from(2)
        }
        Err(Failure::Error(msg)) => {
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
    let args = match args::parse(std::env::args_os().skip(1)).map_err(Failure::Usage)? {
        Command::Help => {
            println!("{}", args::USAGE);
            return Ok(ExitCode::SUCCESS);
        }
        Command::Verify { path, load } => return verify(&path, load),
        Command::BatchCheck(args) => args,
    };
    let format = Format::parse(&args.format, args.mode == Mode::Batch).map_err(Failure::Git)?;
    // As git: an index file that cannot be read is warned about once, and the objects only it lists are missing.
    // Each `.pack` mapped with its index, as git opens a pack at the lookup that finds an object in it (a batch
    // reads its objects after locating them all, by which time the file may have been renamed away).
    let options = args
        .options
        .clone()
        .incomplete(IncompleteMode::Miss)
        .pack_data(true);
    let store = match Store::open(&args.path, options.clone()) {
        Ok(store) => store,
        // A directory of a work tree, as `git -C <dir>` takes it: the repository above it (names are read
        // relative to the directory: `HEAD:./b`).
        Err(e) => match work_tree_of(&args.path) {
            Some(top) => Store::open(&top, options).map_err(|e| failure(e.to_string()))?,
            None => return Err(failure(e.to_string())),
        },
    };
    // git disables replace refs for --batch-all-objects.
    let format = match store.objects_dir().parent() {
        Some(git_dir) if !args.all => {
            format.with_replacements(replace::Replacements::read(git_dir, store.hash_kind())?)
        }
        _ => format,
    };
    // Names other than hex (`HEAD`, refs, `rev:path`) in the repository at or above the path, as git finds it.
    // A failure while looking for it is git's fatal error (its names would all answer `missing`).
    let format = match names::refs_for(&store, &args.path) {
        Ok(Some(refs)) => format.with_refs(refs),
        Ok(None) => format,
        Err(e) => return Err(Failure::Git(one_line_str(&e.to_string()))),
    };
    if args.all
        && let Some(msg) = midx_git_dies_on(&store)
    {
        return Err(Failure::Git(one_line_str(&msg)));
    }
    let mut warnings = Warnings::default();
    warnings.report(&store);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = if args.all {
        all_objects(&store, &format, &args, &mut out, &mut warnings)
    } else if args.mode == Mode::Commands {
        commands(&store, &format, &args, &mut out, &mut warnings)
    } else {
        let answered = batch_check(&store, &format, &args, &mut out, &mut warnings);
        // Problems found on hits (a wrong multi-pack-index entry) load nothing new: ask once more at the end.
        warnings.seen = None;
        warnings.report(&store);
        answered
    };
    // The answers written before a fatal error are git's too: flush them first.
    let result = result.and_then(|()| out.flush().map_err(Stop::Output));
    let result = result.or_else(|e| match e {
        Stop::Git(_) => out.flush().map_err(Stop::Output).and(Err(e)),
        e => Err(e),
    });
    // The process ends here: its mappings go with it, as git's do. Dropping the store would unmap every index
    // file one `munmap` at a time (a thousand for a 1 000-layer multi-pack-index chain) for nothing.
    std::mem::forget(store);
    match result {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // The reader went away (`| head`): stop quietly, like git.
        Err(Stop::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(Stop::Output(e)) => Err(failure(format!("writing output: {e}"))),
        Err(Stop::Input(e)) => Err(failure(format!("reading standard input: {e}"))),
        Err(Stop::Store(e)) => Err(failure(e.to_string())),
        Err(Stop::Git(e)) => Err(e.into()),
    }
}

/// `--batch-all-objects`: buffered whatever `--buffer` says, as git does.
fn all_objects(
    store: &Arc<Store>,
    format: &Format,
    args: &BatchArgs,
    out: &mut impl Write,
    warnings: &mut Warnings,
) -> Result<(), Stop> {
    let objects = Objects::new(store.handle());
    let listed = batch_check::all_objects(&objects, format, args.unordered, out);
    warnings.report(store);
    warnings.report_objects(&objects);
    listed
}

/// The top of the work tree `path` is a directory of (not the top itself, not inside its git directory), as git
/// finds the repository from there; `None` otherwise.
fn work_tree_of(path: &Path) -> Option<std::path::PathBuf> {
    let repo = odb_index_gix::Repository::discover(path).ok()?;
    let (top, path) = (repo.work_tree()?, path.canonicalize().ok()?);
    let inside = path != top && path.starts_with(top) && !path.starts_with(repo.git_dir());
    inside.then(|| top.to_owned())
}

/// The multi-pack-index problem git dies on when it loads the file (t5319: `die()` in its `midx.c`), if the
/// store ignored a multi-pack-index for one: under `--batch-all-objects` git lists nothing then, where the
/// command would list every object from the `.idx` files (its lookups still answer from them, with a warning).
fn midx_git_dies_on(store: &Arc<Store>) -> Option<String> {
    use odb_index::midx::MidxProblem as P;
    // A miss searches every index, which loads each multi-pack-index (its problems are known after).
    let kind = store.hash_kind();
    let zeros = "0".repeat(kind.hex_len());
    if let Ok(id) = odb_index::ObjectId::from_hex_kind(zeros.as_bytes(), kind) {
        let _ = store.handle().locate(&id);
    }
    store.problems().into_iter().find_map(|p| {
        let (odb_index::Problem::MultiPackIndexIgnored { error, .. }
        | odb_index::Problem::MultiPackIndexNotLoaded { error, .. }) = p
        else {
            return None;
        };
        let Error::CorruptMultiPackIndex { problem, .. } = &*error else {
            return None;
        };
        let dies = match problem {
            P::BadSignature { .. }
            | P::UnsupportedVersion { .. }
            | P::FanoutNotMonotonic { .. }
            | P::PackNamesOutOfOrder { .. }
            | P::PackNamesTruncated { .. } => true,
            // The chunks git requires.
            P::MissingChunk { id } | P::WrongChunkSize { id, .. } => {
                [b"PNAM", b"OIDF", b"OIDL", b"OOFF"].contains(&&id.0)
            }
            _ => false,
        };
        dies.then(|| error.to_string())
    })
}

/// `--batch-command`: git's commands on stdin.
fn commands(
    store: &Arc<Store>,
    format: &Format,
    args: &BatchArgs,
    out: &mut impl Write,
    warnings: &mut Warnings,
) -> Result<(), Stop> {
    let objects = Objects::new(store.handle());
    let stdin = std::io::stdin();
    let ran = batch_command::run(
        &objects,
        format,
        args.buffer,
        &mut stdin.lock(),
        out,
        |r| next_line(r),
        &mut || {
            warnings.report(store);
            warnings.report_objects(&objects);
        },
    );
    warnings.report(store);
    warnings.report_objects(&objects);
    ran
}

/// An error of the store, one line.
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

/// Lines answered at a time under `--buffer` or `--threads`, at most.
const BATCH: usize = 4096;

/// Bytes of standard input read at a time (the lines a batch without `--buffer` may take without waiting).
const INPUT_BUFFER: usize = 64 * 1024;

/// Replace `batch` with the next lines of `input`, at most [`BATCH`]; empty at the end of the input. With `fill`
/// (`--buffer`) it waits for input until the batch is full; without, it waits for the first line only and then
/// takes the complete lines already read, so that no answer waits for a line the client has not sent yet.
fn next_batch<R: Read>(
    input: &mut BufReader<R>,
    batch: &mut Vec<Vec<u8>>,
    fill: bool,
) -> std::io::Result<()> {
    batch.clear();
    while batch.len() < BATCH {
        // A line is complete in the buffer once its `\n` is there: reading it then does not wait.
        if !fill && !batch.is_empty() && !input.buffer().contains(&b'\n') {
            break;
        }
        match next_line(input)? {
            Some(l) => batch.push(l),
            None => break,
        }
    }
    Ok(())
}

/// `--batch-check` and `--batch`: one answer per input line, in input order.
fn batch_check(
    store: &Arc<Store>,
    format: &Format,
    args: &BatchArgs,
    out: &mut impl Write,
    warnings: &mut Warnings,
) -> Result<(), Stop> {
    let mut input = BufReader::with_capacity(INPUT_BUFFER, std::io::stdin().lock());
    if args.threads > 1 {
        return threaded(store, format, args, &mut input, out, warnings);
    }
    let objects = Objects::new(store.handle());
    let mut buf = Vec::new();
    if args.buffer {
        // Buffered: answer a batch of lines at a time (`Handle::locate_many`, one handle for every batch),
        // output in input order.
        let mut handle = objects.handle();
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            next_batch(&mut input, &mut batch, true).map_err(Stop::Input)?;
            if batch.is_empty() {
                return Ok(());
            }
            buf.clear();
            let answered =
                batch_check::answer_lines(&objects, &mut handle, &batch, format, &mut buf);
            out.write_all(&buf).map_err(Stop::Output)?;
            answered?;
            warnings.report_objects(&objects);
        }
    }
    while let Some(line) = next_line(&mut input).map_err(Stop::Input)? {
        buf.clear();
        let answered = batch_check::answer_line(&objects, &line, format, &mut buf);
        out.write_all(&buf).map_err(Stop::Output)?;
        answered?;
        out.flush().map_err(Stop::Output)?;
        warnings.report(store);
        warnings.report_objects(&objects);
    }
    Ok(())
}

/// Several threads: read a batch, split it into one contiguous chunk per thread (one handle each, kept from
/// batch to batch), print the answers in input order; without `--buffer`, flushed before more input is awaited.
/// A thread that cannot be spawned (no memory for its stack, a limit on threads) means fewer workers: its chunk
/// is answered on the calling thread, the next batches use the threads that did start (down to the calling
/// thread alone), and stderr says so once.
fn threaded<R: Read>(
    store: &Arc<Store>,
    format: &Format,
    args: &BatchArgs,
    input: &mut BufReader<R>,
    out: &mut impl Write,
    warnings: &mut Warnings,
) -> Result<(), Stop> {
    let threads = match threads_that_fit() {
        Some(fit) if fit < args.threads => {
            let fit = fit.max(1);
            eprintln!(
                "odb-index: warning: {} threads do not fit the address space this process may map (ulimit -v): \
                 answering with {fit} thread{}",
                args.threads,
                if fit == 1 { "" } else { "s" }
            );
            fit
        }
        _ => args.threads,
    };
    // Clones of one reader: a pack one worker has opened is read by every worker (its mapping shared), as one
    // git process reads a pack it has opened after its files are renamed away.
    let spare = Objects::new(store.handle());
    let mut handles: Vec<(Objects, Handle)> = (0..threads)
        .map(|_| {
            let o = spare.clone();
            let h = o.handle();
            (o, h)
        })
        .collect();
    let mut batch = Vec::with_capacity(BATCH);
    let mut spawn_failed = false;
    loop {
        next_batch(input, &mut batch, args.buffer).map_err(Stop::Input)?;
        if batch.is_empty() {
            return Ok(());
        }
        let (results, started) = answer_threaded(&spare, format, &batch, &mut handles);
        // Fewer workers from now on: those that started (the calling thread alone if none did).
        let shrink = started.err().map(|e| {
            let workers = results.iter().filter(|r| r.threaded).count().max(1);
            if !spawn_failed {
                spawn_failed = true;
                eprintln!(
                    "odb-index: warning: cannot start a thread ({e}): answering with {workers} thread{}",
                    if workers == 1 { "" } else { "s" }
                );
            }
            workers
        });
        for r in results {
            out.write_all(&r.out).map_err(Stop::Output)?;
            if let Some(e) = r.fatal {
                return Err(Stop::Git(e));
            }
        }
        if !args.buffer {
            out.flush().map_err(Stop::Output)?;
        }
        warnings.report(store);
        for (o, _) in &handles {
            warnings.report_objects(o);
        }
        if let Some(workers) = shrink {
            handles.truncate(workers);
        }
    }
}

/// How many worker threads fit the address space the process may map (`RLIMIT_AS`, which `ulimit -v` sets): their
/// stacks (std's 2 MiB, or `RUST_MIN_STACK`) take at most a quarter of it, so that the room the answers need is
/// left. Under a low limit every thread could start and the next allocation fail, which aborts the process (Rust
/// cannot recover from a failed allocation): `ulimit -v 60000` with `--threads 28` did, where git, one thread,
/// answers. `None`: no limit (or none that can be read).
fn threads_that_fit() -> Option<usize> {
    #[cfg(unix)]
    {
        let limit = rustix::process::getrlimit(rustix::process::Resource::As).current?;
        let stack: u64 = std::env::var("RUST_MIN_STACK")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(2 << 20);
        usize::try_from(limit / stack.saturating_mul(4).max(1)).ok()
    }
    #[cfg(not(unix))]
    None
}

/// The answers to one chunk of a batch: the lines written, the fatal error they stopped at, and whether a
/// worker thread answered them (not the calling thread).
struct Chunk {
    out: Vec<u8>,
    fatal: Option<GitFatal>,
    threaded: bool,
}

/// Answer `batch` in one chunk per handle, each on a thread of its own: with one handle, on the calling thread.
/// A chunk whose thread cannot be spawned is answered on the calling thread by `spare` (a clone of the workers'
/// reader) with a new handle; the first spawn error is returned beside the answers (in input order).
fn answer_threaded(
    spare: &Objects,
    format: &Format,
    batch: &[Vec<u8>],
    handles: &mut [(Objects, Handle)],
) -> (Vec<Chunk>, std::io::Result<()>) {
    let answer = |o: &Objects, h: &mut Handle, lines: &[Vec<u8>], threaded: bool| {
        let mut out = Vec::new();
        let answered = batch_check::answer_lines(o, h, lines, format, &mut out);
        // On an error the lines after the one that failed are not answered: git dies there.
        Chunk {
            out,
            fatal: answered.err(),
            threaded,
        }
    };
    if let [(o, h)] = handles {
        return (vec![answer(o, h, batch, false)], Ok(()));
    }
    let chunk = batch.len().div_ceil(handles.len());
    let mut first_error = Ok(());
    let results = std::thread::scope(|s| {
        let mut workers = Vec::with_capacity(handles.len());
        for (lines, (o, h)) in batch.chunks(chunk).zip(handles.iter_mut()) {
            let spawned = odb_index::fault::check(odb_index::fault::Call::Spawn).and_then(|()| {
                std::thread::Builder::new().spawn_scoped(s, move || answer(o, h, lines, true))
            });
            match spawned {
                Ok(w) => workers.push(Ok(w)),
                Err(e) => {
                    if first_error.is_ok() {
                        first_error = Err(e);
                    }
                    workers.push(Err(lines));
                }
            }
        }
        workers
            .into_iter()
            .map(|w| match w {
                Ok(w) => w.join().expect("lookup thread panicked"),
                Err(lines) => {
                    let mut h = spare.handle();
                    answer(spare, &mut h, lines, false)
                }
            })
            .collect()
    });
    (results, first_error)
}

fn verify(path: &Path, load: LoadMode) -> Result<ExitCode, Failure> {
    let store = Store::open(
        path,
        Options::default()
            .refresh(RefreshMode::Never)
            .loose(LooseMode::None)
            .load(load),
    )
    .map_err(|e| failure(e.to_string()))?;
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
            Err(e) => Err(failure(format!("writing output: {e}"))),
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
fn strip_path(msg: &str, path: &Path) -> String {
    let prefix = format!("{}: ", path.display());
    msg.strip_prefix(&prefix).unwrap_or(msg).to_owned()
}
