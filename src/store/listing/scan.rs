//! Reading one `pack/` directory: its packs (an `.idx` with a `.pack` beside it, newest first, with their
//! `.keep` / `.promisor` markers), its multi-pack-index (or the directory of an incremental chain), and the FIFOs,
//! sockets or devices named like an index (never opened).

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::dir::{Entries, Kind, ListedEntry, OpenDir, Stamp};
use crate::error::Error;
use crate::ids::PackId;

/// A pack present in one listing: the one description of a pack inside the store (the public
/// [`PackInfo`](crate::store::PackInfo) is made from it).
#[derive(Clone, Debug)]
pub(in crate::store) struct ListedPack {
    pub(in crate::store) id: PackId,
    pub(in crate::store) idx_path: PathBuf,
    /// The `.idx`'s `stat`, or for a pack listed from its directory entries alone (`stated` false) its inode
    /// number as the directory lists it with the checksum of the multi-pack-index that lists it
    /// ([`Stamp::listed`]).
    pub(in crate::store) idx_stamp: Stamp,
    /// Modification time of the `.pack` (git's recency order); the epoch for a pack not `stat`ed.
    pub(in crate::store) mtime: SystemTime,
    /// Size of the `.pack` in bytes when it was listed; 0 for a pack not `stat`ed.
    pub(in crate::store) pack_size: u64,
    /// Its `.idx` and `.pack` were `stat`ed at listing. A pack that a multi-pack-index opened by the same listing
    /// names, and whose two files the directory lists as regular files, is not (git does not look at such a
    /// pack either): its size is read when first needed (a location's bound, [`PackInfo`](crate::store::PackInfo)).
    pub(in crate::store) stated: bool,
    /// A `.keep` file sits beside the pack.
    pub(in crate::store) keep: bool,
    /// A `.promisor` file sits beside the pack.
    pub(in crate::store) promisor: bool,
    /// The stable number of the objects directory holding it (see [`Listing::dir_ids`](crate::store::listing::Listing)).
    pub(in crate::store) dir: usize,
    /// Its `.idx`'s position among its directory's `.idx` entries as the directory listed them (`readdir`
    /// order: git's list of packs is made in it, which decides its order between packs of the same second).
    pub(in crate::store) listed_at: usize,
}

/// Which multi-pack-index files a pack directory has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::store) enum MidxFiles {
    None,
    /// A `multi-pack-index` (git reads it, and no chain, when there is one).
    Single,
    /// No `multi-pack-index` but a `multi-pack-index.d` (where an incremental chain lives): without that
    /// directory no chain file is looked for (one `stat` fewer; a chain made after the listing changes the pack
    /// directory's stamp).
    Chain,
}

/// What one `pack/` directory holds.
pub(in crate::store) struct PackDirScan {
    /// Each pack with an index, newest first, with no id yet (the listing gives ids and the directory's number).
    pub(in crate::store) packs: Vec<ListedPack>,
    /// `.idx` names (with a `.pack` beside them) that are FIFOs, sockets or devices: never opened, each an
    /// error naming it.
    pub(in crate::store) special: Vec<(PathBuf, Error)>,
}

/// A `pack/` directory whose entries are read and whose packs are not `stat`ed yet: the first of a scan's two
/// steps ([`read_pack_dir`], then [`stat_packs`](Self::stat_packs)). Between them the listing opens the
/// multi-pack-index files named by [`midx`](Self::midx) for the packs they list, which need no `stat`: the scan
/// calls nothing back.
pub(in crate::store) struct ReadPackDir {
    entries: Entries,
    /// Which multi-pack-index files the directory has.
    pub(in crate::store) midx: MidxFiles,
    /// The `.idx` entries, in `readdir` order.
    indices: Vec<ListedEntry>,
    /// The `.pack` names the directory lists as regular files.
    regular_packs: HashSet<OsString>,
    /// Stems (`pack-<hash>`) with a `.keep` file.
    keep: HashSet<Vec<u8>>,
    /// Stems with a `.promisor` file.
    promisor: HashSet<Vec<u8>>,
}

/// Read the entries of `pack_dir` (a scan's first step): its stamp, and what it holds. `None` (and no stamp) if
/// the directory does not exist; an error naming it if it cannot be read (then the stamp is its path's `stat`, if
/// any). `parent`: its objects directory opened, if it was.
pub(in crate::store) fn read_pack_dir(
    pack_dir: &Path,
    parent: Option<&OpenDir>,
) -> (Option<Stamp>, Result<Option<ReadPackDir>, Error>) {
    let entries = match Entries::open(pack_dir, parent) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (None, Ok(None)),
        Err(e) => return (Stamp::of(pack_dir), Err(Error::io(pack_dir, e))),
    };
    let stamp = entries.stamp;
    (Some(stamp), read_entries(entries, pack_dir).map(Some))
}

