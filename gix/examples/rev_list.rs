//! `git rev-list <rev>` on odb-index-gix: the commits reachable from `<rev>`, newest first by committer date, as
//! git walks them (a list ordered by date, each commit's parents inserted after those of the same date).
//! `cargo run -p odb-index-gix --example rev_list -- <repository> <rev>`
use odb_index_gix::gix_object::CommitRefIter;
use odb_index_gix::{Repository, gix_hash::ObjectId};
use std::collections::HashSet;
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(rev)) = (args.next(), args.next()) else {
        return Err("usage: rev_list <repository> <rev>".into());
    };
    let repo = Repository::discover(path)?;
    let hash = repo.hash_kind();
    let start: ObjectId = repo
        .resolve(&format!("{rev}^{{commit}}"))?
        .ok_or("not a commit")?;
    let mut data = Vec::new();
    // (date, id, parents) of a commit.
    let mut read = |id: ObjectId| -> Result<_, Box<dyn std::error::Error>> {
        repo.objects()
            .read(&id, &mut data)?
            .ok_or("commit missing")?;
        let date = CommitRefIter::from_bytes(&data, hash)
            .committer()?
            .seconds();
        Ok((
            date,
            id,
            CommitRefIter::from_bytes(&data, hash)
                .parent_ids()
                .collect::<Vec<_>>(),
        ))
    };
    let mut seen = HashSet::from([start]);
    let mut todo = vec![read(start)?];
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    while !todo.is_empty() {
        let (_, id, parents) = todo.remove(0);
        writeln!(out, "{id}")?;
        for parent in parents {
            if seen.insert(parent) {
                let commit = read(parent)?;
                let at = todo
                    .iter()
                    .position(|c| c.0 < commit.0)
                    .unwrap_or(todo.len());
                todo.insert(at, commit);
            }
        }
    }
    Ok(out.flush()?)
}
