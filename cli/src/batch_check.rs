//! `batch-check`: git's `cat-file --batch-check[=<format>]` output on odb-index (through odb-index-gix).

use std::io::Write;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use odb_index::{Handle, HashKind, Location, ObjectId, PrefixLookup};
use odb_index_gix::{Answer, Objects, Place, Want};

use crate::ambiguous;
use crate::quote::quote_c_style;
use crate::replace::Replacements;
use crate::stop::{GitFatal, Stop};

/// git's default format.
pub const DEFAULT_FORMAT: &str = "%(objectname) %(objecttype) %(objectsize)";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Atom {
    Name,
    Type,
    Size,
    DiskSize,
    DeltaBase,
    Rest,
    Pack,
    Offset,
}

#[derive(Clone, Debug)]
enum Part {
    Text(Vec<u8>),
    Atom(Atom),
}

/// A parsed `--batch-check=<format>`.
#[derive(Clone, Debug)]
pub struct Format {
    parts: Vec<Part>,
    /// What an answer reads of the object (`contents`: `--batch`, the object's contents and a newline follow
    /// the line).
    want: Want,
    /// `%(rest)` present: the input line is split at its first space or tab, as git does.
    split: bool,
    /// Replace refs to honour for named objects.
    replace: Replacements,
    /// The repository's refs, for names other than hex (`HEAD`, `main~2`, `HEAD:path`): `crate::names`.
    refs: Option<std::sync::Arc<odb_index_gix::Refs>>,
}

impl Format {
    /// Parse as git's `expand_format`: `%(atom)` expands, `%%` and a `%` before anything but `(` stay `%`,
    /// an unknown atom or an unclosed `%(` is an error with git's message (`bad cat-file format: ...`).
    /// `contents`: `--batch` (the object's contents follow each line).
    pub fn parse(format: &str, contents: bool) -> Result<Format, String> {
        let mut parts = Vec::new();
        let mut text = Vec::new();
        let mut rest = format;
        while let Some(i) = rest.find('%') {
            text.extend_from_slice(&rest.as_bytes()[..i]);
            rest = &rest[i + 1..];
            if let Some(r) = rest.strip_prefix('%') {
                text.push(b'%');
                rest = r;
            } else if let Some(r) = rest.strip_prefix('(') {
                let end = r.find(')').ok_or_else(|| {
                    format!("bad cat-file format: element '({r}' does not end in ')'")
                })?;
                let atom = match &r[..end] {
                    "objectname" => Atom::Name,
                    "objecttype" => Atom::Type,
                    "objectsize" => Atom::Size,
                    "objectsize:disk" => Atom::DiskSize,
                    "deltabase" => Atom::DeltaBase,
                    "rest" => Atom::Rest,
                    "objectpack" => Atom::Pack,
                    "objectoffset" => Atom::Offset,
                    other => return Err(format!("bad cat-file format: %({other})")),
                };
                parts.push(Part::Text(std::mem::take(&mut text)));
                parts.push(Part::Atom(atom));
                rest = &r[end + 1..];
            } else {
                text.push(b'%');
            }
        }
        text.extend_from_slice(rest.as_bytes());
        parts.push(Part::Text(text));
        let has = |a| parts.iter().any(|p| matches!(p, Part::Atom(x) if *x == a));
        Ok(Format {
            want: Want {
                header: has(Atom::Type) || has(Atom::Size),
                contents,
                disk_size: has(Atom::DiskSize),
                delta_base: has(Atom::DeltaBase),
            },
            split: has(Atom::Rest),
            parts,
            replace: Replacements::none(),
            refs: None,
        })
    }

    /// The two formats of `--batch-command`: `info` (the line only) and `contents` (with the contents). git does
    /// not split its arguments at blanks: `%(rest)` is empty there.
    pub fn for_commands(&self) -> (Format, Format) {
        let info = Format {
            split: false,
            want: Want {
                contents: false,
                ..self.want
            },
            ..self.clone()
        };
        let contents = Format {
            want: Want {
                contents: true,
                ..info.want
            },
            ..info.clone()
        };
        (info, contents)
    }

