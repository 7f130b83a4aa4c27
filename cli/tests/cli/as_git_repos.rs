//! Odd repositories read exactly as git reads them, each built with git in a temporary directory and
//! compared with `git cat-file` itself: refs (symbolic ref depth, broken and dangling refs with git's warnings),
//! an invalid `HEAD`, and a multi-pack-index git dies on under `--batch-all-objects`.

use odb_index_testkit::git;

use super::as_git::{git_run, odb_run, same};
use super::as_git_reads::small_repo;

/// Refs as git reads them: a chain of symbolic refs stops at git's depth (five refs read: `r5` is
/// `missing`), a loose ref that cannot be read (garbage, too long, too short, empty) is passed over with git's
/// `warning: ignoring broken ref ...` and the next of git's rules tried (an empty `refs/tags/main` leaves `main`
/// to `refs/heads/main`), a symbolic ref whose target is missing or broken is `missing` with `ignoring dangling
/// symref`; stdout and stderr as git's, in every mode.
#[test]
fn refs_are_read_as_git_reads_them() {
    let repo = small_repo();
    let r = repo.path();
    let head = git(r, &["rev-parse", "HEAD"]).trim().to_owned();
    git(r, &["update-ref", "refs/heads/r0", &head]);
    for i in 1..8 {
        let (this, prev) = (format!("refs/heads/r{i}"), format!("refs/heads/r{}", i - 1));
        git(r, &["symbolic-ref", &this, &prev]);
    }
    let heads = r.join(".git/refs/heads");
    for (name, text) in [
        ("garb", "garbage\n".to_owned()),
        ("long", format!("{head}0000\n")),
        ("short", format!("{}\n", &head[..39])),
        ("empty", String::new()),
        ("trail", format!("{head} junk\n")),
        ("nonl", head.clone()),
        (
            "dang",
            "0123456789012345678901234567890123456789\n".to_owned(),
        ),
        ("togarb", "ref: refs/heads/garb\n".to_owned()),
    ] {
        std::fs::write(heads.join(name), text).unwrap();
    }
    git(
        r,
        &[
            "symbolic-ref",
            "refs/remotes/origin/HEAD",
            "refs/remotes/origin/nope",
        ],
    );
    // What a crash leaves: an empty tag of the branch's name.
    std::fs::write(r.join(".git/refs/tags/main"), "").unwrap();
    let names = [
        "r1",
        "r4",
        "r5",
        "r6",
        "r7",
        "r4~0",
        "r5~0",
        "garb",
        "long",
        "short",
        "empty",
        "trail",
        "nonl",
        "dang",
        "togarb",
        "refs/heads/garb",
        "heads/garb",
        "garb~1",
        "origin",
        "origin/HEAD",
        "main",
        "main~0",
        "main:a",
        "refs/heads/main",
        "tags/main",
        "HEAD",
    ];
    let input: String = names.iter().map(|n| format!("{n}\n")).collect();
    for args in [
        &["--batch-check"][..],
        &["--batch-check", "--buffer"],
        &["--batch"],
    ] {
        let (out, err, code) = same(r, args, input.as_bytes());
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(
            err.contains("warning: ignoring broken ref refs/tags/main\n"),
            "{err}"
        );
        assert!(
            err.contains("warning: ignoring dangling symref refs/heads/r5\n"),
            "{err}"
        );
        let out = String::from_utf8_lossy(&out);
        assert!(!out.contains(" error "), "{out}");
    }
    let commands: String = names.iter().map(|n| format!("info {n}\n")).collect();
    same(r, &["--batch-command"], commands.as_bytes());
}

