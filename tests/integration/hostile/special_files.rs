//! FIFOs, sockets and devices where files should be.

use super::*;

// ---------------------------------------------------------------------------------------------------------
// FIFOs, sockets and devices where files should be.
// ---------------------------------------------------------------------------------------------------------

/// An `.idx` replaced by a FIFO, a socket or a device after listing (before its first load), and a FIFO
/// multi-pack-index (at listing, and renamed over a listed one, which the store sees at its next listing):
/// typed errors naming the file, never a hang; every other object is found.
#[cfg(unix)]
#[test]
fn fifos_sockets_and_devices_where_index_files_should_be() {
    let r = Repo::new("sha1");
    let idx = r.idx(0);
    let lost = r.only_in(0);
    let original = std::fs::read(&idx).unwrap();
    let restore = |idx: &Path| {
        std::fs::write(idx.with_file_name("tmp_restore"), &original).unwrap();
        std::fs::rename(idx.with_file_name("tmp_restore"), idx).unwrap();
    };
    for (what, kind) in [
        ("fifo", FileKind::Fifo),
        ("socket", FileKind::Socket),
        ("device", FileKind::CharDevice),
        ("directory", FileKind::Directory),
    ] {
        for load in [LoadMode::Mmap, LoadMode::Read] {
            restore(&idx);
            let options = Options::default().load(load);
            let listed =
                Store::open(r.path(), options.clone().refresh(RefreshMode::Never)).unwrap();
            assert_eq!(listed.packs().len(), 3);
            // Replaced after listing, before the first load.
            let _listener;
            match what {
                "fifo" => fifo_over(&idx),
                "socket" => {
                    std::fs::remove_file(&idx).unwrap();
                    _listener = std::os::unix::net::UnixListener::bind(&idx).unwrap();
                }
                "device" => {
                    std::fs::remove_file(&idx).unwrap();
                    std::os::unix::fs::symlink("/dev/zero", &idx).unwrap();
                }
                _ => {
                    std::fs::remove_file(&idx).unwrap();
                    std::fs::create_dir(&idx).unwrap();
                }
            }
            // At load: a typed error naming it, never a hang; everything else found.
            let mut hd = listed.handle();
            for id in lost.iter().chain(&r.absent()) {
                let got = hd.locate(&oid(id));
                let e = incomplete_for(&got, &idx);
                assert_eq!(
                    io_file_problem(&e, &idx),
                    FileProblem::NotRegular { kind },
                    "{what}"
                );
            }
            r.assert_found(&listed, &r.all_but(&lost));
            // At listing: never opened; reported, and a miss cannot be claimed (a directory named like an index
            // is skipped, as before: git itself cannot use it).
            let fresh = Store::open(r.path(), options).unwrap();
            assert_eq!(fresh.packs().len(), 2);
            r.assert_found(&fresh, &r.all_but(&lost));
            let got = fresh.handle().locate(&oid(&lost[0]));
            if what == "directory" {
                assert_eq!(got.unwrap(), None);
            } else {
                let e = incomplete_for(&got, &idx);
                assert_eq!(
                    io_file_problem(&e, &idx),
                    FileProblem::NotRegular { kind },
                    "{what}"
                );
                assert!(
                    fresh.problems().iter().any(|p| p.path() == idx),
                    "{:?}",
                    fresh.problems()
                );
            }
            if what == "directory" {
                std::fs::remove_dir(&idx).unwrap();
            } else {
                std::fs::remove_file(&idx).unwrap();
            }
        }
    }
    std::fs::write(&idx, &original).unwrap();
    // A FIFO multi-pack-index at listing: reported, the .idx files answer.
    let midx = r.pack_dir().join("multi-pack-index");
    mkfifo(&midx);
    for load in [LoadMode::Mmap, LoadMode::Read] {
        let store = Store::open(r.path(), Options::default().load(load)).unwrap();
        let problems = store.problems();
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains("multi-pack-index")
                    && p.to_string().contains("FIFO")),
            "{problems:?}"
        );
        r.assert_found(&store, &r.all);
    }
    std::fs::remove_file(&midx).unwrap();
    // A FIFO renamed over a listed multi-pack-index before its first lookup: the listing opened the file
    // (once: its load uses what the listing opened), so the FIFO is never opened; every object is found and
    // nothing is wrong. A refresh then lists the FIFO: reported, the .idx files answer.
    git(r.path(), &["multi-pack-index", "write"]);
    for load in [LoadMode::Mmap, LoadMode::Read] {
        git(r.path(), &["multi-pack-index", "write"]);
        let store = Store::open(r.path(), Options::default().load(load)).unwrap();
        fifo_over(&midx);
        r.assert_found(&store, &r.all);
        assert!(store.problems().is_empty(), "{:?}", store.problems());
        store.refresh().unwrap();
        r.assert_found(&store, &r.all);
        let problems = store.problems();
        assert!(
            problems.iter().any(|p| p.to_string().contains("FIFO")),
            "{problems:?}"
        );
        std::fs::remove_file(&midx).unwrap();
    }
}

