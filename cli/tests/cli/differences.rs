//! Where the command once differed from git (issue 31), each checked against git itself: a pack name with a
//! newline in `%(objectpack)`, `--threads` without `--buffer` answering an interactive client, options that
//! contradict each other, what `--help` says is resolved, and `--batch-command`'s commands.

use std::ffi::OsStr;
use std::process::Command;

use odb_index_testkit::{
    absent_ids, all_objects, fast_import_blobs, git, git_cmd, init_repo, objects_dir, pack_files,
};

use super::as_git::git_run;
use super::{BIN, Session, add_loose, odb};

/// A pack file name with everything git quotes in a path: a newline, a tab, `"`, `\` and a non-ASCII letter.
const ODD: &str = "\nsplit \"q\"\\b\t\u{e9}";

/// What git prints for a path named `name` (`git ls-files`, `core.quotePath` on, as by default).
fn quoted_by_git(name: &str) -> String {
    let repo = init_repo("sha1", false);
    std::fs::write(repo.path().join(name), "").unwrap();
    git(repo.path(), &["add", "--", name]);
    let listed = git(repo.path(), &["ls-files"]);
    listed.strip_suffix('\n').expect("one line").to_owned()
}

/// `odb-index --help`, its runs of white space (line breaks included) made one space.
fn help() -> String {
    let out = odb(&["--help"], b"");
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    help.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// (a) `%(objectpack)` names the pack as git names a path: a pack renamed to hold a newline, which git still
/// reads, is one quoted field on its object's line, not two lines.
#[test]
fn pack_names_are_quoted_as_git_quotes_paths() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 30, 31, "main");
    let packs = pack_files(&objects_dir(r), "pack");
    assert_eq!(packs.len(), 1, "fast-import writes one pack");
    let stem = packs[0].file_stem().unwrap().to_str().unwrap().to_owned();
    let pack_dir = packs[0].parent().unwrap();
    for e in std::fs::read_dir(pack_dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if let Some(ext) = name.strip_prefix(&format!("{stem}.")) {
            let to = pack_dir.join(format!("{stem}{ODD}.{ext}"));
            std::fs::rename(pack_dir.join(&name), to).unwrap();
        }
    }
    let ids = all_objects(r);
    // 30 blobs, their 30 directories, the root tree and the commit.
    assert_eq!(ids.len(), 62, "git lists the renamed pack's objects");
    let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
    // git reads the pack under its new name: nothing is missing.
    let (git_out, _, _) = git_run(r, &["--batch-check"], input.as_bytes());
    assert!(!String::from_utf8_lossy(&git_out).contains("missing"));

    let want: String = ids
        .iter()
        .map(|id| format!("{id} {}\n", quoted_by_git(&format!("{stem}{ODD}.pack"))))
        .collect();
    assert!(
        want.contains(r#"\n"#) && want.contains(r#"\303\251"#),
        "git quotes the name: {want}"
    );
    for flags in [&[][..], &["--threads", "3"], &["--buffer"]] {
        let mut args = vec![
            OsStr::new("batch-check"),
            OsStr::new("--batch-check=%(objectname) %(objectpack)"),
        ];
        args.extend(flags.iter().map(OsStr::new));
        args.push(r.as_os_str());
        let out = odb(&args, input.as_bytes());
        assert!(
            out.status.success(),
            "{flags:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "{flags:?}");
    }
    let all = odb(
        &[
            OsStr::new("batch-check"),
            OsStr::new("--batch-check=%(objectname) %(objectpack)"),
            OsStr::new("--batch-all-objects"),
            r.as_os_str(),
        ],
        b"",
    );
    let mut sorted: Vec<&str> = want.lines().collect();
    sorted.sort_unstable();
    assert_eq!(
        String::from_utf8(all.stdout).unwrap(),
        sorted.join("\n") + "\n"
    );
}

/// (b) Without `--buffer`, `--threads` answers an interactive client as git does: each answer arrives before the
/// client writes the next name (`Session::ask` fails after a generous timeout instead of hanging).
#[test]
fn threads_without_buffer_answer_each_line_before_the_next_is_written_as_git() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 50, 32, "main");
    add_loose(r, 3, "interactive");
    let mut names = all_objects(r);
    names.truncate(20);
    names.extend(absent_ids(3, 40, 33));
    names.push(names[0][..8].to_owned());
    let mut git = Session::spawn({
        let mut c = git_cmd(r);
        c.args(["cat-file", "--batch-check"]);
        c
    });
    for threads in ["2", "4"] {
        let mut ours = Session::spawn({
            let mut c = Command::new(BIN);
            c.args(["batch-check", "--batch-check", "--threads", threads])
                .arg(r);
            c
        });
        for name in &names {
            assert_eq!(ours.ask(name), git.ask(name), "--threads {threads}: {name}");
        }
        ours.finish();
    }
    git.finish();
}

