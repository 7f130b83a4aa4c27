//! `git ls-tree -r -l <rev>` on odb-index-gix: every blob and submodule under the tree `<rev>` names, as
//! `<mode> <type> <id> <size>\t<path>` (size `-` for a submodule), the path quoted as git quotes it.
//! `cargo run -p odb-index-gix --example ls_tree -- <repository> <rev>`
use odb_index_gix::gix_object::{Kind, TreeRefIter, bstr::BStr};
use odb_index_gix::{Objects, Repository, gix_hash::ObjectId, gix_quote};
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(rev)) = (args.next(), args.next()) else {
        return Err("usage: ls_tree <repository> <rev>".into());
    };
    let repo = Repository::discover(path)?;
    let tree = repo
        .resolve(&format!("{rev}^{{tree}}"))?
        .ok_or("not a tree")?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    list(repo.objects(), &tree, b"", &mut out)?;
    Ok(out.flush()?)
}

/// Print the entries of the tree `id` whose path starts with `prefix`, subtrees in place.
fn list(
    objects: &Objects,
    id: &ObjectId,
    prefix: &[u8],
    out: &mut impl Write,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut data = Vec::new();
    objects.read(id, &mut data)?.ok_or("tree missing")?;
    for entry in TreeRefIter::from_bytes(&data, objects.hash_kind()) {
        let entry = entry?;
        let path = [prefix, entry.filename].concat();
        if entry.mode.is_tree() {
            list(
                objects,
                &entry.oid.to_owned(),
                &[&path[..], b"/"].concat(),
                out,
            )?;
            continue;
        }
        let (kind, size) = if entry.mode.is_commit() {
            (Kind::Commit, "-".to_string())
        } else {
            let info = objects.info(entry.oid)?.ok_or("blob missing")?;
            (info.kind, info.size.to_string())
        };
        write!(
            out,
            "{:06o} {kind} {} {size:>7}\t",
            entry.mode.value(),
            entry.oid
        )?;
        out.write_all(&gix_quote::ansi_c::quote(BStr::new(&path)))?;
        writeln!(out)?;
    }
    Ok(())
}
