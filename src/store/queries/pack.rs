//! From a [`Location`](crate::store::Location) to the file that holds the object: [`PackInfo`] for packs (path, size,
//! `.keep` / `.promisor`), the path of a loose object, and how a caller learns that a pack is gone.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::error::Error;
use crate::ids::PackId;
use crate::oid::ObjectId;
use crate::store::listing::Listing;
use crate::store::listing::plan::SlotSpec;
use crate::store::listing::scan::ListedPack;
use crate::store::{Handle, Store};

/// What the store knows about one pack, as listed: enough to open and read it.
///
/// Obtained from [`Store::pack`] or [`Handle::pack`] for a [`PackId`] of a
/// [`Location::Packed`](crate::store::Location::Packed).
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
/// let info = &store.pack_infos()[0];
/// assert!(info.file_name().starts_with("pack-") && info.file_name().ends_with(".pack"));
/// assert_eq!(info.idx_path, info.pack_path.with_extension("idx"));
/// assert_eq!(info.objects_dir, 0);
/// assert!(!info.keep && !info.promisor);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PackInfo {
    /// The pack's id.
    pub id: PackId,
    /// The `.pack` file.
    pub pack_path: PathBuf,
    /// Its `.idx` file.
    pub idx_path: PathBuf,
    /// The `.pack` file's size in bytes when the pack directory was listed (for a pack a multi-pack-index
    /// covers, which the listing does not `stat`, as git does not: when asked; 0 if it cannot be `stat`ed).
    pub size: u64,
    /// The `.pack` file's modification time (packs are searched newest first, as git does; the same exception
    /// as [`size`](Self::size), the epoch if it cannot be `stat`ed).
    pub mtime: SystemTime,
    /// A `pack-<hash>.keep` file sits beside it (git's repack leaves such packs alone).
    pub keep: bool,
    /// A `pack-<hash>.promisor` file sits beside it (the pack came from a promisor remote).
    pub promisor: bool,
    /// The stable number of the objects directory holding it (as in [`Location::Loose`](crate::store::Location::Loose);
    /// see [`Store::objects_dir_of`]).
    pub objects_dir: usize,
}

impl PackInfo {
    /// The pack's file name, `pack-<hash>.pack` (what `git cat-file --batch-check='%(objectpack)'` would print).
    pub fn file_name(&self) -> &str {
        self.pack_path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
    }
}

fn info(p: &ListedPack) -> PackInfo {
    let pack_path = p.idx_path.with_extension("pack");
    // A pack the listing did not `stat` (a multi-pack-index covers it): its `.pack` now.
    let (size, mtime) = if p.stated {
        (p.pack_size, p.mtime)
    } else {
        crate::fault::check(crate::fault::Call::Stat)
            .and_then(|()| std::fs::metadata(&pack_path))
            .map_or((0, SystemTime::UNIX_EPOCH), |md| {
                (md.len(), md.modified().unwrap_or(SystemTime::UNIX_EPOCH))
            })
    };
    PackInfo {
        id: p.id,
        pack_path,
        idx_path: p.idx_path.clone(),
        size,
        mtime,
        keep: p.keep,
        promisor: p.promisor,
        objects_dir: p.dir,
    }
}

pub(in crate::store) fn pack_in(listing: &Listing, pack: PackId) -> Result<PackInfo, Error> {
    listing
        .pack_by_id
        .get(&pack)
        .map(|&i| info(&listing.packs[i]))
        .ok_or(Error::StalePack { pack })
}

/// `objects_dir/xx/yyyy…`, the file of loose object `id`.
fn loose_path_in(listing: &Listing, dir: usize, id: &ObjectId) -> Option<PathBuf> {
    let base = listing.numbered_dirs.get(dir)?;
    let hex = id.to_string();
    Some(base.join(&hex[..2]).join(&hex[2..]))
}

