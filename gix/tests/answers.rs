//! Issue 38: answers from locations the store gave before git replaced the packs, in every form a caller gets
//! them (`info_many`, `answer_at` on an iteration's locations, with a multi-pack-index), checked against git.
// .clippy.toml's rules (the facade, the guarded read, 80-line functions) are for the shipped code, not tests.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::too_many_lines
)]

use std::ops::ControlFlow;
use std::path::Path;

use odb_index_gix::{Location, ObjectId, Objects, Place, Want};
use odb_index_testkit::{absent_ids, fast_import_blobs, git, git_stdin, init_repo};

/// git's `<type> <size> <disk size>` for each of `ids`.
fn git_answers(repo: &Path, ids: &[ObjectId]) -> Vec<String> {
    let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
    git_stdin(
        repo,
        &[
            "cat-file",
            "--batch-check=%(objecttype) %(objectsize) %(objectsize:disk)",
        ],
        input.as_bytes(),
    )
    .lines()
    .map(str::to_owned)
    .collect()
}

/// Several packs (one per import) and every object's id.
fn packs(repo: &Path, n: u64) -> Vec<ObjectId> {
    for seed in 0..n {
        fast_import_blobs(repo, 20, seed, &format!("b{seed}"));
    }
    odb_index_testkit::all_objects(repo)
        .iter()
        .map(|h| h.parse().unwrap())
        .collect()
}

/// Issue 38, 1: `info_many` after `repack -adf` removed the packs its handle had loaded, once another lookup of
/// the same reader (a miss) moved it to the new listing. Before: `Err(pack PackId(0) is no longer in the
/// repository)`.
#[test]
fn info_many_after_a_repack_answers_as_git() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let ids = packs(p, 3);
    let objects = Objects::open(p).unwrap();
    // Every index loaded by the reader's handle (no pack opened yet).
    for id in &ids {
        assert!(objects.lookup_name(&id.to_string()).unwrap().is_some());
    }
    git(p, &["repack", "-adfq"]);
    // A miss moves the reader's handle to the new listing; the ids' first lookups still answer old packs' ids.
    let absent: ObjectId = absent_ids(1, 40, 9)[0].parse().unwrap();
    let mut with_absent = ids.clone();
    with_absent.insert(1, absent);
    let mut out = Vec::new();
    objects.info_many(&with_absent, &mut out).unwrap();
    assert!(out[1].is_none());
    out.remove(1);
    let got: Vec<String> = out
        .iter()
        .map(|i| {
            let i = i.as_ref().expect("present");
            format!("{} {}", i.kind, i.size)
        })
        .collect();
    let want: Vec<String> = git_answers(p, &ids)
        .iter()
        .map(|l| l.rsplit_once(' ').unwrap().0.to_owned())
        .collect();
    assert_eq!(got, want);
}