/// A `HEAD` git does not take for a repository's (`validate_headref`: not `ref: refs/...`, not an id)
/// makes the directory no repository: git's `fatal:`, exit 128, where the command answered.
#[test]
fn an_invalid_head_is_no_repository_as_git() {
    for text in ["garbage\n", "", "ref: foo\n", "ref: heads/main\n"] {
        let repo = small_repo();
        let r = repo.path();
        std::fs::write(r.join(".git/HEAD"), text).unwrap();
        let (_, git_err, git_code) = git_run(r, &["--batch-check"], b"HEAD\nmain\n");
        assert_eq!(git_code, Some(128), "{text:?}: {git_err}");
        assert!(
            git_err.starts_with("fatal: not a git repository"),
            "{git_err}"
        );
        let (out, err, code) = odb_run(r, &["--batch-check"], b"HEAD\nmain\n");
        assert_eq!((code, out.is_empty()), (Some(128), true), "{text:?}: {err}");
        assert!(
            err.starts_with("fatal: ") && err.contains("not a git repository"),
            "{err}"
        );
    }
    // Valid ones: a symbolic ref to refs/ (white space after `ref:` as git allows), an id.
    let repo = small_repo();
    let r = repo.path();
    let head = git(r, &["rev-parse", "HEAD"]);
    std::fs::write(r.join(".git/HEAD"), head).unwrap();
    same(r, &["--batch-check"], b"HEAD\nmain\n");
}

/// [`small_repo`] in two packs under a multi-pack-index git wrote: the repository, the file's path and its bytes.
fn two_packs_under_a_midx() -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let repo = small_repo();
    let r = repo.path();
    git(r, &["repack", "-dq"]);
    std::fs::write(r.join("a"), "a3\n").unwrap();
    git(r, &["commit", "-qam", "three"]);
    git(r, &["repack", "-dq"]);
    git(r, &["multi-pack-index", "write"]);
    let path = r.join(".git/objects/pack/multi-pack-index");
    let good = std::fs::read(&path).unwrap();
    (repo, path, good)
}

/// The position in `midx` of the chunk table entry of chunk `id` and the chunk's offset.
fn midx_chunk(midx: &[u8], id: &[u8; 4]) -> (usize, usize) {
    let count = usize::from(midx[6]);
    (0..count)
        .map(|i| 12 + 12 * i)
        .find(|&at| &midx[at..at + 4] == id)
        .map(|at| {
            let offset = u64::from_be_bytes(midx[at + 4..at + 12].try_into().unwrap());
            (at, usize::try_from(offset).unwrap())
        })
        .expect("chunk present")
}

/// A multi-pack-index git cannot load (t5319: a bad signature or version, a required chunk missing, the
/// fanout or the pack names out of order) makes git die before it lists anything
/// under `--batch-all-objects`: so does the command (it warned and listed every object from the `.idx` files).
#[test]
fn batch_all_objects_dies_on_a_multi_pack_index_git_cannot_load() {
    let (repo, path, good) = two_packs_under_a_midx();
    let r = repo.path();
    type Edit = fn(&mut Vec<u8>);
    let edits: [(&str, Edit); 5] = [
        ("signature", |m| m[..4].copy_from_slice(b"XXXX")),
        ("version", |m| m[4] = 9),
        ("no OOFF chunk", |m| {
            let (at, _) = midx_chunk(m, b"OOFF");
            m[at..at + 4].copy_from_slice(b"XXXX");
        }),
        ("fanout out of order", |m| {
            let (_, fanout) = midx_chunk(m, b"OIDF");
            m[fanout..fanout + 4].copy_from_slice(&0x7fff_ffffu32.to_be_bytes());
        }),
        ("pack names out of order", |m| {
            let (_, names) = midx_chunk(m, b"PNAM");
            let len = m[names..].iter().position(|&b| b == 0).unwrap() + 1;
            let first = m[names..names + len].to_vec();
            m.copy_within(names + len..names + 2 * len, names);
            m[names + len..names + 2 * len].copy_from_slice(&first);
        }),
    ];
    for (what, edit) in edits {
        let mut midx = good.clone();
        edit(&mut midx);
        super::replace_file(&path, &midx);
        for args in [
            &["--batch-check", "--batch-all-objects"][..],
            &["--batch-check", "--batch-all-objects", "--unordered"],
        ] {
            let (want, git_err, git_code) = git_run(r, args, b"");
            assert_eq!(
                (git_code, want.is_empty()),
                (Some(128), true),
                "{what}: {git_err}"
            );
            let (out, err, code) = odb_run(r, args, b"");
            assert_eq!(
                (
                    code,
                    String::from_utf8_lossy(&out).as_ref(),
                    err.split(' ').next()
                ),
                (Some(128), "", Some("fatal:")),
                "{what} {args:?}: {err}"
            );
        }
    }
    // An unknown object id version is an error git goes on from (without the file): both list every object.
    let mut midx = good.clone();
    midx[5] = 7;
    super::replace_file(&path, &midx);
    let args = ["--batch-check", "--batch-all-objects"];
    let ((want, _, git_code), (out, _, code)) = (git_run(r, &args, b""), odb_run(r, &args, b""));
    assert_eq!(
        (code, String::from_utf8_lossy(&out)),
        (git_code, String::from_utf8_lossy(&want))
    );
    // The good file: both list every object.
    super::replace_file(&path, &good);
    same(r, &args, b"");
}

