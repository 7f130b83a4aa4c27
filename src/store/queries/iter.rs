//! Every object of a store: [`Handle::for_each_object`] (every entry of every source, fast, unordered),
//! [`Handle::objects_sorted`] (each object once, in id order, like `git cat-file --batch-all-objects`) and
//! [`Handle::count_objects`].

use std::collections::HashSet;
use std::ops::{ControlFlow, RangeInclusive};
use std::path::{Path, PathBuf};

use crate::data::LoadMode;
use crate::error::{Error, IdxProblem};
use crate::ids::PackId;
use crate::idx::PackIndex;
use crate::oid::{HashKind, ObjectId};
use crate::store::hooks::{self, Point};
use crate::store::listing::load::LoadedMidx;
use crate::store::{Handle, Location, MidxCheck};
use crate::sync::plain::Arc;

/// Objects an index lists that iteration cannot locate, with why ([`Handle::unlocatable_objects`]).
type Unusable = Vec<(ObjectId, Arc<Error>)>;

/// An `.idx` entry whose offset cannot be right, as a lookup reports it.
fn corrupt_index(idx: &PackIndex, problem: IdxProblem) -> Error {
    Error::CorruptIndex {
        path: idx.path().to_path_buf(),
        problem,
    }
}

/// The ids of each `.idx` of `failed` (indices that did not load) that can still be read, without its pack, with
/// its load error: git lists them (it reads the pack only when an object is read). An index whose file or pack
/// vanished since the listing is left out, as git leaves out an index without its pack.
fn unusable_in_failed(
    failed: &[(PathBuf, Arc<Error>)],
    kind: HashKind,
    mode: LoadMode,
    out: &mut Unusable,
) {
    for (path, e) in failed {
        if e.is_vanished() || path.extension().is_none_or(|x| x != "idx") {
            continue;
        }
        let Ok(idx) = PackIndex::open_with(path, kind, mode) else {
            continue;
        };
        out.extend(
            (0..idx.len())
                .filter_map(|i| idx.id_at(i).and_then(ObjectId::from_bytes))
                .map(|id| (id, Arc::clone(e))),
        );
    }
}

/// What [`Handle::packed_objects`] does with an entry it lists (`emit`) and one no index can locate (`push`).
type Emit<'a> = &'a mut dyn FnMut(&ObjectId, Location) -> ControlFlow<()>;
type Push<'a> = &'a mut dyn FnMut(ObjectId, Error);

/// Every entry of multi-pack-index `m` where a lookup finds it: checked against the precomputed bounds, or (an
/// entry that cannot be right, an entry of a fanout bucket out of order, or under [`MidxCheck::PackIndex`]) as
/// `locate` answers it. An id of a bucket out of order may not be the object's (git's t5319.42 zeroes one): it is
/// listed only where `locate` finds it, and the object whose id it replaced is listed from its pack's own index
/// (`untrusted_buckets`).
fn midx_entries(m: &LoadedMidx, emit: Emit<'_>, push: Push<'_>) -> ControlFlow<()> {
    // Every pack's length (those the listing did not `stat` read now: a walk over every entry needs them all).
    let bounds = m.midx.offset_bounds(&m.pack_lens_now());
    for first in 0..=u8::MAX {
        let trusted = m.bucket_trusted(first);
        for i in m.midx.bucket_range(first) {
            let Some(raw) = m.midx.id_at(i) else {
                return ControlFlow::Continue(());
            };
            let Some(id) = ObjectId::from_bytes(raw) else {
                continue;
            };
            let fast = match (m.check, trusted) {
                (MidxCheck::Bounds, true) => m.midx.entry(i, |p| bounds.get(p as usize).copied()),
                _ => None,
            };
            let loc = match fast {
                // Entries of packs that are not on disk are not answered by lookups either.
                Some((pack, offset)) => match m.packs.get(pack as usize) {
                    Some(&Some(pack)) => Some(Location::Packed { pack, offset }),
                    _ => None,
                },
                // `locate`'s answer for it: checked, or from the packs' own indices.
                None => {
                    let mut bad = None;
                    let loc = m
                        .lookup(raw, &mut bad)
                        .or_else(|| m.confirm_miss(raw, &mut bad));
                    if let (None, Some((_, e))) = (loc, bad) {
                        push(id, e);
                    }
                    loc
                }
            };
            if let Some(loc) = loc {
                emit(&id, loc)?;
            }
        }
    }
    ControlFlow::Continue(())
}