/// What one directory entry is to the listing (names compared as bytes: git reads a pack whatever its name's
/// bytes, `pack-\xff<hash>.idx` too).
enum Named<'a> {
    Midx,
    ChainDir,
    /// A `.keep` file, with its stem.
    Keep(&'a [u8]),
    /// A `.promisor` file, with its stem.
    Promisor(&'a [u8]),
    /// An `.idx`.
    Index,
    Other,
}

fn classify(name: &OsStr) -> Named<'_> {
    let name = name.as_encoded_bytes();
    if name == b"multi-pack-index" {
        return Named::Midx;
    }
    if name == crate::midx::chain::CHAIN_DIR.as_bytes() {
        return Named::ChainDir;
    }
    if let Some(stem) = name.strip_suffix(b".keep") {
        return Named::Keep(stem);
    }
    if let Some(stem) = name.strip_suffix(b".promisor") {
        return Named::Promisor(stem);
    }
    // git reads every `*.idx` with a `.pack` beside it, whatever its name (t5319's `test-64-<hash>.idx`), its
    // own temporary files included: `repack` writes `.tmp-<pid>-pack-<hash>.*` before renaming them into place,
    // and `prepare_packed_git_one` skips only `.` and `..` (git 2.47's `git cat-file` answers from such a pack).
    match name.strip_suffix(b".idx") {
        Some(_) => Named::Index,
        None => Named::Other,
    }
}

fn read_entries(mut dir: Entries, pack_dir: &Path) -> Result<ReadPackDir, Error> {
    let mut has_midx = false;
    let mut has_chain_dir = false;
    let mut keep: HashSet<Vec<u8>> = Default::default();
    let mut promisor: HashSet<Vec<u8>> = Default::default();
    let mut indices: Vec<ListedEntry> = Vec::new();
    let mut regular_packs: HashSet<OsString> = Default::default();
    while let Some(entry) = dir.next_entry() {
        let Some(entry) = entry.map_err(|e| Error::io(pack_dir, e))? else {
            continue;
        };
        match classify(&entry.name) {
            Named::Midx => has_midx = true,
            Named::ChainDir => has_chain_dir = true,
            Named::Keep(stem) => {
                keep.insert(stem.to_owned());
            }
            Named::Promisor(stem) => {
                promisor.insert(stem.to_owned());
            }
            Named::Other => {
                if entry.regular && entry.name.as_encoded_bytes().ends_with(b".pack") {
                    regular_packs.insert(entry.name);
                }
            }
            Named::Index => indices.push(entry),
        }
    }
    let midx = match (has_midx, has_chain_dir) {
        (true, _) => MidxFiles::Single,
        (false, true) => MidxFiles::Chain,
        (false, false) => MidxFiles::None,
    };
    Ok(ReadPackDir {
        entries: dir,
        midx,
        indices,
        regular_packs,
        keep,
        promisor,
    })
}

impl ReadPackDir {
    /// A scan's second step: the packs of `pack_dir` (this directory), those with both an `.idx` and a `.pack`
    /// file. `covered`: the `.idx` names its multi-pack-index files list (`Plan::open_dir_midx`), each with the
    /// checksum of the file that lists it (for its [`Stamp::listed`]): such a pack whose `.idx` and `.pack` the
    /// directory lists as regular files is not `stat`ed ([`ListedPack::stated`]).
    pub(in crate::store) fn stat_packs(
        self,
        pack_dir: &Path,
        covered: &HashMap<OsString, u64>,
    ) -> PackDirScan {
        let ReadPackDir {
            entries: dir,
            indices,
            regular_packs,
            keep,
            promisor,
            ..
        } = self;
        let mut dir_packs: Vec<ListedPack> = Vec::new();
        let mut special = Vec::new();
        for (listed_at, entry) in indices.iter().enumerate() {
            // The `.pack` name beside the `.idx` (any bytes): its stem then `.pack`, as git makes it (a name that
            // is only `.idx` has no extension to replace: its pack is `.pack`).
            let pack_name = match Path::new(&entry.name).extension() {
                Some(_) => Path::new(&entry.name)
                    .with_extension("pack")
                    .into_os_string(),
                None => OsString::from(".pack"),
            };
            // The guard against a FIFO or device swapped in is the listed type: both regular, no `stat` needed.
            // (Names are compared as bytes, as git does: a name that is not UTF-8 is covered too.)
            let by = covered.get(&entry.name).copied();
            if let Some(by) = by.filter(|_| entry.regular && regular_packs.contains(&pack_name)) {
                dir_packs.push(ListedPack {
                    listed_at,
                    ..listed_only(pack_dir, entry, by)
                });
                continue;
            }
            match index_entry(&dir, pack_dir, entry, &pack_name) {
                Some(Ok(pack)) => dir_packs.push(ListedPack { listed_at, ..pack }),
                Some(Err(e)) => special.push(e),
                None => {}
            }
        }
        mark_and_sort(&mut dir_packs, &keep, &promisor);
        PackDirScan {
            packs: dir_packs,
            special,
        }
    }
}

