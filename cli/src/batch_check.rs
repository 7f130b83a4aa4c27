//! `batch-check`: git's `cat-file --batch-check[=<format>]` output on odb-index (through odb-index-gix).

use std::io::Write;
use std::ops::ControlFlow;

use odb_index::{ObjectId, PrefixLookup};
use odb_index_gix::{Objects, Place};

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
    header: bool,
    /// `%(rest)` present: the input line is split at its first space or tab, as git does.
    split: bool,
}

impl Format {
    /// Parse as git's `expand_format`: `%(atom)` expands, `%%` and a `%` before anything but `(` stay `%`,
    /// an unknown atom or an unclosed `%(` is an error.
    pub fn parse(format: &str) -> Result<Format, String> {
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
                let end = r
                    .find(')')
                    .ok_or_else(|| format!("bad format: unclosed %({r}"))?;
                let atom = match &r[..end] {
                    "objectname" => Atom::Name,
                    "objecttype" => Atom::Type,
                    "objectsize" => Atom::Size,
                    "objectsize:disk" => Atom::DiskSize,
                    "deltabase" => Atom::DeltaBase,
                    "rest" => Atom::Rest,
                    "objectpack" => Atom::Pack,
                    "objectoffset" => Atom::Offset,
                    other => return Err(format!("unknown format element: {other}")),
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
            header: has(Atom::Type) || has(Atom::Size),
            split: has(Atom::Rest),
            parts,
        })
    }
}

/// Append the answers for `lines` (each without its terminator) to `out`, in order, as [`answer_line`] would.
///
/// The full-length ids among them are looked up first, all at once, with [`odb_index::Handle::locate_many`]:
/// a miss is answered from that (one pass, no call per id), everything else (hits, prefixes, a lookup that
/// failed) by [`answer_line`].
pub fn answer_lines(objects: &Objects, lines: &[Vec<u8>], format: &Format, out: &mut Vec<u8>) {
    let kind = objects.hash_kind();
    let mut ids = Vec::with_capacity(lines.len());
    let names: Vec<(&[u8], Option<usize>)> = lines
        .iter()
        .map(|l| {
            let name = split(l, format).0;
            let at = ObjectId::from_hex_kind(name, kind).ok().map(|id| {
                ids.push(id);
                ids.len() - 1
            });
            (name, at)
        })
        .collect();
    let mut found = Vec::with_capacity(ids.len());
    // On an error `found` stops short of the id that failed: that line and the ones after it are answered one
    // by one (with the error where there is one).
    let _ = objects.handle().locate_many(&ids, &mut found);
    for (line, (name, at)) in lines.iter().zip(names) {
        match at.and_then(|i| found.get(i)) {
            Some(None) => status(name, b"missing", out),
            _ => answer_line(objects, line, format, out),
        }
    }
}

