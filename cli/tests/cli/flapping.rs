//! Issue 38, item 5: a pack renamed away and back (a flapping file). git keeps a pack it has opened
//! (`reprepare_packed_git` never prunes its list; the opened pack stays readable through its descriptor), so a
//! long-running `git cat-file --batch-check` answers its objects while it is away, after a miss made it list
//! the pack directory again. The command, asked the same lines one at a time, answers as git does.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use odb_index_testkit::{absent_ids, fast_import_blobs, git_cmd, idx_files, init_repo, show_index};

/// A batch process asked one line at a time.
struct Batch {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Batch {
    fn new(mut c: Command) -> Batch {
        let mut child = c
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Batch {
            child,
            stdin,
            stdout,
        }
    }

    /// The answer to `id`.
    fn ask(&mut self, id: &str) -> String {
        writeln!(self.stdin, "{id}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line
    }
}

impl Drop for Batch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Rename the `.idx` and `.pack` of the pack whose index is `idx` from `<name><from>` to `<name><to>`.
fn rename(idx: &Path, from: &str, to: &str) {
    for ext in ["idx", "pack"] {
        std::fs::rename(
            idx.with_extension(format!("{ext}{from}")),
            idx.with_extension(format!("{ext}{to}")),
        )
        .unwrap();
    }
}

/// git and the command each ask an object of a pack (which opens it), then, with the pack renamed away, an id no
/// pack has (a miss, which lists the pack directory again), then the object again: git answers it; the command
/// answered `missing`. Put back, both answer it.
#[test]
fn a_pack_renamed_away_after_it_was_read_is_still_read_as_git_reads_it() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 10, 1, "a");
    let idx = idx_files(&r.join("objects"))[0].clone();
    fast_import_blobs(r, 10, 2, "b");
    let x = show_index(&idx, "sha1")[0].0.clone();
    let y = show_index(&idx, "sha1")[1].0.clone();
    let absent = absent_ids(1, 40, 7).remove(0);
    let (mut git, mut odb) = both_batches(r);
    let first = git.ask(&x);
    assert!(
        first.starts_with(&x) && !first.contains("missing"),
        "{first}"
    );
    assert_eq!(odb.ask(&x), first);
    rename(&idx, "", "away");
    for id in [&absent, &x, &y] {
        let want = git.ask(id);
        assert_eq!(odb.ask(id), want, "{id}, the pack away");
    }
    rename(&idx, "away", "");
    for id in [&absent, &x, &y] {
        let want = git.ask(id);
        assert_eq!(odb.ask(id), want, "{id}, the pack back");
    }
}

/// The pack renamed away while the pack directory keeps changing (a file written into it before each miss, so
/// that each miss lists it again): after more than 8 listings in a row without the pack, the command let it go
/// and answered `missing` for its objects, while git answers from the pack it opened (it never prunes its list).
/// A flapping pack is missed by several listings in a row whenever lookups outpace its renames; the command now
/// keeps it as long as git would over any such run (up to `MAX_KEPT_LISTINGS`, 64).
#[test]
fn a_pack_away_for_many_listings_is_still_read_as_git_reads_it() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 10, 1, "a");
    let idx = idx_files(&r.join("objects"))[0].clone();
    fast_import_blobs(r, 10, 2, "b");
    let x = show_index(&idx, "sha1")[0].0.clone();
    let absent = absent_ids(20, 40, 9);
    let (mut git, mut odb) = both_batches(r);
    let first = git.ask(&x);
    assert!(!first.contains("missing"), "{first}");
    assert_eq!(odb.ask(&x), first);
    rename(&idx, "", "away");
    for (i, id) in absent.iter().enumerate() {
        std::fs::write(idx.with_file_name(format!("changed-{i}")), b"").unwrap();
        let want = git.ask(id);
        assert_eq!(odb.ask(id), want, "{id}, miss {i} with the pack away");
    }
    let want = git.ask(&x);
    assert!(!want.contains("missing"), "{want}");
    assert_eq!(odb.ask(&x), want, "{x}, after 20 listings without its pack");
}

/// Issue 47, 7 under `--threads 2`: a pack one worker has read stays readable to the other after it is renamed
/// away, as the one git process reads it. A line alone goes to the first worker (its `.pack` opened); then two
/// lines written at once make a batch of two, one per worker, and the second worker has never read the pack.
/// Before: each worker opened the `.pack` itself, so the second found it away and answered `missing`.
#[test]
fn under_threads_a_pack_one_worker_read_is_read_by_the_others_as_git_reads_it() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 10, 1, "a");
    let idx = idx_files(&r.join("objects"))[0].clone();
    fast_import_blobs(r, 10, 2, "b");
    let ids: Vec<String> = show_index(&idx, "sha1")
        .into_iter()
        .map(|(h, _)| h)
        .collect();
    let (mut git, _) = both_batches(r);
    let mut odb = Command::new(super::BIN);
    odb.args(["batch-check", "--threads", "2"]).arg(r);
    let mut odb = Batch::new(odb);
    let first = git.ask(&ids[0]);
    assert!(!first.contains("missing"), "{first}");
    assert_eq!(odb.ask(&ids[0]), first);
    rename(&idx, "", "away");
    for pair in ids[1..].chunks(2) {
        let want: Vec<String> = pair.iter().map(|id| git.ask(id)).collect();
        assert!(want.iter().all(|w| !w.contains("missing")), "{want:?}");
        let input: String = pair.iter().map(|id| format!("{id}\n")).collect();
        odb.stdin.write_all(input.as_bytes()).unwrap();
        odb.stdin.flush().unwrap();
        let got: Vec<String> = pair
            .iter()
            .map(|_| {
                let mut line = String::new();
                odb.stdout.read_line(&mut line).unwrap();
                line
            })
            .collect();
        assert_eq!(got, want, "{pair:?}, the pack away, one line per worker");
    }
    rename(&idx, "away", "");
}

/// `git cat-file --batch-check` and the command's `batch-check` on `r`, each a running process answering line by
/// line.
fn both_batches(r: &Path) -> (Batch, Batch) {
    let mut git = git_cmd(r);
    git.args(["cat-file", "--batch-check"]);
    let mut odb = Command::new(super::BIN);
    odb.arg("batch-check").arg(r);
    (Batch::new(git), Batch::new(odb))
}
