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
        let expected = String::from_utf8(cat_file(r, "--batch-check", &input)).unwrap();
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
        let expected = cat_file(r, "--batch-check", &input);
        let out = run_example("batch_check", r, input);
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

/// The `batch` example (`cat-file --batch` on the adapter, written from the README and the adapter's docs) against
/// `git cat-file --batch`, byte for byte, on two repositories of each format: a real source tree (the cargo
/// registry's sources, else this workspace's) imported in four commits, repacked with deltas (`git repack
/// -adf`), then another pack and loose objects on top; and the same with a multi-pack-index over its packs.
#[test]
fn batch_example_matches_git_cat_file_batch() {
    let root = odb_index_testkit::registry_src().unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .to_owned()
    });
    let lines =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/batch.rs"))
            .unwrap();
    assert!(
        lines.lines().count() <= 30,
        "the --batch client is at most 30 lines"
    );
    for (format, midx) in [
        ("sha1", false),
        ("sha256", false),
        ("sha1", true),
        ("sha256", true),
    ] {
        let repo = init_repo(format, false);
        let r = repo.path();
        let files = odb_index_testkit::import_tree(r, &root, 1500, 3, "main");
        assert!(files > 100, "{}: only {files} files", root.display());
        git(r, &["repack", "-adfq"]);
        odb_index_testkit::fast_import_blobs(r, 2000, 4, "blobs"); // another pack: shared 4-digit prefixes
        for i in 0..20 {
            git_stdin(
                r,
                &["hash-object", "-w", "--stdin"],
                format!("loose {i}\n").as_bytes(),
            );
        }
        if midx {
            git(r, &["multi-pack-index", "write"]);
            assert!(objects_dir(r).join("pack/multi-pack-index").is_file());
        }
        let verified = git(r, &["verify-pack", "-v", &idx_of_largest_pack(r)]);
        assert!(
            verified.contains("chain length = 2"),
            "{format}: the repack made delta chains"
        );
        let mut names = all_objects(r);
        let prefixes: Vec<String> = names
            .iter()
            .step_by(7)
            .map(|id| id[..5].to_owned())
            .collect();
        names.extend(prefixes);
        names.extend(odb_index_testkit::absent_ids(
            20,
            if format == "sha1" { 40 } else { 64 },
            5,
        ));
        names.extend(["abc", "0x12345", ""].map(String::from)); // not names: git says missing
        let input = names.join("\n") + "\n";
        let expected = cat_file(r, "--batch", &input);
        let out = run_example("batch", r, input);
        assert!(out.status.success(), "{format}");
        let text = String::from_utf8_lossy(&expected);
        assert!(
            text.contains(" ambiguous\n") && text.contains(" missing\n"),
            "{format}"
        );
        assert!(
            out.stdout == expected,
            "{format}, multi-pack-index {midx}: the batch example's output differs from git's"
        );
    }
}

/// `Objects::lookup_name` by git's rules: an ambiguous abbreviation lists exactly the objects git lists for it
/// (`git rev-parse --disambiguate`), a unique one names the object `git rev-parse` names, fewer than 4 digits or
/// non-hex is `BadName`; `read_by_name` reads what `lookup_name` names.
#[test]
fn names_resolve_as_git_resolves_them() {
    for (repo, format) in repos() {
        let r = repo.path();
        let objects = Objects::open(r).unwrap();
        let mut seen = std::collections::BTreeMap::<String, usize>::new();
        for id in all_objects(r) {
            *seen.entry(id[..4].to_owned()).or_default() += 1;
        }
        let (ambiguous, _) = seen
            .iter()
            .find(|(_, n)| **n > 1)
            .expect("a shared 4-digit prefix");
        let mut want: Vec<String> = git(r, &["rev-parse", &format!("--disambiguate={ambiguous}")])
            .lines()
            .map(str::to_owned)
            .collect();
        want.sort();
        match objects.lookup_name(&ambiguous.to_uppercase()) {
            Err(Error::AmbiguousName { name, candidates }) => {
                assert_eq!(name, ambiguous.to_uppercase());
                let got: Vec<String> = candidates.iter().map(|c| c.to_string()).collect();
                assert_eq!(got, want, "{format}: the candidates git lists");
                let message = Error::AmbiguousName { name, candidates }.to_string();
                assert!(
                    message.contains(&want[0]) && message.contains(&want[1]),
                    "{message}"
                );
            }
            other => panic!("{format}: {ambiguous}: {other:?}"),
        }
        let (unique, _) = seen
            .iter()
            .find(|(_, n)| **n == 1)
            .expect("an unshared prefix");
        let id = git(r, &["rev-parse", unique]).trim().to_owned();
        assert_eq!(
            objects.lookup_name(unique).unwrap().unwrap().to_string(),
            id
        );
        let mut data = Vec::new();
        let info = objects.read_by_name(unique, &mut data).unwrap().unwrap();
        assert_eq!(info.id.to_string(), id);
        assert_eq!(
            info.kind.to_string(),
            git(r, &["cat-file", "-t", &id]).trim()
        );
        assert_eq!(
            data.len().to_string(),
            git(r, &["cat-file", "-s", &id]).trim()
        );
        let mut object = format!("{} {}\0", info.kind, data.len()).into_bytes();
        object.extend_from_slice(&data);
        let ours = odb_index_gix::convert::oid_from_gix(&info.id);
        assert_eq!(
            ours.kind().digest(&object),
            ours,
            "{format}: the bytes read hash to the id"
        );
        for bad in ["abc", "", "xyz0", &"0".repeat(id.len() + 1)] {
            assert!(
                matches!(objects.lookup_name(bad), Err(Error::BadName { .. })),
                "{format}: {bad:?}"
            );
        }
    }
}