/// git's t5319.42: a multi-pack-index with one id of its `OIDL` chunk zeroed (outside bucket 0x00). git lists
/// `--batch-all-objects` from the packs' `.idx` files, then answers the object whose id was zeroed `missing` (its
/// lookup trusts the file); the command lists what it listed with the good file, sorted and `--unordered`
/// (compared as sets of lines: the unordered orders differ), the object whose id was zeroed found through its
/// pack's own index: git's lines but for that false `missing`. Failed (`0000… tree 89` under `--unordered`:
/// another object's entry under an id that is no object; `0000… missing` in the sorted listing) while a bucket
/// out of order was listed as the file says.
#[test]
fn a_zeroed_id_of_a_multi_pack_index_is_not_listed_as_git() {
    let (repo, path, good) = two_packs_under_a_midx();
    let r = repo.path();
    let (_, oidl) = midx_chunk(&good, b"OIDL");
    let (_, oidf) = midx_chunk(&good, b"OIDF");
    let objects = u32::from_be_bytes(good[oidf + 1020..oidf + 1024].try_into().unwrap()) as usize;
    let sorted_lines = |out: &[u8]| {
        let mut lines: Vec<String> = String::from_utf8_lossy(out)
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    };
    let all_args = [
        &["--batch-check", "--batch-all-objects"][..],
        &["--batch-check", "--batch-all-objects", "--unordered"],
    ];
    let expected: Vec<Vec<String>> = all_args
        .iter()
        .map(|args| sorted_lines(&git_run(r, args, b"").0))
        .collect();
    let mut tried = 0;
    for pos in [objects / 2, objects - 1] {
        if good[oidl + 20 * pos] == 0 {
            continue;
        }
        let mut midx = good.clone();
        midx[oidl + 20 * pos..oidl + 20 * (pos + 1)].fill(0);
        super::replace_file(&path, &midx);
        for (args, expected) in all_args.iter().zip(&expected) {
            let (want, git_err, git_code) = git_run(r, args, b"");
            let (out, err, code) = odb_run(r, args, b"");
            assert_eq!(
                (code, git_code),
                (Some(0), Some(0)),
                "{pos} {args:?}: {err} / git: {git_err}"
            );
            assert_eq!(&sorted_lines(&out), expected, "{pos} {args:?}");
            // git's lines: the same, but for the object whose id was zeroed (a false `missing`).
            let gits = sorted_lines(&want);
            let differ: Vec<_> = gits.iter().filter(|l| !expected.contains(l)).collect();
            assert!(
                differ.len() <= 1 && differ.iter().all(|l| l.ends_with(" missing")),
                "{pos} {args:?}: git's {differ:?}"
            );
        }
        tried += 1;
    }
    super::replace_file(&path, &good);
    assert!(tried > 0);
}