/// The ids of the packs' own indices that a fanout bucket of `m` not trusted (out of order) does not list: a
/// miss there is sent to the own indices, so they are listed from those.
fn untrusted_buckets(m: &LoadedMidx, emit: Emit<'_>, push: Push<'_>) -> ControlFlow<()> {
    for first in 0..=u8::MAX {
        if m.bucket_trusted(first) {
            continue;
        }
        let listed: HashSet<&[u8]> = m
            .midx
            .bucket_range(first)
            .filter_map(|i| m.midx.id_at(i))
            .collect();
        for pack in 0..m.pack_count() {
            let Some(Ok(own)) = m.own_index(pack) else {
                continue;
            };
            for i in own.idx.bucket_range(first) {
                let Some(raw) = own.idx.id_at(i).filter(|raw| !listed.contains(raw)) else {
                    continue;
                };
                let Some(id) = ObjectId::from_bytes(raw) else {
                    continue;
                };
                match own.idx.checked_offset_at(i) {
                    Some(Ok(offset)) => emit(
                        &id,
                        Location::Packed {
                            pack: own.id,
                            offset,
                        },
                    )?,
                    Some(Err(problem)) => push(id, corrupt_index(&own.idx, problem)),
                    None => {}
                }
            }
        }
    }
    ControlFlow::Continue(())
}

/// How many entries each kind of source holds ([`Handle::count_objects`]); an object stored in several places
/// counts in each.
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
/// std::fs::write(repo.path().join("new.txt"), "new\n")?;
/// git(&["hash-object", "-w", "new.txt"])?; // one loose object beside the pack
/// let counts = Store::open(repo.path(), Options::default())?.handle().count_objects()?;
/// assert_eq!((counts.packed, counts.loose, counts.total()), (1, 1, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectCounts {
    /// Entries of the packs' `.idx` files and of the multi-pack-indices (a multi-pack-index lists each object of
    /// the packs it covers once).
    pub packed: u64,
    /// Loose object files, in all objects directories.
    pub loose: u64,
}

impl ObjectCounts {
    /// `packed + loose`: an upper bound of the number of distinct objects.
    pub fn total(&self) -> u64 {
        self.packed + self.loose
    }
}

/// What one walk of a store does at each of its steps ([`Handle::walk`]): the walks of every object
/// ([`Handle::for_each_object`]), of counting ([`Handle::count_objects`]) and of a prefix (`each_with_prefix`).
pub(in crate::store) trait Visit {
    /// The packed step: the entries of every index (the handle loads them) until it breaks. Called again after
    /// the loose step when the handle moved to a new listing: skipping the packs already visited is the
    /// visitor's.
    fn packs(&mut self, handle: &mut Handle) -> ControlFlow<()>;
    /// The fan-out directories (by first byte) the loose step lists.
    fn fanouts(&self) -> RangeInclusive<u8>;
    /// One loose object of the objects directory numbered `dir`.
    fn loose(&mut self, dir: usize, id: ObjectId) -> ControlFlow<()>;
    /// A fan-out directory of objects directory `dir` could not be listed: `Err` ends the walk with that error;
    /// `Ok` goes on with the next objects directory.
    fn loose_failed(&mut self, dir: &Path, error: Error) -> Result<(), Error>;
}

/// [`Handle::for_each_object`]'s visitor: `f` with every entry, each pack's once.
struct EachObject<'a, F> {
    f: &'a mut F,
    seen: HashSet<PackId>,
}

