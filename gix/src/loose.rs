//! Loose objects, streamed: the header from the first inflated bytes (a large object's header reads a few
//! kilobytes, not the file), the contents straight into the caller's buffer.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use gix_object::Kind;
use gix_zlib::Decompress;
use gix_zlib::stream::inflate::read as inflate;

use crate::Error;

/// Bytes read from the file at a time; one read holds the header of any object.
const CHUNK: usize = 4096;
/// The bytes inflated first: the header and the start of the contents.
const HEAD: usize = 64;
/// git's `MAX_HEADER_LEN`: a header (`<type> <size>\0`) whose NUL is not among the first 32 inflated bytes is
/// "too long" (git's `unpack_loose_header` answers `ULHR_TOO_LONG`: the object is not read, `cat-file` answers
/// `missing`), whatever its type; only a header that fits is parsed, and then an unknown type is fatal.
const MAX_HEADER_LEN: usize = 32;

/// An open loose object whose header was read.
pub(crate) struct Loose {
    path: PathBuf,
    reader: BufReader<Checked>,
    file_len: u64,
    head: [u8; HEAD],
    /// Bytes of `head` inflated; `header_len` of them are the header.
    inflated: usize,
    header_len: usize,
    pub(crate) kind: Kind,
    pub(crate) size: u64,
}

impl Loose {
    /// Open the file at `path` (through [`odb_index::data::open_regular`]: regular files only, never blocking)
    /// and inflate its first bytes with `z` up to the end of the header.
    pub(crate) fn open(path: &Path, z: &mut Decompress) -> Result<Loose, Error> {
        let (file, md) =
            odb_index::data::open_regular(path).map_err(|source| Error::LooseUnreadable {
                path: path.to_owned(),
                source,
            })?;
        let mut reader = BufReader::with_capacity(CHUNK, Checked(file));
        let mut head = [0u8; HEAD];
        z.reset();
        let inflated = inflate(&mut reader, z, &mut head).map_err(zlib(path))?;
        let text = &head[..inflated];
        let bad = |reason: &str| corrupt(path)(reason);
        let nul = text[..text.len().min(MAX_HEADER_LEN)]
            .iter()
            .position(|&c| c == 0)
            .ok_or_else(|| bad("header too long, exceeds 32 bytes"))?;
        let (kind, size) = std::str::from_utf8(&text[..nul])
            .ok()
            .and_then(|h| h.split_once(' '))
            .ok_or_else(|| bad("the header is not `<type> <size>`"))?;
        let size = (!size.is_empty() && size.bytes().all(|c| c.is_ascii_digit()))
            .then(|| size.parse::<u64>().ok())
            .flatten()
            .ok_or_else(|| bad("the header's size is not a number"))?;
        let kind = Kind::from_bytes(kind.as_bytes()).map_err(|_| Error::LooseUnknownType {
            path: path.to_owned(),
            kind: kind.to_owned(),
        })?;
        Ok(Loose {
            path: path.to_owned(),
            reader,
            file_len: md.len(),
            head,
            inflated,
            header_len: nul + 1,
            kind,
            size,
        })
    }

    /// Inflate the contents into `out` (cleared first; on success it holds exactly the object's bytes).
    pub(crate) fn read_into(mut self, z: &mut Decompress, out: &mut Vec<u8>) -> Result<(), Error> {
        let bad = |reason: String| corrupt(&self.path)(&reason);
        // zlib expands at most ~1032:1; a larger claimed size is corruption, not an allocation to try.
        if self.size > 1032 * self.file_len + HEAD as u64 {
            return Err(bad(format!(
                "claims {} bytes from a {}-byte file",
                self.size, self.file_len
            )));
        }
        let size = self.size as usize;
        let held = &self.head[self.header_len..self.inflated];
        if held.len() > size {
            return Err(bad(format!("more data than the header's {size} bytes")));
        }
        out.clear();
        out.resize(size, 0);
        out[..held.len()].copy_from_slice(held);
        let got = inflate(&mut self.reader, z, &mut out[held.len()..]).map_err(zlib(&self.path))?;
        let mut more = [0u8; 1];
        let extra = inflate(&mut self.reader, z, &mut more).map_err(zlib(&self.path))?;
        if held.len() + got != size || extra != 0 {
            return Err(bad(format!(
                "the header says {size} bytes, the data has {}",
                held.len() + got + extra
            )));
        }
        Ok(())
    }
}

fn corrupt(path: &Path) -> impl Fn(&str) -> Error + '_ {
    |reason| Error::LooseCorrupt {
        path: path.to_owned(),
        reason: reason.to_owned(),
    }
}

/// The error of inflating the file at `path`: a failed `read` (an OS error: the file could not be read, which
/// says nothing of what it holds; [`Error::is_not_a_loose_object`] is false for one that may pass) is
/// [`Error::LooseUnreadable`]; anything else (zlib's verdict on the bytes) is [`Error::LooseCorrupt`].
fn zlib(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    |e| {
        if e.raw_os_error().is_some() {
            Error::LooseUnreadable {
                path: path.to_owned(),
                source: e,
            }
        } else {
            Error::LooseCorrupt {
                path: path.to_owned(),
                reason: e.to_string(),
            }
        }
    }
}

/// The loose file, read through the fault seam (`odb_index::fault`, `Call::Read` before each `read`), so the
/// fault tests reach the reads a loose object's inflation makes.
#[derive(Debug)]
pub(crate) struct Checked(File);

impl std::io::Read for Checked {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        odb_index::fault::check(odb_index::fault::Call::Read)?;
        self.0.read(buf)
    }
}
