//! git's `count-objects -v` numbers ([`Repository::count_objects`]).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use odb_index::idx::PackIndex;

use odb_index::{LooseMode, ObjectId};

use crate::{Error, HashKind, Options, Repository, Store};

/// What `git count-objects -v` prints, counted as git counts (`builtin/count-objects.c`); sizes in bytes (git
/// prints them divided by 1024, rounded down).
///
/// ```
/// use odb_index_gix::Repository;
///
/// fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let dir = tempfile::tempdir()?;
///     let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(dir.path()).args(args).output();
///     git(&["init", "-q"])?;
///     std::fs::write(dir.path().join("hello.txt"), "hello\n")?;
///     git(&["hash-object", "-w", "hello.txt"])?;
///     let counts = Repository::discover(dir.path())?.count_objects()?;
///     assert_eq!((counts.count, counts.in_pack, counts.packs), (1, 0, 0));
///     assert!(counts.size > 0); // the loose file's blocks on disk
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counts {
    /// `count`: loose objects (regular files named like one in a fan-out directory).
    pub count: u64,
    /// `size`: the disk space they use (their blocks, `st_blocks * 512`, as git's `on_disk_bytes`).
    pub size: u64,
    /// `in-pack`: objects in the repository's own packs (each pack counted; an object in two counts twice).
    pub in_pack: u64,
    /// `packs`: the repository's own packs whose index can be read.
    pub packs: u64,
    /// `size-pack`: their `.pack` and `.idx` files' sizes.
    pub size_pack: u64,
    /// `prune-packable`: loose objects that a pack (the repository's or an alternate's) has too.
    pub prune_packable: u64,
    /// Files git calls garbage (`garbage` is their number), with git's reason: in a fan-out directory, a file
    /// not named like an object or not a regular file ("garbage found"); in `pack/`, a file of an unknown
    /// kind ("garbage found") or a pack's file without its `.idx` or its `.pack` ("no corresponding ...").
    pub garbage: Vec<(PathBuf, &'static str)>,
    /// `size-garbage`: their sizes.
    pub size_garbage: u64,
    /// The alternate objects directories, one `alternate: <path>` line each (quoted as git quotes a path).
    pub alternates: Vec<PathBuf>,
}

impl Repository {
    /// Count as `git count-objects -v` does. Not counted: garbage in alternates' pack directories and git's
    /// check of a linked worktree's files (`report_linked_checkout_garbage`).
    pub fn count_objects(&self) -> Result<Counts, Error> {
        let dir = self.objects_dir();
        let mut c = Counts::default();
        let loose = count_loose(dir, self.objects().store_kind(), &mut c)?;
        count_packs(dir, self.objects().store_kind(), &mut c)?;
        if !loose.is_empty() {
            // In a pack: a store that looks in packs only (git's `has_object_pack`).
            let packs = Options::default().loose(LooseMode::None);
            let mut handle = Store::open(dir, packs)?.handle();
            for id in &loose {
                c.prune_packable += u64::from(handle.locate(id)?.is_some());
            }
        }
        c.alternates = odb_index::repo::alternates(dir)?.dirs;
        Ok(c)
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_owned(),
        source,
    }
}

/// Entries of `dir` (none if it does not exist), sorted by name.
fn entries(dir: &Path) -> Result<Vec<(String, PathBuf)>, Error> {
    let list = match std::fs::read_dir(dir) {
        Ok(list) => list,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io(dir)(e)),
    };
    let mut out = Vec::new();
    for e in list {
        let e = e.map_err(io(dir))?;
        out.push((e.file_name().to_string_lossy().into_owned(), e.path()));
    }
    out.sort();
    Ok(out)
}

/// git's `real_report_garbage`: its size if it can be `stat`ed.
fn garbage(c: &mut Counts, path: PathBuf, why: &'static str) {
    c.size_garbage += std::fs::metadata(&path).map_or(0, |m| m.len());
    c.garbage.push((path, why));
}

/// Loose objects and fan-out garbage (`for_each_loose_file_in_objdir`); the loose ids.
fn count_loose(dir: &Path, kind: HashKind, c: &mut Counts) -> Result<Vec<ObjectId>, Error> {
    let mut ids = Vec::new();
    for fan in 0..=255u8 {
        let sub = dir.join(format!("{fan:02x}"));
        for (name, path) in entries(&sub)? {
            let hex = format!("{fan:02x}{name}");
            let id = (name.len() == kind.hex_len() - 2)
                .then(|| ObjectId::from_hex_kind(hex.as_bytes(), kind).ok())
                .flatten();
            match (id, std::fs::symlink_metadata(&path)) {
                (Some(id), Ok(m)) if m.file_type().is_file() => {
                    c.count += 1;
                    c.size += m.blocks() * 512;
                    ids.push(id);
                }
                _ => garbage(c, path, "garbage found"),
            }
        }
    }
    Ok(ids)
}

/// The repository's own packs and `pack/` garbage (`prepare_pack`, `report_pack_garbage`).
fn count_packs(dir: &Path, kind: HashKind, c: &mut Counts) -> Result<(), Error> {
    const PACK_FILES: [&str; 7] = ["idx", "rev", "pack", "bitmap", "keep", "promisor", "mtimes"];
    let pack_dir = dir.join("pack");
    // Pack files grouped by name up to their last `.`, in name order, as git sorts them.
    let mut groups: Vec<(String, Vec<(String, PathBuf)>)> = Vec::new();
    for (name, path) in entries(&pack_dir)? {
        if let Some(stem) = name.strip_suffix(".idx") {
            let pack = pack_dir.join(format!("{stem}.pack"));
            if let (Ok(p), Ok(idx)) = (std::fs::metadata(&pack), PackIndex::open(&path, kind)) {
                c.packs += 1;
                c.in_pack += u64::from(idx.len());
                c.size_pack += p.len() + std::fs::metadata(&path).map_or(0, |m| m.len());
            }
        }
        let midx = name.starts_with("multi-pack-index")
            && (name.ends_with(".bitmap") || name.ends_with(".rev"));
        if name == "multi-pack-index" || name == "multi-pack-index.d" || midx {
            continue;
        }
        match name.rsplit_once('.') {
            Some((stem, ext)) if PACK_FILES.contains(&ext) => match groups.last_mut() {
                Some((s, files)) if s == stem => files.push((ext.to_owned(), path)),
                _ => groups.push((stem.to_owned(), vec![(ext.to_owned(), path)])),
            },
            _ => garbage(c, path, "garbage found"),
        }
    }
    for (_, files) in groups {
        let has = |e: &str| files.iter().any(|(ext, _)| ext == e);
        let why = match (has("pack"), has("idx")) {
            (true, true) => continue,
            (true, false) => "no corresponding .idx",
            (false, true) => "no corresponding .pack",
            (false, false) => "no corresponding .idx or .pack",
        };
        for (_, path) in files {
            garbage(c, path, why);
        }
    }
    Ok(())
}
