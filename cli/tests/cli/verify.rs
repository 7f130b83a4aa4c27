//! `odb-index verify`: each index file's check and count as git's `verify-pack`/`multi-pack-index verify` see
//! them, on healthy, corrupted, truncated and lying files.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// 6: verify

/// Issue 21: `verify` ignored incremental chain layers (a layer with a flipped byte, or truncated, passed with
/// exit 0); `git multi-pack-index verify` reports "incorrect checksum". Now each layer has its line.
#[test]
fn verify_checks_each_incremental_chain_layer_as_git() {
    for damage in ["flip", "truncate"] {
        let repo = init_repo("sha1", true);
        let r = repo.path();
        for l in 0..2u64 {
            fast_import_blobs(r, 50, 70 + l, &format!("l{l}"));
            git(r, &["multi-pack-index", "write", "--incremental"]);
        }
        let chain_dir = objects_dir(r).join("pack/multi-pack-index.d");
        let (code, files, _) = verify(r);
        assert_eq!(code, 0);
        let layers: Vec<&String> = files.keys().filter(|n| n.ends_with(".midx")).collect();
        assert_eq!(layers.len(), 2, "{files:?}");
        assert!(files.contains_key("multi-pack-index-chain") || layers.len() == 2);
        let chain = std::fs::read_to_string(chain_dir.join("multi-pack-index-chain")).unwrap();
        let top = chain_dir.join(format!(
            "multi-pack-index-{}.midx",
            chain.lines().last().unwrap()
        ));
        let mut bytes = std::fs::read(&top).unwrap();
        if damage == "flip" {
            let at = bytes.len() / 2;
            bytes[at] ^= 0x40;
        } else {
            bytes.truncate(bytes.len() - 7);
        }
        replace_file(&top, &bytes);
        // git reports the flipped byte ("incorrect checksum"); a truncated layer it drops from the chain.
        if damage == "flip" {
            assert!(
                !git_cmd_ok(r, &["multi-pack-index", "verify"]),
                "{damage}: git's verify fails"
            );
        }
        let (code, files, _) = verify(r);
        assert_eq!(code, 1, "{damage}: {files:?}");
        let name = top.file_name().unwrap().to_str().unwrap();
        assert!(files[name].is_err(), "{damage}: {files:?}");
    }
}

/// t5313: a pack whose header claims another object count than its index: `verify` reports the `.idx` (it said
/// ok), with git's message.
#[test]
fn verify_reports_a_pack_whose_header_count_differs_from_its_index() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 10, 90, "b");
    let idx = idx_files(&objects_dir(r)).remove(0);
    let pack = idx.with_extension("pack");
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[8..12].copy_from_slice(b"\xff\0\0\0");
    replace_file(&pack, &bytes);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1);
    let e = files[idx.file_name().unwrap().to_str().unwrap()]
        .as_ref()
        .unwrap_err();
    assert!(
        e.contains("claims to have 4278190080 objects while index indicates"),
        "{e}"
    );
}

/// `verify` printed paths unquoted (a newline in a name split its line); now as git quotes them.
#[test]
fn verify_quotes_paths_as_git() {
    let top = tempfile::tempdir().unwrap();
    let odd = top.path().join("a\nb \"c\" \u{e9}");
    std::fs::create_dir(&odd).unwrap();
    git(&odd, &["init", "-q", "--bare", "."]);
    fast_import_blobs(&odd, 5, 91, "b");
    let out = odb(&[OsStr::new("verify"), odd.as_os_str()], b"");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text:?}");
    let expected_dir = format!(
        "\"{}/a\\nb \\\"c\\\" \\303\\251/objects/pack/pack-",
        top.path().display()
    );
    assert!(text.starts_with(&format!("ok {expected_dir}")), "{text:?}");
    // git quotes the same name the same way (`git ls-files --others` of a file with that name).
    let work = init_repo("sha1", false);
    std::fs::write(work.path().join(odd.file_name().unwrap()), b"").unwrap();
    let listed = git(work.path(), &["ls-files", "--others"]);
    let git_quoted = listed.trim().trim_matches('"');
    assert_eq!(git_quoted, "a\\nb \\\"c\\\" \\303\\251");
    assert!(
        text.contains(&format!("/{git_quoted}/objects/")),
        "{text:?}"
    );
}