/// Mark the packs with a `.keep` or `.promisor` file beside them (their stems), then sort them in search order.
fn mark_and_sort(
    dir_packs: &mut [ListedPack],
    keep: &HashSet<Vec<u8>>,
    promisor: &HashSet<Vec<u8>>,
) {
    for p in dir_packs.iter_mut() {
        if let Some(stem) = p.idx_path.file_name().map(OsStr::as_encoded_bytes) {
            let stem = stem.strip_suffix(b".idx").unwrap_or(stem);
            p.keep = keep.contains(stem);
            p.promisor = promisor.contains(stem);
        }
    }
    // Newest first (git's order), name as a tie-break for determinism (packs not `stat`ed last: they load after
    // every other slot anyway, when their multi-pack-index fails).
    dir_packs.sort_by(|a, b| {
        b.stated
            .cmp(&a.stated)
            .then_with(|| b.mtime.cmp(&a.mtime))
            .then_with(|| a.idx_path.cmp(&b.idx_path))
    });
}

/// A pack a multi-pack-index covers, from its `.idx`'s directory entry alone (see [`ListedPack::stated`]);
/// `covered_by`: that multi-pack-index's checksum, as [`Stamp::listed`] takes it.
fn listed_only(pack_dir: &Path, entry: &ListedEntry, covered_by: u64) -> ListedPack {
    ListedPack {
        id: PackId(0),
        idx_path: pack_dir.join(&entry.name),
        idx_stamp: Stamp::listed(entry.ino, covered_by),
        mtime: SystemTime::UNIX_EPOCH,
        pack_size: 0,
        stated: false,
        keep: false,
        promisor: false,
        dir: 0,
        listed_at: 0,
    }
}

