//! odb-index-gix against git: the example client, a gix-object traversal, headers and reads of every object,
//! typed errors naming files.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use gix_object::{Find, FindExt, FindHeader};
use odb_index_gix::convert::oid_to_gix;
use odb_index_gix::{Error, Objects, Place};
use odb_index_testkit::{all_objects, git, git_stdin, init_repo, objects_dir};

/// `commits` commits changing a few files of some KiB each (so repacks make deltas), and an annotated tag.
fn history(repo: &Path, commits: usize, seed: u64) {
    let mut s = String::new();
    for c in 0..commits {
        let msg = format!("commit {seed} {c}");
        s.push_str(&format!(
            "commit refs/heads/b{seed}\ncommitter t <t@example.invalid> {} +0000\ndata {}\n{msg}\n",
            1_700_000_000 + c,
            msg.len()
        ));
        for k in 0..3 {
            let f = (c * 7 + k * 13) % 30;
            let mut data = String::new();
            for line in 0..(50 + f * 4) {
                data.push_str(&format!("file {f} line {line}\n"));
                if line % 13 == (c + k) % 13 {
                    data.push_str(&format!("changed in {seed}.{c}\n"));
                }
            }
            s.push_str(&format!(
                "M 100644 inline d{}/f{f}\ndata {}\n{data}\n",
                f % 3,
                data.len()
            ));
        }
        s.push('\n');
    }
    git_stdin(repo, &["fast-import", "--quiet"], s.as_bytes());
    git(
        repo,
        &[
            "tag",
            "-a",
            "-m",
            "t",
            &format!("t{seed}"),
            &format!("b{seed}"),
        ],
    );
}

/// Repositories of both formats with OFS_DELTA and REF_DELTA packs and loose objects.
fn repos() -> Vec<(tempfile::TempDir, &'static str)> {
    ["sha1", "sha256"]
        .into_iter()
        .map(|format| {
            let repo = init_repo(format, false);
            let r = repo.path();
            history(r, 60, 1);
            git(
                r,
                &["-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq"],
            );
            history(r, 30, 2); // fast-import's pack: OFS_DELTA
            // Enough objects that some share their first 4 hex digits.
            odb_index_testkit::fast_import_blobs(r, 3000, 9, "blobs");
            git_stdin(r, &["hash-object", "-w", "--stdin"], b"a loose blob\n");
            (repo, format)
        })
        .collect()
}

/// Ids reachable from every ref, walked with gix-object's decoders over odb-index.
fn walk(objects: &Objects, tips: &[gix_hash::ObjectId]) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<gix_hash::ObjectId> = tips.to_vec();
    let mut buf = Vec::new();
    while let Some(id) = todo.pop() {
        if !seen.insert(id.to_string()) {
            continue;
        }
        let data = objects
            .find(&id, &mut buf)
            .expect("reachable objects are present");
        match data.kind {
            gix_object::Kind::Commit => {
                let c = data.decode().unwrap().into_commit().unwrap();
                todo.push(c.tree());
                todo.extend(c.parents());
            }
            gix_object::Kind::Tree => {
                let t = data.decode().unwrap().into_tree().unwrap();
                todo.extend(t.entries.iter().map(|e| e.oid.to_owned()));
            }
            gix_object::Kind::Tag => {
                todo.push(data.decode().unwrap().into_tag().unwrap().target());
            }
            gix_object::Kind::Blob => {}
        }
    }
    seen
}

#[test]
fn traversal_on_odb_index_matches_git_rev_list() {
    for (repo, format) in repos() {
        let r = repo.path();
        let objects = Objects::open(r).unwrap();
        let tips: Vec<gix_hash::ObjectId> = git(r, &["for-each-ref", "--format=%(objectname)"])
            .lines()
            .map(|l| gix_hash::ObjectId::from_hex(l.as_bytes()).unwrap())
            .collect();
        let ours = walk(&objects, &tips);
        let theirs: BTreeSet<String> = git(r, &["rev-list", "--objects", "--all"])
            .lines()
            .map(|l| l.split(' ').next().unwrap().to_owned())
            .collect();
        assert!(theirs.len() > 3300, "{format}: {}", theirs.len());
        assert_eq!(ours, theirs, "{format}");
    }
}