/// Issue 38, 2 and 3: what `--batch-all-objects --unordered` does (locations from an iteration over a
/// multi-pack-index, each answered afterwards), with `repack -adf --write-midx` replacing every pack and the
/// multi-pack-index in between, and a format that reads only the size on disk (through the `.rev` of a pack
/// that is gone). Before: `pack PackId(2) is no longer in the repository` for almost every object.
#[test]
fn locations_of_an_iteration_answer_as_git_after_the_packs_are_replaced() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    packs(p, 3);
    git(p, &["multi-pack-index", "write"]);
    let objects = Objects::open(p).unwrap();
    let mut listed: Vec<(ObjectId, Location)> = Vec::new();
    objects
        .handle()
        .for_each_object(|id, loc| {
            listed.push((odb_index_gix::convert::oid_to_gix(id), loc));
            ControlFlow::Continue(())
        })
        .unwrap();
    assert!(listed.len() > 60);
    git(p, &["repack", "-adfq", "--write-midx"]);
    let absent: ObjectId = absent_ids(1, 40, 3)[0].parse().unwrap();
    assert!(objects.info(&absent).unwrap().is_none()); // the reader moves to the new listing
    let ids: Vec<ObjectId> = listed.iter().map(|(id, _)| *id).collect();
    let want = git_answers(p, &ids);
    for (want, (id, loc)) in want.iter().zip(&listed) {
        let disk = objects
            .answer_at(
                id,
                *loc,
                Want {
                    disk_size: true,
                    ..Want::default()
                },
                &mut Vec::new(),
            )
            .unwrap()
            .expect("present");
        assert_eq!(
            disk.disk_size,
            Some(want.rsplit_once(' ').unwrap().1.parse().unwrap())
        );
        assert_ne!(disk.place.location(), *loc, "read where the object is now");
        let all = Want {
            header: true,
            disk_size: true,
            delta_base: true,
            contents: false,
        };
        let a = objects
            .answer_at(id, *loc, all, &mut Vec::new())
            .unwrap()
            .expect("present");
        let got = format!(
            "{} {} {}",
            a.kind.unwrap(),
            a.size.unwrap(),
            a.disk_size.unwrap()
        );
        assert_eq!(&got, want, "{id}");
    }
}

/// Issue 39: every object with its type and size in one pass (`Objects::for_each_info`) is what git lists
/// (`cat-file --batch-all-objects --batch-check`), on SHA-1 and SHA-256, with packed, duplicated and loose
/// objects.
#[test]
fn for_each_info_lists_what_git_lists() {
    for format in ["sha1", "sha256"] {
        let repo = init_repo(format, true);
        let p = repo.path();
        fast_import_blobs(p, 30, 1, "a");
        fast_import_blobs(p, 30, 2, "b");
        // A second copy of branch a's commit, in a pack of its own.
        let a = git(p, &["rev-parse", "a"]);
        git_stdin(
            p,
            &["pack-objects", "-q", "objects/pack/pack"],
            a.as_bytes(),
        );
        git_stdin(p, &["hash-object", "-w", "--stdin"], b"loose\n");
        let objects = Objects::open(p).unwrap();
        let mut got = Vec::new();
        objects
            .for_each_info(|i| {
                got.push(format!("{} {} {}", i.id, i.kind, i.size));
                ControlFlow::Continue(())
            })
            .unwrap();
        got.sort();
        let want: Vec<String> = git(p, &["cat-file", "--batch-all-objects", "--batch-check"])
            .lines()
            .map(str::to_owned)
            .collect();
        assert_eq!(got, want, "{format}");
    }
}

/// Rename the `.idx` and `.pack` of the pack whose index is `idx` from `<name><from>` to `<name><to>`.
fn rename_pack_files(idx: &Path, from: &str, to: &str) {
    for ext in ["idx", "pack"] {
        std::fs::rename(
            idx.with_extension(format!("{ext}{from}")),
            idx.with_extension(format!("{ext}{to}")),
        )
        .unwrap();
    }
}

/// Issue 47, 7's repository: a pack whose files the tests rename away (`idx`), another pack always there, the
/// renamed pack's ids, git's type and size of each (with the pack in place: a git process that opened it answers
/// them the same while it is away), and a reader opened as the command opens one.
struct Renamed {
    repo: tempfile::TempDir,
    idx: std::path::PathBuf,
    ids: Vec<ObjectId>,
    want: Vec<String>,
    objects: Objects,
}

fn renamed() -> Renamed {
    use odb_index_gix::{IncompleteMode, Options};
    let repo = init_repo("sha1", true);
    let p = repo.path();
    fast_import_blobs(p, 10, 1, "a");
    let idx = odb_index_testkit::idx_files(&p.join("objects"))[0].clone();
    fast_import_blobs(p, 10, 2, "b");
    let ids: Vec<ObjectId> = odb_index_testkit::show_index(&idx, "sha1")
        .iter()
        .map(|(h, _)| h.parse().unwrap())
        .collect();
    let want = git_answers(p, &ids)
        .iter()
        .map(|l| l.rsplit_once(' ').unwrap().0.to_owned())
        .collect();
    let objects =
        Objects::open_with(p, Options::default().incomplete(IncompleteMode::Miss)).unwrap();
    Renamed {
        repo,
        idx,
        ids,
        want,
        objects,
    }
}

