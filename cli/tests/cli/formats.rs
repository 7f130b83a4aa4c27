//! Issue 38, items 6b, 6c, 8 and 9: files git reads in its own way (a loose header over 32 bytes, a
//! multi-pack-index whose `LOFF` chunk was emptied, an `.idx` that names one id twice, a multi-pack-index
//! truncated in place), each compared with `git cat-file` itself (stdout and exit status).

use std::path::Path;

use odb_index_testkit::{all_objects, fast_import_blobs, git_stdin, init_repo};

use super::as_git::git_run;
use super::odb;

/// `odb-index batch-check <args> <repo>` on `input`: (stdout, stderr, exit status).
fn odb_run(repo: &Path, args: &[&str], input: &[u8]) -> (Vec<u8>, String, Option<i32>) {
    let mut all: Vec<&std::ffi::OsStr> = vec!["batch-check".as_ref()];
    all.extend(args.iter().map(std::ffi::OsStr::new));
    all.push(repo.as_os_str());
    let out = odb(&all, input);
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

/// The same stdout and exit status as `git cat-file <args>` (stderr differs: git's `error:` lines are the
/// command's warnings); returns the command's stderr.
fn same_answers(repo: &Path, args: &[&str], input: &[u8]) -> String {
    let (git_out, git_err, git_code) = git_run(repo, args, input);
    let (out, err, code) = odb_run(repo, args, input);
    assert_eq!(
        (String::from_utf8_lossy(&out), code),
        (String::from_utf8_lossy(&git_out), git_code),
        "odb-index batch-check {args:?} differs from git cat-file (left: odb-index); git said {git_err:?}, \
         odb-index {err:?}"
    );
    err
}

/// git's t1006 ("cat-file error on bogus full OID"): a loose object whose header (`<type> <size>\0`) is over
/// git's `MAX_HEADER_LEN`, 32 bytes, is not read (git: `error: header for <id> too long, exceeds 32 bytes`)
/// and answers `missing`, exit 0, in every mode; the command said `fatal: invalid object type`, exit 128. A
/// header of exactly 32 bytes is read, and its unknown type is fatal for both.
#[test]
fn a_loose_header_over_32_bytes_is_missing_as_git_t1006() {
    let repo = init_repo("sha1", false);
    let r = repo.path();
    fast_import_blobs(r, 3, 38, "main");
    let good = all_objects(r);
    let literally = |kind: &str, data: &[u8]| {
        git_stdin(
            r,
            &["hash-object", "--literally", "-t", kind, "-w", "--stdin"],
            data,
        )
        .trim()
        .to_owned()
    };
    // t1006's bogus long type: "abcdefghijklmnopqrstuvwxyz1234679 5\0" is 36 bytes.
    let long = literally("abcdefghijklmnopqrstuvwxyz1234679", b"bogus");
    // "abcdefghijklmnopqrstuvwxyz123 1\0": 32 bytes, the longest header git reads.
    let fits = literally("abcdefghijklmnopqrstuvwxyz123", b"x");
    let input = format!("{}\n{long}\n{}\n", good[0], good[1]);
    for args in [
        &["--batch-check"][..],
        &["--batch"],
        &["--batch-check", "--buffer"],
        &["--batch-check=%(objectname) %(objecttype)"],
    ] {
        let err = same_answers(r, args, input.as_bytes());
        assert!(err.contains("header too long, exceeds 32 bytes"), "{err}");
    }
    let input = format!("{}\n{fits}\n", good[0]);
    let (out, err, code) = odb_run(r, &["--batch-check"], input.as_bytes());
    assert_eq!(
        (code, err.as_str()),
        (Some(128), "fatal: invalid object type\n")
    );
    assert_eq!(out, git_run(r, &["--batch-check"], input.as_bytes()).0);
}

/// git's t5319.94 (`odb_index_testkit::t5319_cleared_large_offsets`: a multi-pack-index whose `LOFF` chunk is
/// emptied, over an `.idx` whose entry for that object is past its pack's end): git answers the objects before
/// it, then dies at it, `fatal: multi-pack-index large offset out of bounds`, exit 128, whatever the format
/// (`%(objectname)` alone too, except under `--batch-all-objects`, where git looks nothing up), sorted or
/// `--unordered`, asked for or listed. The command printed `<id> error <the multi-pack-index>: ...` and went on,
/// exit 0.
#[test]
fn an_emptied_large_offset_chunk_is_fatal_at_its_object_as_git_t5319_94() {
    let (repo, bad) = odb_index_testkit::t5319_cleared_large_offsets();
    let r = repo.path();
    let ids = all_objects(r);
    let at = ids.iter().position(|i| *i == bad).unwrap();
    assert!(at > 0 && at + 1 < ids.len());
    let asked = format!(
        "{}
{bad}
{}
",
        ids[at - 1],
        ids[at + 1]
    );
    for format in [
        "--batch-check",
        "--batch",
        "--batch-check=%(objectsize)",
        "--batch-check=%(objecttype)",
        "--batch-check=%(objectname)",
        "--batch-check=%(objectsize:disk)",
    ] {
        let mut runs = vec![
            (vec![format], asked.as_str()),
            (vec![format, "--buffer"], asked.as_str()),
        ];
        let disk = format.ends_with("%(objectsize:disk)");
        if format != "--batch-check=%(objectname)" && !disk {
            runs.push((vec![format, "--batch-all-objects"], ""));
        }
        if format != "--batch-check=%(objectname)" {
            // `--unordered` (and `%(objectsize:disk)` of the listed objects): git walks the pack in the order
            // of its `.rev` (written before the `.idx` was corrupted, so git finds no object at some offsets
            // and answers `missing` there) and dies at the object's `.idx` entry ("offset beyond end of
            // packfile"); the command follows the `.idx`'s offsets, where the object comes last. Both die,
            // having answered the others they reached first.
            let mut listed = vec![(vec![format, "--batch-all-objects", "--unordered"], !disk)];
            if disk {
                listed.push((vec![format, "--batch-all-objects"], false));
            }
            for (args, same_lines) in listed {
                let (git_out, _, git_code) = git_run(r, &args, b"");
                let (out, err, code) = odb_run(r, &args, b"");
                assert_eq!((code, git_code), (Some(128), Some(128)), "{args:?}");
                assert!(
                    err.contains("\nfatal: ") || err.starts_with("fatal: "),
                    "{err}"
                );
                let (git_out, out) = (
                    String::from_utf8(git_out).unwrap(),
                    String::from_utf8(out).unwrap(),
                );
                assert!(!out.contains(&bad), "{out}");
                let ours: std::collections::HashSet<&str> = out.lines().collect();
                if same_lines {
                    assert!(git_out.lines().all(|l| ours.contains(l)), "{args:?}: {out}");
                }
            }
        }
        for (args, input) in runs {
            let err = same_answers(r, &args, input.as_bytes());
            assert!(
                err.ends_with("fatal: multi-pack-index large offset out of bounds\n"),
                "{args:?}: {err}"
            );
        }
    }
    // Listed, not looked up: all 63, exit 0.
    let err = same_answers(
        r,
        &["--batch-all-objects", "--batch-check=%(objectname)"],
        b"",
    );
    assert_eq!(err, "");
}

/// The object count of the multi-pack-index `bytes` (the last fanout entry) and its number of packs.
fn midx_counts(bytes: &[u8]) -> (u32, u32) {
    let chunks = usize::from(bytes[6]);
    let oidf = (0..chunks)
        .map(|r| 12 + 12 * r)
        .find(|&at| &bytes[at..at + 4] == b"OIDF")
        .expect("an OIDF chunk");
    let start = u64::from_be_bytes(bytes[oidf + 4..oidf + 12].try_into().unwrap()) as usize;
    let be32 = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be32(start + 1020), be32(8))
}

