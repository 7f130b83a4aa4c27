//! `git cat-file --batch-check` on odb-index, SHA-1 and SHA-256: object names on stdin (full ids or hex prefixes
//! of at least 4 digits), `<id> <type> <size>`, `<name> missing` or `<name> ambiguous` on stdout.
//!
//! `cargo run -p odb-index-gix --example batch_check -- <repository> < names`
use std::io::{BufRead, Write};

use odb_index_gix::{Error, Objects};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let repo = std::env::args_os()
        .nth(1)
        .ok_or("usage: batch_check <repository> < names")?;
    let objects = Objects::open(repo)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let name = line.trim_end_matches('\r');
        match objects.lookup_name(name) {
            Ok(Some(id)) => match objects.info(&id)? {
                Some(info) => writeln!(out, "{id} {} {}", info.kind, info.size)?,
                None => writeln!(out, "{name} missing")?,
            },
            Err(Error::AmbiguousName { .. }) => writeln!(out, "{name} ambiguous")?,
            Ok(None) | Err(Error::BadName { .. }) => writeln!(out, "{name} missing")?,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out.flush()?)
}