/// `ids` located together by a handle of their own (what `batch-check --buffer` does before it reads any): the
/// store's ids and their locations, every one found.
fn located(
    objects: &Objects,
    ids: &[ObjectId],
) -> (
    Vec<odb_index_gix::odb_index::ObjectId>,
    Vec<Option<Location>>,
) {
    let asked: Vec<odb_index_gix::odb_index::ObjectId> = ids
        .iter()
        .map(|id| id.to_string().parse().unwrap())
        .collect();
    let mut locs = Vec::new();
    objects.handle().locate_many(&asked, &mut locs).unwrap();
    assert!(locs.iter().all(Option::is_some));
    (asked, locs)
}

/// Issue 47, 7: what `batch-check --buffer` does (a batch located by its own handle, each location answered
/// afterwards with `answer_at`) while a pack is renamed away and back between the batch's searches and its
/// answers. The first answer is made with the pack away (read from the `.pack` the store mapped with its index;
/// a store without [`Options::pack_data`](odb_index_gix::Options::pack_data) found it away, and `locate_again`'s
/// listing dropped the pack); put back, a lookup by id reads it; renamed away again, the batch's next location
/// is read from the pack the reader has open, as a lookup by id reads it and as git reads a pack it has opened.
/// Before: `locate_again` listed again without it and answered `None` (`missing`).
#[test]
fn a_batch_reads_a_pack_renamed_away_after_it_was_read_as_a_lookup_does() {
    let Renamed {
        repo: _repo,
        idx,
        ids,
        want,
        objects,
    } = renamed();
    let (asked, locs) = located(&objects, &ids);
    let want_at = |k: usize| {
        let a = objects
            .answer_at(&asked[k], locs[k].unwrap(), Want::HEADER, &mut Vec::new())
            .unwrap();
        a.map(|a| format!("{} {}", a.kind.unwrap(), a.size.unwrap()))
    };
    let git_at = |k: usize| want[k].clone();
    // Away before the reader read the `.pack` (mapped with the index: read all the same; the next test).
    rename_pack_files(&idx, "", "away");
    let _ = want_at(0);
    rename_pack_files(&idx, "away", "");
    // A lookup by id finds it (in a new listing if the first answer dropped it) and opens its `.pack`.
    let info = objects.info(&ids[1]).unwrap().expect("the pack is back");
    assert_eq!(format!("{} {}", info.kind, info.size), git_at(1));
    rename_pack_files(&idx, "", "away");
    for (k, id) in ids.iter().enumerate().skip(2) {
        assert_eq!(
            want_at(k),
            Some(git_at(k)),
            "{id}: a batch's location in a pack the reader has open, renamed away"
        );
    }
    rename_pack_files(&idx, "away", "");
}

/// Issue 47, 7: what `batch-check --buffer` does, a batch located by its own handle and each location read
/// afterwards (`answer_at`), with the pack renamed away between the two, before the reader ever read it. git
/// opens a pack at the lookup that finds an object in it, so git answers these; the reader reads the `.pack` the
/// store mapped with its index ([`Options::pack_data`], which `Objects::open_with` sets). Before: the reader
/// opened the `.pack` when it first read it, found it away, and answered `None` (`missing`).
#[test]
fn a_batch_reads_a_pack_renamed_away_between_its_lookups_and_its_reads_as_git_reads_it() {
    let Renamed {
        repo: _repo,
        idx,
        ids,
        want,
        objects,
    } = renamed();
    let (asked, locs) = located(&objects, &ids);
    rename_pack_files(&idx, "", "away");
    for (k, want) in want.iter().enumerate() {
        let got = objects
            .answer_at(&asked[k], locs[k].unwrap(), Want::HEADER, &mut Vec::new())
            .unwrap()
            .map(|a| format!("{} {}", a.kind.unwrap(), a.size.unwrap()));
        assert_eq!(
            got.as_ref(),
            Some(want),
            "{}: located, then its pack renamed away",
            ids[k]
        );
    }
    rename_pack_files(&idx, "away", "");
}

