//! Bad input and broken repositories: invalid and non-UTF-8 lines, an index broken at lookup time, command-line
//! errors, unreadable directories, `--load read`.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// 5: invalid lines

#[test]
fn invalid_lines_are_reported_and_processing_continues() {
    for format in ["sha1", "sha256"] {
        let repo = init_repo(format, false);
        let r = repo.path();
        fast_import_blobs(r, 150, 1, "main");
        let loose = add_loose(r, 1, "x").remove(0);
        let truth = Truth::read(&objects_dir(r), format);
        let hex_len = truth.hex_len;
        let present: Vec<String> = truth.packed.keys().take(8).cloned().collect();
        let other_len = if hex_len == 40 { 64 } else { 40 };
        let absent = absent_ids(1, hex_len, 3).remove(0);
        let invalid = [
            String::new(),
            present[0][..hex_len - 1].to_owned(),
            // One digit too many: missing for a loose object (git reads 41-64 digits as a padded id: `as_git`).
            format!("{loose}1"),
            format!("{}z", &present[0][..hex_len - 1]),
            "-".repeat(hex_len),
            absent_ids(1, other_len, 5).remove(0),
            format!("{} ", present[1]),
            format!(" {}", present[1]),
            "not an id at all".to_owned(),
        ];
        let mut input = Vec::new();
        for (i, bad) in invalid.iter().enumerate() {
            input.push(bad.clone());
            input.push(present[i % present.len()].clone());
        }
        input.push(absent.clone());
        input.push(String::new());
        input.push(loose.clone());
        // A CRLF line ending is not part of the id.
        input.push(format!("{}\r", present[2]));
        let out = batch_check(r, &[], &input);
        check_answers(&input, &out, &truth, Loose::Found);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], " missing", "{format}: an empty line");
        // One digit short of a full id: an abbreviated id, answered with the full one.
        assert!(
            lines[2].starts_with(&format!("{} ", present[0])),
            "{format}: {}",
            lines[2]
        );
        assert_eq!(
            lines[2 * invalid.len()],
            format!("{absent} missing"),
            "{format}"
        );
        assert_eq!(
            lines.last().unwrap().split(' ').count(),
            3,
            "{format}: CRLF"
        );
    }
}

#[test]

fn non_utf8_line_is_missing_and_processing_continues() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    let id = add_loose(r, 1, "x").remove(0);
    let mut input = Vec::new();
    input.extend_from_slice(format!("{id}\n").as_bytes());
    input.extend_from_slice(b"\xff\xfe not utf-8\n");
    input.extend_from_slice(format!("{id}\n").as_bytes());
    let out = odb(
        &[
            OsStr::new("batch-check"),
            OsStr::new(LOCATION),
            r.as_os_str(),
        ],
        &input,
    );
    assert!(
        out.status.success(),
        "batch-check failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = located(&String::from_utf8_lossy(&out.stdout));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "one answer per input line: {text:?}");
    assert_eq!(lines[0], format!("{id} loose"));
    assert!(
        lines[1].ends_with(" missing"),
        "a non-UTF-8 line names no object: {:?}",
        lines[1]
    );
    assert_eq!(lines[2], format!("{id} loose"));
}

// ---------------------------------------------------------------------------------------------------------
// 7: a broken index at lookup time

