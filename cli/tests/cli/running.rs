//! A command running while the repository changes (refresh on a miss, or not), and one whose reader goes away.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// 9: refresh while running

/// Add a pack with new objects; returns its pack name and one (id, offset) only it holds, not loose.
fn add_pack(repo: &Path, seed: u64) -> (String, String, u64) {
    let objects = objects_dir(repo);
    let before: HashSet<PathBuf> = idx_files(&objects).into_iter().collect();
    fast_import_blobs(repo, 150, seed, &format!("b{seed}"));
    let new: Vec<PathBuf> = idx_files(&objects)
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(new.len(), 1, "fast-import should add one pack");
    let (id, off) = show_index(&new[0], "sha1").swap_remove(0);
    assert!(
        !objects.join(&id[..2]).join(&id[2..]).exists(),
        "{id} is loose"
    );
    for old in &before {
        assert!(!show_index(old, "sha1").iter().any(|(o, _)| *o == id));
    }
    (pack_name(&new[0]), id, off)
}

#[test]
fn refresh_on_miss_finds_a_pack_added_while_running() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 150, 1, "main");
    let absent = absent_ids(2, 40, 8);

    let mut s = Session::start(r, &[]);
    assert_eq!(s.ask(&absent[0]), format!("{} missing", absent[0]));
    let (pack, id, off) = add_pack(r, 2);
    assert_eq!(
        s.ask(&id),
        format!("{id} {pack} {off}"),
        "the store should re-list the pack directory on a miss"
    );
    assert_eq!(s.ask(&absent[1]), format!("{} missing", absent[1]));
    // A loose object written while running is found too (probe mode is always current).
    let loose = add_loose(r, 1, "later").remove(0);
    assert_eq!(s.ask(&loose), format!("{loose} loose"));
    // And a second new pack.
    let (pack, id, off) = add_pack(r, 3);
    assert_eq!(s.ask(&id), format!("{id} {pack} {off}"));
    s.finish();
}

/// Issue 21: `(sleep 1; git repack -adfq; echo ${X:0:10}; echo $X; echo ${X:0:10}) | odb-index batch-check .`
/// printed `<prefix> missing` (the listed packs had vanished and prefixes never refreshed); git finds all three.
#[test]
fn prefix_after_repack_ad_is_found_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    for i in 1..=3 {
        std::fs::write(r.join(format!("f{i}")), format!("{i}\n")).unwrap();
        git(r, &["add", &format!("f{i}")]);
        git(r, &["commit", "-qm", &i.to_string()]);
        git(r, &["repack", "-dq"]);
    }
    let x = git(r, &["rev-parse", "HEAD"]).trim().to_owned();
    let mut s = Session::start(r, &[]);
    // An invalid line: answered without a lookup, once the store is open (its listing names the three packs).
    assert_eq!(s.ask("not-an-id"), "not-an-id missing");
    git(r, &["repack", "-adfq"]);
    let lines = [&x[..10], &x[..], &x[..10]];
    let git_says = git_stdin(
        r,
        &["cat-file", "--batch-check=%(objectname)"],
        format!("{}\n", lines.join("\n")).as_bytes(),
    );
    for (line, git_line) in lines.iter().zip(git_says.lines()) {
        assert_eq!(git_line, x, "git finds {line}");
        let ours = s.ask(line);
        assert!(ours.starts_with(&format!("{x} pack-")), "{line}: {ours}");
    }
    s.finish();
    // --batch-all-objects after the same repack lists what git lists.
    for i in 4..=5 {
        std::fs::write(r.join(format!("f{i}")), format!("{i}\n")).unwrap();
        git(r, &["add", &format!("f{i}")]);
        git(r, &["commit", "-qm", &i.to_string()]);
        git(r, &["repack", "-dq"]);
    }
    let out = odb(
        &[
            "batch-check",
            "--batch-check=%(objectname)",
            "--batch-all-objects",
            r.to_str().unwrap(),
        ],
        b"",
    );
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        all_objects(r)
    );
}

