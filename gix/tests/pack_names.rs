//! Issue 38, item 4, in the adapter: a pack whose file name is not UTF-8 (git reads every `*.idx` of a pack
//! directory whatever its bytes) is read, and [`Place::pack_name`] names it as it is on disk.

use std::os::unix::ffi::OsStrExt as _;

use odb_index_gix::{ObjectId, Objects, Place};
use odb_index_testkit::{fast_import_blobs, git_stdin, idx_files, init_repo, rename_pack};

/// Every object of a pack renamed `\xff-pack-<hash>.pack` answers as `git cat-file --batch-check` does, from a
/// place whose `pack_name` is the new name's bytes (before: `None`, the name was dropped as not UTF-8).
#[test]
fn a_pack_whose_name_is_not_utf8_is_read_and_named() {
    let repo = init_repo("sha1", true);
    let r = repo.path();
    fast_import_blobs(r, 20, 1, "a");
    let idx = rename_pack(&idx_files(&r.join("objects"))[0], b"\xff-");
    let pack = idx.with_extension("pack");
    let pack_name = pack.file_name().unwrap();
    assert!(pack_name.to_str().is_none(), "the name is not UTF-8");
    let listed = git_stdin(
        r,
        &[
            "cat-file",
            "--batch-all-objects",
            "--batch-check=%(objectname) %(objecttype) %(objectsize)",
        ],
        b"",
    );
    assert!(listed.lines().count() > 20, "git reads the pack: {listed}");
    let objects = Objects::open(r).unwrap();
    let mut data = Vec::new();
    for line in listed.lines() {
        let id: ObjectId = line[..40].parse().unwrap();
        let info = objects.read(&id, &mut data).unwrap().expect("git finds it");
        assert_eq!(format!("{} {} {}", info.id, info.kind, info.size), line);
        assert!(matches!(info.place, Place::Packed { .. }));
        assert_eq!(
            info.place.pack_name().map(|n| n.as_bytes()),
            Some(pack_name.as_bytes()),
            "{id}: the pack's name as it is on disk"
        );
    }
}