/// Issue 47, 7 under `--threads`: clones of one reader (the command's workers) share the packs any of them has
/// opened. Both clones are made before either reads; one reads an object of a pack (its `.pack` opened), the pack
/// is renamed away, and the other reads another object of it: answered as git's one process answers it (it has the
/// pack open). Before: each clone opened the `.pack` itself, so the second found it away and answered `None`.
#[test]
fn a_clone_reads_a_pack_another_clone_opened_after_it_is_renamed_away() {
    let Renamed {
        repo,
        idx,
        ids,
        want,
        objects: first,
    } = renamed();
    let p = repo.path();
    let header = |o: &Objects, k: usize| {
        o.info(&ids[k])
            .unwrap()
            .map(|i| format!("{} {}", i.kind, i.size))
    };
    let second = first.clone();
    let third = second.clone();
    assert_eq!(header(&first, 0).as_ref(), Some(&want[0]));
    rename_pack_files(&idx, "", "away");
    for (k, want) in want.iter().enumerate().skip(1) {
        assert_eq!(
            header(&second, k).as_ref(),
            Some(want),
            "a clone made before the pack was opened"
        );
        assert_eq!(
            header(&third, k).as_ref(),
            Some(want),
            "a clone of that clone"
        );
    }
    rename_pack_files(&idx, "away", "");
    // A reader that is no clone shares nothing: it opens the `.pack` itself (here, in place).
    let other = Objects::open(p).unwrap();
    assert_eq!(header(&other, 1).as_ref(), Some(&want[1]));
}

/// Issue 47, 8: the place of each object (`Objects::place`; what `%(objectpack)` and `%(objectoffset)` print)
/// after `repack -adf` removed the packs whose indices the reader had loaded but whose `.pack` it never opened
/// (a store opened without [`Options::pack_data`](odb_index_gix::Options::pack_data)): the pack git reads the
/// object from now (the one pack left), and the offset its index gives. Fails if the answer path names a pack
/// without opening its `.pack` (the removed pack's name and offset). (`Objects::open` maps each `.pack` with its
/// index, as git opens a pack at its lookup: that reader keeps reading the packs it looked the objects up in,
/// as a git process that had looked them up does; the next test.)
#[test]
fn place_after_a_repack_names_the_pack_git_reads() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let ids = packs(p, 2);
    let store =
        odb_index_gix::odb_index::Store::open(p, odb_index_gix::Options::default()).unwrap();
    let objects = Objects::new(store.handle());
    // Every index loaded by the reader's handle (no pack opened yet).
    for id in &ids {
        assert!(objects.lookup_name(&id.to_string()).unwrap().is_some());
    }
    git(p, &["repack", "-adfq"]);
    // git's places (the `%(objectpack)` and `%(objectoffset)` of a git with those atoms): the one pack left.
    let idx = &odb_index_testkit::idx_files(&p.join("objects"))[0];
    let name = idx.with_extension("pack");
    let name = name.file_name().unwrap().to_str().unwrap();
    let offsets: std::collections::HashMap<String, u64> =
        odb_index_testkit::show_index(idx, "sha1")
            .into_iter()
            .collect();
    for id in &ids {
        let place = objects.place(id).unwrap().expect("present");
        let Place::Packed { path, offset, .. } = &place else {
            panic!("{id}: {place:?}")
        };
        let got = path.file_name().unwrap().to_str().unwrap();
        assert_eq!(
            (got, *offset),
            (name, offsets[&id.to_string()]),
            "{id}: the pack git reads it from, and its offset there"
        );
    }
}