/// A clone of `Objects` shares the store and reads the same objects from another thread, with its own handle:
/// it keeps working after the original is dropped, and both see a loose object written after the clone.
#[test]
fn a_clone_reads_from_another_thread() {
    let (repo, _) = repos().into_iter().next().unwrap();
    let r = repo.path();
    let objects = Objects::open(r).unwrap();
    let ids: Vec<odb_index_gix::ObjectId> = all_objects(r)
        .iter()
        .map(|id| id.parse().unwrap())
        .collect();
    let count = ids.len();
    let mut data = Vec::new();
    let first = objects.read(&ids[0], &mut data).unwrap().unwrap();
    let clone = objects.clone();
    assert!(std::sync::Arc::ptr_eq(objects.store(), clone.store()));
    let new = git_stdin(r, &["hash-object", "-w", "--stdin"], b"after the clone\n");
    let new: odb_index_gix::ObjectId = new.trim().parse().unwrap();
    let (mine, theirs) = std::thread::scope(|s| {
        let t = s.spawn(move || {
            let mut data = Vec::new();
            let infos: Vec<_> = ids
                .iter()
                .map(|id| clone.read(id, &mut data).unwrap().unwrap())
                .collect();
            (
                infos,
                clone
                    .read(&new, &mut data)
                    .unwrap()
                    .map(|i| data[..i.size as usize].to_vec()),
            )
        });
        let mine = objects.read(&new, &mut data).unwrap().map(|_| data.clone());
        (mine, t.join().unwrap())
    });
    assert_eq!(theirs.0[0], first);
    assert_eq!(theirs.0.len(), count);
    assert_eq!(mine.as_deref(), Some(&b"after the clone\n"[..]));
    assert_eq!(theirs.1.as_deref(), Some(&b"after the clone\n"[..]));
}

/// The adapter takes the store's ids (odb-index's, as a `Handle` gives them) and gix's alike, and gives the same
/// answers, each with gix's id.
#[test]
fn either_id_type_is_taken() {
    let (repo, _) = repos().into_iter().next().unwrap();
    let objects = Objects::open(repo.path()).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for hex in all_objects(repo.path()).iter().step_by(50) {
        let ours: odb_index_gix::odb_index::ObjectId = hex.parse().unwrap();
        let theirs = gix_hash::ObjectId::from_hex(hex.as_bytes()).unwrap();
        assert_eq!(
            objects.read(&ours, &mut a).unwrap(),
            objects.read(&theirs, &mut b).unwrap()
        );
        assert_eq!(a, b);
        assert_eq!(
            objects.info(&ours).unwrap(),
            objects.info(theirs.as_ref()).unwrap()
        );
        assert_eq!(
            objects.place(&ours).unwrap(),
            objects.place(&theirs).unwrap()
        );
    }
}