impl Store {
    /// What the store knows about `pack` (its paths, size, markers), or [`Error::StalePack`] once it is no longer
    /// in the current listing (a repack or gc removed it; refresh and locate the object again). Never another
    /// pack's: ids are not reused.
    ///
    /// ```
    /// # use std::process::Command;
    /// # let tmp = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| {
    /// #     let st = Command::new("git").args(args).current_dir(tmp.path())
    /// #         .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").output().unwrap();
    /// #     assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    /// #     String::from_utf8(st.stdout).unwrap()
    /// # };
    /// # git(&["init", "-q", "--bare", "."]);
    /// # let id = git(&["hash-object", "-w", "--stdin"]);
    /// # let pack_objects = |ids: &str| {
    /// #     use std::io::Write;
    /// #     let mut c = Command::new("git").args(["pack-objects", "-q", "objects/pack/pack"]).current_dir(tmp.path())
    /// #         .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1")
    /// #         .stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::null()).spawn().unwrap();
    /// #     c.stdin.take().unwrap().write_all(ids.as_bytes()).unwrap();
    /// #     assert!(c.wait().unwrap().success());
    /// # };
    /// # pack_objects(&id);
    /// # let pack = std::fs::read_dir(tmp.path().join("objects/pack"))?.filter_map(|e| e.ok())
    /// #     .map(|e| e.path()).find(|p| p.extension().is_some_and(|e| e == "pack")).unwrap();
    /// # std::fs::write(pack.with_extension("keep"), "")?;
    /// use odb_index::{Location, Options, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default())?;
    /// let mut handle = store.handle();
    /// let Some(Location::Packed { pack, offset }) = handle.locate(&id.trim().parse()?)? else { panic!() };
    /// let info = store.pack(pack)?;
    /// assert!(info.pack_path.is_file() && info.keep && !info.promisor);
    /// assert_eq!(info.size, std::fs::metadata(&info.pack_path)?.len());
    /// assert!(offset < info.size);
    /// assert!(info.file_name().starts_with("pack-") && info.file_name().ends_with(".pack"));
    /// assert!(store.is_pack_live(pack));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pack(&self, pack: PackId) -> Result<PackInfo, Error> {
        pack_in(self.current.get().meta(), pack)
    }

    /// Whether `pack` is in the current listing. A pack that is gone never comes back under the same id. Takes
    /// the store's short lock (as [`Store::pack`]); a handle answers without it ([`Handle::pack`]).
    pub fn is_pack_live(&self, pack: PackId) -> bool {
        self.current.get().meta().pack_by_id.contains_key(&pack)
    }

    /// Every pack of the current listing, in search order (newest first per objects directory).
    pub fn pack_infos(&self) -> Vec<PackInfo> {
        self.current.get().meta().packs.iter().map(info).collect()
    }

    /// The objects directory numbered `dir` ([`Location::Loose`](crate::store::Location::Loose)'s `dir`,
    /// [`PackInfo::objects_dir`]): 0 is the repository's own; alternates are numbered as this store first sees
    /// them, and a number always names the same directory (even after the alternates change).
    pub fn objects_dir_of(&self, dir: usize) -> Option<PathBuf> {
        self.current.get().meta().numbered_dirs.get(dir).cloned()
    }

    /// The file of loose object `id` in objects directory `dir` (`<dir>/xx/yyyy…`), as found by a lookup that
    /// answered [`Location::Loose`](crate::store::Location::Loose). `None` for a number this store never gave.
    pub fn loose_path(&self, dir: usize, id: &ObjectId) -> Option<PathBuf> {
        loose_path_in(self.current.get().meta(), dir, id)
    }
}

impl Handle {
    /// [`Store::pack`] as this handle's view knows it, without the store's lock: [`Error::StalePack`] if the pack
    /// is not in the listing the handle uses (the handle moves to a newer listing on its next lookup after a
    /// refresh).
    pub fn pack(&self, pack: PackId) -> Result<PackInfo, Error> {
        pack_in(self.listing(), pack).or_else(|_| self.store().pack(pack))
    }

    /// [`Store::loose_path`] without the store's lock.
    pub fn loose_path(&self, dir: usize, id: &ObjectId) -> Option<PathBuf> {
        loose_path_in(self.listing(), dir, id).or_else(|| self.store().loose_path(dir, id))
    }
}