impl<F: FnMut(&ObjectId, Location) -> ControlFlow<()>> Visit for EachObject<'_, F> {
    fn packs(&mut self, handle: &mut Handle) -> ControlFlow<()> {
        handle.packed_objects(&mut self.seen, self.f, None)
    }

    fn fanouts(&self) -> RangeInclusive<u8> {
        0..=u8::MAX
    }

    fn loose(&mut self, dir: usize, id: ObjectId) -> ControlFlow<()> {
        (self.f)(&id, Location::Loose { dir })
    }

    fn loose_failed(&mut self, _: &Path, error: Error) -> Result<(), Error> {
        Err(error)
    }
}

/// [`Handle::count_objects`]'s visitor.
struct Count {
    counts: ObjectCounts,
    seen: HashSet<PackId>,
}

impl Visit for Count {
    fn packs(&mut self, handle: &mut Handle) -> ControlFlow<()> {
        self.counts.packed += handle.packed_count(&mut self.seen);
        ControlFlow::Continue(())
    }

    fn fanouts(&self) -> RangeInclusive<u8> {
        0..=u8::MAX
    }

    fn loose(&mut self, _: usize, _: ObjectId) -> ControlFlow<()> {
        self.counts.loose += 1;
        ControlFlow::Continue(())
    }

    fn loose_failed(&mut self, _: &Path, error: Error) -> Result<(), Error> {
        Err(error)
    }
}

impl Handle {
    /// The one walk of a store, in `locate`'s order: the packs (`visit`'s packed step), the loose objects of each
    /// objects directory (the fan-out directories `visit` asks for, listed afresh in every
    /// [`LooseMode`](crate::store::LooseMode) but `None`), then, if a pack directory changed or an index vanished
    /// ([`should_refresh`](Handle::should_refresh)) or another thread's refresh replaced the listing, the packed
    /// step again on the new listing ([`load_all_relisted`](Handle::load_all_relisted)): a repack (and prune)
    /// while the loose objects were listed moved objects into packs this listing does not know. Stops where
    /// `visit` breaks.
    pub(in crate::store) fn walk(&mut self, visit: &mut impl Visit) -> Result<(), Error> {
        if visit.packs(self).is_break() {
            return Ok(());
        }
        hooks::at(Point::AfterPacks);
        let listing = self.listing();
        for ((l, &dir_id), dir) in listing
            .loose
            .iter()
            .zip(listing.dir_ids.iter())
            .zip(listing.dirs.iter())
        {
            for first in visit.fanouts() {
                match l.each_in_fanout(first, &mut |id| visit.loose(dir_id, id)) {
                    Ok(ControlFlow::Break(())) => return Ok(()),
                    Ok(ControlFlow::Continue(())) => {}
                    Err(e) => {
                        visit.loose_failed(dir, e)?;
                        break;
                    }
                }
            }
        }
        if self.load_all_relisted()? {
            let _ = visit.packs(self);
        }
        Ok(())
    }

    /// Call `f` with every entry of every source and where it is, until `f` breaks: the packs' `.idx` files
    /// (newest pack first, each in id order), then the multi-pack-indices (id order), then the loose objects of
    /// each objects directory (in directory order). An object stored in several places comes once per place;
    /// nothing is allocated per packed object. Loose fan-out directories are listed afresh in every
    /// [`LooseMode`](crate::store::LooseMode) but `None` (which skips them), [`Cached`](crate::store::LooseMode::Cached) too.
    ///
    /// Loads every index file first, and lists the pack directories again as [`locate`](Self::locate) does on a
    /// miss: before the first call of `f` if an index vanished or a pack directory changed since the listing
    /// (again while an index of the new listing vanished before it was loaded, a few times at most), and after
    /// the loose objects if one changed meanwhile or another thread's refresh replaced the listing (then the
    /// entries of packs not seen before follow).
    /// Errors: I/O errors listing loose directories; [`Error::Incomplete`] (under
    /// [`IncompleteMode::Error`](crate::store::IncompleteMode::Error), before any call of `f`) if an index could not be
    /// loaded.
    pub fn for_each_object(
        &mut self,
        mut f: impl FnMut(&ObjectId, Location) -> ControlFlow<()>,
    ) -> Result<(), Error> {
        // An index that vanished since the listing, or a changed pack directory: list again first, as `locate`
        // does on a miss, so that a repack just before the call neither hides its objects nor fails the call.
        self.load_all_relisted()?;
        self.check_complete()?;
        self.walk(&mut EachObject {
            f: &mut f,
            seen: HashSet::new(),
        })
    }

