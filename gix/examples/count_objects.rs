//! `git count-objects -v` on odb-index-gix: loose objects, packs and garbage, counted as git counts them.
//! `cargo run -p odb-index-gix --example count_objects -- <repository>`
use odb_index_gix::{Repository, gix_quote};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os()
        .nth(1)
        .ok_or("usage: count_objects <repository>")?;
    let c = Repository::discover(path)?.count_objects()?;
    for (path, why) in &c.garbage {
        eprintln!("warning: {why}: {}", path.display());
    }
    println!("count: {}", c.count);
    println!("size: {}", c.size / 1024);
    println!("in-pack: {}", c.in_pack);
    println!("packs: {}", c.packs);
    println!("size-pack: {}", c.size_pack / 1024);
    println!("prune-packable: {}", c.prune_packable);
    println!("garbage: {}", c.garbage.len());
    println!("size-garbage: {}", c.size_garbage / 1024);
    for dir in &c.alternates {
        let quoted = gix_quote::ansi_c::quote(dir.as_os_str().as_encoded_bytes().into());
        println!("alternate: {quoted}");
    }
    Ok(())
}
