//! The command line, parsed with `lexopt`: git's spellings (`--batch-check[=FORMAT]`, `--buffer`,
//! `--batch-all-objects`, ...), odb-index's own options, and the combinations that contradict each other refused
//! (git's message where git has one).

use std::ffi::OsString;
use std::path::PathBuf;

use lexopt::prelude::*;
use odb_index::{LoadMode, LooseMode, MidxCheck, Options, RefreshMode};

/// `--help`.
pub const USAGE: &str = "usage:
  odb-index batch-check [--batch-check[=FORMAT] | --batch[=FORMAT] | --batch-command[=FORMAT]]
                        [--batch-all-objects [--unordered]] [--buffer]
                        [--threads N] [--no-refresh] [--no-events | --events-after N]
                        [--loose watched|probe|cached|none] [--load mmap|read] [--midx-check bounds|pack-index] [--midx-checksum] PATH
      As `git cat-file --batch-check`: read object names from stdin, one per line (full ids, hex prefixes
      of at least 4 digits, or names as git reads them: HEAD, refs, rev~N, rev^N, rev^{tree}, rev:path); print for each `<id> <type> <size>` (or FORMAT expanded: %(objectname),
      %(objecttype), %(objectsize), %(objectsize:disk), %(deltabase), %(rest), %(objectpack),
      %(objectoffset)), `<name> missing`, `<name> ambiguous` (git's error: and hint: lines on stderr) or
      `<name> error <message>`. --batch adds the contents and a newline. --batch-command reads git's three
      commands, one a line: `info <name>`, `contents <name>` and `flush` (only under --buffer); anything else
      is git's `fatal: unknown command: '<line>'` (exit 128). A bad FORMAT or a loose object of an unknown type
      is `fatal: ...` (exit 128), as git. Replace refs (refs/replace/) are honoured as git honours them: a
      replaced id is answered with its replacement's type, size and contents under its own name (not with
      --batch-all-objects, nor with GIT_NO_REPLACE_OBJECTS set). HEAD, ref names and rev:path are resolved
      as git resolves them (refs of the repository at or above PATH), rev^{/text} and :/text too; reflog forms
      (@{1}), :path (the index) and refs in the reftable format are not: `<name> error <message>` naming the form.
      %(objectsize:disk) and %(deltabase) read the pack's .rev file where git wrote one, else sort the .idx's offsets;
      %(objectpack) is the pack's file name (`pack-<hash>.pack`; quoted as git quotes paths when it holds a
      control character, `\"`, `\\` or a byte outside ASCII) or `loose`, %(objectoffset) empty for loose objects.
      Without --buffer every answer is written before the next line is waited for (an interactive client
      gets each answer at once, with --threads too); --buffer writes when the output buffer is full.
      With --batch-all-objects, print every object instead (buffered, as git), sorted by id without repeats,
      or with --unordered in git's order (loose objects, then each pack's in offset order). An index
      file or directory that cannot be read is reported once on stderr (`odb-index: warning: ...`) and its
      objects are `missing`, as git does.
  odb-index verify [--load mmap|read] PATH
      Check every pack index (against its pack's trailer and length) and multi-pack-index (against the
      indices of its packs, as `git multi-pack-index verify` does) fully; print `ok <file> <n> objects`
      or `error <file>: <reason>` for each; exit 1 if any failed.
--threads N answers with N threads (1 to 1024; not with --batch-command or --batch-all-objects).
--loose watched (the default) answers loose objects from fan-out listings kept current by inotify (Linux,
local file systems; elsewhere it probes, like probe); --no-refresh never re-reads the pack directories;
--no-events uses no inotify (stat the pack directories on a miss, probe loose objects); --events-after N sets
inotify up after N misses (default 2048; 0: at start), before which it stats and probes as --no-events.
--load read reads index files into memory instead of mapping them (for files rewritten in place).
--midx-check pack-index checks every multi-pack-index location against its pack's own .idx (a second search
per hit) and answers a wrong entry from the .idx files; bounds (the default) checks it against the pack's size.
--midx-checksum hashes each multi-pack-index whole when it is loaded and, if its trailing checksum does not
match, warns and answers from the .idx files (catches random corruption; costs a read of the whole file).
PATH is a work tree (or a directory of one, as `git -C <dir>`), a .git directory, a bare repository or an
objects directory.";