    /// Whether an answer reads anything of the object (its type, size, place or contents): not for a format of
    /// `%(objectname)` and `%(rest)` only, without `--batch`.
    fn reads_object(&self) -> bool {
        self.want.contents
            || self
                .parts
                .iter()
                .any(|p| matches!(p, Part::Atom(a) if !matches!(a, Atom::Name | Atom::Rest)))
    }

    /// Resolve names other than hex with `refs`.
    pub fn with_refs(mut self, refs: odb_index_gix::Refs) -> Format {
        self.refs = Some(std::sync::Arc::new(refs));
        self
    }

    /// Answer each named object with its replacement's type, size and contents, as git does.
    pub fn with_replacements(mut self, replace: Replacements) -> Format {
        self.replace = replace;
        self
    }
}

/// Append the answers for `lines` (each without its terminator) to `out`, in order, as [`answer_line`] would;
/// stops at the first fatal error, as git dies there.
///
/// The full-length ids among them are looked up first, all at once, with [`Handle::locate_many`] on `handle` (a
/// handle of `objects`' store, kept by the caller from batch to batch: it keeps its snapshot, its miss filter
/// and its watched fan-out listings, which a new handle per batch would build again): their searches run
/// interleaved and their misses share one change check. An id that no replace ref names is answered from that
/// (a miss at once, a hit read where the batch located it); everything else (prefixes, replaced ids, a lookup
/// that failed) by [`answer_line`].
pub fn answer_lines(
    objects: &Objects,
    handle: &mut Handle,
    lines: &[Vec<u8>],
    format: &Format,
    out: &mut Vec<u8>,
) -> Result<(), GitFatal> {
    let kind = objects.store().hash_kind();
    let mut ids = Vec::with_capacity(lines.len());
    let names: Vec<(&[u8], Option<usize>)> = lines
        .iter()
        .map(|l| {
            let name = split(l, format).0;
            let at = ObjectId::from_hex_kind(name, kind)
                .ok()
                .filter(|id| format.replace.resolve(id).is_ok_and(|r| r == *id))
                .map(|id| {
                    ids.push(id);
                    ids.len() - 1
                });
            (name, at)
        })
        .collect();
    let mut found = Vec::with_capacity(ids.len());
    // On an error `found` stops short of the id that failed: that line and the ones after it are answered one
    // by one (with the error where there is one).
    let _ = handle.locate_many(&ids, &mut found);
    for (line, (name, at)) in lines.iter().zip(names) {
        match at.and_then(|i| Some((&ids[i], found.get(i)?))) {
            Some((_, None)) => status(name, b"missing", out),
            // Located by the batch: read from there (a file gone since, or a corrupt copy, is handled by
            // `answer_at`).
            Some((id, Some(loc))) => {
                let asked = Asked {
                    id,
                    name: Some(name),
                    rest: split(line, format).1,
                };
                let mut data = Vec::new();
                let answered = objects.answer_at(id, *loc, format.want, &mut data);
                write_answer(&asked, answered, &data, format, out)?
            }
            None => answer_line(objects, line, format, out)?,
        }
    }
    Ok(())
}

/// An input line's object name and the rest (`%(rest)`), split as git does. The line ends at its first NUL, as
/// git reads it (a C string).
fn split<'a>(line: &'a [u8], format: &Format) -> (&'a [u8], &'a [u8]) {
    let line = line.split(|&c| c == 0).next().unwrap_or(line);
    if format.split {
        match line.iter().position(|c| matches!(c, b' ' | b'\t')) {
            Some(i) => {
                let r = &line[i..];
                let skip = r.iter().take_while(|c| matches!(c, b' ' | b'\t')).count();
                (&line[..i], &r[skip..])
            }
            None => (line, &b""[..]),
        }
    } else {
        (line, &b""[..])
    }
}

