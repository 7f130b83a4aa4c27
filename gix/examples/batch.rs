//! `git cat-file --batch` on odb-index-gix: object names on stdin (bytes, as git reads them: ids, `HEAD`, refs,
//! `rev~2`, `rev:path`, ...), git's answers on stdout. `cargo run -p odb-index-gix --example batch -- <repo> < names`
use odb_index_gix::{Error, IncompleteMode, Options, Repository};
use std::io::{BufRead, BufWriter, Write};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os().nth(1).ok_or("usage: batch <repo>")?;
    let options = Options::default().incomplete(IncompleteMode::Miss);
    let repo = Repository::discover_with(path, options)?;
    let (refs, objects) = (repo.refs(), repo.objects());
    let (mut out, mut data) = (BufWriter::new(std::io::stdout().lock()), Vec::new());
    for line in std::io::stdin().lock().split(b'\n') {
        let line = line?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let read = |id: Option<_>| id.map_or(Ok(None), |id| objects.read(&id, &mut data));
        let found = refs.resolve_bytes(objects, line).and_then(read);
        let contents: &[u8] = match found {
            Ok(Some(info)) => {
                writeln!(out, "{} {} {}", info.id, info.kind, info.size)?;
                &data
            }
            Ok(None) => &[line, b" missing"].concat(),
            Err(Error::AmbiguousName { .. }) => &[line, b" ambiguous"].concat(),
            Err(e) => return Err(e.into()),
        };
        out.write_all(contents)?;
        writeln!(out)?;
    }
    Ok(out.flush()?)
}
