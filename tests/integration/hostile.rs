//! Hostile files beside real git repositories (issue 13): index files whose structure and checksums are valid
//! but whose offsets lie, packs that do not match their index, multi-pack-indices whose entries lie, FIFOs,
//! sockets and devices where files should be, an index claiming 2^31 objects in a sparse file, and unreadable
//! pack directories and alternates. For each: no wrong location, no hang, no panic, a typed error naming the
//! file, and every object present in a good pack still found; compared with what `git` does where it can be.
//! See docs/RELIABILITY.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use odb_index::data::{FileKind, FileProblem, file_problem};
use odb_index::idx::{IdxProblem, PackIndex};
use odb_index::midx::{MidxProblem, MultiPackIndex};
use odb_index::testing::PackIndexExt;
use odb_index::{
    Error, HashKind, IncompleteMode, LoadMode, Location, MidxCheck, ObjectId, Options, Problem,
    RefreshMode, Store,
};
use odb_index_testkit::*;

// ---------------------------------------------------------------------------------------------------------
// The generator: a real repository, and hostile edits of its files.
// ---------------------------------------------------------------------------------------------------------

/// A bare repository made by git: three packs (20 blobs each, with trees and commits) and two loose blobs.
struct Repo {
    dir: tempfile::TempDir,
    format: &'static str,
    /// Every object, as git lists it.
    all: Vec<String>,
    /// The loose objects.
    loose: Vec<String>,
    /// For each `.idx` (sorted by path), the ids it lists in order, with their offsets, read with
    /// `git show-index` before any file was touched.
    packs: BTreeMap<PathBuf, Vec<(String, u64)>>,
}