/// What the command line asks for.
pub enum Command {
    /// `--help`.
    Help,
    /// `verify [--load MODE] PATH`.
    Verify { path: PathBuf, load: LoadMode },
    /// `batch-check ... PATH`.
    BatchCheck(BatchArgs),
}

/// Which of git's batch modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `--batch-check` (the default).
    Check,
    /// `--batch`: the contents follow each line.
    Batch,
    /// `--batch-command`: git's commands on stdin.
    Commands,
}

/// `batch-check`'s arguments.
pub struct BatchArgs {
    pub path: PathBuf,
    pub mode: Mode,
    pub format: String,
    pub all: bool,
    pub unordered: bool,
    pub buffer: bool,
    pub threads: usize,
    pub options: Options,
}

/// Parse the arguments after the program's name; `Err` is a usage error, one line.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut p = lexopt::Parser::from_args(args);
    let cmd = match p.next().map_err(text)? {
        Some(Value(v)) => v,
        Some(Long("help") | Short('h')) => return Ok(Command::Help),
        Some(other) => return Err(other.unexpected().to_string()),
        None => return Err("no command given".into()),
    };
    match cmd.to_str() {
        Some("batch-check") => batch_check(&mut p),
        Some("verify") => verify(&mut p),
        _ => Err(format!("unknown command {cmd:?}")),
    }
}

fn text(e: lexopt::Error) -> String {
    e.to_string()
}

fn verify(p: &mut lexopt::Parser) -> Result<Command, String> {
    let mut path = None;
    let mut load = LoadMode::Mmap;
    while let Some(arg) = p.next().map_err(text)? {
        match full(arg, &["load", "help"])? {
            Long("load") => load = choice(p, "--load", LOAD)?,
            Long("help") | Short('h') => return Ok(Command::Help),
            Value(v) if path.is_none() => path = Some(PathBuf::from(v)),
            other => return Err(other.unexpected().to_string()),
        }
    }
    let path = path.ok_or("verify needs a PATH")?;
    Ok(Command::Verify { path, load })
}

const LOAD: &[(&str, LoadMode)] = &[("mmap", LoadMode::Mmap), ("read", LoadMode::Read)];
const LOOSE: &[(&str, LooseMode)] = &[
    ("watched", LooseMode::Watched),
    ("probe", LooseMode::Probe),
    ("cached", LooseMode::Cached),
    ("none", LooseMode::None),
];
const MIDX_CHECK: &[(&str, MidxCheck)] = &[
    ("bounds", MidxCheck::Bounds),
    ("pack-index", MidxCheck::PackIndex),
];

/// `batch-check`'s long options, in git's order where git has them (its ambiguity message names the last two
/// that a prefix matches, in this order).
const BATCH_LONGS: &[&str] = &[
    "batch",
    "batch-check",
    "batch-command",
    "batch-all-objects",
    "buffer",
    "unordered",
    "threads",
    "no-refresh",
    "no-events",
    "events-after",
    "loose",
    "load",
    "midx-check",
    "midx-checksum",
    "help",
];

/// `arg` with a long option's name completed as git's option parser completes it: the option of that exact name,
/// else the only one it is a prefix of (`--buf` is `--buffer`); a prefix of several is git's "ambiguous option".
fn full(arg: lexopt::Arg<'_>, longs: &[&'static str]) -> Result<lexopt::Arg<'static>, String> {
    match arg {
        Short(c) => Ok(Short(c)),
        Value(v) => Ok(Value(v)),
        Long(given) => {
            if let Some(name) = longs.iter().find(|n| **n == given) {
                return Ok(Long(name));
            }
            let hits: Vec<&'static str> = longs
                .iter()
                .copied()
                .filter(|n| !given.is_empty() && n.starts_with(given))
                .collect();
            match hits[..] {
                [name] => Ok(Long(name)),
                [] => Err(Long(given).unexpected().to_string()),
                [.., a, b] => Err(format!(
                    "ambiguous option: {given} (could be --{a} or --{b})"
                )),
            }
        }
    }
}