/// An incremental chain of `layers` layers of one pack each, written by git, then given each a `BTMP` chunk as
/// git 2.50's `git multi-pack-index write --incremental --bitmap` writes it (git 2.47, here, refuses
/// `--bitmap` with `--incremental`, and git 2.48+ reads such chains): the layer's pack has the bits of all its
/// objects, numbered after the objects of the layers below (`midx_pack_order`: `i + num_objects_in_base`), or
/// from 0 if `cumulative` is false. Each layer is resealed and renamed after its new checksum, the chain file
/// rewritten. Returns the repository.
fn chain_with_bitmapped_packs(layers: u64, cumulative: bool) -> tempfile::TempDir {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    for l in 0..layers {
        fast_import_blobs(r, 10 + l as usize, 380 + l, &format!("l{l}"));
        odb_index_testkit::git(r, &["multi-pack-index", "write", "--incremental"]);
    }
    let dir = odb_index_testkit::objects_dir(r).join("pack/multi-pack-index.d");
    let chain = dir.join("multi-pack-index-chain");
    let mut base = 0u32;
    let mut names = String::new();
    for sum in std::fs::read_to_string(&chain).unwrap().lines() {
        let path = dir.join(format!("multi-pack-index-{sum}.midx"));
        let bytes = std::fs::read(&path).unwrap();
        let (count, packs) = midx_counts(&bytes);
        assert_eq!(packs, 1);
        let pos = if cumulative { base } else { 0 };
        let btmp = [pos.to_be_bytes(), count.to_be_bytes()].concat();
        let mut bytes = odb_index_testkit::add_chunk(&bytes, b"BTMP", &btmp);
        let n = bytes.len() - 20;
        let new = odb_index::HashKind::Sha1.digest(&bytes[..n]);
        bytes[n..].copy_from_slice(new.as_bytes());
        std::fs::remove_file(&path).unwrap();
        std::fs::write(dir.join(format!("multi-pack-index-{new}.midx")), &bytes).unwrap();
        names.push_str(&format!("{new}\n"));
        base += count;
    }
    std::fs::remove_file(&chain).unwrap();
    std::fs::write(&chain, names).unwrap();
    repo
}

