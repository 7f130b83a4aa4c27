//! `git cat-file --batch` on odb-index-gix: for each object name on stdin (an id, full or abbreviated, `HEAD`,
//! a ref, `rev~2`, `rev:path`, ...), `<id> <type> <size>`, the contents and a newline; or `<name> missing` /
//! `<name> ambiguous` (names are bytes, as git reads them: `HEAD:caf\xe9`); an index that cannot be read makes
//! its objects missing, as git. `cargo run -p odb-index-gix --example batch -- <repository> < names`
use odb_index_gix::{Error, IncompleteMode, Options, Repository};
use std::io::{BufRead, Write};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os()
        .nth(1)
        .ok_or("usage: batch <repository>")?;
    let options = Options::default().incomplete(IncompleteMode::Miss);
    let repo = Repository::discover_with(path, options)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut data = Vec::new();
    for line in std::io::stdin().lock().split(b'\n') {
        let line = line?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let answer = match repo.refs().resolve_bytes(repo.objects(), line) {
            Ok(Some(id)) => repo.objects().read(&id, &mut data),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };
        match answer {
            Ok(Some(info)) => {
                writeln!(out, "{} {} {}", info.id, info.kind, info.size)?;
                out.write_all(&data)?;
                writeln!(out)?;
            }
            Ok(None) => out.write_all(&[line, b" missing\n"].concat())?,
            Err(Error::AmbiguousName { .. }) => out.write_all(&[line, b" ambiguous\n"].concat())?,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out.flush()?)
}
