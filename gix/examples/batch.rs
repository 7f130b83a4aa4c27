//! `git cat-file --batch` on odb-index (`batch_check`'s twin): for each name on stdin `<id> <type> <size>`,
//! contents, newline; or `<name> missing|ambiguous`. `cargo run -p odb-index-gix --example batch -- <repo> < names`
use odb_index_gix::{IncompleteMode, Objects, Options, PrefixLookup};
use std::io::{BufRead, Write};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let repo = std::env::args_os()
        .nth(1)
        .ok_or("usage: batch <repository>")?;
    let objects = Objects::open_with(repo, Options::default().incomplete(IncompleteMode::Miss))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut data = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let name = line.trim_end_matches('\r');
        match objects.resolve(name)? {
            PrefixLookup::Unique(id) => match objects.read(&id, &mut data)? {
                Some(info) => {
                    writeln!(out, "{id} {} {}", info.kind, info.size)?;
                    out.write_all(&data)?;
                    writeln!(out)?;
                }
                None => writeln!(out, "{name} missing")?,
            },
            PrefixLookup::Ambiguous => writeln!(out, "{name} ambiguous")?,
            PrefixLookup::NotFound => writeln!(out, "{name} missing")?,
        }
    }
    Ok(out.flush()?)
}
