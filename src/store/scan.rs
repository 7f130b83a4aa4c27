//! Reading one `pack/` directory: its packs (an `.idx` with a `.pack` beside it, newest first, with their
//! `.keep` / `.promisor` markers), its multi-pack-index (or the directory of an incremental chain), and the FIFOs,
//! sockets or devices named like an index (never opened).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::dir::{Entries, Kind, OpenDir, Stamp};
use crate::error::Error;
use crate::ids::PackId;

/// A pack present in one listing: the one description of a pack inside the store (the public
/// [`PackInfo`](super::PackInfo) is made from it).
#[derive(Debug)]
pub(super) struct ListedPack {
    pub(super) id: PackId,
    pub(super) idx_path: PathBuf,
    pub(super) idx_stamp: Stamp,
    /// Modification time of the `.pack` (git's recency order).
    pub(super) mtime: SystemTime,
    /// Size of the `.pack` in bytes when it was listed.
    pub(super) pack_size: u64,
    /// A `.keep` file sits beside the pack.
    pub(super) keep: bool,
    /// A `.promisor` file sits beside the pack.
    pub(super) promisor: bool,
    /// The stable number of the objects directory holding it (see [`Listing::dir_ids`](super::listing::Listing)).
    pub(super) dir: usize,
}

/// Which multi-pack-index files a pack directory has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MidxFiles {
    None,
    /// A `multi-pack-index` (git reads it, and no chain, when there is one).
    Single,
    /// No `multi-pack-index` but a `multi-pack-index.d` (where an incremental chain lives): without that
    /// directory no chain file is looked for (one `stat` fewer; a chain made after the listing changes the pack
    /// directory's stamp).
    Chain,
}

/// What one `pack/` directory holds.
pub(super) struct PackDirScan {
    /// Each pack with an index, newest first.
    pub(super) packs: Vec<ListedPack>,
    pub(super) midx: MidxFiles,
    /// `.idx` names (with a `.pack` beside them) that are FIFOs, sockets or devices: never opened, each an
    /// error naming it.
    pub(super) special: Vec<(PathBuf, Error)>,
}

/// Read `pack_dir`: its stamp, its packs (those with both an `.idx` and a `.pack` file, each given its id by
/// `id_of` in search order and `dir` as its objects directory's number) and its multi-pack-index files. `None`
/// (and no stamp) if the directory does not exist; an error naming it if it cannot be read (then the stamp is its
/// path's `stat`, if any). `parent`: its objects directory opened, if it was.
pub(super) fn scan_pack_dir(
    pack_dir: &Path,
    parent: Option<&OpenDir>,
    dir: usize,
    id_of: &mut dyn FnMut(&Path, Stamp) -> PackId,
) -> (Option<Stamp>, Result<Option<PackDirScan>, Error>) {
    let mut entries = match Entries::open(pack_dir, parent) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (None, Ok(None)),
        Err(e) => return (Stamp::of(pack_dir), Err(Error::io(pack_dir, e))),
    };
    let scan = scan_entries(&mut entries, pack_dir).map(|mut scan| {
        for p in &mut scan.packs {
            p.id = id_of(&p.idx_path, p.idx_stamp);
            p.dir = dir;
        }
        scan
    });
    (Some(entries.stamp), scan.map(Some))
}