/// Append the answer for one input line (without its terminator) to `out`; an ambiguous name is also reported
/// on stderr as git does. The line ends at its first NUL, as git reads it (a C string).
pub fn answer_line(
    objects: &Objects,
    line: &[u8],
    format: &Format,
    out: &mut Vec<u8>,
) -> Result<(), GitFatal> {
    let (name, rest) = split(line, format);
    let padded = std::str::from_utf8(name)
        .ok()
        .and_then(|hex| padded_sha1(objects, hex));
    let resolved = match padded {
        Some(found) => found,
        None => crate::names::resolve(objects, format.refs.as_deref(), name),
    };
    // git's warnings about refs the lookup passed over (`ignoring broken ref ...`), on stderr as git prints them.
    if let Some(refs) = format.refs.as_deref() {
        for w in refs.take_warnings() {
            eprintln!("warning: {w}");
        }
    }
    match resolved {
        Ok(PrefixLookup::Unique(id)) => {
            // The replacement's data under the name of the object asked for, as git prints it.
            let found = format.replace.resolve(&id)?;
            let asked = Asked {
                id: &id,
                name: Some(name),
                rest,
            };
            let mut data = Vec::new();
            let answered = objects.answer(&found, format.want, &mut data);
            write_answer(&asked, answered, &data, format, out)?
        }
        Ok(PrefixLookup::Ambiguous) => {
            let hex = String::from_utf8_lossy(name);
            eprint!("{}", ambiguous::report(objects, &hex));
            status(name, b"ambiguous", out)
        }
        Ok(PrefixLookup::NotFound) => status(name, b"missing", out),
        Err(e) => error(name, &e, out)?,
    }
    Ok(())
}

/// git's reading of 41 to 64 hex digits in a SHA-1 repository (its abbreviation code takes up to 64 digits,
/// the SHA-256 length): the object named by the first 40 digits if it is packed (the digits after them are
/// not compared), or loose and the digits after them are all `0`; otherwise missing (a lookup that failed is
/// its error, never missing). `None` for any other name.
fn padded_sha1(objects: &Objects, hex: &str) -> Option<Result<PrefixLookup, odb_index_gix::Error>> {
    let full = HashKind::Sha1.hex_len();
    if objects.store().hash_kind() != HashKind::Sha1
        || !(full + 1..=HashKind::Sha256.hex_len()).contains(&hex.len())
        || !hex.bytes().all(|c| c.is_ascii_hexdigit())
    {
        return None;
    }
    let id = ObjectId::from_hex_kind(&hex.as_bytes()[..full], HashKind::Sha1).ok()?;
    let zeros = hex[full..].bytes().all(|c| c == b'0');
    Some(match objects.handle().locate(&id) {
        Ok(Some(Location::Packed { .. })) => Ok(PrefixLookup::Unique(id)),
        Ok(Some(Location::Loose { .. })) if zeros => Ok(PrefixLookup::Unique(id)),
        Ok(_) => Ok(PrefixLookup::NotFound),
        Err(e) => Err(e.into()),
    })
}

/// The object an answer is for, as asked: its id, the name to print if it cannot be read (`None`: the id), and
/// the rest of the input line (`%(rest)`).
struct Asked<'a> {
    id: &'a ObjectId,
    name: Option<&'a [u8]>,
    rest: &'a [u8],
}