#[test]
fn headers_and_data_of_every_object_match_git() {
    for (repo, format) in repos() {
        let r = repo.path();
        let objects = Objects::open(r).unwrap();
        let input = all_objects(r).join("\n") + "\n";
        let expected = String::from_utf8(cat_file(r, &input)).unwrap();
        let mut buf = Vec::new();
        let (mut packed, mut loose) = (0, 0);
        for line in expected.lines() {
            let mut f = line.split(' ');
            let (id, kind, size) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
            let id = gix_hash::ObjectId::from_hex(id.as_bytes()).unwrap();
            let h = objects.try_header(&id).unwrap().unwrap();
            assert_eq!(
                (h.kind.to_string().as_str(), h.size.to_string().as_str()),
                (kind, size),
                "{format} {id}"
            );
            let data = objects.find(&id, &mut buf).unwrap();
            assert_eq!(data.kind, h.kind);
            assert_eq!(data.data.len() as u64, h.size);
            // The data hashes to the id: the deltas were applied right.
            let mut hasher = gix_hash::hasher(id.kind());
            hasher.update(&gix_object::encode::loose_header(
                data.kind,
                data.data.len() as u64,
            ));
            hasher.update(data.data);
            assert_eq!(hasher.try_finalize().unwrap(), id, "{format}");
            match objects
                .place(&odb_index_gix::convert::oid_from_gix(&id))
                .unwrap()
                .unwrap()
            {
                Place::Packed { .. } => packed += 1,
                Place::Loose { .. } => loose += 1,
            }
        }
        assert!(packed > 300 && loose >= 2, "{format}: {packed} {loose}");
        // Absent ids and ids of the other format are not there.
        assert!(
            objects
                .try_header(&id_kind(format).null())
                .unwrap()
                .is_none()
        );
        let other = if format == "sha1" {
            gix_hash::Kind::Sha256
        } else {
            gix_hash::Kind::Sha1
        };
        assert!(objects.try_find(&other.null(), &mut buf).unwrap().is_none());
    }
}

fn id_kind(format: &str) -> gix_hash::Kind {
    if format == "sha1" {
        gix_hash::Kind::Sha1
    } else {
        gix_hash::Kind::Sha256
    }
}

#[test]
fn example_client_matches_git_cat_file() {
    for (repo, format) in repos() {
        let r = repo.path();
        let mut names = all_objects(r);
        let prefixes: Vec<String> = names.iter().map(|id| id[..4].to_owned()).collect();
        names.extend(prefixes);
        names.extend(odb_index_testkit::absent_ids(
            20,
            if format == "sha1" { 40 } else { 64 },
            3,
        ));
        let input = names.join("\n") + "\n";
        let expected = cat_file(r, &input);
        let mut ex = example()
            .arg(r)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut si = ex.stdin.take().unwrap();
        let writer = std::thread::spawn(move || si.write_all(input.as_bytes()));
        let out = ex.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        assert!(out.status.success(), "{format}");
        assert!(
            String::from_utf8_lossy(&expected).contains(" ambiguous"),
            "{format}"
        );
        assert!(
            out.stdout == expected,
            "{format}: the example's output differs from git's"
        );
    }
}

/// `cargo run --example batch_check --`, in the profile this test was built with (`cargo test` built the example
/// already, so this only checks that it is up to date).
fn example() -> Command {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test binary>
    let profile = exe.parent().unwrap().parent().unwrap().file_name().unwrap();
    let mut c = Command::new(env!("CARGO"));
    c.args([
        "run",
        "-q",
        "-p",
        "odb-index-gix",
        "--example",
        "batch_check",
    ]);
    if profile == "release" {
        c.arg("--release");
    }
    c.arg("--");
    c
}