#[test]
fn verify_healthy_then_corrupted_and_truncated_indices() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let objects = objects_dir(r);
    git(r, &["multi-pack-index", "write"]);
    let idx = idx_files(&objects);
    let counts: HashMap<String, u64> = idx
        .iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_str().unwrap().to_owned(),
                show_index(p, "sha1").len() as u64,
            )
        })
        .collect();
    // The multi-pack-index covers every pack: its count is the number of distinct packed objects.
    let distinct = Truth::read(&objects, "sha1").packed.len() as u64;

    let (code, files, stderr) = verify(r);
    assert_eq!(code, 0, "healthy repository: {files:?} {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
    assert_eq!(
        files.len(),
        idx.len() + 1,
        "one line per index file: {files:?}"
    );
    for (name, n) in &counts {
        assert_eq!(
            files.get(name),
            Some(&Ok(*n)),
            "{name}: git show-index lists {n}"
        );
    }
    assert_eq!(files.get("multi-pack-index"), Some(&Ok(distinct)));

    // A flipped byte in the middle of one index.
    let victim = &idx[1];
    let name = victim.file_name().unwrap().to_str().unwrap().to_owned();
    let original = std::fs::read(victim).unwrap();
    let mut bad = original.clone();
    let mid = bad.len() / 2;
    bad[mid] ^= 0x40;
    replace_file(victim, &bad);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "a corrupt index must fail verify: {files:?}");
    assert!(
        matches!(files.get(&name), Some(Err(_))),
        "{name} should be reported as an error: {files:?}"
    );
    for (other, n) in counts.iter().filter(|(o, _)| **o != name) {
        assert_eq!(files.get(other), Some(&Ok(*n)), "{other} is intact");
    }

    // The same index truncated.
    replace_file(victim, &original[..original.len() * 2 / 3]);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "a truncated index must fail verify: {files:?}");
    assert!(
        matches!(files.get(&name), Some(Err(_))),
        "{name} should be reported as an error: {files:?}"
    );

    // Restored: healthy again; then a truncated multi-pack-index.
    replace_file(victim, &original);
    let (code, ..) = verify(r);
    assert_eq!(code, 0, "the restored index verifies");
    let midx = objects.join("pack/multi-pack-index");
    let m = std::fs::read(&midx).unwrap();
    replace_file(&midx, &m[..m.len() - 7]);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "a truncated multi-pack-index fails verify");
    assert!(
        matches!(files.get("multi-pack-index"), Some(Err(_))),
        "{files:?}"
    );
}

