//! [`Store::verify`]: every index file of the repository checked in full, one result per file, like `git
//! multi-pack-index verify` and `git verify-pack` over the pack directories (incremental chain layers included).

use std::path::{Path, PathBuf};

use crate::data::LoadMode;
use crate::error::Error;
use crate::idx::PackIndex;
use crate::midx::MultiPackIndex;
use crate::midx::chain::{CHAIN_DIR, chain_path, read_chain};
use crate::oid::HashKind;
use crate::store::Store;

/// One file [`Store::verify`] checked: its path and the number of objects it lists, or what is wrong with it
/// (an error naming the file).
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::{Options, Store};
///
/// let store = Store::open(repo.path(), Options::default())?;
/// let checked = store.verify();
/// assert_eq!(checked.len(), 1); // the one .idx
/// assert!(checked[0].path.extension().is_some_and(|e| e == "idx"));
/// assert_eq!(checked[0].result.as_ref().ok(), Some(&1)); // valid, one object
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct Verified {
    /// The file checked: a `.idx`, a `multi-pack-index`, a chain file or a chain layer (or a pack directory that
    /// could not be listed).
    pub path: PathBuf,
    /// The objects it lists, or why it is not valid.
    pub result: Result<u64, Error>,
}

impl Store {
    /// Check every index file of every objects directory (own first, then the alternates) in full, and return
    /// one result per file, in directory order then name order:
    ///
    /// - every `*.idx` (as the listing reads them): its own checks ([`PackIndex::verify`]: trailer checksum,
    ///   sorted ids, buckets, offsets), and, when its `.pack` is there, against it
    ///   (`PackIndex::open_for_pack`: trailer, header object count, offsets within the pack);
    /// - the `multi-pack-index`, and each layer of an incremental chain (`multi-pack-index.d/`: the chain file,
    ///   then each layer, which must end with the checksum it is named after), as `git multi-pack-index verify`:
    ///   [`MultiPackIndex::verify_with_packs`] against the `.idx` of each pack it names.
    ///
    /// A pack directory that cannot be listed is one failed result naming it. Reads every byte of every index.
    ///
    /// ```
    /// # let repo = odb_index_testkit::init_repo("sha1", true);
    /// # odb_index_testkit::fast_import_blobs(repo.path(), 10, 1, "main");
    /// # odb_index_testkit::git(repo.path(), &["multi-pack-index", "write"]);
    /// use odb_index::{Options, Store};
    ///
    /// let store = Store::open(repo.path(), Options::default())?;
    /// let results = store.verify();
    /// assert_eq!(results.len(), 2); // the pack's .idx and the multi-pack-index
    /// assert!(results.iter().all(|v| v.result.is_ok()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify(&self) -> Vec<Verified> {
        let kind = self.hash_kind();
        let load = self.options.load;
        let mut out = Vec::new();
        for dir in self.objects_dirs() {
            let pack_dir = dir.join("pack");
            let listed = crate::fault::check(crate::fault::Call::List)
                .and_then(|()| std::fs::read_dir(&pack_dir));
            let mut files: Vec<PathBuf> = match listed {
                Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    out.push(Verified {
                        result: Err(Error::io(&pack_dir, e)),
                        path: pack_dir,
                    });
                    continue;
                }
            };
            files.sort();
            for f in files {
                // Any name ending in `.idx` (its other bytes need not be UTF-8), as the listing and git read them.
                let name = f.file_name().map_or(&b""[..], |n| n.as_encoded_bytes());
                let result = if name.ends_with(b".idx") && is_file(&f) {
                    verify_idx(&f, kind, load)
                } else if name == b"multi-pack-index" {
                    verify_midx(&f, &pack_dir, kind, load, |p| {
                        // Read into memory (the checksum reads it all): never a mapping to fault.
                        let m = MultiPackIndex::open_with(p, kind, LoadMode::Read)?;
                        m.check_bitmapped_packs(0).map(|()| m)
                    })
                } else {
                    continue;
                };
                out.push(Verified { path: f, result });
            }
            verify_chain(&pack_dir, kind, load, &mut out);
        }
        out
    }
}

/// Whether `path` is a regular file (a `stat`, symbolic links followed).
fn is_file(path: &Path) -> bool {
    crate::fault::check(crate::fault::Call::Stat).is_ok() && path.is_file()
}

/// Whether `path` exists (a `stat`, symbolic links followed).
fn exists(path: &Path) -> bool {
    crate::fault::check(crate::fault::Call::Stat).is_ok() && path.exists()
}

/// A `.idx` checked in full, and against its `.pack` when that is there (an index without its pack is ignored
/// by git and by the store: only its own checks).
fn verify_idx(f: &Path, kind: HashKind, load: LoadMode) -> Result<u64, Error> {
    let idx = if exists(&f.with_extension("pack")) {
        PackIndex::open_for_pack(f, kind, load)?
    } else {
        PackIndex::open_with(f, kind, load)?
    };
    idx.verify()?;
    Ok(u64::from(idx.len()))
}

/// A multi-pack-index (opened by `open`) checked in full and against the `.idx` of every pack it names (each
/// opened with [`PackIndex::open_for_pack`]), as `git multi-pack-index verify` does.
fn verify_midx(
    f: &Path,
    pack_dir: &Path,
    kind: HashKind,
    load: LoadMode,
    open: impl FnOnce(&Path) -> Result<MultiPackIndex, Error>,
) -> Result<u64, Error> {
    let midx = open(f)?;
    let indices: Vec<Option<PackIndex>> = midx
        .pack_names()
        .iter()
        .map(|name| {
            let idx = crate::store::listing::plan::idx_name(name);
            PackIndex::open_for_pack(&pack_dir.join(idx), kind, load).ok()
        })
        .collect();
    let refs: Vec<Option<&PackIndex>> = indices.iter().map(Option::as_ref).collect();
    midx.verify_with_packs(&refs)?;
    Ok(u64::from(midx.len()))
}

/// The incremental chain of `pack_dir`, if any: the chain file (a failed result if it cannot be read), then each
/// layer, base first, checked as a multi-pack-index that must end with the checksum it is named after.
fn verify_chain(pack_dir: &Path, kind: HashKind, load: LoadMode, out: &mut Vec<Verified>) {
    if !exists(&pack_dir.join(CHAIN_DIR)) {
        return;
    }
    let layers = match read_chain(pack_dir, kind) {
        Ok(Some(layers)) => layers,
        Ok(None) => return,
        Err(e) => {
            out.push(Verified {
                path: chain_path(pack_dir),
                result: Err(e),
            });
            return;
        }
    };
    // The objects of the layers below (their `BTMP` bits come first); unknown past a layer that does not open.
    let mut base = Some(0u64);
    for layer in layers {
        let result = verify_midx(&layer.path, pack_dir, kind, load, |_| {
            let m = layer.open(kind, LoadMode::Read);
            let below = base.take();
            let m = m?;
            if let Some(below) = below {
                base = Some(below + u64::from(m.len()));
                m.check_bitmapped_packs(below)?;
            }
            Ok(m)
        });
        out.push(Verified {
            path: layer.path,
            result,
        });
    }
}