/// `git cat-file --batch-check` on `input` (written from another thread: the output may fill its pipe first);
/// its stdout. Its stderr (hints about ambiguous names) is dropped.
fn cat_file(r: &Path, input: &str) -> Vec<u8> {
    let mut child = odb_index_testkit::git_cmd(r)
        .args(["cat-file", "--batch-check"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut si = child.stdin.take().unwrap();
    let text = input.to_owned();
    let writer = std::thread::spawn(move || si.write_all(text.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success());
    out.stdout
}

#[test]
fn corrupt_pack_and_loose_object_give_typed_errors_naming_the_file() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    history(r, 20, 5);
    git(r, &["repack", "-adq"]);
    let loose = git_stdin(r, &["hash-object", "-w", "--stdin"], b"x\n")
        .trim()
        .to_owned();
    let objects = Objects::open(r).unwrap();
    let blob: odb_index::ObjectId = git(r, &["rev-parse", "b5:d0/f0"]).trim().parse().unwrap();
    let place = objects.place(&blob).unwrap().unwrap();
    let Place::Packed { path, offset, .. } = &place else {
        panic!("packed expected")
    };
    // Overwrite the entry's compressed data (behind its header) with garbage.
    let mut data = std::fs::read(path).unwrap();
    for b in &mut data[*offset as usize + 2..*offset as usize + 40] {
        *b = 0xA5;
    }
    // A fresh store and adapter, so the pack is mapped after the change.
    std::fs::write(path, &data).unwrap();
    let objects = Objects::open(r).unwrap();
    let err = objects.read_at(&place, &mut Vec::new()).unwrap_err();
    assert!(
        matches!(&err, Error::PackEntry { path: p, .. } if p == &**path),
        "{err}"
    );
    assert!(err.to_string().contains(path.to_str().unwrap()), "{err}");
    // Through gix's trait the error is gix's, carrying ours.
    let gix_err = objects
        .find(&oid_to_gix(&blob), &mut Vec::new())
        .unwrap_err();
    assert!(
        gix_err.to_string().contains(path.to_str().unwrap()),
        "{gix_err}"
    );

    let file = objects_dir(r).join(&loose[..2]).join(&loose[2..]);
    std::fs::write(&file, b"not zlib").unwrap();
    let place = objects.place(&loose.parse().unwrap()).unwrap().unwrap();
    let err = objects.header_at(&place).unwrap_err();
    assert!(
        matches!(&err, Error::LooseCorrupt { path, .. } if *path == file),
        "{err}"
    );
}

#[test]
fn objects_is_send() {
    fn send<T: Send>() {}
    send::<Objects>();
}

#[test]
fn a_pack_removed_by_a_repack_between_lookup_and_read_is_looked_up_again() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    history(r, 10, 6);
    git(r, &["repack", "-adq"]);
    let old_pack = odb_index_testkit::idx_files(&objects_dir(r))[0].with_extension("pack");
    let blob: odb_index::ObjectId = git(r, &["rev-parse", "b6:d0/f0"]).trim().parse().unwrap();
    let objects = Objects::open(r).unwrap();
    // A miss loads every index: the store now answers from the old pack's .idx, whose .pack nobody opened yet.
    let absent = odb_index_testkit::absent_ids(1, 40, 1)
        .remove(0)
        .parse()
        .unwrap();
    assert!(objects.place(&absent).unwrap().is_none());
    git_stdin(r, &["hash-object", "-w", "--stdin"], b"new\n");
    git(r, &["repack", "-adq"]);
    assert!(!old_pack.exists(), "the repack should replace the pack");
    let info = objects.info(&blob).unwrap().unwrap();
    let Place::Packed { path, .. } = &info.place else {
        panic!("packed expected")
    };
    assert_ne!(&**path, old_pack.as_path());
    assert!(path.exists());
}

#[test]
fn packs_a_refresh_removed_are_dropped_once_the_listing_moves() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    history(r, 10, 7);
    git(r, &["repack", "-adq"]);
    let blob: odb_index::ObjectId = git(r, &["rev-parse", "b7:d0/f0"]).trim().parse().unwrap();
    let objects = Objects::open(r).unwrap();
    // Placed (and its .pack mapped) before the repack.
    let old = objects.place(&blob).unwrap().unwrap();
    let Place::Packed { pack: old_pack, .. } = old else {
        panic!("packed expected")
    };
    assert!(objects.read_at(&old, &mut Vec::new()).is_ok());
    git_stdin(r, &["hash-object", "-w", "--stdin"], b"newer\n");
    git(r, &["repack", "-adq"]);
    let seen = objects.store().listing_version();
    assert!(objects.store().refresh().unwrap());
    assert!(objects.store().listing_version() > seen);
    assert!(!objects.store().is_pack_live(old_pack));
    // The next lookup notices the listing moved and drops the old pack: its place is stale from then on.
    let new = objects.place(&blob).unwrap().unwrap();
    assert!(matches!(new, Place::Packed { pack, .. } if pack != old_pack));
    let err = objects.read_at(&old, &mut Vec::new()).unwrap_err();
    assert!(
        matches!(err, Error::Lookup(odb_index::Error::StalePack { pack }) if pack == old_pack),
        "{err}"
    );
    let mut data = Vec::new();
    assert_eq!(
        objects.read_at(&new, &mut data).unwrap(),
        gix_object::Kind::Blob
    );
}