/// The pack of index `entry` (its `.pack` named `pack_name`), with no id yet; `None` if it is not one (git
/// ignores an index whose pack is missing, and so do we; directories named like packs are skipped); an error
/// naming a FIFO, socket or device where the index should be (never opened: `stat` only).
///
/// A `stat` of either file that fails with anything but "not found" (EIO, EMFILE, ENOMEM, EINTR, EACCES: the
/// fault policy, docs/RELIABILITY.md) is no evidence that the pack is gone: it is listed all the same, not
/// `stat`ed ([`ListedPack::stated`] false, [`Stamp::unknown`]), and its load says what it is.
fn index_entry(
    dir: &Entries,
    pack_dir: &Path,
    entry: &ListedEntry,
    pack_name: &OsStr,
) -> Option<Result<ListedPack, (PathBuf, Error)>> {
    let name = entry.name.as_os_str();
    let unknown = || {
        Some(Ok(ListedPack {
            idx_stamp: Stamp::unknown(entry.ino),
            ..listed_only(pack_dir, entry, 0)
        }))
    };
    let idx_md = match dir.stat(name) {
        Ok(md) => md,
        Err(e) if crate::error::is_gone(&e) => return None,
        Err(_) => return unknown(),
    };
    if idx_md.kind == Kind::Dir {
        return None;
    }
    let pack_md = match dir.stat(pack_name) {
        Ok(md) => md,
        Err(e) if crate::error::is_gone(&e) => return None,
        Err(_) => return unknown(),
    };
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
        stated: true,
        keep: false,
        promisor: false,
        dir: 0,
        listed_at: 0,
    }))
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod tests {
    use super::*;

    /// Both steps of a scan, as the listing runs them: `covered` answers for the multi-pack-index files read.
    fn scan_pack_dir(
        pack_dir: &Path,
        covered: &mut dyn FnMut(MidxFiles) -> HashMap<OsString, u64>,
    ) -> (Option<Stamp>, Result<Option<PackDirScan>, Error>) {
        let (stamp, read) = read_pack_dir(pack_dir, None);
        let scan = read.map(|r| {
            r.map(|r| {
                let midx = covered(r.midx);
                r.stat_packs(pack_dir, &midx)
            })
        });
        (stamp, scan)
    }

    /// The listing's stamp of a pack directory is its path's `stat`, and a `multi-pack-index.d` is seen (a chain
    /// is looked for only then); a missing directory has neither a stamp nor a scan.
    #[test]
    fn scan_stamps_the_directory_and_sees_the_chain_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let pack_dir = tmp.path().join("pack");
        let mut seen = Vec::new();
        let mut covered = |m: MidxFiles| {
            seen.push(m);
            HashMap::new()
        };
        let (stamp, scan) = scan_pack_dir(&pack_dir, &mut covered);
        assert!(stamp.is_none() && matches!(scan, Ok(None)));
        std::fs::create_dir(&pack_dir).unwrap();
        let (stamp, scan) = scan_pack_dir(&pack_dir, &mut covered);
        assert_eq!(stamp, Stamp::of(&pack_dir));
        assert!(scan.unwrap().is_some());
        std::fs::create_dir(pack_dir.join(crate::midx::chain::CHAIN_DIR)).unwrap();
        let (stamp, scan) = scan_pack_dir(&pack_dir, &mut covered);
        assert_eq!(stamp, Stamp::of(&pack_dir));
        assert!(scan.unwrap().is_some());
        std::fs::write(pack_dir.join("multi-pack-index"), b"").unwrap();
        std::fs::write(pack_dir.join("pack-1.idx"), b"").unwrap();
        std::fs::write(pack_dir.join("pack-1.pack"), b"").unwrap();
        std::fs::write(pack_dir.join("pack-1.keep"), b"").unwrap();
        let (_, scan) = scan_pack_dir(&pack_dir, &mut covered);
        let scan = scan.unwrap().unwrap();
        assert_eq!(
            seen,
            [MidxFiles::None, MidxFiles::Chain, MidxFiles::Single],
            "a multi-pack-index is read, not the chain"
        );
        let [p] = &scan.packs[..] else {
            panic!("{:?}", scan.packs)
        };
        assert_eq!((p.keep, p.promisor, p.stated), (true, false, true));
    }

    /// A pack the multi-pack-index files list, whose `.idx` and `.pack` the directory lists as regular
    /// files, is not `stat`ed (its stamp is its listed inode, its size unknown, and it sorts after the packs
    /// that are); one the files do not list is; a FIFO named like a listed pack's `.idx` is `stat`ed, found to be
    /// a FIFO and refused, never opened.
    #[cfg(unix)]
    #[test]
    fn packs_a_multi_pack_index_lists_are_not_stated() {
        use std::os::unix::fs::MetadataExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let pack_dir = tmp.path().join("pack");
        std::fs::create_dir(&pack_dir).unwrap();
        for stem in ["pack-1", "pack-2", "pack-3"] {
            std::fs::write(pack_dir.join(format!("{stem}.idx")), b"idx").unwrap();
            std::fs::write(pack_dir.join(format!("{stem}.pack")), b"PACK").unwrap();
        }
        std::fs::remove_file(pack_dir.join("pack-3.idx")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            pack_dir.join("pack-3.idx"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let mut covered =
            |_: MidxFiles| HashMap::from([("pack-1.idx".into(), 7), ("pack-3.idx".into(), 7)]);
        let (_, scan) = scan_pack_dir(&pack_dir, &mut covered);
        let scan = scan.unwrap().unwrap();
        let names: Vec<(String, bool)> = scan
            .packs
            .iter()
            .map(|p| {
                let name = p
                    .idx_path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                (name, p.stated)
            })
            .collect();
        assert_eq!(
            names,
            [("pack-2.idx".into(), true), ("pack-1.idx".into(), false)],
            "the pack listed by the multi-pack-index is not stat'ed and sorts last"
        );
        let listed = &scan.packs[1];
        let ino = std::fs::metadata(pack_dir.join("pack-1.idx"))
            .unwrap()
            .ino();
        assert_eq!(listed.idx_stamp, Stamp::listed(ino, 7));
        assert_ne!(Some(listed.idx_stamp), Stamp::of(&listed.idx_path));
        let stated = &scan.packs[0];
        assert_eq!(stated.pack_size, 4);
        assert_eq!(Some(stated.idx_stamp), Stamp::of(&stated.idx_path));
        assert!(
            matches!(&scan.special[..], [(path, _)] if path.ends_with("pack-3.idx")),
            "{:?}",
            scan.special
        );
    }
}