/// Files that are consistent in themselves but lie (issue 13): verify reports each one, like git
/// (`git multi-pack-index verify`, `git verify-pack`), and passes again once it is restored.
#[test]
fn verify_reports_indices_that_lie_about_their_packs() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let objects = objects_dir(r);
    git(r, &["multi-pack-index", "write"]);
    assert_eq!(verify(r).0, 0);
    let idx = idx_files(&objects);
    let victim = &idx[0];
    let name = victim.file_name().unwrap().to_str().unwrap().to_owned();
    let original = std::fs::read(victim).unwrap();
    let pack_len = std::fs::metadata(victim.with_extension("pack"))
        .unwrap()
        .len();
    // An .idx offset past the end of its pack (first entry's 32-bit offset).
    let n = u32::from_be_bytes(original[8 + 1020..8 + 1024].try_into().unwrap()) as usize;
    let table = 8 + 1024 + n * 24;
    let mut bad = original.clone();
    bad[table..table + 4].copy_from_slice(&(pack_len as u32 + 10).to_be_bytes());
    reseal_sha1(&mut bad);
    replace_file(victim, &bad);
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "{files:?}");
    assert!(
        matches!(files.get(&name), Some(Err(e)) if e.contains("beyond the end")),
        "{files:?}"
    );
    // The multi-pack-index disagrees with that index now (its offset is the real one).
    assert!(
        matches!(files.get("multi-pack-index"), Some(Err(e)) if e.contains("incorrect offset")),
        "{files:?}"
    );
    assert!(
        !git_cmd_ok(r, &["multi-pack-index", "verify"]),
        "git agrees"
    );
    replace_file(victim, &original);
    assert_eq!(verify(r).0, 0);
    // Another pack's index copied over this one: does not match its pack.
    replace_file(victim, &std::fs::read(&idx[1]).unwrap());
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "{files:?}");
    assert!(
        matches!(files.get(&name), Some(Err(e)) if e.contains("does not match index")),
        "{files:?}"
    );
    replace_file(victim, &original);
    // A multi-pack-index entry off by one (its checksum resealed): only a check against the packs' indices
    // finds it, as git's does.
    let midx = objects.join("pack/multi-pack-index");
    let good = std::fs::read(&midx).unwrap();
    let chunks = usize::from(good[6]);
    let ooff = (0..chunks)
        .map(|i| 12 + 12 * i)
        .find(|&at| &good[at..at + 4] == b"OOFF")
        .map(|at| u64::from_be_bytes(good[at + 4..at + 12].try_into().unwrap()) as usize)
        .unwrap();
    let mut bad = good.clone();
    let off = u32::from_be_bytes(bad[ooff + 4..ooff + 8].try_into().unwrap());
    bad[ooff + 4..ooff + 8].copy_from_slice(&(off + 1).to_be_bytes());
    reseal_sha1(&mut bad);
    let all = all_objects(r);
    let truth = batch_check(r, &[], &all);
    replace_file(&midx, &bad);
    // batch-check answers the entry as written by default (as git's cat-file does: one line differs); with
    // `--midx-check pack-index` it checks each location against the pack's own .idx, answers the wrong entry
    // from there (every line as on the good file) and warns once, naming the multi-pack-index.
    let as_written = batch_check(r, &[], &all);
    let differ = lines_differing(&truth, &as_written);
    assert_eq!(
        differ, 1,
        "the lying entry is answered as written by default"
    );
    let mut args = vec!["batch-check", LOCATION, "--midx-check", "pack-index"];
    args.push(r.to_str().unwrap());
    let out = odb(&args, all.join("\n").as_bytes());
    assert!(out.status.success());
    assert_eq!(located(&String::from_utf8_lossy(&out.stdout)), truth);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("multi-pack-index entry wrong") && err.contains("incorrect offset"),
        "{err}"
    );
    assert!(
        !git_cmd_ok(r, &["multi-pack-index", "verify"]),
        "git verify fails"
    );
    let (code, files, _) = verify(r);
    assert_eq!(code, 1, "{files:?}");
    assert!(
        matches!(files.get("multi-pack-index"), Some(Err(e)) if e.contains("incorrect offset")),
        "{files:?}"
    );
    for i in &idx {
        let n = i.file_name().unwrap().to_str().unwrap();
        assert!(matches!(files.get(n), Some(Ok(_))), "{n}: {files:?}");
    }
}

/// `--midx-checksum` (`Options::midx_checksum`): a multi-pack-index with one bit flipped (the last object's
/// offset one byte off; the checksum not recomputed) is refused before it answers and warned about once, naming
/// the checksum mismatch; every line is as on the good file. Without it the flipped entry is answered as written,
/// as git's `cat-file` answers it.
#[test]
fn midx_checksum_refuses_a_flipped_bit_and_answers_from_the_idx_files() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    git(r, &["multi-pack-index", "write"]);
    let midx = objects_dir(r).join("pack/multi-pack-index");
    let all = all_objects(r);
    let truth = batch_check(r, &[], &all);
    let mut bad = std::fs::read(&midx).unwrap();
    let n = bad.len();
    // git writes `OOFF` last: the byte before the trailer is the last object's offset's lowest byte.
    bad[n - 20 - 1] ^= 1;
    replace_file(&midx, &bad);
    let as_written = batch_check(r, &[], &all);
    let differ = lines_differing(&truth, &as_written);
    assert_eq!(
        differ, 1,
        "the flipped entry is answered as written by default"
    );
    let out = odb(
        &[
            "batch-check",
            LOCATION,
            "--midx-checksum",
            r.to_str().unwrap(),
        ],
        all.join("\n").as_bytes(),
    );
    assert!(out.status.success());
    assert_eq!(located(&String::from_utf8_lossy(&out.stdout)), truth);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("multi-pack-index") && err.contains("checksum mismatch"),
        "{err}"
    );
}

/// Whether git succeeds in `dir` with `args`.
fn git_cmd_ok(dir: &Path, args: &[&str]) -> bool {
    odb_index_testkit::git_cmd(dir)
        .args(args)
        .output()
        .unwrap()
        .status
        .success()
}