/// An input line's object name and the rest (`%(rest)`), split as git does.
fn split<'a>(line: &'a [u8], format: &Format) -> (&'a [u8], &'a [u8]) {
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

/// Append the answer for one input line (without its terminator) to `out`.
pub fn answer_line(objects: &Objects, line: &[u8], format: &Format, out: &mut Vec<u8>) {
    let (name, rest) = split(line, format);
    let resolved = match std::str::from_utf8(name) {
        Ok(hex) => objects.resolve(hex),
        Err(_) => Ok(PrefixLookup::NotFound),
    };
    match resolved {
        Ok(PrefixLookup::Unique(id)) => match objects.place(&id) {
            Ok(Some(place)) => write_object(objects, &id, &place, rest, format, Some(name), out),
            Ok(None) => status(name, b"missing", out),
            Err(e) => error(name, &e, out),
        },
        Ok(PrefixLookup::Ambiguous) => status(name, b"ambiguous", out),
        Ok(PrefixLookup::NotFound) => status(name, b"missing", out),
        Err(e) => error(name, &e, out),
    }
}

/// Append the line for `id` at `place` (`name` is what to print if it cannot be read; `None`: the id).
pub fn write_object(
    objects: &Objects,
    id: &ObjectId,
    place: &Place,
    rest: &[u8],
    format: &Format,
    name: Option<&[u8]>,
    out: &mut Vec<u8>,
) {
    let start = out.len();
    let hex = id.to_string();
    let name = name.unwrap_or(hex.as_bytes());
    let header = if format.header {
        match objects.header_at(place) {
            Ok(h) => Some(h),
            Err(e) => return error(name, &e, out),
        }
    } else {
        None
    };
    for part in &format.parts {
        let atom = match part {
            Part::Text(t) => {
                out.extend_from_slice(t);
                continue;
            }
            Part::Atom(a) => *a,
        };
        let written = match atom {
            Atom::Name => {
                out.extend_from_slice(hex.as_bytes());
                Ok(())
            }
            Atom::Type => {
                out.extend_from_slice(header.expect("read above").0.as_bytes());
                Ok(())
            }
            Atom::Size => {
                write!(out, "{}", header.expect("read above").1).expect("to a Vec");
                Ok(())
            }
            Atom::DiskSize => objects
                .disk_size(place)
                .map(|n| write!(out, "{n}").expect("to a Vec")),
            Atom::DeltaBase => objects.delta_base(place).map(|b| match b {
                Some(b) => write!(out, "{b}").expect("to a Vec"),
                None => out.resize(out.len() + objects.hash_kind().hex_len(), b'0'),
            }),
            Atom::Rest => {
                out.extend_from_slice(rest);
                Ok(())
            }
            Atom::Pack => {
                out.extend_from_slice(place.pack_name().unwrap_or("loose").as_bytes());
                Ok(())
            }
            Atom::Offset => {
                if let Place::Packed { offset, .. } = place {
                    write!(out, "{offset}").expect("to a Vec");
                }
                Ok(())
            }
        };
        if let Err(e) = written {
            out.truncate(start);
            return error(name, &e, out);
        }
    }
    out.push(b'\n');
}

fn status(name: &[u8], what: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(name);
    out.push(b' ');
    out.extend_from_slice(what);
    out.push(b'\n');
}

fn error(name: &[u8], e: &odb_index_gix::Error, out: &mut Vec<u8>) {
    let msg = format!("error {}", e.to_string().replace('\n', " "));
    status(name, msg.as_bytes(), out)
}

/// `--batch-all-objects`: every object, sorted by id without repeats ([`odb_index::Handle::objects_sorted`]; each
/// looked up again, as git does), or with `unordered` once each in the order
/// [`odb_index::Handle::for_each_object`] visits them, each reported where it was first visited.
pub fn all_objects(
    objects: &Objects,
    format: &Format,
    unordered: bool,
    buffer: bool,
    out: &mut impl Write,
) -> Result<(), AllError> {
    let mut buf = Vec::new();
    let mut emit = |buf: &mut Vec<u8>| -> std::io::Result<()> {
        out.write_all(buf)?;
        buf.clear();
        if !buffer { out.flush() } else { Ok(()) }
    };
    if unordered {
        let mut visited = Vec::new();
        // The handle is borrowed during the visit: the objects are read after it.
        objects.handle().for_each_object(|id, loc| {
            visited.push((*id, loc));
            ControlFlow::Continue(())
        })?;
        let mut seen = std::collections::HashSet::with_capacity(visited.len());
        for (id, loc) in visited {
            if seen.insert(id) {
                match objects.place_at(&id, loc) {
                    Ok(place) => write_object(objects, &id, &place, b"", format, None, &mut buf),
                    Err(e) => error(id.to_string().as_bytes(), &e, &mut buf),
                }
                emit(&mut buf)?;
            }
        }
    } else {
        let all = objects.handle().objects_sorted()?;
        for (id, _) in all {
            match objects.place(&id) {
                Ok(Some(place)) => write_object(objects, &id, &place, b"", format, None, &mut buf),
                Ok(None) => status(id.to_string().as_bytes(), b"missing", &mut buf),
                Err(e) => error(id.to_string().as_bytes(), &e, &mut buf),
            }
            emit(&mut buf)?;
        }
    }
    Ok(())
}

/// Why `--batch-all-objects` stopped.
#[derive(Debug)]
pub enum AllError {
    /// Listing the objects failed.
    List(odb_index::Error),
    /// Writing the output failed.
    Write(std::io::Error),
}

impl From<odb_index::Error> for AllError {
    fn from(e: odb_index::Error) -> Self {
        AllError::List(e)
    }
}

impl From<std::io::Error> for AllError {
    fn from(e: std::io::Error) -> Self {
        AllError::Write(e)
    }
}