impl Repo {
    fn new(format: &'static str) -> Repo {
        let dir = init_repo(format, true);
        for p in 0..3 {
            fast_import_blobs(dir.path(), 20, 300 + p, &format!("b{p}"));
        }
        let loose = (0..2)
            .map(|i| {
                git_stdin(
                    dir.path(),
                    &["hash-object", "-w", "--stdin"],
                    format!("hostile loose {i}\n").as_bytes(),
                )
                .trim()
                .to_owned()
            })
            .collect();
        let packs = idx_files(&objects_dir(dir.path()))
            .into_iter()
            .map(|p| {
                let ids = show_index(&p, format);
                (p, ids)
            })
            .collect::<BTreeMap<_, _>>();
        assert_eq!(packs.len(), 3);
        Repo {
            all: all_objects(dir.path()),
            dir,
            format,
            loose,
            packs,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn pack_dir(&self) -> PathBuf {
        objects_dir(self.path()).join("pack")
    }

    fn kind(&self) -> HashKind {
        self.format.parse().unwrap()
    }

    fn idx(&self, n: usize) -> PathBuf {
        self.packs.keys().nth(n).unwrap().clone()
    }

    /// Ids listed by the `n`th `.idx` only.
    fn only_in(&self, n: usize) -> Vec<String> {
        let me = self.idx(n);
        self.packs[&me]
            .iter()
            .map(|(id, _)| id)
            .filter(|id| {
                self.packs
                    .iter()
                    .all(|(p, ids)| *p == me || !ids.iter().any(|(i, _)| i == *id))
            })
            .cloned()
            .collect()
    }

    /// Every object not in `except`.
    fn all_but(&self, except: &[String]) -> Vec<String> {
        self.all
            .iter()
            .filter(|id| !except.contains(id))
            .cloned()
            .collect()
    }

    fn absent(&self) -> Vec<String> {
        absent_ids(20, self.kind().hex_len(), 0x5eed_0013)
    }

    /// A location is right if the pack it names listed `id` at that offset when the repository was made (so an
    /// index copied over another cannot vouch for itself), or `id` is a loose file.
    fn check_location(&self, store: &Store, id: &str, loc: Location) {
        match loc {
            Location::Packed { pack, offset } => {
                let idx = store.pack_path(pack).unwrap().with_extension("idx");
                let listed = self.packs.get(&idx).unwrap_or_else(|| {
                    panic!(
                        "{id}: reported in {}, not a pack of the repository",
                        idx.display()
                    )
                });
                assert!(
                    listed.iter().any(|(i, o)| i == id && *o == offset),
                    "{id} reported in {} at {offset}, where git's index does not put it",
                    idx.display()
                );
            }
            Location::Loose { dir } => {
                let d = &store.objects_dirs()[dir];
                assert!(
                    d.join(&id[..2]).join(&id[2..]).is_file(),
                    "{id} not loose in {}",
                    d.display()
                );
            }
        }
    }

    /// Every id of `ids` is found, at a right location.
    fn assert_found(&self, store: &Arc<Store>, ids: &[String]) {
        let mut h = store.handle();
        for id in ids {
            let loc = h
                .locate(&oid(id))
                .unwrap_or_else(|e| panic!("{id}: {e}"))
                .unwrap_or_else(|| panic!("{id} reported missing"));
            self.check_location(store, id, loc);
        }
    }
}

fn oid(hex: &str) -> ObjectId {
    hex.parse().unwrap()
}

/// What `git cat-file --batch-check` says of each of `ids` ("missing", or the type and size), its exit status
/// and its standard error. git is run with a timeout-free pipe: only for cases where it cannot hang.
fn git_batch_check(repo: &Path, ids: &[String]) -> (Vec<String>, bool, String) {
    let input: String = ids.iter().map(|i| format!("{i}\n")).collect();
    let mut child = git_cmd(repo)
        .args(["cat-file", "--batch-check"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut si = child.stdin.take().unwrap();
        let _ = si.write_all(input.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Which of `ids` git finds.
fn git_has(repo: &Path, ids: &[String]) -> Vec<bool> {
    let (lines, ok, err) = git_batch_check(repo, ids);
    assert!(ok, "git failed: {err}");
    lines.iter().map(|l| !l.ends_with(" missing")).collect()
}

/// Replace `path` by `bytes` the way git replaces files: write a temporary file, rename it over the old one.
pub(crate) fn replace_by_rename(path: &Path, bytes: &[u8]) {
    let tmp = path.with_file_name(format!(
        "tmp_hostile_{}",
        path.file_name().unwrap().to_str().unwrap()
    ));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Reseal a `.idx` or multi-pack-index after an edit: its last hash-length bytes are the hash of the rest.
pub(crate) fn reseal(bytes: &mut [u8], kind: HashKind) {
    let n = bytes.len() - kind.len();
    let sum = kind.digest(&bytes[..n]);
    bytes[n..].copy_from_slice(sum.as_bytes());
}

/// A version 2 `.idx` whose entry `pos` (in sorted order) has offset `offset`: a 32-bit offset, or, from 2^31
/// on, a new row of the 64-bit table. Structure and checksum stay valid.
fn idx_with_offset(idx: &[u8], kind: HashKind, pos: usize, offset: u64) -> Vec<u8> {
    let h = kind.len();
    let mut b = idx.to_vec();
    let n = u32::from_be_bytes(b[8 + 1020..8 + 1024].try_into().unwrap()) as usize;
    let table = 8 + 1024 + n * (h + 4);
    let word = if offset < 1 << 31 {
        offset as u32
    } else {
        let large_at = table + 4 * n;
        let rows = (b.len() - 2 * h - large_at) / 8;
        b.splice(
            large_at + 8 * rows..large_at + 8 * rows,
            offset.to_be_bytes(),
        );
        0x8000_0000 | rows as u32
    };
    b[table + 4 * pos..table + 4 * pos + 4].copy_from_slice(&word.to_be_bytes());
    reseal(&mut b, kind);
    b
}

/// The `Error::CorruptIndex` problem of `e`, checking it names `idx`.
#[track_caller]
fn corrupt_index_problem(e: &Error, idx: &Path) -> IdxProblem {
    match e {
        Error::CorruptIndex { path, problem } => {
            assert_eq!(path, idx, "{e}");
            assert!(e.to_string().contains(idx.to_str().unwrap()), "{e}");
            problem.clone()
        }
        other => panic!(
            "expected a corrupt index naming {}, got {other:?}",
            idx.display()
        ),
    }
}

/// The errors `Error::Incomplete` gives for `path`.
#[track_caller]
fn incomplete_for(r: &Result<Option<Location>, Error>, path: &Path) -> Arc<Error> {
    match r {
        Err(Error::Incomplete { failed }) => failed
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, e)| Arc::clone(e))
            .unwrap_or_else(|| panic!("Incomplete does not name {}: {failed:?}", path.display())),
        other => panic!(
            "expected Incomplete naming {}, got {other:?}",
            path.display()
        ),
    }
}

/// The `FileProblem` of an `Error::Io` naming `path`.
#[track_caller]
fn io_file_problem(e: &Error, path: &Path) -> FileProblem {
    match e {
        Error::Io { path: p, source } if p == path => file_problem(source)
            .cloned()
            .unwrap_or_else(|| panic!("{e}: no file problem")),
        other => panic!(
            "expected an I/O error naming {}, got {other:?}",
            path.display()
        ),
    }
}

#[cfg(unix)]
pub(crate) fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// Put a FIFO where `path` is, by rename (as a hostile rename over a listed file would).
#[cfg(unix)]
pub(crate) fn fifo_over(path: &Path) {
    let tmp = path.with_file_name("tmp_hostile_fifo");
    mkfifo(&tmp);
    std::fs::rename(&tmp, path).unwrap();
}

// ---------------------------------------------------------------------------------------------------------
// An .idx whose offsets lie.
// ---------------------------------------------------------------------------------------------------------

/// A 32-bit or 64-bit offset past the end of the `.pack`, an offset at its trailing checksum, and offsets inside
/// its 12-byte header: the object is a typed error naming the index (never a location); every other object is
/// found where git's index put it; absent ids are misses. git dies on the past-the-end ones ("offset beyond end
/// of packfile") and answers the in-header ones with whatever it decodes there.
#[test]
fn idx_offsets_past_the_pack_or_in_its_header_are_errors_never_locations() {
    for format in ["sha1", "sha256"] {
        let r = Repo::new(format);
        let kind = r.kind();
        let idx = r.idx(0);
        let original = std::fs::read(&idx).unwrap();
        let pack_len = std::fs::metadata(idx.with_extension("pack")).unwrap().len();
        let target = r.only_in(0)[0].clone();
        let pos = r.packs[&idx]
            .iter()
            .position(|(i, _)| *i == target)
            .unwrap();
        let h = kind.len() as u64;
        for (bad, past_end) in [
            (pack_len + 100, true),
            (1 << 33, true),
            (pack_len - h, true),
            (3, false),
            (0, false),
            (11, false),
        ] {
            replace_by_rename(&idx, &idx_with_offset(&original, kind, pos, bad));
            for load in [LoadMode::Mmap, LoadMode::Read] {
                let store = Store::open(r.path(), Options::default().load(load)).unwrap();
                let mut hd = store.handle();
                let e = hd
                    .locate(&oid(&target))
                    .expect_err("a lying offset was answered");
                let problem = corrupt_index_problem(&e, &idx);
                if past_end {
                    assert_eq!(
                        problem,
                        IdxProblem::OffsetPastPackEnd {
                            entry: pos as u32,
                            offset: bad,
                            pack_len
                        },
                        "{format} {bad}"
                    );
                } else {
                    assert_eq!(
                        problem,
                        IdxProblem::OffsetInPackHeader {
                            entry: pos as u32,
                            offset: bad
                        }
                    );
                }
                r.assert_found(&store, &r.all_but(std::slice::from_ref(&target)));
                for id in r.absent() {
                    assert_eq!(hd.locate(&oid(&id)).unwrap(), None);
                }
            }
            if past_end {
                // git dies with "offset beyond end of packfile" past the end; at the trailer itself it decodes
                // the checksum as an object header (an error or a wrong answer, depending on its bytes).
                let (_, ok, err) = git_batch_check(r.path(), std::slice::from_ref(&target));
                if bad > pack_len {
                    assert!(
                        !ok && err.contains("offset beyond end of packfile"),
                        "git: {err}"
                    );
                }
            }
        }
        // verify (the full check, given the pack's length) reports it too.
        replace_by_rename(&idx, &idx_with_offset(&original, kind, pos, pack_len + 1));
        let loaded = PackIndex::open(&idx, kind).unwrap();
        let len = loaded.check_pack(&idx.with_extension("pack")).unwrap();
        assert_eq!(len, pack_len);
        let e = loaded.with_pack_len(len).verify().unwrap_err();
        assert!(matches!(
            corrupt_index_problem(&e, &idx),
            IdxProblem::OffsetPastPackEnd { .. }
        ));
    }
}

/// The same lie when the object is also in a good pack: it is found there.
#[test]
fn object_behind_a_lying_offset_is_found_in_another_pack() {
    let r = Repo::new("sha1");
    let kind = r.kind();
    let idx = r.idx(0);
    // A second copy of pack 0 under another name (git would find the object in either).
    let copy_stem = r
        .pack_dir()
        .join(format!("pack-{}", "c0".repeat(kind.len())));
    std::fs::copy(idx.with_extension("pack"), copy_stem.with_extension("pack")).unwrap();
    std::fs::copy(&idx, copy_stem.with_extension("idx")).unwrap();
    let mut r = r;
    r.packs
        .insert(copy_stem.with_extension("idx"), r.packs[&idx].clone());
    let target = r.packs[&idx][0].0.clone();
    let original = std::fs::read(&idx).unwrap();
    replace_by_rename(&idx, &idx_with_offset(&original, kind, 0, 1 << 40));
    let store = Store::open(r.path(), Options::default()).unwrap();
    let loc = store
        .handle()
        .locate(&oid(&target))
        .unwrap()
        .expect("found in the copy");
    r.check_location(&store, &target, loc);
    let Location::Packed { pack, .. } = loc else {
        panic!("{loc:?}")
    };
    assert_eq!(
        store.pack_path(pack).unwrap(),
        copy_stem.with_extension("pack")
    );
    r.assert_found(&store, &r.all);
}

// ---------------------------------------------------------------------------------------------------------
// A pack that does not match its index.
// ---------------------------------------------------------------------------------------------------------

/// Another pack's `.idx` copied over this one, a `.pack` whose trailer is not the checksum its index records,
/// and a `.pack` too short to hold a header and a trailer: the index is a typed error naming both files; its
/// objects are looked up elsewhere (those of the copied index are found in their own pack, like git); a miss
/// is `Error::Incomplete` naming the index.
#[test]
fn packs_that_do_not_match_their_index_are_reported_and_their_objects_looked_up_elsewhere() {
    for format in ["sha1", "sha256"] {
        let r = Repo::new(format);
        let (idx0, idx1) = (r.idx(0), r.idx(1));
        let (in0, in1) = (r.only_in(0), r.only_in(1));
        let original1 = std::fs::read(&idx1).unwrap();
        let pack0 = idx0.with_extension("pack");
        let original_pack0 = std::fs::read(&pack0).unwrap();
        let h = r.kind().len();

        // 1. Pack 0's index copied over pack 1's.
        std::fs::copy(&idx0, idx1.with_file_name("tmp_copy")).unwrap();
        std::fs::rename(idx1.with_file_name("tmp_copy"), &idx1).unwrap();
        // 2. Pack 0's trailer changed; 3. pack 0 cut to 12 + h - 1 bytes.
        let mut other_trailer = original_pack0.clone();
        *other_trailer.last_mut().unwrap() ^= 1;
        let short = original_pack0[..12 + h - 1].to_vec();
        for (case, pack0_bytes, bad_idx, bad_pack, lost) in [
            (
                "idx copied over",
                None,
                &idx1,
                idx1.with_extension("pack"),
                &in1,
            ),
            ("trailer", Some(&other_trailer), &idx0, pack0.clone(), &in0),
            ("short pack", Some(&short), &idx0, pack0.clone(), &in0),
        ] {
            if let Some(b) = pack0_bytes {
                std::fs::write(&idx1, &original1).unwrap();
                replace_by_rename(&pack0, b);
            }
            for load in [LoadMode::Mmap, LoadMode::Read] {
                let store = Store::open(r.path(), Options::default().load(load)).unwrap();
                r.assert_found(&store, &r.all_but(lost));
                let mut hd = store.handle();
                for id in lost.iter().chain(&r.absent()) {
                    let got = hd.locate(&oid(id));
                    let e = incomplete_for(&got, bad_idx);
                    let shown = e.to_string();
                    assert!(
                        shown.contains(bad_pack.to_str().unwrap()),
                        "{case}: {shown}"
                    );
                    match corrupt_index_problem(&e, bad_idx) {
                        IdxProblem::PackMismatch { pack, .. } if case != "short pack" => {
                            assert_eq!(pack, bad_pack)
                        }
                        IdxProblem::PackTooSmall { pack, len, .. } if case == "short pack" => {
                            assert_eq!((pack, len), (bad_pack.clone(), (12 + h - 1) as u64))
                        }
                        other => panic!("{case}: {other:?}"),
                    }
                }
            }
            // git agrees on what is found (for the trailer, it says "does not match index" too).
            let (lines, _, err) = git_batch_check(r.path(), lost);
            assert!(
                lines.iter().all(|l| l.ends_with(" missing")),
                "{case}: git {lines:?}"
            );
            if case == "trailer" {
                assert!(
                    err.contains("does not match index"),
                    "{case}: git said {err:?}"
                );
            }
            assert!(
                git_has(r.path(), &r.all_but(lost)).iter().all(|&p| p),
                "{case}"
            );
        }
    }
}

/// A `.pack` removed after listing, before its index was loaded: a vanished pack (the store refreshes and
/// searches again, and then, like git, ignores an index without its pack), not a mismatch.
#[test]
fn pack_removed_after_listing_is_a_vanished_pack_not_a_mismatch() {
    let r = Repo::new("sha1");
    let lost = r.only_in(0);
    let store = Store::open(r.path(), Options::default()).unwrap();
    let never = Store::open(r.path(), Options::default().refresh(RefreshMode::Never)).unwrap();
    std::fs::remove_file(r.idx(0).with_extension("pack")).unwrap();
    let mut hd = store.handle();
    for id in &lost {
        assert_eq!(hd.locate(&oid(id)).unwrap(), None, "{id}");
    }
    assert!(git_has(r.path(), &lost).iter().all(|&p| !p));
    r.assert_found(&store, &r.all_but(&lost));
    // Without refreshes the index cannot be used either: incomplete, naming it, for want of its pack.
    let got = never.handle().locate(&oid(&lost[0]));
    let e = incomplete_for(&got, &r.idx(0));
    assert!(
        got.unwrap_err().to_string().contains(".pack: "),
        "names the pack"
    );
    match &*e {
        Error::Io { path, source } => {
            assert_eq!(path, &r.idx(0).with_extension("pack"));
            assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------------------
// A multi-pack-index whose entries lie.
// ---------------------------------------------------------------------------------------------------------

/// Offset of chunk `id` in a multi-pack-index, and the offset of the next row's (its end).
pub(crate) fn chunk_range(midx: &[u8], id: &[u8; 4]) -> Option<(usize, usize)> {
    let chunks = usize::from(midx[6]);
    let at = |row: usize| {
        u64::from_be_bytes(
            midx[12 + 12 * row + 4..12 + 12 * row + 12]
                .try_into()
                .unwrap(),
        )
    };
    (0..chunks)
        .find(|&row| &midx[12 + 12 * row..12 + 12 * row + 4] == id)
        .map(|row| (at(row) as usize, at(row + 1) as usize))
}

/// `midx` with chunk `id` grown by `delta` bytes (zeros appended at its end) or shrunk by `-delta` (its last bytes
/// dropped), every chunk-table offset at or past its end (later chunks, the terminator) moved by `delta`, and the
/// trailing checksum recomputed: a file consistent in every way except that chunk's size.
pub(crate) fn resize_chunk(midx: &[u8], id: &[u8; 4], delta: isize, kind: HashKind) -> Vec<u8> {
    let (_, end) = chunk_range(midx, id).unwrap_or_else(|| panic!("no chunk {id:?}"));
    let trailer = midx.len() - kind.len();
    let mut v = if delta >= 0 {
        let mut v = midx[..end].to_vec();
        v.resize(end + delta as usize, 0);
        v.extend_from_slice(&midx[end..]);
        v
    } else {
        let mut v = midx[..end - delta.unsigned_abs()].to_vec();
        v.extend_from_slice(&midx[end..]);
        v
    };
    assert!(v.len() - kind.len() == (trailer as isize + delta) as usize);
    for row in 0..=usize::from(v[6]) {
        let at = 12 + 12 * row + 4;
        let off = u64::from_be_bytes(v[at..at + 8].try_into().unwrap());
        if off as usize >= end {
            v[at..at + 8].copy_from_slice(&((off as i64 + delta as i64) as u64).to_be_bytes());
        }
    }
    reseal(&mut v, kind);
    v
}

/// The hostile edits of a git-written multi-pack-index, each named.
fn lying_midx_files(good: &[u8], kind: HashKind, packs: usize) -> Vec<(&'static str, Vec<u8>)> {
    let h = kind.len();
    let (ooff, _) = chunk_range(good, b"OOFF").unwrap();
    let (oidl, _) = chunk_range(good, b"OIDL").unwrap();
    let (pnam, pnam_end) = chunk_range(good, b"PNAM").unwrap();
    let row = |b: &mut Vec<u8>, object: usize, pack: Option<u32>, off: Option<u32>| {
        if let Some(p) = pack {
            b[ooff + 8 * object..ooff + 8 * object + 4].copy_from_slice(&p.to_be_bytes());
        }
        if let Some(o) = off {
            b[ooff + 8 * object + 4..ooff + 8 * object + 8].copy_from_slice(&o.to_be_bytes());
        }
    };
    let field = |b: &[u8], object: usize, at: usize| {
        u32::from_be_bytes(
            b[ooff + 8 * object + at..ooff + 8 * object + at + 4]
                .try_into()
                .unwrap(),
        )
    };
    let mut out = Vec::new();
    let mut v = good.to_vec();
    let off = field(&v, 0, 4);
    row(&mut v, 0, None, Some(off + 1));
    out.push(("offset off by one", v));
    // Two packs' ids swapped, in every entry.
    let mut v = good.to_vec();
    let n = (chunk_range(good, b"OOFF").unwrap().1 - ooff) / 8;
    for o in 0..n {
        let p = field(&v, o, 0);
        let swapped = match p {
            0 => 1,
            1 => 0,
            p => p,
        };
        row(&mut v, o, Some(swapped), None);
    }
    out.push(("pack ids swapped", v));
    let mut v = good.to_vec();
    row(&mut v, 0, None, Some(0x8000_0005));
    out.push(("large-offset flag without a LOFF chunk", v));
    let mut v = good.to_vec();
    row(&mut v, 0, Some(packs as u32 + 3), None);
    out.push(("pack int id out of range", v));
    let mut v = good.to_vec();
    row(&mut v, 0, None, Some(5));
    out.push(("offset inside the pack header", v));
    // A pack name with no such pack: change one hex digit of the last name (names stay sorted in v1).
    let mut v = good.to_vec();
    let names_end = pnam + v[pnam..pnam_end].iter().rposition(|&b| b == b'x').unwrap();
    v[names_end - 6] = if v[names_end - 6] == b'f' { b'e' } else { b'f' };
    out.push(("a pack name with no such pack", v));
    // Out-of-order ids: swap two neighbours of one fanout bucket, with their entries (so every entry stays true
    // and only the order lies). A binary search may then miss one of them (git's does).
    let n = (chunk_range(good, b"OOFF").unwrap().1 - ooff) / 8;
    let pair = (0..n - 1)
        .find(|&i| good[oidl + h * i] == good[oidl + h * (i + 1)])
        .expect("two ids share a first byte (about 70 ids in 256 buckets)");
    let mut v = good.to_vec();
    for (start, len) in [(oidl, h), (ooff, 8)] {
        let a = start + len * pair;
        let (x, y) = (v[a..a + len].to_vec(), v[a + len..a + 2 * len].to_vec());
        v[a..a + len].copy_from_slice(&y);
        v[a + len..a + 2 * len].copy_from_slice(&x);
    }
    out.push(("ids out of order", v));
    for (_, v) in &mut out {
        reseal(v, kind);
    }
    out
}

/// `git multi-pack-index verify` and the library's verify against the packs' indices (what the command's
/// `verify` runs) both report every lie; lookups never report a location outside its pack or in a pack the
/// file does not name, and an entry that names no pack or lies outside its pack is looked up in the packs'
/// own indices.
#[test]
fn multi_pack_index_lies_are_caught_by_verify_and_never_located_outside_a_pack() {
    for format in ["sha1", "sha256"] {
        let r = Repo::new(format);
        let kind = r.kind();
        git(r.path(), &["multi-pack-index", "write"]);
        let midx_path = r.pack_dir().join("multi-pack-index");
        let good = std::fs::read(&midx_path).unwrap();
        let indices: Vec<PackIndex> = r
            .packs
            .keys()
            .map(|p| {
                let i = PackIndex::open(p, kind).unwrap();
                let len = i.check_pack(&p.with_extension("pack")).unwrap();
                i.with_pack_len(len)
            })
            .collect();
        let refs: Vec<Option<&PackIndex>> = indices.iter().map(Some).collect();
        MultiPackIndex::open(&midx_path, kind)
            .unwrap()
            .verify_with_packs(&refs)
            .unwrap();
        for (case, bytes) in lying_midx_files(&good, kind, r.packs.len()) {
            replace_by_rename(&midx_path, &bytes);
            // git's verify fails.
            let st = git_cmd(r.path())
                .args(["multi-pack-index", "verify"])
                .output()
                .unwrap();
            assert!(!st.status.success(), "{format} {case}: git verify passed");
            // So does ours: the midx opens, and verify against the packs names the problem.
            let m =
                MultiPackIndex::open(&midx_path, kind).unwrap_or_else(|e| panic!("{case}: {e}"));
            let names = m.pack_names().to_vec();
            let packs: Vec<Option<&PackIndex>> = names
                .iter()
                .map(|n| {
                    indices
                        .iter()
                        .find(|i| i.path().file_name().unwrap() == n.as_os_str())
                })
                .collect();
            let e = m.verify_with_packs(&packs).expect_err(case);
            let Error::CorruptMultiPackIndex { path, problem } = &e else {
                panic!("{case}: {e:?}")
            };
            assert_eq!(path, &midx_path);
            let expected = match case {
                "offset off by one" => {
                    matches!(problem, MidxProblem::OffsetMismatch { object: 0, .. })
                }
                "pack ids swapped" => matches!(
                    problem,
                    MidxProblem::ObjectNotInPack { .. } | MidxProblem::OffsetMismatch { .. }
                ),
                "large-offset flag without a LOFF chunk" => {
                    matches!(problem, MidxProblem::OffsetPastPackEnd { object: 0, .. })
                }
                "pack int id out of range" => {
                    matches!(problem, MidxProblem::PackIdOutOfRange { object: 0, .. })
                }
                "offset inside the pack header" => {
                    matches!(
                        problem,
                        MidxProblem::OffsetInPackHeader {
                            object: 0,
                            offset: 5,
                            ..
                        }
                    )
                }
                "a pack name with no such pack" => {
                    matches!(problem, MidxProblem::PackMissing { .. })
                }
                "ids out of order" => matches!(problem, MidxProblem::IdsOutOfOrder { .. }),
                other => unreachable!("{other}"),
            };
            assert!(expected, "{format} {case}: {problem}");
            // Lookups: never a location outside its pack, never a pack the listing does not have.
            for (check, load) in [
                (MidxCheck::Bounds, LoadMode::Mmap),
                (MidxCheck::Bounds, LoadMode::Read),
                (MidxCheck::PackIndex, LoadMode::Mmap),
            ] {
                let store =
                    Store::open(r.path(), Options::default().load(load).midx_check(check)).unwrap();
                let mut hd = store.handle();
                // Entries that are in range may still lie (off by one, swapped): under the default check, only
                // verify, which reads the packs' indices, can tell. Every other location must be right, and
                // under `MidxCheck::PackIndex` every location.
                let in_range_lie = matches!(case, "offset off by one" | "pack ids swapped");
                let exact = check == MidxCheck::PackIndex || !in_range_lie;
                for id in r.all.iter().chain(&r.absent()) {
                    match hd.locate(&oid(id)) {
                        Ok(Some(Location::Packed { pack, offset })) => {
                            let pack = store.pack_path(pack).unwrap();
                            let len = std::fs::metadata(&pack).unwrap().len();
                            assert!(
                                offset >= 12 && offset < len - kind.len() as u64,
                                "{case}: {id} at {offset} of a {len}-byte pack"
                            );
                            if exact {
                                r.check_location(
                                    &store,
                                    id,
                                    Location::Packed {
                                        pack: store
                                            .packs()
                                            .into_iter()
                                            .find(|(_, p)| *p == pack.with_extension("idx"))
                                            .unwrap()
                                            .0,
                                        offset,
                                    },
                                );
                            }
                        }
                        Ok(Some(loc)) => r.check_location(&store, id, loc),
                        Ok(None) => assert!(
                            !r.all.contains(id) || case == "a pack name with no such pack",
                            "{case} {check:?}: {id} reported missing"
                        ),
                        // An entry that names no pack or lies outside its pack is answered from the packs' own
                        // indices: every object of a good pack is found.
                        Err(e) => panic!("{format} {case} {check:?}: {id}: {e}"),
                    }
                }
                // What was answered from the .idx files is reported, naming the multi-pack-index.
                let reported = store.problems().iter().any(|p| {
                    matches!(p, Problem::MultiPackIndexEntryWrong { path, .. } if *path == midx_path)
                });
                let expect_reported = match case {
                    "offset off by one" | "pack ids swapped" => Some(check == MidxCheck::PackIndex),
                    "large-offset flag without a LOFF chunk"
                    | "pack int id out of range"
                    | "offset inside the pack header" => Some(true),
                    // Reported when a search missed in the bucket (its order is then checked): the lookups
                    // above found every object either way.
                    "ids out of order" => None,
                    _ => Some(false),
                };
                if let Some(expected) = expect_reported {
                    assert_eq!(
                        reported,
                        expected,
                        "{format} {case} {check:?}: {:?}",
                        store.problems()
                    );
                }
            }
        }
    }
}

/// Under `MidxCheck::PackIndex`, a covered pack whose own `.idx` does not load cannot check the multi-pack-index's
/// entries for it: they are answered as written (as the default mode answers them), never turned into misses, and
/// the index that could not check them is reported.
#[test]
fn pack_index_check_with_an_unloadable_idx_answers_as_written() {
    let r = Repo::new("sha1");
    git(r.path(), &["multi-pack-index", "write"]);
    let midx_path = r.pack_dir().join("multi-pack-index");
    let victim = r.idx(0);
    let bytes = std::fs::read(&victim).unwrap();
    replace_by_rename(&victim, &bytes[..100]);
    let store = Store::open(
        r.path(),
        Options::default().midx_check(MidxCheck::PackIndex),
    )
    .unwrap();
    r.assert_found(&store, &r.all);
    let mut h = store.handle();
    for id in r.absent() {
        assert_eq!(h.locate(&oid(&id)).unwrap(), None);
    }
    let problems = store.problems();
    assert!(
        problems.iter().any(|p| matches!(
            p,
            Problem::MultiPackIndexEntryWrong { path, error }
                if *path == midx_path && error.to_string().contains(victim.to_str().unwrap())
        )),
        "{problems:?}"
    );
}

// ---------------------------------------------------------------------------------------------------------
// FIFOs, sockets and devices where files should be.
// ---------------------------------------------------------------------------------------------------------

/// An `.idx` replaced by a FIFO, a socket or a device after listing (before its first load), and a FIFO
/// multi-pack-index (at listing, and renamed over a listed one, which the store sees at its next listing):
/// typed errors naming the file, never a hang; every other object is found.
#[cfg(unix)]
#[test]
fn fifos_sockets_and_devices_where_index_files_should_be() {
    let r = Repo::new("sha1");
    let idx = r.idx(0);
    let lost = r.only_in(0);
    let original = std::fs::read(&idx).unwrap();
    let restore = |idx: &Path| {
        std::fs::write(idx.with_file_name("tmp_restore"), &original).unwrap();
        std::fs::rename(idx.with_file_name("tmp_restore"), idx).unwrap();
    };
    for (what, kind) in [
        ("fifo", FileKind::Fifo),
        ("socket", FileKind::Socket),
        ("device", FileKind::CharDevice),
        ("directory", FileKind::Directory),
    ] {
        for load in [LoadMode::Mmap, LoadMode::Read] {
            restore(&idx);
            let options = Options::default().load(load);
            let listed =
                Store::open(r.path(), options.clone().refresh(RefreshMode::Never)).unwrap();
            assert_eq!(listed.packs().len(), 3);
            // Replaced after listing, before the first load.
            let _listener;
            match what {
                "fifo" => fifo_over(&idx),
                "socket" => {
                    std::fs::remove_file(&idx).unwrap();
                    _listener = std::os::unix::net::UnixListener::bind(&idx).unwrap();
                }
                "device" => {
                    std::fs::remove_file(&idx).unwrap();
                    std::os::unix::fs::symlink("/dev/zero", &idx).unwrap();
                }
                _ => {
                    std::fs::remove_file(&idx).unwrap();
                    std::fs::create_dir(&idx).unwrap();
                }
            }
            // At load: a typed error naming it, never a hang; everything else found.
            let mut hd = listed.handle();
            for id in lost.iter().chain(&r.absent()) {
                let got = hd.locate(&oid(id));
                let e = incomplete_for(&got, &idx);
                assert_eq!(
                    io_file_problem(&e, &idx),
                    FileProblem::NotRegular { kind },
                    "{what}"
                );
            }
            r.assert_found(&listed, &r.all_but(&lost));
            // At listing: never opened; reported, and a miss cannot be claimed (a directory named like an index
            // is skipped, as before: git itself cannot use it).
            let fresh = Store::open(r.path(), options).unwrap();
            assert_eq!(fresh.packs().len(), 2);
            r.assert_found(&fresh, &r.all_but(&lost));
            let got = fresh.handle().locate(&oid(&lost[0]));
            if what == "directory" {
                assert_eq!(got.unwrap(), None);
            } else {
                let e = incomplete_for(&got, &idx);
                assert_eq!(
                    io_file_problem(&e, &idx),
                    FileProblem::NotRegular { kind },
                    "{what}"
                );
                assert!(
                    fresh.problems().iter().any(|p| p.path() == idx),
                    "{:?}",
                    fresh.problems()
                );
            }
            if what == "directory" {
                std::fs::remove_dir(&idx).unwrap();
            } else {
                std::fs::remove_file(&idx).unwrap();
            }
        }
    }
    std::fs::write(&idx, &original).unwrap();
    // A FIFO multi-pack-index at listing: reported, the .idx files answer.
    let midx = r.pack_dir().join("multi-pack-index");
    mkfifo(&midx);
    for load in [LoadMode::Mmap, LoadMode::Read] {
        let store = Store::open(r.path(), Options::default().load(load)).unwrap();
        let problems = store.problems();
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains("multi-pack-index")
                    && p.to_string().contains("FIFO")),
            "{problems:?}"
        );
        r.assert_found(&store, &r.all);
    }
    std::fs::remove_file(&midx).unwrap();
    // A FIFO renamed over a listed multi-pack-index before its first lookup: the listing opened the file
    // (once: its load uses what the listing opened), so the FIFO is never opened; every object is found and
    // nothing is wrong. A refresh then lists the FIFO: reported, the .idx files answer.
    git(r.path(), &["multi-pack-index", "write"]);
    for load in [LoadMode::Mmap, LoadMode::Read] {
        git(r.path(), &["multi-pack-index", "write"]);
        let store = Store::open(r.path(), Options::default().load(load)).unwrap();
        fifo_over(&midx);
        r.assert_found(&store, &r.all);
        assert!(store.problems().is_empty(), "{:?}", store.problems());
        store.refresh().unwrap();
        r.assert_found(&store, &r.all);
        let problems = store.problems();
        assert!(
            problems.iter().any(|p| p.to_string().contains("FIFO")),
            "{problems:?}"
        );
        std::fs::remove_file(&midx).unwrap();
    }
}

/// `config`, `info/alternates`, a `.git` file and a linked worktree's `commondir` that are FIFOs (or
/// `/dev/zero`): `Store::open` fails with an error naming the file (alternates: the store opens and reports
/// it), never a hang.
#[cfg(unix)]
#[test]
fn fifos_and_devices_where_repository_files_should_be() {
    let r = Repo::new("sha1");
    let config = r.path().join("config");
    let saved = std::fs::read(&config).unwrap();
    for device in [false, true] {
        std::fs::remove_file(&config).unwrap();
        if device {
            std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
        } else {
            mkfifo(&config);
        }
        let e = Store::open(r.path(), Options::default()).unwrap_err();
        let kind = if device {
            FileKind::CharDevice
        } else {
            FileKind::Fifo
        };
        assert_eq!(
            io_file_problem(&e, &config),
            FileProblem::NotRegular { kind }
        );
    }
    std::fs::remove_file(&config).unwrap();
    std::fs::write(&config, saved).unwrap();
    // info/alternates: the store opens, reports it, finds its own objects; a miss cannot be claimed.
    let alternates = objects_dir(r.path()).join("info/alternates");
    std::fs::create_dir_all(alternates.parent().unwrap()).unwrap();
    mkfifo(&alternates);
    let store = Store::open(r.path(), Options::default()).unwrap();
    let problems = store.problems();
    assert!(
        problems
            .iter()
            .any(|p| p.to_string().contains("alternates")),
        "{problems:?}"
    );
    r.assert_found(&store, &r.all);
    let canonical = std::fs::canonicalize(objects_dir(r.path()))
        .unwrap()
        .join("info/alternates");
    incomplete_for(&store.handle().locate(&oid(&r.absent()[0])), &canonical);
    std::fs::remove_file(&alternates).unwrap();
    // A work tree whose .git file is a FIFO.
    let work = tempfile::tempdir().unwrap();
    mkfifo(&work.path().join(".git"));
    let e = Store::open(work.path(), Options::default()).unwrap_err();
    assert_eq!(
        io_file_problem(&e, &work.path().join(".git")),
        FileProblem::NotRegular {
            kind: FileKind::Fifo
        }
    );
    // A linked worktree (made by git) whose commondir is a FIFO.
    let main = init_repo("sha1", false);
    fast_import_blobs(main.path(), 3, 1, "main");
    let outside = tempfile::tempdir().unwrap();
    let wt = outside.path().join("wt-hostile");
    git(
        main.path(),
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "hostile",
            wt.to_str().unwrap(),
            "main",
        ],
    );
    let gitdir = main.path().join(".git/worktrees/wt-hostile");
    let commondir = gitdir.join("commondir");
    assert!(Store::open(&wt, Options::default()).is_ok());
    std::fs::remove_file(&commondir).unwrap();
    mkfifo(&commondir);
    let e = Store::open(&wt, Options::default()).unwrap_err();
    assert_eq!(
        io_file_problem(&e, &commondir),
        FileProblem::NotRegular {
            kind: FileKind::Fifo
        }
    );
}

// ---------------------------------------------------------------------------------------------------------
// An index claiming 2^31 objects in a sparse file.
// ---------------------------------------------------------------------------------------------------------

/// Write, in `pack_dir`, a version 2 `.idx` claiming 2^31 objects (all in fan-out bucket 0, every table
/// zero: a sparse file of 60 GB for SHA-1) and a 32-byte `.pack` whose trailer is the checksum the index
/// records. Returns the index's path.
fn sparse_index(pack_dir: &Path, kind: HashKind) -> PathBuf {
    use std::io::{Seek as _, Write as _};
    let h = kind.len() as u64;
    let n: u64 = 1 << 31;
    let stem = pack_dir.join(format!("pack-{}", "ab".repeat(kind.len())));
    let idx = stem.with_extension("idx");
    let len = 8 + 1024 + n * (h + 8) + 2 * h;
    let pack_sum = kind.digest(b"sparse pack");
    let mut f = std::fs::File::create(&idx).unwrap();
    f.write_all(b"\xfftOc\0\0\0\x02").unwrap();
    for _ in 0..256 {
        f.write_all(&(n as u32).to_be_bytes()).unwrap();
    }
    f.set_len(len).unwrap();
    f.seek(std::io::SeekFrom::Start(len - 2 * h)).unwrap();
    f.write_all(pack_sum.as_bytes()).unwrap();
    // The header counts what the index lists (the store checks it, as git does).
    let mut pack = b"PACK\0\0\0\x02".to_vec();
    pack.extend_from_slice(&(n as u32).to_be_bytes());
    pack.extend_from_slice(pack_sum.as_bytes());
    std::fs::write(stem.with_extension("pack"), pack).unwrap();
    idx
}

/// Opening validates in constant time, so a miss is answered without reading the tables (mapped: nothing of
/// the sparse file is read but the pages a search touches); under `LoadMode::Read` the file is refused as
/// sparse instead of read. Every real object is still found. (Time and memory: docs/RELIABILITY.md.)
#[cfg(unix)]
#[test]
fn sparse_index_claiming_2_31_objects() {
    let r = Repo::new("sha1");
    let idx = sparse_index(&r.pack_dir(), r.kind());
    let store = Store::open(r.path(), Options::default()).unwrap();
    let mut hd = store.handle();
    // Ids in the claimed bucket (0x00) and elsewhere.
    let mut absent = r.absent();
    absent.push(format!("00{}", "1".repeat(38)));
    absent.push(format!("{}f", "0".repeat(39)));
    absent.push("0".repeat(40));
    for id in &absent {
        match hd.locate(&oid(id)) {
            Ok(None) => {}
            // The all-zero id is listed (every entry is zero), at offset 0, inside the pack header.
            Err(e) if *id == "0".repeat(40) => {
                assert!(matches!(
                    corrupt_index_problem(&e, &idx),
                    IdxProblem::OffsetInPackHeader { .. }
                ))
            }
            other => panic!("{id}: {other:?}"),
        }
    }
    r.assert_found(&store, &r.all);
    assert!(git_has(r.path(), &r.absent()).iter().all(|&p| !p));
    // Under LoadMode::Read: a typed error naming the file instead of reading 60 GB.
    let store = Store::open(r.path(), Options::default().load(LoadMode::Read)).unwrap();
    let e = incomplete_for(&store.handle().locate(&oid(&r.absent()[0])), &idx);
    assert!(
        matches!(io_file_problem(&e, &idx), FileProblem::Sparse { .. }),
        "{e}"
    );
    r.assert_found(&store, &r.all);
}

// ---------------------------------------------------------------------------------------------------------
// Unreadable pack directories and alternates.
// ---------------------------------------------------------------------------------------------------------

/// A pack directory that cannot be listed (a symbolic link to itself: ELOOP, which root cannot bypass, unlike a
/// mode-000 directory), in the repository and in an alternate, and an alternate that cannot be resolved: the
/// store opens, reports the directory in `problems()`, finds every object elsewhere (like git, which warns
/// and answers from the rest), and a miss is `Error::Incomplete` naming the directory.
#[cfg(unix)]
#[test]
fn unreadable_pack_directories_and_alternates() {
    let base = Repo::new("sha1");
    // A repository borrowing `base`'s objects, with its own loose objects.
    let borrower = init_repo("sha1", true);
    let own: Vec<String> = (0..3)
        .map(|i| {
            git_stdin(
                borrower.path(),
                &["hash-object", "-w", "--stdin"],
                format!("own {i}\n").as_bytes(),
            )
            .trim()
            .to_owned()
        })
        .collect();
    let base_objects = std::fs::canonicalize(objects_dir(base.path())).unwrap();
    std::fs::write(
        objects_dir(borrower.path()).join("info/alternates"),
        format!("{}\n", base_objects.display()),
    )
    .unwrap();
    let absent = base.absent();
    let check = |store: &Arc<Store>, found: &[String], dir: &Path| {
        let mut hd = store.handle();
        for id in found {
            assert!(hd.locate(&oid(id)).unwrap().is_some(), "{id}");
        }
        let problems = store.problems();
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains(dir.to_str().unwrap())),
            "{} not reported: {problems:?}",
            dir.display()
        );
        incomplete_for(&hd.locate(&oid(&absent[0])), dir);
    };
    // 1. The borrower's own pack directory is a loop: the alternate's packs and the loose objects answer.
    let own_pack = std::fs::canonicalize(objects_dir(borrower.path()))
        .unwrap()
        .join("pack");
    std::fs::remove_dir_all(&own_pack).unwrap();
    std::os::unix::fs::symlink(&own_pack, &own_pack).unwrap();
    let store = Store::open(borrower.path(), Options::default()).unwrap();
    let mut found = own.clone();
    found.extend(base.all.iter().cloned());
    check(&store, &found, &own_pack);
    assert!(
        git_has(borrower.path(), &found).iter().all(|&p| p),
        "git finds them too"
    );
    std::fs::remove_file(&own_pack).unwrap();
    std::fs::create_dir(&own_pack).unwrap();
    // 2. The alternate's pack directory is a loop: own objects and the alternate's loose ones answer.
    let base_pack = base_objects.join("pack");
    let moved = base_objects.join("pack-moved");
    std::fs::rename(&base_pack, &moved).unwrap();
    std::os::unix::fs::symlink(&base_pack, &base_pack).unwrap();
    let store = Store::open(borrower.path(), Options::default()).unwrap();
    let mut found = own.clone();
    found.extend(base.loose.iter().cloned());
    check(&store, &found, &base_pack);
    std::fs::remove_file(&base_pack).unwrap();
    std::fs::rename(&moved, &base_pack).unwrap();
    // 3. The alternate itself cannot be resolved (a loop): own objects answer.
    let looped = borrower.path().join("looped");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    std::fs::write(
        objects_dir(borrower.path()).join("info/alternates"),
        format!("{}\n", looped.display()),
    )
    .unwrap();
    let store = Store::open(borrower.path(), Options::default()).unwrap();
    check(&store, &own, &looped);
}

/// Under `IncompleteMode::Miss` (git's behaviour for callers that only read), an unreadable pack directory makes
/// a miss `None` (still reported in `problems()`), but an entry whose offset lies is still an error, never a
/// location or a miss.
#[cfg(unix)]
#[test]
fn incomplete_mode_miss_covers_unreadable_directories_not_lying_entries() {
    let r = Repo::new("sha1");
    let kind = r.kind();
    // A lying entry in pack 0.
    let idx = r.idx(0);
    let target = r.only_in(0)[0].clone();
    let pos = r.packs[&idx]
        .iter()
        .position(|(i, _)| *i == target)
        .unwrap();
    let original = std::fs::read(&idx).unwrap();
    replace_by_rename(&idx, &idx_with_offset(&original, kind, pos, 1 << 40));
    // A borrower whose own pack directory is a loop, with `r` as its alternate.
    let borrower = init_repo("sha1", true);
    let own_pack = std::fs::canonicalize(objects_dir(borrower.path()))
        .unwrap()
        .join("pack");
    std::fs::remove_dir_all(&own_pack).unwrap();
    std::os::unix::fs::symlink(&own_pack, &own_pack).unwrap();
    std::fs::write(
        objects_dir(borrower.path()).join("info/alternates"),
        format!(
            "{}\n",
            std::fs::canonicalize(objects_dir(r.path()))
                .unwrap()
                .display()
        ),
    )
    .unwrap();
    let store = Store::open(
        borrower.path(),
        Options::default().incomplete(IncompleteMode::Miss),
    )
    .unwrap();
    assert!(store.problems().iter().any(|p| p.path() == own_pack));
    let mut hd = store.handle();
    assert_eq!(hd.locate(&oid(&r.absent()[0])).unwrap(), None);
    let e = hd
        .locate(&oid(&target))
        .expect_err("a lying offset was answered");
    assert!(matches!(
        corrupt_index_problem(&e, &idx),
        IdxProblem::OffsetPastPackEnd { .. }
    ));
    for id in r.all_but(std::slice::from_ref(&target)) {
        assert!(hd.locate(&oid(&id)).unwrap().is_some(), "{id}");
    }
}

/// The same with permissions (mode 000), which only a user other than root can test; under root (as CI
/// runs) the case cannot be made and the test says so and checks nothing.
#[cfg(unix)]
#[test]
fn unreadable_pack_directory_by_permission() {
    use std::os::unix::fs::PermissionsExt as _;
    let r = Repo::new("sha1");
    let pack_dir = r.pack_dir();
    std::fs::set_permissions(&pack_dir, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read_dir(&pack_dir).is_ok() {
        std::fs::set_permissions(&pack_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        eprintln!(
            "running as root: a mode-000 directory is readable, the case cannot be made here"
        );
        return;
    }
    // Checked while the directory is unreadable; its mode is restored whatever happens (the temporary
    // directory must be removable).
    let outcome = std::panic::catch_unwind(|| {
        let store = Store::open(r.path(), Options::default()).unwrap();
        let problems = store.problems();
        assert!(
            problems.iter().any(|p| p.path() == pack_dir),
            "{problems:?}"
        );
        // The loose objects answer; a miss cannot be claimed.
        r.assert_found(&store, &r.loose);
        incomplete_for(&store.handle().locate(&oid(&r.absent()[0])), &pack_dir);
    });
    std::fs::set_permissions(&pack_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    if let Err(e) = outcome {
        std::panic::resume_unwind(e);
    }
}