impl Handle {
    /// The packs of this handle's listing in the order git 2.47 visits them in `for_each_packed_object` (what
    /// `git cat-file --batch-all-objects --unordered` prints, each pack's objects in pack order):
    ///
    /// - first the packs of the multi-pack-indices, as `get_all_packs` adds them one by one to the front of
    ///   git's list: the last pack of the last multi-pack-index first. That list of multi-pack-indices has the
    ///   first one found first, then the others in the reverse order of their objects directories
    ///   (`prepare_multi_pack_index_one` inserts each after the head); an incremental chain is one, its base
    ///   layer's packs first;
    /// - then the other packs as `prepare_packed_git` sorts them (`sort_pack`, a stable sort): the repository's
    ///   own before the alternates', then by the `.pack`'s modification time in whole seconds (`st_mtime`),
    ///   newest first. Packs of the same second keep the list's order, which `install_packed_git` built by adding
    ///   each pack at the front as the pack directories were read: the last one read first.
    ///
    /// ```
    /// # let repo = odb_index_testkit::init_repo("sha1", true);
    /// # odb_index_testkit::fast_import_blobs(repo.path(), 3, 1, "a");
    /// # odb_index_testkit::fast_import_blobs(repo.path(), 3, 2, "b");
    /// use odb_index::{Options, Store};
    ///
    /// let store = Store::open(repo.path(), Options::default())?;
    /// let order = store.handle().packs_in_git_order();
    /// assert_eq!(order.len(), 2);
    /// assert!(order.iter().all(|&p| store.is_pack_live(p)));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn packs_in_git_order(&self) -> Vec<PackId> {
        git_order_in(self.listing())
    }
}

/// [`Handle::packs_in_git_order`] of listing `g`.
fn git_order_in(listing: &Listing) -> Vec<PackId> {
    // The multi-pack-index slots of each pack directory (a chain's layers, base first), in directory order.
    let mut midx_groups: Vec<(&Path, Vec<usize>)> = Vec::new();
    for slot in &listing.slots {
        let SlotSpec::Midx {
            path, packs, layer, ..
        } = slot
        else {
            continue;
        };
        // `<pack dir>/multi-pack-index`, or `<pack dir>/multi-pack-index.d/<layer>`.
        let dir = match layer {
            Some(_) => path.parent().and_then(Path::parent),
            None => path.parent(),
        }
        .unwrap_or(path);
        let packs = packs.iter().flatten().copied();
        match midx_groups.last_mut() {
            Some((d, v)) if *d == dir => v.extend(packs),
            _ => midx_groups.push((dir, packs.collect())),
        }
    }
    if midx_groups.len() > 1 {
        midx_groups[1..].reverse();
    }
    let mut seen = HashSet::new();
    let mut order: Vec<usize> = midx_groups
        .into_iter()
        .flat_map(|(_, v)| v)
        .filter(|&p| seen.insert(p))
        .collect();
    order.reverse();
    // The others, in the order they were installed (directory order, then as each directory listed them), then
    // each put at the front; then sorted, stably.
    let mut others: Vec<usize> = (0..listing.packs.len())
        .filter(|p| !seen.contains(p))
        .collect();
    others.sort_by_key(|&p| {
        (
            dir_rank(listing, listing.packs[p].dir),
            listing.packs[p].listed_at,
        )
    });
    others.reverse();
    let own = listing.dir_ids.first().copied();
    others.sort_by_key(|&p| {
        let p = &listing.packs[p];
        (
            Some(p.dir) != own,
            std::cmp::Reverse(whole_seconds(p.mtime)),
        )
    });
    order.extend(others);
    order.into_iter().map(|p| listing.packs[p].id).collect()
}

/// The position of objects directory number `dir` in the listing's search order.
fn dir_rank(listing: &Listing, dir: usize) -> usize {
    listing
        .dir_ids
        .iter()
        .position(|&d| d == dir)
        .unwrap_or(usize::MAX)
}

/// `t` in whole seconds since the epoch, as `st_mtime` has it (rounded down, before 1970 too).
fn whole_seconds(t: SystemTime) -> i64 {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => {
            let d = e.duration();
            -i64::try_from(d.as_secs()).unwrap_or(i64::MAX) - i64::from(d.subsec_nanos() > 0)
        }
    }
}