/// Issue 47, 7: `Objects::open` maps each `.pack` with its index ([`Options::pack_data`]), so the packs its
/// lookups found the objects in (located only: no `.pack` read) stay readable after `repack -adf` removed them,
/// as they do for a git process that looked the objects up (it opened each pack at its lookup and never closes
/// it): each place names the pack the lookup found, and reading it gives the object. Without the option the
/// place would be the new pack's (the test above), which is also what git answers, but only a git that never
/// looked the objects up.
///
/// [`Options::pack_data`]: odb_index_gix::Options::pack_data
#[test]
fn places_located_before_a_repack_are_read_from_the_packs_mapped_with_their_indices() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let ids = packs(p, 2);
    let objects = Objects::open(p).unwrap();
    let mut h = objects.handle();
    let before: Vec<(Location, std::path::PathBuf)> = ids
        .iter()
        .map(|id| {
            let loc = h
                .locate(&id.to_string().parse().unwrap())
                .unwrap()
                .expect("present");
            let Location::Packed { pack, .. } = loc else {
                panic!("{id}: {loc:?}")
            };
            (loc, h.pack(pack).unwrap().pack_path)
        })
        .collect();
    // git's size of each (the contents read below are hashed again: the id says they are the object's).
    let sizes: Vec<usize> = ids
        .iter()
        .map(|id| {
            git(p, &["cat-file", "-s", &id.to_string()])
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    git(p, &["repack", "-adfq"]);
    for ((id, (loc, path)), size) in ids.iter().zip(&before).zip(&sizes) {
        assert!(!path.exists(), "{}: removed by the repack", path.display());
        let place = objects.place(id).unwrap().expect("present");
        assert_eq!(place.location(), *loc, "{id}: where the lookup found it");
        let Place::Packed { path: got, .. } = &place else {
            panic!("{id}: {place:?}")
        };
        assert_eq!(&**got, path.as_path());
        let mut data = Vec::new();
        let kind = objects.read_at(&place, &mut data).unwrap();
        assert_eq!(data.len(), *size, "{id}");
        let rehashed = git_stdin(
            p,
            &["hash-object", "--stdin", "-t", &kind.to_string()],
            &data,
        );
        assert_eq!(
            rehashed.trim(),
            id.to_string(),
            "{id}: read from the removed pack mapped with its index"
        );
    }
}

/// Issue 47, 8: `Objects::place_again`, for a caller that reads a [`Place`] itself: after `repack -adf` removed
/// the pack of each place, the object's place now (another pack, its file there), read as git reads it. Fails if
/// it answers from the reader's listing without listing again (the removed pack's place).
#[test]
fn place_again_after_a_repack_is_where_git_reads_the_object() {
    let repo = init_repo("sha1", true);
    let p = repo.path();
    let ids = packs(p, 2);
    let objects = Objects::open(p).unwrap();
    let places: Vec<Place> = ids
        .iter()
        .map(|id| objects.place(id).unwrap().expect("present"))
        .collect();
    git(p, &["repack", "-adfq"]);
    let want = git_answers(p, &ids);
    for ((id, gone), want) in ids.iter().zip(&places).zip(&want) {
        let now = objects.place_again(id, gone).unwrap().expect("still there");
        assert_ne!(&now, gone, "{id}: the removed pack's place");
        let Place::Packed { path, .. } = &now else {
            panic!("{id}: {now:?}")
        };
        assert!(path.exists(), "{id}: {}", path.display());
        let mut data = Vec::new();
        let kind = objects.read_at(&now, &mut data).unwrap();
        let got = format!("{kind} {}", data.len());
        assert_eq!(&got, want.rsplit_once(' ').unwrap().0, "{id}");
    }
}