/// The `.idx` of the largest pack in `r`.
fn idx_of_largest_pack(r: &Path) -> String {
    let pack_dir = objects_dir(r).join("pack");
    let mut packs: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(&pack_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pack"))
        .map(|p| (p.metadata().unwrap().len(), p))
        .collect();
    packs.sort();
    packs
        .last()
        .unwrap()
        .1
        .with_extension("idx")
        .to_string_lossy()
        .into_owned()
}

/// Run the example `name` on repository `r` with `input` on stdin (written from another thread).
fn run_example(name: &str, r: &Path, input: String) -> std::process::Output {
    let mut ex = example(name)
        .arg(r)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut si = ex.stdin.take().unwrap();
    let writer = std::thread::spawn(move || si.write_all(input.as_bytes()));
    let out = ex.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

/// `cargo run --example <name> --`, in the profile this test was built with (`cargo test` built the example
/// already, so this only checks that it is up to date).
fn example(name: &str) -> Command {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test binary>
    let profile = exe.parent().unwrap().parent().unwrap().file_name().unwrap();
    let mut c = Command::new(env!("CARGO"));
    c.args(["run", "-q", "-p", "odb-index-gix", "--example", name]);
    if profile == "release" {
        c.arg("--release");
    }
    c.arg("--");
    c
}

/// `git cat-file <mode>` on `input` (written from another thread: the output may fill its pipe first); its
/// stdout. Its stderr (hints about ambiguous names) is dropped.
fn cat_file(r: &Path, mode: &str, input: &str) -> Vec<u8> {
    let mut child = odb_index_testkit::git_cmd(r)
        .args(["cat-file", mode])
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
    let place = objects
        .place(&loose.parse::<odb_index_gix::ObjectId>().unwrap())
        .unwrap()
        .unwrap();
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
    let absent: odb_index_gix::ObjectId = odb_index_testkit::absent_ids(1, 40, 1)
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

/// Every object's `%(objectsize:disk)` and `%(deltabase)` as the adapter answers them, and the problems it
/// reported while answering.
fn disk_sizes_and_bases(r: &Path, ids: &[String]) -> (Vec<String>, Vec<String>) {
    let objects = Objects::open(r).unwrap();
    let mut lines = Vec::new();
    for id in ids {
        let place = objects
            .place(&id.parse::<odb_index_gix::ObjectId>().unwrap())
            .unwrap()
            .expect("present");
        let base = objects.delta_base(&place).unwrap();
        let base = base.map_or("0".repeat(40), |b| b.to_string());
        lines.push(format!(
            "{id} {} {base}",
            objects.disk_size(&place).unwrap()
        ));
    }
    let problems = objects
        .take_problems()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert!(
        objects.take_problems().is_empty(),
        "each problem is reported once"
    );
    (lines, problems)
}

/// A `.rev` that cannot be used (truncated, empty, version 2, a directory, a symlink loop, a FIFO, a symlink to
/// `/dev/zero`, a 1 GB sparse file) is reported once and every answer comes from the `.idx`, as git falls back
/// (never a hang, never a read of more than the format's length).
#[test]
fn broken_rev_files_are_reported_once_and_answers_come_from_the_idx() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    history(r, 20, 1);
    git(r, &["-c", "pack.writeReverseIndex=true", "repack", "-adfq"]);
    let rev = odb_index_testkit::pack_files(&objects_dir(r), "rev")
        .pop()
        .expect("git wrote a .rev");
    let good = std::fs::read(&rev).unwrap();
    let ids = all_objects(r);
    let expected: Vec<String> = odb_index_testkit::git_stdin(
        r,
        &[
            "cat-file",
            "--batch-check=%(objectname) %(objectsize:disk) %(deltabase)",
        ],
        (ids.join("\n") + "\n").as_bytes(),
    )
    .lines()
    .map(str::to_owned)
    .collect();
    assert!(
        expected.iter().any(|l| !l.ends_with(&"0".repeat(40))),
        "some deltas"
    );
    let (lines, problems) = disk_sizes_and_bases(r, &ids);
    assert_eq!(
        (lines, problems.len()),
        (expected.clone(), 0),
        "the good .rev"
    );
    let reset = || {
        let _ = std::fs::remove_file(&rev);
        let _ = std::fs::remove_dir(&rev);
    };
    let mut version2 = good.clone();
    version2[7] = 2;
    type Breakage<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let breakages: Vec<Breakage> = vec![
        (
            "truncated",
            Box::new(|| std::fs::write(&rev, &good[..good.len() - 7]).unwrap()),
        ),
        ("empty", Box::new(|| std::fs::write(&rev, b"").unwrap())),
        (
            "version 2",
            Box::new(|| std::fs::write(&rev, &version2).unwrap()),
        ),
        (
            "a directory",
            Box::new(|| std::fs::create_dir(&rev).unwrap()),
        ),
        (
            "a symlink loop",
            Box::new(|| std::os::unix::fs::symlink(&rev, &rev).unwrap()),
        ),
        (
            "a symlink to /dev/zero",
            Box::new(|| std::os::unix::fs::symlink("/dev/zero", &rev).unwrap()),
        ),
        (
            "a FIFO",
            Box::new(|| assert!(Command::new("mkfifo").arg(&rev).status().unwrap().success())),
        ),
        (
            "1 GB sparse",
            Box::new(|| {
                std::fs::File::create(&rev)
                    .unwrap()
                    .set_len(1 << 30)
                    .unwrap()
            }),
        ),
    ];
    for (what, brk) in &breakages {
        reset();
        brk();
        let (lines, problems) = disk_sizes_and_bases(r, &ids);
        assert_eq!(lines, expected, "{what}: the answers from the .idx");
        assert_eq!(problems.len(), 1, "{what}: reported once: {problems:?}");
        assert!(
            problems[0].contains(&*rev.to_string_lossy()),
            "{what}: names the file: {problems:?}"
        );
    }
    reset();
}

/// A loose object's header is read by streaming its first bytes (a large object is never read whole for its
/// type and size), and a loose object name that is not a regular file is a typed error, never a hang.
#[test]
fn loose_headers_stream_and_non_regular_loose_files_are_errors() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    let big: Vec<u8> = (0..8u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let id = git_stdin(r, &["hash-object", "-w", "--stdin"], &big);
    let objects = Objects::open(r).unwrap();
    let id: odb_index::ObjectId = id.trim().parse().unwrap();
    let info = objects.info(&id).unwrap().expect("present");
    assert_eq!(
        (info.kind, info.size),
        (gix_object::Kind::Blob, big.len() as u64)
    );
    let mut buf = Vec::new();
    assert_eq!(
        objects.read(&id, &mut buf).unwrap().map(|i| i.size),
        Some(big.len() as u64)
    );
    assert!(buf == big);
    let Place::Loose { path, .. } = info.place else {
        panic!("loose")
    };
    for (what, make) in [("/dev/zero", "ln"), ("a FIFO", "mkfifo")] {
        std::fs::remove_file(&path).unwrap();
        let st = if make == "ln" {
            Command::new("ln")
                .args(["-s", "/dev/zero"])
                .arg(&path)
                .status()
        } else {
            Command::new("mkfifo").arg(&path).status()
        };
        assert!(st.unwrap().success());
        match objects.info(&id) {
            Err(Error::LooseUnreadable { path: p, .. }) => assert_eq!(p, path, "{what}"),
            other => panic!("{what}: {other:?}"),
        }
        assert!(
            matches!(
                objects.read(&id, &mut buf),
                Err(Error::LooseUnreadable { .. })
            ),
            "{what}"
        );
    }
}

/// Issue 21, bullet 9, in the library: a file named like a loose object that is not one (empty, garbage, a
/// dangling symbolic link, a directory) is a typed error naming the file under `IncompleteMode::Error` (the
/// default), and under `IncompleteMode::Miss` git's answer (`None`) with the file in `Store::problems()`.
#[test]
fn files_named_like_loose_objects_that_are_not_ones() {
    use odb_index::{IncompleteMode, Options, Problem};
    let repo = init_repo("sha1", true);
    let r = repo.path();
    let made = odb_index_testkit::loose_names_that_are_not_objects(r);
    let ids: Vec<odb_index::ObjectId> = made.iter().map(|(id, _)| id.parse().unwrap()).collect();
    let file = |id: &odb_index::ObjectId| {
        made.iter()
            .find(|(h, _)| *h == id.to_string())
            .unwrap()
            .1
            .clone()
    };

    let strict = Objects::open(r).unwrap();
    for (i, id) in ids.iter().enumerate() {
        let err = strict.info(id).unwrap_err();
        let named = match &err {
            Error::LooseCorrupt { path, .. } if i < 2 => path,
            Error::LooseUnreadable { path, .. } if i >= 2 => path,
            other => panic!("{id}: {other:?}"),
        };
        assert_eq!(*named, file(id));
        assert!(err.is_not_a_loose_object());
        assert!(strict.read(id, &mut Vec::new()).is_err());
    }
    assert!(strict.store().problems().is_empty());

    let lenient =
        Objects::open_with(r, Options::default().incomplete(IncompleteMode::Miss)).unwrap();
    for id in &ids {
        assert!(lenient.info(id).unwrap().is_none(), "{id}");
        assert!(lenient.read(id, &mut Vec::new()).unwrap().is_none(), "{id}");
    }
    let problems = lenient.store().problems();
    assert_eq!(problems.len(), 4, "{problems:?}");
    for (id, p) in ids.iter().zip(&problems) {
        assert!(matches!(p, Problem::LooseObjectUnreadable { .. }), "{p:?}");
        assert_eq!(p.path(), file(id));
    }
}

/// The adapter answers from the store's `.idx` (`Handle::with_pack_index`), never a second mapping of it:
/// after the header, contents, disk size and delta base of every object (two packs, with deltas), each `.idx` is mapped exactly once (the store's) under `LoadMode::Mmap`, and not at all under
/// `LoadMode::Read`.
#[test]
fn the_adapter_maps_no_pack_index_a_second_time() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    history(r, 30, 1);
    git(r, &["repack", "-adfq"]);
    history(r, 10, 2);
    git(r, &["repack", "-dq"]); // a second pack
    let idx_files = odb_index_testkit::idx_files(&objects_dir(r));
    assert_eq!(idx_files.len(), 2);
    for (load, want) in [
        (odb_index::LoadMode::Mmap, 1),
        (odb_index::LoadMode::Read, 0),
    ] {
        let objects = Objects::open_with(r, odb_index::Options::default().load(load)).unwrap();
        let mut buf = Vec::new();
        for hex in all_objects(r) {
            let id: odb_index::ObjectId = hex.parse().unwrap();
            let info = objects.read(&id, &mut buf).unwrap().expect("present");
            objects.disk_size(&info.place).unwrap();
            objects.delta_base(&info.place).unwrap();
        }
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        for idx in &idx_files {
            let idx = idx.canonicalize().unwrap();
            let n = maps
                .lines()
                .filter(|l| l.ends_with(idx.to_str().unwrap()))
                .count();
            assert_eq!(n, want, "{load:?}: {} mapped {n} times", idx.display());
        }
    }
}

/// Issue 32 (F6): a pack a multi-pack-index covers, deleted and made again under its name with other contents
/// (a writer that does not name packs by their contents; the file system hands the freed inode number to the new
/// `.idx`, as ext4 does at once), with a new multi-pack-index. The adapter caches each pack's mapped `.pack` by
/// its id: the store must give the new pack a new id, or the adapter reads the new offsets from the old file.
/// Every object's type and size must be git's.
#[cfg(unix)]
#[test]
fn a_covered_pack_made_again_under_its_name_is_read_from_the_new_file() {
    use std::os::unix::fs::MetadataExt as _;
    let repo = init_repo("sha1", true);
    let r = repo.path();
    odb_index_testkit::fast_import_blobs(r, 60, 401, "a");
    odb_index_testkit::fast_import_blobs(r, 60, 402, "b");
    git(r, &["multi-pack-index", "write"]);
    let objects_path = objects_dir(r);
    let idx = odb_index_testkit::idx_files(&objects_path)[0].clone();
    let pack = idx.with_extension("pack");
    let other = init_repo("sha1", true);
    odb_index_testkit::fast_import_blobs(other.path(), 60, 403, "c");
    let other_idx = odb_index_testkit::idx_files(&objects_dir(other.path()))[0].clone();

    let objects = Objects::open(r).unwrap();
    // Every object read once: the packs' .pack files are mapped and cached by id.
    for id in all_objects(r) {
        let id: odb_index_gix::ObjectId = id.parse().unwrap();
        assert!(objects.info(&id).unwrap().is_some());
    }
    let old_ino = std::fs::metadata(&idx).unwrap().ino();
    std::fs::remove_file(&idx).unwrap();
    std::fs::copy(&other_idx, &idx).unwrap();
    std::fs::remove_file(&pack).unwrap();
    std::fs::copy(other_idx.with_extension("pack"), &pack).unwrap();
    std::fs::remove_file(objects_path.join("pack/multi-pack-index")).unwrap();
    git(r, &["multi-pack-index", "write"]);
    eprintln!(
        "inode reused: {}",
        std::fs::metadata(&idx).unwrap().ino() == old_ino
    );
    let all = all_objects(r);
    let want = git_stdin(
        r,
        &[
            "cat-file",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ],
        (all.join("\n") + "\n").as_bytes(),
    );
    let mut got = String::new();
    for id in &all {
        let gid: odb_index_gix::ObjectId = id.parse().unwrap();
        match objects.info(&gid) {
            Ok(Some(info)) => got.push_str(&format!("{id} {} {}\n", info.kind, info.size)),
            Ok(None) => got.push_str(&format!("{id} missing\n")),
            Err(e) => got.push_str(&format!("{id} error {e}\n")),
        }
    }
    let wrong: Vec<(&str, &str)> = got
        .lines()
        .zip(want.lines())
        .filter(|(g, w)| g != w)
        .collect();
    assert!(
        wrong.is_empty() && got.lines().count() == want.lines().count(),
        "{} of {} objects answered otherwise than git after the pack was made again, e.g. (adapter, git): {:?}",
        wrong.len(),
        all.len(),
        &wrong[..wrong.len().min(3)]
    );
}