#[test]
fn broken_index_at_lookup_time_is_warned_about_once_and_its_objects_are_missing_as_git() {
    let repo = fixture("sha1", false);
    let r = repo.path();
    let objects = objects_dir(r);
    let truth = Truth::read(&objects, "sha1");
    let idx = idx_files(&objects);
    let victim = &idx[0];
    let victim_name = victim.file_name().unwrap().to_str().unwrap().to_owned();
    let victim_pack = pack_name(victim);
    let in_victim: HashSet<String> = show_index(victim, "sha1")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    // Listed before the index breaks (git would not list the objects only it holds).
    let input = objects_and_absent(r, 40, 1000, 21);
    let data = std::fs::read(victim).unwrap();
    replace_file(victim, &data[..data.len() / 2]);

    // What git answers with the broken index (it prints an error about the file on stderr, many times).
    let mut text = input.join("\n");
    text.push('\n');
    let git_out = odb_index_testkit::git_cmd(r)
        .args(["cat-file", "--batch-check=%(objectname)"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .and_then(|mut c| {
            let mut si = c.stdin.take().unwrap();
            let t = text.clone();
            let w = std::thread::spawn(move || si.write_all(t.as_bytes()));
            let out = c.wait_with_output();
            w.join().unwrap().unwrap();
            out
        })
        .unwrap();
    let git_missing: HashSet<String> = String::from_utf8(git_out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_suffix(" missing").map(str::to_owned))
        .collect();
    for flags in [&[][..], &["--threads", "4"], &["--buffer"]] {
        let mut args: Vec<&OsStr> = vec![OsStr::new("batch-check"), OsStr::new(LOCATION)];
        args.extend(flags.iter().map(OsStr::new));
        args.push(r.as_os_str());
        let out = odb(&args, text.as_bytes());
        assert!(out.status.success(), "{flags:?}: {}", out.status);
        let stderr = String::from_utf8(out.stderr).unwrap();
        let warnings: Vec<&str> = stderr.lines().collect();
        assert_eq!(warnings.len(), 1, "{flags:?}: one warning: {stderr}");
        assert!(
            warnings[0].starts_with("odb-index: warning: ") && warnings[0].contains(&victim_name),
            "{flags:?}: the warning should name {victim_name}: {stderr}"
        );
        let out = located(&String::from_utf8(out.stdout).unwrap());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), input.len(), "{flags:?}: one line per input");
        let mut missing = HashSet::new();
        for (id, got) in input.iter().zip(&lines) {
            let ctx = format!("{flags:?} {id}: got {got:?}");
            if let Some(places) = truth.packed.get(id).filter(|_| !in_victim.contains(id)) {
                let rest = got.strip_prefix(&format!("{id} ")).expect(&ctx);
                let (pack, off) = rest.split_once(' ').expect(&ctx);
                assert!(
                    places
                        .iter()
                        .any(|(p, o)| p == pack && o.to_string() == off),
                    "{ctx}: git has it at {places:?}"
                );
                assert_ne!(pack, victim_pack, "{ctx}");
            } else if truth.loose.contains(id) {
                assert_eq!(*got, format!("{id} loose"), "{ctx}");
            } else {
                // In the broken pack only, or absent everywhere: missing, as git says.
                assert_eq!(*got, format!("{id} missing"), "{ctx}");
                missing.insert(id.clone());
            }
        }
        assert!(
            missing == git_missing,
            "{flags:?}: git says missing for other objects"
        );
    }
    assert!(
        input.iter().any(|id| in_victim.contains(id)
            && !truth.loose.contains(id)
            && truth.packed[id].len() == 1),
        "the input should reach objects only in the broken pack"
    );
}

// ---------------------------------------------------------------------------------------------------------
// 8: command-line errors

