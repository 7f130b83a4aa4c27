//! Traversals, headers and data of every object, the examples and names, against git.

use super::*;

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
