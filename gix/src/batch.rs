//! [`Objects::info_many`]: the batch path of the adapter (`cat-file --batch-check --buffer`, fetch negotiation,
//! connectivity checks): the ids located together by [`Handle::locate_many`](odb_index::Handle::locate_many)
//! (their searches interleaved, one change check for the batch's misses), then each header read.

use odb_index::Location;

use crate::convert::AnyId;

use crate::{Error, Info, Objects, Want};

/// How many ids [`Objects::info_many`] locates in one [`Handle::locate_many`](odb_index::Handle::locate_many) call:
/// its locations buffer is bounded (6 KiB) whatever the caller's batch, and 256 ids keep the store's interleaved
/// searches (groups of 16, warmed up to 3 groups ahead) and its one change check per call as cheap per id as a
/// batch of 4 096 (docs/BENCHMARKS.md, "Batches").
const LOCATE_CHUNK: usize = 256;

impl Objects {
    /// Type, size and place of each of `ids`, appended to `out` in order, each as [`Objects::info`] answers it
    /// (`None`: absent). The ids are located together, 256 at a time, with
    /// [`Handle::locate_many`](odb_index::Handle::locate_many), which keeps several index reads in flight and
    /// makes one change check for each such group's misses (an object written before the call began is found);
    /// each header is then read from its place (a file found gone is looked for again, as [`Objects::info`]
    /// does). The memory the call holds besides `out` is bounded (the locations of 256 ids).
    ///
    /// The ids are any this crate takes ([`AnyId`]: gix's, or the store's from a [`crate::Handle`]).
    ///
    /// Errors: the first error stops the call; `out` then holds the answers of the ids before the one that
    /// failed (`out.len()` minus its length at the call is that id's position).
    ///
    /// ```
    /// # let tmp = tempfile::tempdir()?;
    /// # let st = std::process::Command::new("git").args(["init", "-q", "--bare", "."]).current_dir(tmp.path())
    /// #     .env("GIT_CONFIG_GLOBAL", "/dev/null").status()?;
    /// # assert!(st.success());
    /// use odb_index_gix::{ObjectId, Objects};
    ///
    /// let objects = Objects::open(tmp.path())?;
    /// let ids: Vec<ObjectId> = ["0123456789012345678901234567890123456789"]
    ///     .iter().map(|h| h.parse()).collect::<Result<_, _>>()?;
    /// let mut out = Vec::new();
    /// objects.info_many(&ids, &mut out)?;
    /// assert!(out[0].is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn info_many<I: AnyId>(&self, ids: &[I], out: &mut Vec<Option<Info>>) -> Result<(), Error> {
        if ids
            .iter()
            .any(|id| id.to_object_id().kind() != self.store_kind())
        {
            // `info` answers "absent" for an id of the other hash kind, where the store's lookup errs.
            for id in ids {
                out.push(self.info(id)?);
            }
            return Ok(());
        }
        self.forget_dead_packs();
        let mut locs = Vec::with_capacity(ids.len().min(LOCATE_CHUNK));
        let mut chunk = Vec::with_capacity(ids.len().min(LOCATE_CHUNK));
        for group in ids.chunks(LOCATE_CHUNK) {
            // The store's ids (a copy of each: both crates hold an id as its bytes).
            chunk.clear();
            chunk.extend(group.iter().map(AnyId::to_object_id));
            locs.clear();
            // The borrow ends here, before anything below can re-enter.
            let located = self.handle.borrow_mut().locate_many(&chunk, &mut locs);
            for (id, loc) in chunk.iter().zip(&locs) {
                out.push(match *loc {
                    Some(loc) => self.info_located(id, loc)?,
                    None => None,
                });
            }
            located?;
        }
        Ok(())
    }

    /// [`Objects::info`] for `id`, which the store located at `loc`.
    fn info_located(&self, id: &odb_index::ObjectId, loc: Location) -> Result<Option<Info>, Error> {
        self.info_of(self.answer_at(id, loc, Want::HEADER, &mut Vec::new()))
    }
}

#[cfg(test)]
mod tests {
    use odb_index_testkit::{fast_import_blobs, git, init_repo};

    use crate::{ObjectId, Objects};

    /// `info_many` answers each id as `info` does: packed and loose objects (kind, size, place) and absent ids,
    /// in order, across several groups of the store's batch and several of `info_many`'s `locate_many` calls.
    #[test]
    fn info_many_answers_as_info() {
        let repo = init_repo("sha1", true);
        // More ids than one `locate_many` call of `info_many` takes (`LOCATE_CHUNK`).
        fast_import_blobs(repo.path(), 300, 7, "main");
        git(repo.path(), &["repack", "-adq"]);
        let loose = git(repo.path(), &["hash-object", "-w", "--stdin"]);
        let mut ids: Vec<ObjectId> = odb_index_testkit::all_objects(repo.path())
            .iter()
            .map(|h| h.parse().unwrap())
            .collect();
        ids.push(loose.trim().parse().unwrap());
        for (k, h) in odb_index_testkit::absent_ids(30, 40, 3).iter().enumerate() {
            ids.insert(k * 2, h.parse().unwrap());
        }
        let objects = Objects::open(repo.path()).unwrap();
        let mut out = Vec::new();
        objects.info_many(&ids, &mut out).unwrap();
        assert_eq!(out.len(), ids.len());
        let mut found = 0;
        for (id, got) in ids.iter().zip(&out) {
            let want = objects.info(id).unwrap();
            let key =
                |i: &Option<crate::Info>| i.as_ref().map(|i| (i.kind, i.size, i.place.location()));
            assert_eq!(key(got), key(&want), "{id}");
            found += usize::from(got.is_some());
        }
        assert_eq!(
            found,
            ids.len() - 30,
            "every written object found, no absent one"
        );
    }
}