    /// The packed part of [`for_each_object`](Self::for_each_object): every object of every loaded index whose
    /// pack is not in `seen`, where a lookup finds it, then those packs are added to `seen`. An entry that cannot
    /// be right is listed where a lookup answers it: a multi-pack-index entry from the packs' own indices (as
    /// `locate` does), and the objects of a fanout bucket whose misses `locate` sends to the own indices (out of
    /// order; under [`MidxCheck::PackIndex`](crate::store::MidxCheck::PackIndex), not the packs' ids) from those too.
    /// What no index can locate is skipped here, and pushed to `unusable` with why when it is given, with the
    /// ids of every `.idx` that did not load (read again, without its pack) for
    /// [`unlocatable_objects`](Self::unlocatable_objects).
    fn packed_objects(
        &mut self,
        seen: &mut HashSet<PackId>,
        f: &mut impl FnMut(&ObjectId, Location) -> ControlFlow<()>,
        mut unusable: Option<&mut Unusable>,
    ) -> ControlFlow<()> {
        let (kind, mode) = (self.store().kind, self.store().options.load);
        let (snap, _) = self.load_all();
        let before = seen.clone();
        if let Some(u) = unusable.as_deref_mut() {
            unusable_in_failed(&snap.failed, kind, mode, u);
        }
        let mut push = |id: ObjectId, e: Error| {
            if let Some(u) = unusable.as_deref_mut() {
                u.push((id, Arc::new(e)));
            }
        };
        for p in &snap.packs {
            seen.insert(p.id);
            if before.contains(&p.id) {
                continue;
            }
            for i in 0..p.idx.len() {
                let Some(id) = p.idx.id_at(i).and_then(ObjectId::from_bytes) else {
                    continue;
                };
                match p.idx.checked_offset_at(i) {
                    Some(Ok(offset)) => f(&id, Location::Packed { pack: p.id, offset })?,
                    Some(Err(problem)) => push(id, corrupt_index(&p.idx, problem)),
                    None => {}
                }
            }
        }
        let mut emit = |id: &ObjectId, loc: Location| -> ControlFlow<()> {
            if let Location::Packed { pack, .. } = loc {
                seen.insert(pack);
                if before.contains(&pack) {
                    return ControlFlow::Continue(());
                }
            }
            f(id, loc)
        };
        for m in &snap.midx {
            midx_entries(m, &mut emit, &mut push)?;
            untrusted_buckets(m, &mut emit, &mut push)?;
        }
        ControlFlow::Continue(())
    }

    /// The objects that index files list and that [`for_each_object`](Self::for_each_object) does not, because
    /// no lookup locates them, each once, in id order, with why: what a lookup of it answers if that is an error
    /// (an `.idx` entry whose offset cannot be right, a multi-pack-index entry that cannot be right and that no
    /// pack's own index locates), else (a lookup answers `None`) why its index cannot be used (an `.idx` whose
    /// pack does not match it, or whose pack's header gives another object count). git's
    /// `cat-file --batch-all-objects` lists these ids too, and then cannot read them: `<id> missing` with the
    /// error on stderr, or dies. Together with [`objects_sorted`](Self::objects_sorted), every id the index
    /// files list (but those of an index whose file is unreadable or malformed, whose ids cannot be read). An
    /// `.idx` whose file or pack vanished since the listing is not listed (git ignores it).
    ///
    /// Walks every index as `for_each_object` does (reading an `.idx` that did not load again, without its
    /// pack), then looks each candidate up: O(objects) when nothing is wrong.
    ///
    /// ```
    /// # let tmp = tempfile::tempdir()?;
    /// # std::process::Command::new("git").args(["init", "-q", "--bare", "."]).current_dir(tmp.path())
    /// #     .env("GIT_CONFIG_GLOBAL", "/dev/null").status()?;
    /// use odb_index::{Options, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default())?;
    /// assert!(store.handle().unlocatable_objects()?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Errors: those of [`for_each_object`](Self::for_each_object) listing the packs (not
    /// [`Error::Incomplete`]: an index that did not load is what this lists).
    pub fn unlocatable_objects(&mut self) -> Result<Vec<(ObjectId, Arc<Error>)>, Error> {
        self.load_all_relisted()?;
        let mut unusable = Vec::new();
        let _always_continues = self.packed_objects(
            &mut HashSet::new(),
            &mut |_, _| ControlFlow::Continue(()),
            Some(&mut unusable),
        );
        unusable.sort_by_key(|e| e.0);
        unusable.dedup_by(|b, a| a.0 == b.0);
        let mut out = Vec::new();
        for (id, why) in unusable {
            match self.locate(&id) {
                Ok(Some(_)) => {}
                Ok(None) => out.push((id, why)),
                Err(e) => out.push((id, Arc::new(e))),
            }
        }
        Ok(out)
    }