impl<'a> Asked<'a> {
    /// An object listed by id (`--batch-all-objects`): no name of its own, no rest.
    fn listed(id: &'a ObjectId) -> Asked<'a> {
        Asked {
            id,
            name: None,
            rest: b"",
        }
    }
}

/// Append the line for `asked` from `answered` (what [`Objects::answer`] or [`Objects::answer_at`] read of it:
/// the object itself, or its replacement), and under `--batch` the contents (`data`) and a newline; `missing`
/// for an object gone, an error line (or git's fatal error) for one that cannot be read.
fn write_answer(
    asked: &Asked,
    answered: Result<Option<Answer>, odb_index_gix::Error>,
    data: &[u8],
    format: &Format,
    out: &mut Vec<u8>,
) -> Result<(), GitFatal> {
    let hex = asked.id.to_string();
    let name = asked.name.unwrap_or(hex.as_bytes());
    let answer = match answered {
        Ok(Some(answer)) => answer,
        Ok(None) => {
            status(name, b"missing", out);
            return Ok(());
        }
        Err(e) => return error(name, &e, out),
    };
    for part in &format.parts {
        match part {
            Part::Text(t) => out.extend_from_slice(t),
            Part::Atom(atom) => expand(*atom, &hex, &answer, asked.rest, out),
        }
    }
    out.push(b'\n');
    if format.want.contents {
        out.extend_from_slice(data);
        out.push(b'\n');
    }
    Ok(())
}

/// Append `atom`'s value for the object `hex` from `answer` (which holds every part the format asked for).
fn expand(atom: Atom, hex: &str, answer: &Answer, rest: &[u8], out: &mut Vec<u8>) {
    let asked = "the format asked for it";
    match atom {
        Atom::Name => out.extend_from_slice(hex.as_bytes()),
        Atom::Type => out.extend_from_slice(answer.kind.expect(asked).as_bytes()),
        Atom::Size => write!(out, "{}", answer.size.expect(asked)).expect("to a Vec"),
        Atom::DiskSize => write!(out, "{}", answer.disk_size.expect(asked)).expect("to a Vec"),
        Atom::DeltaBase => match answer.delta_base {
            Some(b) => write!(out, "{b}").expect("to a Vec"),
            None => out.resize(out.len() + answer.id.kind().len_in_hex(), b'0'),
        },
        Atom::Rest => out.extend_from_slice(rest),
        // Quoted as git quotes a path: a name with a newline stays on its line.
        Atom::Pack => match &answer.place {
            Place::Packed { path, .. } => {
                let name = path.file_name().unwrap_or(path.as_os_str());
                quote_c_style(name.as_encoded_bytes(), out)
            }
            Place::Loose { .. } => out.extend_from_slice(b"loose"),
        },
        Atom::Offset => {
            if let Place::Packed { offset, .. } = answer.place {
                write!(out, "{offset}").expect("to a Vec");
            }
        }
    }
}

fn status(name: &[u8], what: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(name);
    out.push(b' ');
    out.extend_from_slice(what);
    out.push(b'\n');
}

/// Set by an answer `missing` for a file named like a loose object that is not one: a new entry in the store's
/// problems that `Warnings::report` prints before the next line is read. Relaxed: only a hint to look; with
/// threads it is read after the workers are joined (the join orders it).
pub static LOOSE_PROBLEM: AtomicBool = AtomicBool::new(false);

/// An object that cannot be read: `<name> error <message>` (the batch goes on), except what git dies on.
fn error(name: &[u8], e: &odb_index_gix::Error, out: &mut Vec<u8>) -> Result<(), GitFatal> {
    if let odb_index_gix::Error::LooseUnknownType { .. } = e {
        return Err(GitFatal("invalid object type".into()));
    }
    // `rev:../path` above the work tree's top, or `rev:./path` outside a work tree: git dies.
    if let odb_index_gix::Error::RelativePath { .. } = e {
        return Err(GitFatal(e.to_string()));
    }
    // git's `nth_midxed_offset` dies on an entry that names a `LOFF` row the file lacks (t5319.94).
    if let odb_index_gix::Error::Lookup(odb_index::Error::CorruptMultiPackIndex {
        problem: odb_index::midx::MidxProblem::LargeOffsetOutOfRange { .. },
        ..
    }) = e
    {
        return Err(GitFatal(
            "multi-pack-index large offset out of bounds".into(),
        ));
    }
    if e.is_not_a_loose_object() {
        // git: `missing`, with a warning. The store (opened with `IncompleteMode::Miss`) lists the file in its
        // problems, which the command prints once per file (`Warnings::report`, told here to look now).
        LOOSE_PROBLEM.store(true, Ordering::Relaxed);
        status(name, b"missing", out);
        return Ok(());
    }
    let msg = format!("error {}", e.to_string().replace('\n', " "));
    status(name, msg.as_bytes(), out);
    Ok(())
}

/// `--batch-all-objects`: every object, sorted by id without repeats ([`odb_index::Handle::objects_sorted`]; each
/// looked up again, as git does), or with `unordered` once each in git's order: loose objects first, then the
/// packs' objects pack by pack (in the order the store lists its packs), each pack's in offset order; each
/// reported where it comes first in that order. Buffered (`out` is not flushed here), as git buffers it.
pub fn all_objects(
    objects: &Objects,
    format: &Format,
    unordered: bool,
    out: &mut impl Write,
) -> Result<(), Stop> {
    let mut buf = Vec::new();
    let mut emit = |buf: &mut Vec<u8>| -> Result<(), Stop> {
        out.write_all(buf).map_err(Stop::Output)?;
        buf.clear();
        Ok(())
    };
    if unordered {
        let mut visited = Vec::new();
        // The handle is borrowed during the visit: the objects are read after it.
        objects.handle().for_each_object(|id, loc| {
            visited.push((*id, loc));
            ControlFlow::Continue(())
        })?;
        // git's order of packs, then any other pack in the order first visited.
        let mut pack_rank: std::collections::HashMap<_, _> = objects
            .handle()
            .packs_in_git_order()
            .into_iter()
            .zip(0..)
            .collect();
        for (_, loc) in &visited {
            if let Location::Packed { pack, .. } = loc {
                let next = pack_rank.len();
                pack_rank.entry(*pack).or_insert(next);
            }
        }
        // Stable: loose objects keep their visiting order.
        visited.sort_by_key(|(_, loc)| match loc {
            Location::Loose { .. } => (0, 0, 0),
            Location::Packed { pack, offset } => (1, pack_rank[pack], *offset),
        });
        let mut seen = std::collections::HashSet::with_capacity(visited.len());
        for (id, loc) in visited {
            if seen.insert(id) {
                let mut data = Vec::new();
                let answered = objects.answer_at(&id, loc, format.want, &mut data);
                let answered = listed_again(objects, &id, answered, format, &mut data);
                write_answer(&Asked::listed(&id), answered, &data, format, &mut buf)?;
                emit(&mut buf)?;
            }
        }
        // What the indices list that no lookup locates: answered as a lookup answers it (git lists these ids too).
        let unlocatable = objects.handle().unlocatable_objects()?;
        for (id, _) in unlocatable {
            if seen.insert(id) {
                answer_listed(objects, &id, format, &mut buf)?;
                emit(&mut buf)?;
            }
        }
    } else {
        let mut all: Vec<ObjectId> = objects
            .handle()
            .objects_sorted()?
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        // With the ids the indices list that no lookup locates: git lists them, then cannot read them.
        all.extend(
            objects
                .handle()
                .unlocatable_objects()?
                .into_iter()
                .map(|(id, _)| id),
        );
        all.sort_unstable();
        all.dedup();
        for id in all {
            answer_listed(objects, &id, format, &mut buf)?;
            emit(&mut buf)?;
        }
    }
    Ok(())
}

/// Append the answer for `id`, listed by `--batch-all-objects`: looked up again, as git does, unless the format
/// reads nothing of the object (only `%(objectname)` and `%(rest)`, no contents), where git prints the line
/// without a lookup (its `skip_object_info`): an object the indices list but no lookup can read is printed
/// then too.
fn answer_listed(
    objects: &Objects,
    id: &ObjectId,
    format: &Format,
    out: &mut Vec<u8>,
) -> Result<(), GitFatal> {
    if !format.reads_object() {
        let hex = id.to_string();
        for part in &format.parts {
            match part {
                Part::Text(t) => out.extend_from_slice(t),
                Part::Atom(Atom::Name) => out.extend_from_slice(hex.as_bytes()),
                Part::Atom(_) => {}
            }
        }
        out.push(b'\n');
        return Ok(());
    }
    let mut data = Vec::new();
    let answered = objects.answer(id, format.want, &mut data);
    let answered = listed_again(objects, id, answered, format, &mut data);
    write_answer(&Asked::listed(id), answered, &data, format, out)
}

/// A listed object that its lookup did not find (`answered` is `Ok(None)`): the indices list it, so a file
/// that could not be read on its way (or a pack dropped meanwhile) may hide it. Looked up once more (the
/// store lists the repository again on a miss); not found again, it stays `missing`, with an `error:` line
/// naming it on stderr, as git says why it cannot read a listed object: never a silent `missing`.
fn listed_again(
    objects: &Objects,
    id: &ObjectId,
    answered: Result<Option<Answer>, odb_index_gix::Error>,
    format: &Format,
    data: &mut Vec<u8>,
) -> Result<Option<Answer>, odb_index_gix::Error> {
    if !matches!(answered, Ok(None)) {
        return answered;
    }
    let again = objects.answer(id, format.want, data);
    if matches!(again, Ok(None)) {
        eprintln!(
            "error: {id}: listed by the repository's indices, but not found when read (twice)"
        );
    }
    again
}