#[test]
fn no_refresh_does_not_see_a_pack_added_while_running() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 150, 1, "main");
    let absent = absent_ids(1, 40, 9).remove(0);

    let mut s = Session::start(r, &["--no-refresh"]);
    assert_eq!(s.ask(&absent), format!("{absent} missing"));
    let (_, id, _) = add_pack(r, 2);
    assert_eq!(
        s.ask(&id),
        format!("{id} missing"),
        "--no-refresh must not re-list the pack directory"
    );
    assert_eq!(s.ask(&id), format!("{id} missing"));
    // Loose objects are still probed every time.
    let loose = add_loose(r, 1, "later").remove(0);
    assert_eq!(s.ask(&loose), format!("{loose} loose"));
    s.finish();
    // A new process sees the pack.
    let out = batch_check(r, &["--no-refresh"], std::slice::from_ref(&id));
    assert!(
        out.starts_with(&format!("{id} pack-")),
        "a new process finds {id}: {out:?}"
    );
}

// ---------------------------------------------------------------------------------------------------------
// Closed output pipes

/// Start the command, read one line of its output, close the pipe; returns (status, stderr).
fn read_one_line_then_close<S: AsRef<OsStr>>(args: &[S], stdin: Vec<u8>) -> (Output, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start odb-index");
    let mut si = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = si.write_all(&stdin);
    });
    let mut first = String::new();
    {
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut first).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (out, first)
}

#[test]
fn batch_check_stops_quietly_when_the_reader_goes_away() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    let id = add_loose(r, 1, "x").remove(0);
    // Far more output than a pipe holds.
    let input = format!("{id}\n").repeat(100_000).into_bytes();
    let (out, first) = read_one_line_then_close(&[OsStr::new("batch-check"), r.as_os_str()], input);
    // The default format, git's: `<id> <type> <size>`.
    assert!(first.starts_with(&format!("{id} blob ")), "{first:?}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]

fn verify_stops_quietly_when_the_reader_goes_away() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 150, 1, "main");
    let objects = objects_dir(r);
    let idx = idx_files(&objects).remove(0);
    // verify checks every *.idx file: 1500 hard links make far more output than a pipe holds.
    for i in 0..1500 {
        std::fs::hard_link(&idx, objects.join(format!("pack/copy-{i:05}.idx"))).unwrap();
    }
    let (out, first) = read_one_line_then_close(&[OsStr::new("verify"), r.as_os_str()], vec![]);
    assert!(first.starts_with("ok "), "{first:?}");
    assert!(
        out.stderr.is_empty(),
        "a closed pipe should end verify quietly: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
}

/// Issue 21, bullet 9: files named like loose objects that are not ones (empty, garbage, a dangling symbolic
/// link, a directory) are `missing` for the full id and a prefix, with a warning naming the file on stderr, as git
/// answers the first three (git dies on the directory: "mmap failed"); before, the command printed `error <path>`.
#[test]
fn files_named_like_loose_objects_that_are_not_ones_are_missing_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    let made = loose_names_that_are_not_objects(r);
    let ids: Vec<String> = made.iter().map(|(id, _)| id.clone()).collect();
    let lines = |ids: &[String]| -> String {
        ids.iter()
            .flat_map(|id| [id.clone(), id[..10].to_owned()])
            .map(|l| l + "\n")
            .collect()
    };
    let expected = |ids: &[String]| -> String {
        ids.iter()
            .flat_map(|id| [id.clone(), id[..10].to_owned()])
            .map(|l| l + " missing\n")
            .collect()
    };
    let git_says = git_stdin(
        r,
        &["cat-file", "--batch-check"],
        lines(&ids[..3]).as_bytes(),
    );
    assert_eq!(git_says, expected(&ids[..3]));
    // git warns once per lookup that reads the file (here twice per file: the full id and the prefix; nothing
    // for the dangling symbolic link); the command warns once per file, in every mode.
    let commands =
        |ids: &[String]| -> String { lines(ids).lines().map(|l| format!("info {l}\n")).collect() };
    for (args, input) in [
        (&[][..], lines(&ids)),
        (&["--buffer"][..], lines(&ids)),
        (&["--threads", "2"][..], lines(&ids)),
        (&["--batch-command"][..], commands(&ids)),
    ] {
        let mut argv = vec!["batch-check"];
        argv.extend_from_slice(args);
        argv.push(r.to_str().unwrap());
        let out = odb(&argv, input.as_bytes());
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected(&ids));
        let stderr = String::from_utf8(out.stderr).unwrap();
        for (id, path) in &made {
            let name = format!("{}/{}", &id[..2], &id[2..]);
            assert_eq!(
                stderr.matches(&name).count(),
                1,
                "{args:?}: {path:?} not named exactly once on stderr: {stderr}"
            );
        }
        assert_eq!(
            stderr.lines().count(),
            made.len(),
            "{args:?}: one line per file: {stderr}"
        );
    }
}
