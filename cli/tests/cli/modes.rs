//! The multi-pack-index, and every mode (threads, buffering, refresh, loose objects) giving the same answers.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// 3: multi-pack-index

#[test]
fn multi_pack_index_with_uncovered_packs_agrees_with_git() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let objects = objects_dir(r);
    let idx = idx_files(&objects);
    // Cover two of the three packs, then add a fourth pack after the multi-pack-index.
    let covered: Vec<String> = idx[..2]
        .iter()
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    git_stdin(
        r,
        &["multi-pack-index", "write", "--stdin-packs"],
        format!("{}\n", covered.join("\n")).as_bytes(),
    );
    assert!(objects.join("pack/multi-pack-index").is_file());
    fast_import_blobs(r, 250, 4, "four");
    let all_idx = idx_files(&objects);
    assert_eq!(all_idx.len(), 4);

    let input = objects_and_absent(r, 40, 2000, 11);
    let out = batch_check(r, &[], &input);
    assert!(
        !out.contains("multi-pack-index"),
        "answers must name packs, never the multi-pack-index"
    );
    let truth = Truth::read(&objects, "sha1");
    let per_pack = check_answers(&input, &out, &truth, Loose::Found);
    for idx in &all_idx {
        let name = pack_name(idx);
        assert!(
            per_pack.get(&name).is_some_and(|&n| n > 0),
            "no answer named {name} (covered: {covered:?})"
        );
    }

    // The same after a multi-pack-index over all four, with a fifth pack added after it.
    git(r, &["multi-pack-index", "write"]);
    fast_import_blobs(r, 150, 5, "five");
    let input = objects_and_absent(r, 40, 500, 12);
    let out = batch_check(r, &[], &input);
    assert!(!out.contains("multi-pack-index"));
    let truth = Truth::read(&objects, "sha1");
    let per_pack = check_answers(&input, &out, &truth, Loose::Found);
    assert_eq!(per_pack.len(), 5, "answers should name all five packs");
}

// ---------------------------------------------------------------------------------------------------------
// 4: threads, buffering, refresh and loose modes give the same answers

#[test]
fn threads_buffer_and_modes_give_identical_output() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let truth = Truth::read(&objects_dir(r), "sha1");
    let input = mixed_input(r, 40);
    let base = batch_check(r, &[], &input);
    check_answers(&input, &base, &truth, Loose::Found);
    assert!(
        base.lines().any(|l| l.ends_with(" loose")),
        "the input should reach loose objects"
    );
    for flags in [
        &["--threads", "4"][..],
        &["--threads", "3"],
        &["--buffer"],
        &["--buffer", "--threads", "4"],
        &["--no-refresh"],
        &["--no-events"],
        &["--events-after", "0"],
        &["--events-after", "5", "--buffer"],
        &["--loose", "probe"],
        &["--loose", "cached"],
        &["--loose", "cached", "--threads", "4", "--buffer"],
    ] {
        let out = batch_check(r, flags, &input);
        assert!(
            out == base,
            "batch-check {flags:?} differs from the single-threaded output (first difference at line {:?})",
            first_difference(&out, &base)
        );
    }
    // Without loose objects: exactly the loose-only answers change, to `missing`.
    let none = batch_check(r, &["--loose", "none"], &input);
    check_answers(&input, &none, &truth, Loose::Ignored);
    let none4 = batch_check(r, &["--loose", "none", "--threads", "4"], &input);
    assert!(
        none4 == none,
        "--loose none --threads 4 differs (line {:?})",
        first_difference(&none4, &none)
    );
    let changed = base
        .lines()
        .zip(none.lines())
        .filter(|(a, b)| a != b)
        .count();
    let loose_lines = base.lines().filter(|l| l.ends_with(" loose")).count();
    assert_eq!(
        changed, loose_lines,
        "--loose none should change exactly the `loose` answers"
    );
}

/// `--loose none` holds for abbreviated ids too: a prefix of a loose-only object is `missing`, of a packed one
/// still found; `--batch-all-objects` lists no loose object.
#[test]
fn loose_none_applies_to_prefixes_and_listing() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let truth = Truth::read(&objects_dir(r), "sha1");
    let loose: Vec<String> = truth
        .loose
        .iter()
        .filter(|id| !truth.packed.contains_key(*id))
        .cloned()
        .collect();
    let packed = truth.packed.keys().next().unwrap().clone();
    assert!(!loose.is_empty());
    let input: Vec<String> = [&loose[0][..12], &packed[..12]].map(str::to_owned).to_vec();
    let found = batch_check(r, &[], &input);
    assert_eq!(
        found.lines().next(),
        Some(format!("{} loose", loose[0]).as_str())
    );
    let none = batch_check(r, &["--loose", "none"], &input);
    let lines: Vec<&str> = none.lines().collect();
    assert_eq!(lines[0], format!("{} missing", &loose[0][..12]));
    assert!(lines[1].starts_with(&format!("{packed} pack-")), "{none}");
    let all = batch_check(r, &["--loose", "none", "--batch-all-objects"], &[]);
    assert_eq!(all.lines().count(), truth.packed.len());
    assert!(!all.contains(" loose"), "{all}");
}
