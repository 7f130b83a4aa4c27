//! `gix_ref::file::Store::try_find("b3")` while `git pack-refs --all` moves `refs/heads/b3` from its loose file
//! to `packed-refs`: gix-ref 0.69.1 answers `Ok(None)`, git (and gix-ref itself a moment later) finds the ref.
//!
//! Deterministic, with gix-ref unchanged: `packed-refs` is a FIFO, so `try_find` pauses inside its packed-refs
//! snapshot (`assure_packed_refs_uptodate`: the `stat`, then the read of the file, which blocks until a writer
//! comes). While it waits, this program does what `git pack-refs --all` does (the new `packed-refs`, written to
//! `packed-refs.lock` and renamed over it, then the loose file deleted), and only then writes the previous
//! `packed-refs` into the FIFO: the snapshot `try_find` gets is the file as it was when the lookup began, as a
//! reader whose read finished just before the rename would have it. Then `try_find` reads the loose file: gone.
//! git reads the loose file first and `stat`s `packed-refs` after it, so it cannot miss the ref.
//!
//! Usage: `cargo run` (needs `git` and `mkfifo` on PATH; Unix). Exit 0 when the miss is reproduced, 1 when the
//! ref was found (a patched gix-ref), 2 on a setup failure.
use std::io::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=A", "-c", "user.email=a@example.com", "-c", "gc.auto=0"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn main() {
    let tmp = std::env::temp_dir().join(format!("gix-ref-pack-refs-race-{}", std::process::id()));
    let repo = tmp.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "one"]);
    git(&repo, &["pack-refs", "--all"]); // packed-refs exists, with the default branch
    git(&repo, &["branch", "b3"]); // refs/heads/b3: a loose file
    let want = git(&repo, &["rev-parse", "b3"]);
    let git_dir = repo.join(".git");

    // The packed-refs `git pack-refs --all` writes here (made in a copy, so that this one is untouched).
    let copy = tmp.join("copy");
    assert!(Command::new("cp").arg("-R").arg(&repo).arg(&copy).status().unwrap().success());
    git(&copy, &["pack-refs", "--all"]);
    let new_packed = std::fs::read(copy.join(".git/packed-refs")).unwrap();
    let old_packed = std::fs::read(git_dir.join("packed-refs")).unwrap();
    let lists_b3 = |p: &[u8]| String::from_utf8_lossy(p).contains(" refs/heads/b3\n");
    assert!(lists_b3(&new_packed) && !lists_b3(&old_packed));

    // packed-refs becomes a FIFO (same contents to come), with a second name to open it by once renamed over.
    let packed = git_dir.join("packed-refs");
    std::fs::remove_file(&packed).unwrap();
    assert!(Command::new("mkfifo").arg(&packed).status().unwrap().success());
    let keep = git_dir.join("fifo-keep");
    std::fs::hard_link(&packed, &keep).unwrap();

    let dir = git_dir.clone();
    let lookup = std::thread::spawn(move || {
        let store = gix_ref::file::Store::at(dir, gix_hash::Kind::Sha1);
        let found = store.try_find("b3");
        found.map(|r| r.map(|r| r.target.into_id().to_string()))
    });

    // Blocks until try_find opens packed-refs for its snapshot (it has `stat`ed it before).
    let mut writer = std::fs::OpenOptions::new().write(true).open(&keep).unwrap();
    // git pack-refs --all, in its order: the new packed-refs first, then the loose file deleted. (The pause makes
    // the new file's mtime later than the FIFO's on file systems with coarse timestamps: gix-ref compares mtimes.)
    std::thread::sleep(Duration::from_millis(50));
    let lock = git_dir.join("packed-refs.lock");
    std::fs::write(&lock, &new_packed).unwrap();
    std::fs::rename(&lock, &packed).unwrap();
    std::fs::remove_file(git_dir.join("refs/heads/b3")).unwrap();
    // try_find's snapshot: packed-refs as it was when the lookup began.
    writer.write_all(&old_packed).unwrap();
    drop(writer);

    let got = lookup.join().unwrap();
    let control = git(&repo, &["rev-parse", "--verify", "b3"]);
    let store = gix_ref::file::Store::at(git_dir, gix_hash::Kind::Sha1);
    let after = store.try_find("b3").unwrap().map(|r| r.target.into_id().to_string());
    println!("refs/heads/b3 = {want}, moved from loose to packed-refs during the lookup");
    println!("gix-ref try_find(\"b3\") during the move: {got:?}");
    println!("git rev-parse b3 after the move:        {control}");
    println!("gix-ref try_find(\"b3\") after the move:  {after:?}");
    std::fs::remove_dir_all(&tmp).ok();
    match got {
        Ok(None) => println!("reproduced: a ref that existed throughout was not found"),
        Ok(Some(id)) if id == want => {
            println!("not reproduced: found");
            std::process::exit(1)
        }
        other => {
            println!("unexpected: {other:?}");
            std::process::exit(2)
        }
    }
}