/// git's t5334/t5335 (incremental chains with bitmaps): the `BTMP` positions of a layer count the objects of
/// the layers below. `verify` refused every layer above the first ("BTMP: pack 0's bits 10..10+11 go past the
/// object count 11") and exited 1, where `git multi-pack-index verify` exits 0; lookups answered from the
/// packs' own indices, warning that the layer was corrupt. Now every layer is ok, answers are git's without a
/// warning; a layer whose positions do not follow the layers below is still reported.
#[test]
fn an_incremental_chain_with_bitmapped_packs_verifies_as_git_t5334() {
    let repo = chain_with_bitmapped_packs(3, true);
    let r = repo.path();
    assert!(
        odb_index_testkit::try_git(r, &["multi-pack-index", "verify"], b"").is_ok(),
        "git's verify"
    );
    let (code, files, err) = super::verify(r);
    let layers: Vec<_> = files.iter().filter(|(n, _)| n.ends_with(".midx")).collect();
    assert_eq!(layers.len(), 3, "{files:?}");
    assert_eq!((code, err.as_str()), (0, ""), "{files:?}");
    let input = all_objects(r).join("\n") + "\n";
    for args in [&["--batch-check"][..], &["--batch-check", "--buffer"]] {
        let err = same_answers(r, args, input.as_bytes());
        assert_eq!(err, "", "{args:?}");
    }

    // Positions from 0 in every layer: the base layer is right, the others are not where git puts them.
    let repo = chain_with_bitmapped_packs(3, false);
    let (code, files, _) = super::verify(repo.path());
    assert_eq!(code, 1, "{files:?}");
    let bad: Vec<&String> = files.values().filter_map(|v| v.as_ref().err()).collect();
    assert_eq!(bad.len(), 2, "{files:?}");
    assert!(
        bad.iter()
            .all(|e| e.contains("lie outside the layer's bits")),
        "{bad:?}"
    );
}