/// (c) Options that contradict each other are refused, in one line naming both (exit 2); a second batch option
/// is refused with git's message, as git refuses it.
#[test]
fn contradicting_options_are_refused() {
    let repo = init_repo("sha1", false);
    let r = repo.path().to_str().unwrap();
    for (args, both) in [
        (
            &["--no-events", "--events-after", "5"][..],
            ("--no-events", "--events-after"),
        ),
        (
            &["--events-after", "0", "--no-events"],
            ("--no-events", "--events-after"),
        ),
        (
            &["--threads", "2", "--batch-all-objects"],
            ("--threads", "--batch-all-objects"),
        ),
        (
            &["--batch-command", "--threads", "2"],
            ("--threads", "--batch-command"),
        ),
    ] {
        let mut argv = vec!["batch-check"];
        argv.extend_from_slice(args);
        argv.push(r);
        let out = odb(&argv, b"");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "odb-index: options '{}' and '{}' cannot be used together (try `odb-index --help`)\n",
                both.0, both.1
            ),
            "{args:?}"
        );
    }
    for args in [
        &["--batch", "--batch-check"][..],
        &["--batch-check=%(objectname)", "--batch-check"],
        &["--batch-command", "--batch"],
    ] {
        let (_, git_err, git_code) = git_run(repo.path(), args, b"");
        assert_eq!(git_code, Some(129), "{args:?}: git refuses it: {git_err}");
        let git_says = git_err
            .lines()
            .next()
            .unwrap()
            .strip_prefix("error: ")
            .unwrap();
        let mut argv = vec!["batch-check"];
        argv.extend_from_slice(args);
        argv.push(r);
        let out = odb(&argv, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("odb-index: {git_says} (try `odb-index --help`)\n"),
            "{args:?}"
        );
    }
    // One of each, and the same option twice where git takes the last, are fine.
    let out = odb(
        &[
            "batch-check",
            "--events-after",
            "5",
            "--events-after",
            "0",
            "--threads",
            "2",
            r,
        ],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// (d) What `--help` says is and is not resolved, checked against git: replace refs are honoured (their
/// answers are compared with git's in `as_git::replace_refs_are_honoured_as_git`); HEAD, ref names and
/// `rev:path` answer as git's (the full comparison is `names::names_answer_as_git`); the forms not resolved are
/// an error naming the form, not a wrong answer.
#[test]
fn help_says_what_is_resolved_and_it_is_so() {
    let help = help();
    assert!(
        help.contains("Replace refs (refs/replace/) are honoured as git honours them"),
        "{help}"
    );
    assert!(
        help.contains("HEAD, ref names and rev:path are resolved as git resolves them"),
        "{help}"
    );
    assert!(!help.contains("replace refs are not"), "{help}");

    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 3, 34, "main");
    let input = b"HEAD\nmain\nmain:f0/0\n";
    let (git_out, _, _) = git_run(r, &["--batch-check"], input);
    assert!(
        !String::from_utf8_lossy(&git_out).contains("missing"),
        "git resolves them"
    );
    let out = odb(&[OsStr::new("batch-check"), r.as_os_str()], input);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(git_out).unwrap()
    );
    let out = odb(&[OsStr::new("batch-check"), r.as_os_str()], b"HEAD@{1}\n");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("HEAD@{1} error ") && text.contains("reflog"),
        "{text}"
    );
}

/// (e) `--batch-command` knows git's three commands, as `--help` says; any other is git's fatal error, word for
/// word (the full comparison is `as_git::batch_command_as_git`).
#[test]
fn batch_command_knows_gits_commands_and_refuses_others_as_git() {
    let help = help();
    assert!(
        help.contains("--batch-command reads git's three commands, one a line: `info <name>`, `contents <name>` and `flush` (only under --buffer); anything else is git's `fatal: unknown command: '<line>'` (exit 128)"),
        "{help}"
    );
    let repo = init_repo("sha1", false);
    let r = repo.path();
    for line in ["bogus x", "rev-parse HEAD", "INFO x"] {
        let input = format!("{line}\n");
        let (_, git_err, git_code) = git_run(r, &["--batch-command"], input.as_bytes());
        assert_eq!(
            (git_code, git_err.as_str()),
            (
                Some(128),
                format!("fatal: unknown command: '{line}'\n").as_str()
            )
        );
        let out = odb(
            &[
                OsStr::new("batch-check"),
                OsStr::new("--batch-command"),
                r.as_os_str(),
            ],
            input.as_bytes(),
        );
        assert_eq!(out.status.code(), Some(128));
        assert_eq!(String::from_utf8_lossy(&out.stderr), git_err);
    }
}
