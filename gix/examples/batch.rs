//! `git cat-file --batch` on odb-index-gix: for each object name on stdin (a full id or 4 or more of its first
//! hex digits), `<id> <type> <size>`, the contents and a newline; or `<name> missing` / `<name> ambiguous`.
//! `cargo run -p odb-index-gix --example batch -- <repository> < names`
use odb_index_gix::{Error, IncompleteMode, Objects, Options};
use std::io::{BufRead, Write};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let repo = std::env::args_os()
        .nth(1)
        .ok_or("usage: batch <repository> < names")?;
    // Answer as git does when an index cannot be read: its objects are missing, not an error.
    let objects = Objects::open_with(repo, Options::default().incomplete(IncompleteMode::Miss))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut data = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let name = line.trim_end_matches('\r');
        match objects.read_by_name(name, &mut data) {
            Ok(Some(info)) => {
                writeln!(out, "{} {} {}", info.id, info.kind, info.size)?;
                out.write_all(&data)?;
                writeln!(out)?;
            }
            Ok(None) | Err(Error::BadName { .. }) => writeln!(out, "{name} missing")?,
            Err(Error::AmbiguousName { .. }) => writeln!(out, "{name} ambiguous")?,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out.flush()?)
}