    /// Every object once, in id order, with one place it is stored (the first in search order: packs newest
    /// first, multi-pack-indices, loose): what `git cat-file --batch-all-objects` lists. Errors as
    /// [`for_each_object`](Self::for_each_object).
    ///
    /// ```
    /// # use std::process::Command;
    /// # let tmp = tempfile::tempdir()?;
    /// # let git = |args: &[&str]| {
    /// #     let st = Command::new("git").args(args).current_dir(tmp.path())
    /// #         .env("GIT_CONFIG_GLOBAL", "/dev/null").env("GIT_CONFIG_NOSYSTEM", "1").output().unwrap();
    /// #     assert!(st.status.success());
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
    /// # pack_objects(&id); // the empty blob, packed (and still loose)
    /// use odb_index::{Location, Options, Store};
    ///
    /// let store = Store::open(tmp.path(), Options::default())?;
    /// let mut handle = store.handle();
    /// let all = handle.objects_sorted()?;
    /// let listed = git(&["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"]);
    /// let ids: Vec<String> = all.iter().map(|(id, _)| id.to_string()).collect();
    /// assert_eq!(ids, listed.lines().collect::<Vec<_>>());
    /// assert!(matches!(all[0].1, Location::Packed { .. })); // packs come first in search order
    /// let counts = handle.count_objects()?;
    /// assert_eq!((counts.packed, counts.loose), (1, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn objects_sorted(&mut self) -> Result<Vec<(ObjectId, Location)>, Error> {
        let mut all = Vec::new();
        self.for_each_object(|id, loc| {
            all.push((*id, loc));
            ControlFlow::Continue(())
        })?;
        // Stable: among equal ids the first in search order stays first, and is the one kept.
        all.sort_by_key(|e| e.0);
        all.dedup_by(|b, a| a.0 == b.0);
        Ok(all)
    }

    /// How many entries the packs, multi-pack-indices and loose directories hold. Reads only index headers for
    /// packed objects (after loading every index) and lists the loose fan-out directories. Errors as
    /// [`for_each_object`](Self::for_each_object).
    pub fn count_objects(&mut self) -> Result<ObjectCounts, Error> {
        self.load_all_relisted()?;
        self.check_complete()?;
        let mut count = Count {
            counts: ObjectCounts::default(),
            seen: HashSet::new(),
        };
        self.walk(&mut count)?;
        Ok(count.counts)
    }

    /// The packed part of [`count_objects`](Self::count_objects): the entries of every loaded index whose pack
    /// is not in `seen` (a multi-pack-index counts whole if one of its packs present is not), then those packs
    /// are added to `seen`. Entries of a multi-pack-index none of whose packs is on disk are not counted (no
    /// lookup answers them).
    fn packed_count(&mut self, seen: &mut HashSet<PackId>) -> u64 {
        let (snap, _) = self.load_all();
        let before = seen.clone();
        let mut n = 0;
        for p in &snap.packs {
            if seen.insert(p.id) {
                n += u64::from(p.idx.len());
            }
        }
        for m in &snap.midx {
            let mut new = false;
            for pack in m.packs.iter().flatten() {
                new |= !before.contains(pack);
                seen.insert(*pack);
            }
            if new {
                n += u64::from(m.midx.len());
            }
        }
        n
    }
}
