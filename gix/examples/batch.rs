//! `git cat-file --batch` on odb-index-gix: for each object name on stdin (an id, full or abbreviated, `HEAD`,
//! a ref, `rev~2`, `rev:path`, ...), `<id> <type> <size>`, the contents and a newline; or `<name> missing` /
//! `<name> ambiguous` (a line that is not UTF-8 names nothing: `missing`, as git); an index that cannot be read
//! makes its objects missing, as git. `cargo run -p odb-index-gix --example batch -- <repository> < names`
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
        let answer = std::str::from_utf8(line).map(|name| repo.read_by_name(name, &mut data));
        match answer {
            Ok(Ok(Some(info))) => {
                writeln!(out, "{} {} {}", info.id, info.kind, info.size)?;
                out.write_all(&data)?;
                writeln!(out)?;
            }
            Ok(Ok(None)) | Err(_) => out.write_all(&[line, b" missing\n"].concat())?,
            Ok(Err(Error::AmbiguousName { .. })) => {
                out.write_all(&[line, b" ambiguous\n"].concat())?
            }
            Ok(Err(e)) => return Err(e.into()),
        }
    }
    Ok(out.flush()?)
}