#[test]
fn command_line_errors_exit_2_with_one_message() {
    let repo = init_repo("sha1", false);
    let r = repo.path().to_str().unwrap().to_owned();
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join("hello.txt"), "hi\n").unwrap();
    std::fs::create_dir(plain.path().join("src")).unwrap();
    let plain = plain.path().to_str().unwrap().to_owned();
    let nowhere = format!("{r}/does/not/exist");

    // Errors about the path: exactly one line.
    for args in [
        vec!["batch-check", nowhere.as_str()],
        vec!["batch-check", plain.as_str()],
        vec!["verify", nowhere.as_str()],
        vec!["verify", plain.as_str()],
    ] {
        let out = odb(&args, b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: stderr {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout must be empty");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr:?}");
        assert!(stderr.starts_with("odb-index: "), "{args:?}: {stderr:?}");
        assert!(stderr.ends_with('\n'), "{args:?}: {stderr:?}");
    }
    // Usage errors: exactly one line, the message and a pointer to --help (not the whole usage text).
    for args in [
        vec!["batch-check", "--bogus", r.as_str()],
        vec!["verify", "--buffer", r.as_str()],
        vec!["batch-check"],
        vec!["verify"],
        vec!["frobnicate", r.as_str()],
        vec!["frobnicate"],
        vec![],
        vec!["--bogus"],
        vec!["-x"],
        vec!["batch-check", "--threads", "0", r.as_str()],
        vec!["batch-check", "--threads", "many", r.as_str()],
        vec!["batch-check", "--threads"],
        vec!["batch-check", "--events-after", "-1", r.as_str()],
        vec!["batch-check", "--events-after", "soon", r.as_str()],
        vec!["batch-check", "--events-after"],
        vec!["batch-check", "--loose", "sometimes", r.as_str()],
        vec!["batch-check", "--loose"],
        vec!["batch-check", "--load", "sometimes", r.as_str()],
        vec!["verify", "--load", "mapped", r.as_str()],
        vec!["batch-check", "--load"],
        vec!["batch-check", r.as_str(), r.as_str()],
        vec!["batch-check", "--buffer=yes", r.as_str()],
        vec!["verify", "--threads", "2", r.as_str()],
    ] {
        let out = odb(&args, b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: stderr {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: stdout must be empty");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr:?}");
        assert!(
            stderr.starts_with("odb-index: ") && stderr.ends_with("(try `odb-index --help`)\n"),
            "{args:?}: {stderr:?}"
        );
    }
    // Bad formats: git's message and exit status (compared with git's in `as_git`).
    for format in ["%(bogus)", "%(objectname"] {
        let out = odb(
            &["batch-check", &format!("--batch-check={format}"), &r],
            b"",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128), "{format}: stderr {stderr}");
        assert!(
            stderr.starts_with("fatal: bad cat-file format: "),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // --help still prints the whole usage, on stdout.
    let out = odb(&["--help"], b"");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--load mmap|read"));
}

/// A read error on standard input is reported as such (not as "writing output"), in one line, exit 2.
#[test]
fn stdin_read_errors_are_named_as_such() {
    let repo = init_repo("sha1", false);
    // A directory as standard input: every read fails with EISDIR.
    let dir = std::fs::File::open(repo.path()).unwrap();
    for threads in ["1", "3"] {
        let out = Command::new(BIN)
            .args(["batch-check", "--threads", threads])
            .arg(repo.path())
            .stdin(Stdio::from(dir.try_clone().unwrap()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
        assert!(
            stderr.starts_with("odb-index: reading standard input: "),
            "{stderr:?}"
        );
        assert!(!stderr.contains("writing output"), "{stderr:?}");
    }
}

/// An unreadable pack directory (a symbolic-link loop, which root cannot read either): batch-check warns on
/// stderr naming it, answers the loose objects, and (like git, which warns and answers from the rest) says
/// "missing" for an absent id, since the command opens the store with `IncompleteMode::Miss`; verify reports
/// the directory and exits 1.
#[cfg(unix)]
#[test]
fn unreadable_pack_directory_is_a_warning_and_misses_are_missing_as_git() {
    let repo = init_repo("sha1", true);
    let loose = add_loose(repo.path(), 3, "u");
    let pack_dir = std::fs::canonicalize(objects_dir(repo.path()))
        .unwrap()
        .join("pack");
    let _ = std::fs::remove_dir_all(&pack_dir);
    std::os::unix::fs::symlink(&pack_dir, &pack_dir).unwrap();
    let absent = absent_ids(1, 40, 7).remove(0);
    let mut input = loose.join("\n");
    input.push('\n');
    input.push_str(&absent);
    input.push('\n');
    let out = odb(
        &[OsStr::new("batch-check"), repo.path().as_os_str()],
        input.as_bytes(),
    );
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("odb-index: warning: ") && stderr.contains(pack_dir.to_str().unwrap()),
        "{stderr:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    for (line, id) in lines.iter().zip(&loose) {
        assert!(line.starts_with(&format!("{id} blob ")), "{stdout}");
    }
    assert_eq!(lines[3], format!("{absent} missing"), "{stdout}");
    let out = odb(&[OsStr::new("verify"), repo.path().as_os_str()], b"");
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!("error {}: ", pack_dir.display())),
        "{stdout}"
    );
}

/// `--load read` answers exactly like the default (mapped) mode, for batch-check and verify.
#[test]
fn load_read_answers_like_mmap() {
    let repo = fixture("sha1", true);
    let input = mixed_input(repo.path(), 40);
    let mapped = batch_check(repo.path(), &[], &input);
    assert_eq!(
        batch_check(repo.path(), &["--load", "read"], &input),
        mapped
    );
    assert_eq!(
        batch_check(repo.path(), &["--load", "mmap"], &input),
        mapped
    );
    let (code, files, _) = verify(repo.path());
    let out = odb(
        &[
            OsStr::new("verify"),
            OsStr::new("--load"),
            OsStr::new("read"),
            repo.path().as_os_str(),
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(code));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).lines().count(),
        files.len()
    );
}