/// What one directory entry is to the listing.
enum Named<'a> {
    Midx,
    ChainDir,
    Keep(&'a str),
    Promisor(&'a str),
    /// An `.idx` (not one of git's temporary files): its stem.
    Index(&'a str),
    Other,
}

fn classify(name: &str) -> Named<'_> {
    if name == "multi-pack-index" {
        return Named::Midx;
    }
    if name == crate::midx::chain::CHAIN_DIR {
        return Named::ChainDir;
    }
    if let Some(stem) = name.strip_suffix(".keep") {
        return Named::Keep(stem);
    }
    if let Some(stem) = name.strip_suffix(".promisor") {
        return Named::Promisor(stem);
    }
    // git reads every `*.idx` with a `.pack` beside it, whatever its name (t5319's `test-64-<hash>.idx`),
    // but for its own temporary files: `repack` writes `.tmp-<pid>-pack-<hash>.*` and renames them into
    // place, `.pack` first, removing the old packs only after (so their objects are never only there).
    let Some(stem) = name.strip_suffix(".idx") else {
        return Named::Other;
    };
    if stem.starts_with(".tmp-") {
        return Named::Other;
    }
    Named::Index(stem)
}

fn scan_entries(dir: &mut Entries, pack_dir: &Path) -> Result<PackDirScan, Error> {
    let mut dir_packs: Vec<ListedPack> = Vec::new();
    let mut has_midx = false;
    let mut has_chain_dir = false;
    let mut special = Vec::new();
    // Stems (`pack-<hash>`) with a `.keep` or `.promisor` file.
    let mut keep: HashSet<String> = Default::default();
    let mut promisor: HashSet<String> = Default::default();
    // The `.pack` name beside each `.idx` (one buffer for the directory).
    let mut pack_name = String::new();
    while let Some(name) = dir.next_name() {
        let Some(name) = name.map_err(|e| Error::io(pack_dir, e))? else {
            continue;
        };
        let stem = match classify(&name) {
            Named::Midx => {
                has_midx = true;
                continue;
            }
            Named::ChainDir => {
                has_chain_dir = true;
                continue;
            }
            Named::Keep(stem) => {
                keep.insert(stem.to_owned());
                continue;
            }
            Named::Promisor(stem) => {
                promisor.insert(stem.to_owned());
                continue;
            }
            Named::Other => continue,
            Named::Index(stem) => stem,
        };
        pack_name.clear();
        pack_name.push_str(stem);
        pack_name.push_str(".pack");
        match index_entry(dir, pack_dir, &name, &pack_name) {
            Some(Ok(pack)) => dir_packs.push(pack),
            Some(Err(e)) => special.push(e),
            None => {}
        }
    }
    for p in &mut dir_packs {
        if let Some(stem) = p.idx_path.file_stem().and_then(|s| s.to_str()) {
            p.keep = keep.contains(stem);
            p.promisor = promisor.contains(stem);
        }
    }
    // Newest first (git's order), name as a tie-break for determinism.
    dir_packs.sort_by(|a, b| {
        b.mtime
            .cmp(&a.mtime)
            .then_with(|| a.idx_path.cmp(&b.idx_path))
    });
    let midx = match (has_midx, has_chain_dir) {
        (true, _) => MidxFiles::Single,
        (false, true) => MidxFiles::Chain,
        (false, false) => MidxFiles::None,
    };
    Ok(PackDirScan {
        packs: dir_packs,
        midx,
        special,
    })
}

/// The pack of index `name` (its `.pack` named `pack_name`), with no id yet; `None` if it is not one (git ignores
/// an index whose pack is missing, and so do we; directories named like packs are skipped); an error naming a
/// FIFO, socket or device where the index should be (never opened: `stat` only).
fn index_entry(
    dir: &Entries,
    pack_dir: &Path,
    name: &str,
    pack_name: &str,
) -> Option<Result<ListedPack, (PathBuf, Error)>> {
    let idx_md = dir.stat(name).ok()?;
    if idx_md.kind == Kind::Dir {
        return None;
    }
    let pack_md = dir.stat(pack_name).ok()?;
    if pack_md.kind != Kind::File {
        return None;
    }
    let idx_path = pack_dir.join(name);
    if idx_md.kind != Kind::File {
        // A FIFO, socket or device where a pack's index should be: say what it is, without opening it.
        return match std::fs::metadata(&idx_path).and_then(|md| crate::data::check_regular(&md)) {
            Err(e) => Some(Err((idx_path.clone(), Error::io(&idx_path, e)))),
            Ok(()) => None,
        };
    }
    Some(Ok(ListedPack {
        id: PackId(0),
        idx_path,
        idx_stamp: idx_md.stamp,
        mtime: pack_md.stamp.mtime.unwrap_or(SystemTime::UNIX_EPOCH),
        pack_size: pack_md.stamp.size,
        keep: false,
        promisor: false,
        dir: 0,
    }))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// The listing's stamp of a pack directory is its path's `stat`, and a `multi-pack-index.d` is seen (a chain
    /// is looked for only then); a missing directory has neither a stamp nor a scan.
    #[test]
    fn scan_stamps_the_directory_and_sees_the_chain_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let pack_dir = tmp.path().join("pack");
        let mut id_of = |_: &Path, _: Stamp| PackId(7);
        let (stamp, scan) = scan_pack_dir(&pack_dir, None, 0, &mut id_of);
        assert!(stamp.is_none() && matches!(scan, Ok(None)));
        std::fs::create_dir(&pack_dir).unwrap();
        let (stamp, scan) = scan_pack_dir(&pack_dir, None, 0, &mut id_of);
        assert_eq!(stamp, Stamp::of(&pack_dir));
        assert_eq!(scan.unwrap().unwrap().midx, MidxFiles::None);
        std::fs::create_dir(pack_dir.join(crate::midx::chain::CHAIN_DIR)).unwrap();
        let (stamp, scan) = scan_pack_dir(&pack_dir, None, 0, &mut id_of);
        assert_eq!(stamp, Stamp::of(&pack_dir));
        assert_eq!(scan.unwrap().unwrap().midx, MidxFiles::Chain);
        std::fs::write(pack_dir.join("multi-pack-index"), b"").unwrap();
        std::fs::write(pack_dir.join("pack-1.idx"), b"").unwrap();
        std::fs::write(pack_dir.join("pack-1.pack"), b"").unwrap();
        std::fs::write(pack_dir.join("pack-1.keep"), b"").unwrap();
        let (_, scan) = scan_pack_dir(&pack_dir, None, 3, &mut id_of);
        let scan = scan.unwrap().unwrap();
        assert_eq!(
            scan.midx,
            MidxFiles::Single,
            "a multi-pack-index is read, not the chain"
        );
        let [p] = &scan.packs[..] else {
            panic!("{:?}", scan.packs)
        };
        assert_eq!(
            (p.id, p.dir, p.keep, p.promisor),
            (PackId(7), 3, true, false)
        );
    }
}