/// A `.idx` that names one id twice, its checksum valid (the id of entry k copied over entry k + 1's, or k + 1's
/// over k's, each k of a 29-object pack): git's binary search (`bsearch_pack`) picks one of the two entries and
/// prints the object at its offset, another object's contents for some of them. The command reads the entry
/// whose contents hash to the id: the repeated id answers its own object (as git answers it with the good
/// file), the id no longer listed is `missing` (as git), in `--batch` and `--batch-check`; git differs from that
/// only on the repeated id's line (asserted to happen at least once). Fails with the adapter's check removed
/// (`Objects::entry_of_id`: at k 5 under `--batch`, another object's answer).
#[test]
fn an_idx_naming_one_id_twice_answers_with_the_object_itself() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 29, 3808, "main");
    let idx = odb_index_testkit::idx_files(&odb_index_testkit::objects_dir(r)).remove(0);
    let good = std::fs::read(&idx).unwrap();
    let n = u32::from_be_bytes(good[8 + 1020..8 + 1024].try_into().unwrap()) as usize;
    let hex = |b: &[u8]| b.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let modes = [&["--batch"][..], &["--batch-check"]];
    let mut git_wrong = 0;
    for k in 0..n - 1 {
        let at = 8 + 1024 + 20 * k;
        let (x, y) = (hex(&good[at..at + 20]), hex(&good[at + 20..at + 40]));
        let write = |v: &[u8]| {
            std::fs::remove_file(&idx).unwrap();
            std::fs::write(&idx, v).unwrap();
        };
        write(&good);
        // With the good file: each id's answer, in each mode.
        let truth: Vec<(Vec<u8>, Vec<u8>)> = modes
            .iter()
            .map(|args| {
                let one = |id: &str| git_run(r, args, format!("{id}\n").as_bytes()).0;
                (one(&x), one(&y))
            })
            .collect();
        for (from, to) in [(at, at + 20), (at + 20, at)] {
            let mut v = good.clone();
            v.copy_within(from..from + 20, to);
            let l = v.len() - 20;
            let sum = odb_index::HashKind::Sha1.digest(&v[..l]);
            v[l..].copy_from_slice(sum.as_bytes());
            write(&v);
            let input = format!("{x}\n{y}\n");
            for (args, (tx, ty)) in modes.iter().zip(&truth) {
                let want: Vec<u8> = if from == at {
                    [tx.as_slice(), format!("{y} missing\n").as_bytes()].concat()
                } else {
                    [format!("{x} missing\n").as_bytes(), ty.as_slice()].concat()
                };
                let (out, err, code) = odb_run(r, args, input.as_bytes());
                assert_eq!(
                    (String::from_utf8_lossy(&out), code),
                    (String::from_utf8_lossy(&want), Some(0)),
                    "k {k} {args:?}: {err}"
                );
                assert!(out == want, "k {k} {args:?}: bytes");
                let (gits, _, _) = git_run(r, args, input.as_bytes());
                if gits != want {
                    git_wrong += 1;
                }
            }
        }
    }
    write_back(&idx, &good);
    assert!(
        git_wrong > 0,
        "git read another object's entry in none of the cases"
    );
}

fn write_back(path: &Path, bytes: &[u8]) {
    std::fs::remove_file(path).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Issue 38 item 9: a multi-pack-index truncated in place (same inode: `: > multi-pack-index`, `truncate -s`)
/// while a `batch-check` process has it open. The process's next lookup read its mapping past the file's new
/// end and died of SIGBUS; now it answers every object as git does, exit 0, for each of six truncations (0
/// bytes, the header only, inside the chunk table, inside OIDL, inside OOFF, the last byte), and `verify`
/// afterwards reports the file without crashing.
#[test]
fn a_multi_pack_index_truncated_in_place_under_a_running_batch_is_never_a_crash() {
    use std::io::{BufRead as _, BufReader, Write as _};
    let repo = init_repo("sha1", true);
    let r = repo.path();
    for l in 0..3u64 {
        fast_import_blobs(r, 40, 90 + l, &format!("t{l}"));
    }
    odb_index_testkit::git(r, &["multi-pack-index", "write"]);
    let midx = odb_index_testkit::objects_dir(r).join("pack/multi-pack-index");
    let good = std::fs::read(&midx).unwrap();
    let row = |id: &[u8; 4]| {
        (0..usize::from(good[6]))
            .map(|i| 12 + 12 * i)
            .find(|&at| &good[at..at + 4] == id)
            .map(|at| u64::from_be_bytes(good[at + 4..at + 12].try_into().unwrap()) as u64)
            .unwrap()
    };
    let ids = all_objects(r);
    let input = ids.join("\n") + "\n";
    let (want, _, _) = git_run(r, &["--batch-check"], input.as_bytes());
    let sizes = [
        0,
        12,
        20,
        row(b"OIDL") + 100,
        row(b"OOFF") + 40,
        good.len() as u64 - 1,
    ];
    for size in sizes {
        std::fs::remove_file(&midx).unwrap();
        std::fs::write(&midx, &good).unwrap();
        let mut child = std::process::Command::new(super::BIN)
            .args([std::ffi::OsStr::new("batch-check"), r.as_os_str()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut out = String::new();
        // Every object once (the whole file is read through the mapping), then the truncation, then again.
        for id in &ids {
            writeln!(stdin, "{id}").unwrap();
            stdin.flush().unwrap();
            stdout.read_line(&mut out).unwrap();
        }
        std::fs::OpenOptions::new()
            .write(true)
            .open(&midx)
            .unwrap()
            .set_len(size)
            .unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
        drop(stdin);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "truncated to {size}: {status:?}");
        let want = String::from_utf8_lossy(&want);
        assert_eq!(
            (out.as_str(), rest.as_str()),
            (&*want, &*want),
            "truncated to {size}"
        );
        let (code, files, _) = super::verify(r);
        assert_eq!(code, 1, "truncated to {size}: {files:?}");
        assert!(files["multi-pack-index"].is_err(), "{files:?}");
    }
}
