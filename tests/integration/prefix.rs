//! Abbreviated ids against git: [`Handle::lookup_prefix`] answers what `git cat-file --batch-check` answers for
//! a short id (the object, `ambiguous` or `missing`), [`Handle::shortest_unique_len`] what `git rev-parse
//! --short=N` prints, and [`Handle::prefix_candidates`] what `git rev-parse --disambiguate` lists; over packs,
//! duplicates, loose objects, a multi-pack-index and an alternate, SHA-1 and SHA-256.

use std::path::Path;

use odb_index::PrefixLookup;
use odb_index::{HashKind, Options, Prefix, Store};
use odb_index_testkit::*;

use crate::api_common::*;

fn kind(format: &str) -> HashKind {
    format.parse().unwrap()
}

/// Every 4-, 5- and 7-digit prefix of every object, and prefixes of absent ids, answered as git answers them.
fn check_prefixes(repo: &Path, format: &str) {
    let store = Store::open(repo, Options::default()).unwrap();
    let mut h = store.handle();
    let all = all_objects(repo);
    let mut names: Vec<String> = Vec::new();
    for id in &all {
        for n in [4, 5, 7] {
            names.push(id[..n].to_owned());
        }
    }
    names.extend(
        absent_ids(300, 8, 7)
            .into_iter()
            .chain(absent_ids(300, 4, 8)),
    );
    names.sort();
    names.dedup();
    let git = git_batch_check(repo, &names);
    assert_eq!(git.len(), names.len());
    let (mut unique, mut ambiguous, mut missing) = (0, 0, 0);
    for (name, git) in names.iter().zip(&git) {
        let p = Prefix::from_hex(name, kind(format)).unwrap();
        let ours = h.lookup_prefix(&p).unwrap();
        let expected = if git == &format!("{name} ambiguous") {
            ambiguous += 1;
            PrefixLookup::Ambiguous
        } else if git == &format!("{name} missing") {
            missing += 1;
            PrefixLookup::NotFound
        } else {
            unique += 1;
            PrefixLookup::Unique(oid(git))
        };
        assert_eq!(ours, expected, "prefix {name}: git says {git:?}");
        if ours == PrefixLookup::Ambiguous {
            let listed = git_disambiguate(repo, name);
            let cands: Vec<String> = h
                .prefix_candidates(&p)
                .unwrap()
                .iter()
                .map(|c| c.to_string())
                .collect();
            assert_eq!(cands, listed, "candidates of {name}");
        }
    }
    // The fixture is meant to exercise all three answers.
    assert!(
        unique > 100 && ambiguous > 10 && missing > 100,
        "{unique} {ambiguous} {missing}"
    );
}

/// `git rev-parse --disambiguate=<prefix>`, sorted.
fn git_disambiguate(repo: &Path, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = git(repo, &["rev-parse", &format!("--disambiguate={prefix}")])
        .lines()
        .map(str::to_owned)
        .collect();
    v.sort();
    v
}

/// git's abbreviations (`git ls-tree -r -t --abbrev=<min>` on every branch: blobs and trees; `git log
/// --abbrev=<min>` for commits, both through git's `find_unique_abbrev`), against `shortest_unique_len`.
fn check_shortest(repo: &Path, min: usize) {
    let store = Store::open(repo, Options::default()).unwrap();
    let mut h = store.handle();
    let abbrev = format!("--abbrev={min}");
    let mut pairs: Vec<(String, String)> = Vec::new();
    let branches = git(repo, &["for-each-ref", "--format=%(refname)", "refs/heads"]);
    for b in branches.lines() {
        let full = git(repo, &["ls-tree", "-r", "-t", "--format=%(objectname)", b]);
        let short = git(
            repo,
            &["ls-tree", "-r", "-t", &abbrev, "--format=%(objectname)", b],
        );
        pairs.extend(
            full.lines()
                .map(str::to_owned)
                .zip(short.lines().map(str::to_owned)),
        );
        let full = git(repo, &["log", "--format=%H", b]);
        let short = git(repo, &["log", &abbrev, "--format=%h", b]);
        pairs.extend(
            full.lines()
                .map(str::to_owned)
                .zip(short.lines().map(str::to_owned)),
        );
    }
    assert!(pairs.len() > 300, "{}", pairs.len());
    let mut longest = 0;
    for (id, s) in &pairs {
        assert!(id.starts_with(s.as_str()), "{id} {s}");
        let n = h.shortest_unique_len(&oid(id), min).unwrap();
        assert_eq!(n, s.len(), "{id}: git abbreviates it to {s}");
        longest = longest.max(n);
    }
    if min == 4 {
        assert!(longest > 4, "some object needs more than 4 digits");
    }
}

#[test]
fn prefixes_match_git() {
    for format in FORMATS {
        let repo = mixed_repo(format);
        check_prefixes(repo.path(), format);
        check_shortest(repo.path(), 4);
        check_shortest(repo.path(), 7);
    }
}

#[test]
fn prefixes_with_multi_pack_index_and_alternate() {
    for format in FORMATS {
        let base = mixed_repo(format);
        git(base.path(), &["multi-pack-index", "write"]);
        // A repository that borrows `base`'s objects and has its own.
        let repo = init_repo(format, true);
        let info = objects_dir(repo.path()).join("info");
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(
            info.join("alternates"),
            format!("{}\n", objects_dir(base.path()).display()),
        )
        .unwrap();
        fast_import_blobs(repo.path(), 300, 9, "c");
        write_loose(repo.path(), "own", 100);
        check_prefixes(repo.path(), format);
        check_shortest(repo.path(), 4);
    }
}

#[test]
fn prefix_of_the_other_kind_is_refused() {
    let repo = init_repo("sha1", true);
    let store = Store::open(repo.path(), Options::default()).unwrap();
    let p = Prefix::from_hex("abcd", HashKind::Sha256).unwrap();
    assert!(matches!(
        store.handle().lookup_prefix(&p),
        Err(odb_index::Error::WrongIdHashKind { .. })
    ));
}
