//! odb-index-gix against git: the example client, a gix-object traversal, headers and reads of every object,
//! typed errors naming files.
// .clippy.toml's rules (the facade, the guarded read, 80-line functions) are for the shipped code, not tests.
#![allow(
    clippy::disallowed_types,
    clippy::disallowed_methods,
    clippy::too_many_lines
)]

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use gix_object::{Find, FindExt, FindHeader};
use odb_index_gix::convert::oid_to_gix;
use odb_index_gix::{Error, Objects, Place};
use odb_index_testkit::{all_objects, fast_import_history, git, git_stdin, init_repo, objects_dir};

/// Repositories of both formats with OFS_DELTA and REF_DELTA packs and loose objects.
fn repos() -> Vec<(tempfile::TempDir, &'static str)> {
    ["sha1", "sha256"]
        .into_iter()
        .map(|format| {
            let repo = init_repo(format, false);
            let r = repo.path();
            fast_import_history(r, 60, 1, "b1");
            git(
                r,
                &["-c", "repack.useDeltaBaseOffset=false", "repack", "-adfq"],
            );
            fast_import_history(r, 30, 2, "b2"); // fast-import's pack: OFS_DELTA
            // Enough objects that some share their first 4 hex digits.
            odb_index_testkit::fast_import_blobs(r, 3000, 9, "blobs");
            git_stdin(r, &["hash-object", "-w", "--stdin"], b"a loose blob\n");
            (repo, format)
        })
        .collect()
}

/// Ids reachable from every ref, walked with gix-object's decoders over odb-index.
fn walk(objects: &Objects, tips: &[gix_hash::ObjectId]) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<gix_hash::ObjectId> = tips.to_vec();
    let mut buf = Vec::new();
    while let Some(id) = todo.pop() {
        if !seen.insert(id.to_string()) {
            continue;
        }
        let data = objects
            .find(&id, &mut buf)
            .expect("reachable objects are present");
        match data.kind {
            gix_object::Kind::Commit => {
                let c = data.decode().unwrap().into_commit().unwrap();
                todo.push(c.tree());
                todo.extend(c.parents());
            }
            gix_object::Kind::Tree => {
                let t = data.decode().unwrap().into_tree().unwrap();
                todo.extend(t.entries.iter().map(|e| e.oid.to_owned()));
            }
            gix_object::Kind::Tag => {
                todo.push(data.decode().unwrap().into_tag().unwrap().target());
            }
            gix_object::Kind::Blob => {}
        }
    }
    seen
}

fn id_kind(format: &str) -> gix_hash::Kind {
    if format == "sha1" {
        gix_hash::Kind::Sha1
    } else {
        gix_hash::Kind::Sha256
    }
}

/// The `.idx` of the largest pack in `r`.
fn idx_of_largest_pack(r: &Path) -> String {
    let pack_dir = objects_dir(r).join("pack");
    let mut packs: Vec<(u64, std::path::PathBuf)> = std::fs::read_dir(&pack_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pack"))
        .map(|p| (p.metadata().unwrap().len(), p))
        .collect();
    packs.sort();
    packs
        .last()
        .unwrap()
        .1
        .with_extension("idx")
        .to_string_lossy()
        .into_owned()
}

/// Run the example `name` on repository `r` with `input` on stdin (written from another thread).
fn run_example(name: &str, r: &Path, input: String) -> std::process::Output {
    let mut ex = example(name)
        .arg(r)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut si = ex.stdin.take().unwrap();
    let writer = std::thread::spawn(move || si.write_all(input.as_bytes()));
    let out = ex.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

/// `cargo run --example <name> --` of this package (testkit's `cargo_example`).
fn example(name: &str) -> Command {
    odb_index_testkit::cargo_example("odb-index-gix", name)
}

/// `git cat-file <mode>` on `input` (written from another thread: the output may fill its pipe first); its
/// stdout. Its stderr (hints about ambiguous names) is dropped.
fn cat_file(r: &Path, mode: &str, input: &str) -> Vec<u8> {
    let mut child = odb_index_testkit::git_cmd(r)
        .args(["cat-file", mode])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut si = child.stdin.take().unwrap();
    let text = input.to_owned();
    let writer = std::thread::spawn(move || si.write_all(text.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success());
    out.stdout
}

/// Every object's `%(objectsize:disk)` and `%(deltabase)` as the adapter answers them, and the problems it
/// reported while answering.
fn disk_sizes_and_bases(r: &Path, ids: &[String]) -> (Vec<String>, Vec<String>) {
    let objects = Objects::open(r).unwrap();
    let mut lines = Vec::new();
    for id in ids {
        let place = objects
            .place(&id.parse::<odb_index_gix::ObjectId>().unwrap())
            .unwrap()
            .expect("present");
        let base = objects.delta_base(&place).unwrap();
        let base = base.map_or("0".repeat(40), |b| b.to_string());
        lines.push(format!(
            "{id} {} {base}",
            objects.disk_size(&place).unwrap()
        ));
    }
    let problems = objects
        .take_problems()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert!(
        objects.take_problems().is_empty(),
        "each problem is reported once"
    );
    (lines, problems)
}

mod agrees_with_git;
mod broken_and_changed;