/// `config`, `info/alternates`, a `.git` file and a linked worktree's `commondir` that are FIFOs (or
/// `/dev/zero`): `Store::open` fails with an error naming the file (alternates: the store opens and reports
/// it), never a hang.
#[cfg(unix)]
#[test]
fn fifos_and_devices_where_repository_files_should_be() {
    let r = Repo::new("sha1");
    let config = r.path().join("config");
    let saved = std::fs::read(&config).unwrap();
    for device in [false, true] {
        std::fs::remove_file(&config).unwrap();
        if device {
            std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
        } else {
            mkfifo(&config);
        }
        let e = Store::open(r.path(), Options::default()).unwrap_err();
        let kind = if device {
            FileKind::CharDevice
        } else {
            FileKind::Fifo
        };
        assert_eq!(
            io_file_problem(&e, &config),
            FileProblem::NotRegular { kind }
        );
    }
    std::fs::remove_file(&config).unwrap();
    std::fs::write(&config, saved).unwrap();
    // info/alternates: the store opens, reports it, finds its own objects; a miss cannot be claimed.
    let alternates = objects_dir(r.path()).join("info/alternates");
    std::fs::create_dir_all(alternates.parent().unwrap()).unwrap();
    mkfifo(&alternates);
    let store = Store::open(r.path(), Options::default()).unwrap();
    let problems = store.problems();
    assert!(
        problems
            .iter()
            .any(|p| p.to_string().contains("alternates")),
        "{problems:?}"
    );
    r.assert_found(&store, &r.all);
    let canonical = std::fs::canonicalize(objects_dir(r.path()))
        .unwrap()
        .join("info/alternates");
    incomplete_for(&store.handle().locate(&oid(&r.absent()[0])), &canonical);
    std::fs::remove_file(&alternates).unwrap();
    // A work tree whose .git file is a FIFO.
    let work = tempfile::tempdir().unwrap();
    mkfifo(&work.path().join(".git"));
    let e = Store::open(work.path(), Options::default()).unwrap_err();
    assert_eq!(
        io_file_problem(&e, &work.path().join(".git")),
        FileProblem::NotRegular {
            kind: FileKind::Fifo
        }
    );
    // A linked worktree (made by git) whose commondir is a FIFO.
    let main = init_repo("sha1", false);
    fast_import_blobs(main.path(), 3, 1, "main");
    let outside = tempfile::tempdir().unwrap();
    let wt = outside.path().join("wt-hostile");
    git(
        main.path(),
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "hostile",
            wt.to_str().unwrap(),
            "main",
        ],
    );
    let gitdir = main.path().join(".git/worktrees/wt-hostile");
    let commondir = gitdir.join("commondir");
    assert!(Store::open(&wt, Options::default()).is_ok());
    std::fs::remove_file(&commondir).unwrap();
    mkfifo(&commondir);
    let e = Store::open(&wt, Options::default()).unwrap_err();
    assert_eq!(
        io_file_problem(&e, &commondir),
        FileProblem::NotRegular {
            kind: FileKind::Fifo
        }
    );
}
