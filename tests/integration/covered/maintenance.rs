//! Covered packs through git's maintenance.

use super::*;

/// A store (and two handles: one used at every step, one made before the first step and used only after the
/// last) opened on a repository whose packs a multi-pack-index covers, then git's maintenance underneath: after
/// each command, the store agrees with git through the handle it had (refresh on miss, the default options).
#[test]
fn covered_packs_agree_with_git_through_its_maintenance() {
    let repo = packs_repo(3, 100);
    let r = repo.path();
    let pack_dir = objects_dir(r).join("pack");
    git(r, &["multi-pack-index", "write"]);
    let store = Store::open(r, Options::default()).unwrap();
    let mut h = store.handle();
    let mut idle = store.handle();
    agrees_with_git(&mut h, r, "opened");
    type Step = (&'static str, fn(&Path, &Path));
    let steps: &[Step] = &[
        ("repack -ad --write-midx", |r, _| {
            import(r, 200);
            git(r, &["repack", "-adq", "--write-midx"]);
        }),
        ("new pack, multi-pack-index write", |r, _| {
            import(r, 201);
            git(r, &["multi-pack-index", "write"]);
        }),
        ("repack -d, multi-pack-index write", |r, _| {
            write_loose(r, "l1", 20);
            git(r, &["repack", "-dq"]);
            git(r, &["multi-pack-index", "write"]);
        }),
        ("multi-pack-index repack, expire", |r, _| {
            import(r, 202);
            git(r, &["multi-pack-index", "write"]);
            git(r, &["multi-pack-index", "repack", "--batch-size=0"]);
            git(r, &["multi-pack-index", "expire"]);
        }),
        ("gc", |r, _| {
            import(r, 203);
            git(r, &["gc", "-q"]);
        }),
        ("new packs, multi-pack-index write again", |r, _| {
            import(r, 204);
            import(r, 205);
            git(r, &["multi-pack-index", "write"]);
        }),
        ("multi-pack-index removed", |_, pack_dir| {
            std::fs::remove_file(pack_dir.join("multi-pack-index")).unwrap();
        }),
        ("incremental chain", |r, pack_dir| {
            let _ = std::fs::remove_file(pack_dir.join("multi-pack-index"));
            git(r, &["multi-pack-index", "write", "--incremental"]);
            import(r, 206);
            git(r, &["multi-pack-index", "write", "--incremental"]);
        }),
        ("chain layer over a new pack", |r, _| {
            import(r, 207);
            git(r, &["multi-pack-index", "write", "--incremental"]);
        }),
        (
            "chain removed, multi-pack-index over fewer packs",
            |r, pack_dir| {
                std::fs::remove_dir_all(pack_dir.join("multi-pack-index.d")).unwrap();
                let mut names: Vec<String> = idx_files(&objects_dir(r))
                    .iter()
                    .map(|p| p.file_name().unwrap().to_str().unwrap().to_owned())
                    .collect();
                names.truncate(names.len() / 2);
                let mut stdin = names.join("\n");
                stdin.push('\n');
                git_stdin(
                    r,
                    &["multi-pack-index", "write", "--stdin-packs"],
                    stdin.as_bytes(),
                );
            },
        ),
        ("repack -ad, no multi-pack-index", |r, pack_dir| {
            git(r, &["repack", "-adq"]);
            let _ = std::fs::remove_file(pack_dir.join("multi-pack-index"));
        }),
        ("multi-pack-index over the one pack", |r, _| {
            import(r, 208);
            git(r, &["multi-pack-index", "write"]);
        }),
    ];
    for (what, step) in steps {
        step(r, &pack_dir);
        agrees_with_git(&mut h, r, what);
    }
    agrees_with_git(&mut idle, r, "a handle idle since the open");
    let fresh = Store::open(r, Options::default()).unwrap();
    agrees_with_git(&mut fresh.handle(), r, "a new store");
}