/// The options seen, before their conflicts are checked.
#[derive(Default)]
struct Seen {
    /// The batch options given (`--batch-check`, `--batch`, `--batch-command`), in order.
    modes: Vec<Mode>,
    no_events: bool,
    events_after: Option<u32>,
}

fn batch_check(p: &mut lexopt::Parser) -> Result<Command, String> {
    let mut a = BatchArgs {
        path: PathBuf::new(),
        mode: Mode::Check,
        format: crate::batch_check::DEFAULT_FORMAT.to_owned(),
        all: false,
        unordered: false,
        buffer: false,
        threads: 1,
        options: Options::default(),
    };
    let mut path = None;
    let mut seen = Seen::default();
    while let Some(arg) = p.next().map_err(text)? {
        match full(arg, BATCH_LONGS)? {
            Long(m @ ("batch-check" | "batch" | "batch-command")) => {
                let name = format!("--{m}");
                seen.modes.push(match m {
                    "batch" => Mode::Batch,
                    "batch-command" => Mode::Commands,
                    _ => Mode::Check,
                });
                if let Some(v) = p.optional_value() {
                    a.format = v
                        .into_string()
                        .map_err(|v| format!("{name} format is not UTF-8: {v:?}"))?;
                }
            }
            Long("buffer") => a.buffer = true,
            Long("batch-all-objects") => a.all = true,
            Long("unordered") => a.unordered = true,
            Long("threads") => a.threads = number(p, "--threads", 1, 1024)? as usize,
            Long("no-refresh") => a.options = a.options.refresh(RefreshMode::Never),
            Long("no-events") => seen.no_events = true,
            Long("events-after") => {
                seen.events_after = Some(number(p, "--events-after", 0, u32::MAX)?)
            }
            Long("loose") => a.options = a.options.loose(choice(p, "--loose", LOOSE)?),
            Long("load") => a.options = a.options.load(choice(p, "--load", LOAD)?),
            Long("midx-check") => {
                a.options = a.options.midx_check(choice(p, "--midx-check", MIDX_CHECK)?)
            }
            Long("midx-checksum") => a.options = a.options.midx_checksum(true),
            Long("help") | Short('h') => return Ok(Command::Help),
            Value(v) if path.is_none() => path = Some(PathBuf::from(v)),
            other => return Err(other.unexpected().to_string()),
        }
    }
    a.path = path.ok_or("batch-check needs a PATH")?;
    settle(a, seen).map(Command::BatchCheck)
}

/// Refuse what contradicts itself, and apply what depends on several options.
fn settle(mut a: BatchArgs, seen: Seen) -> Result<BatchArgs, String> {
    let conflict =
        |x: &str, y: &str| Err(format!("options '{x}' and '{y}' cannot be used together"));
    match seen.modes[..] {
        [] => {}
        [m] => a.mode = m,
        // git's message and rule: a second batch option is an error, even the same one again.
        _ => return Err("only one batch option may be specified".into()),
    }
    match (seen.no_events, seen.events_after) {
        (true, Some(_)) => return conflict("--no-events", "--events-after"),
        (true, None) => a.options = a.options.change_events(false),
        (false, Some(n)) => a.options = a.options.change_events_after(n),
        (false, None) => {}
    }
    if a.threads > 1 && a.all {
        return conflict("--threads", "--batch-all-objects");
    }
    if a.threads > 1 && a.mode == Mode::Commands {
        return conflict("--threads", "--batch-command");
    }
    Ok(a)
}

/// The value of `name`, a number from `min` to `max`.
fn number(p: &mut lexopt::Parser, name: &str, min: u32, max: u32) -> Result<u32, String> {
    let v = p.value().map_err(text)?;
    v.to_str()
        .and_then(|s| s.parse().ok())
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{name} takes a number from {min} to {max}, not {v:?}"))
}

/// The value of `name`, one of `table`'s names.
fn choice<T: Copy>(p: &mut lexopt::Parser, name: &str, table: &[(&str, T)]) -> Result<T, String> {
    let v = p.value().map_err(text)?;
    table
        .iter()
        .find(|(n, _)| v.to_str() == Some(n))
        .map(|&(_, t)| t)
        .ok_or_else(|| {
            let names: Vec<&str> = table.iter().map(|(n, _)| *n).collect();
            format!("{name} takes {}, not {v:?}", names.join(" or "))
        })
}