/// (item 3, git's t5303) A delta whose base entry in the pack is corrupt, where the base has a good loose copy:
/// git reads the base from that copy ("failed to read delta base object", then by id) and answers the delta;
/// so does the command (it printed `<id> error ... cannot decode the entry`). Without a copy, an error line.
#[test]
fn a_delta_whose_base_entry_is_corrupt_is_read_on_a_good_copy_of_the_base_as_git() {
    use odb_index_testkit::{git_stdin, init_repo};
    for copy in [true, false] {
        let repo = init_repo("sha1", true);
        let p = repo.path();
        let text: String = (1..3000).map(|i| format!("line {i}\n")).collect();
        let ids: Vec<String> = [text.clone(), format!("{text}one more\n")]
            .iter()
            .map(|t| {
                let id = git_stdin(p, &["hash-object", "-w", "--stdin"], t.as_bytes());
                id.trim().to_owned()
            })
            .collect();
        let loose = |id: &str| p.join("objects").join(&id[..2]).join(&id[2..]);
        let saved: Vec<Vec<u8>> = ids
            .iter()
            .map(|id| std::fs::read(loose(id)).unwrap())
            .collect();
        let name = git_stdin(
            p,
            &["pack-objects", "-q", "objects/pack/pack"],
            ids.join("\n").as_bytes(),
        );
        let pack = p.join(format!("objects/pack/pack-{}.pack", name.trim()));
        let idx = pack.with_extension("idx");
        // `git verify-pack -v`: `<id> <type> <size> <size in pack> <offset> <depth> <base>` for the delta.
        let listing = git(p, &["verify-pack", "-v", idx.to_str().unwrap()]);
        let delta_line = listing
            .lines()
            .find(|l| l.split(' ').filter(|w| !w.is_empty()).count() == 7);
        let fields: Vec<&str> = delta_line.expect("a delta").split_whitespace().collect();
        let (delta, base) = (fields[0].to_owned(), fields[6].to_owned());
        let base_at: usize = listing
            .lines()
            .find(|l| l.starts_with(&base))
            .and_then(|l| l.split_whitespace().nth(4)?.parse().ok())
            .unwrap();
        for id in &ids {
            std::fs::remove_file(loose(id)).unwrap();
        }
        let mut data = std::fs::read(&pack).unwrap();
        for b in &mut data[base_at + 40..base_at + 48] {
            *b ^= 0x5a;
        }
        super::replace_file(&pack, &data);
        if copy {
            let i = ids.iter().position(|id| *id == base).unwrap();
            std::fs::write(loose(&base), &saved[i]).unwrap();
        }
        let input = format!("{delta}\n{base}\n");
        for args in [
            &["--batch"][..],
            &["--batch", "--buffer"],
            &["--batch-check"],
        ] {
            let (want, _, git_code) = git_run(p, args, input.as_bytes());
            let (out, err, code) = odb_run(p, args, input.as_bytes());
            if copy {
                assert_eq!(git_code, Some(0));
                let want = String::from_utf8_lossy(&want);
                assert!(want.starts_with(&format!("{delta} blob ")), "{want}");
                assert_eq!(String::from_utf8_lossy(&out), want, "{args:?}: {err}");
                assert_eq!(code, Some(0));
            } else if args[0] == "--batch" {
                // git dies on it; the command says so on the line and goes on (cli/README.md).
                assert_eq!(git_code, Some(128));
                let out = String::from_utf8_lossy(&out);
                assert!(out.starts_with(&format!("{delta} error ")), "{out}");
            }
        }
    }
}

/// A PATH relative to the working directory, `../x.git` (a bare repository beside it), is the repository git
/// finds after `chdir(PATH)`, as `git -C ../x.git`: stdout, stderr and exit status alike. Failed (exit 128,
/// "not a git repository") when gix-discover was given the relative path, which it takes for `../.git`.
#[test]
fn a_relative_path_to_a_bare_repository_is_taken_as_git_takes_it() {
    let repo = small_repo();
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("x.git");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    git(
        dir.path(),
        &[
            "clone",
            "-q",
            "--bare",
            repo.path().to_str().unwrap(),
            "x.git",
        ],
    );
    assert!(bare.join("HEAD").is_file());
    let input = b"HEAD\nHEAD:a\nHEAD~1\n";
    let run = |cmd: &mut std::process::Command| {
        use std::io::Write as _;
        let mut child = cmd
            .current_dir(&sub)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.status.code(),
        )
    };
    let ours = run(std::process::Command::new(super::BIN).args(["batch-check", "../x.git"]));
    let gits = run(std::process::Command::new("git").args([
        "-C",
        "../x.git",
        "cat-file",
        "--batch-check",
    ]));
    assert_eq!(ours, gits);
    assert!(gits.0.contains(" commit "), "{gits:?}");
}
