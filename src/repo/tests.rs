use super::*;

#[cfg(unix)]
use odb_index_testkit::mkfifo;

/// `canonical` is `realpath`: a path already canonical is recognised by one `openat2` (so returned as is);
/// one through a symbolic link, or spelled with `.`, `..`, doubled or trailing slashes, or relative, is not
/// (and `realpath` resolves it); a missing path is an error naming it.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn canonical_is_realpath_and_needs_no_readlink_when_already_canonical() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let dir = root.join("a/objects");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(root.join("a"), root.join("link")).unwrap();
    assert!(already_canonical(&dir));
    assert!(already_canonical(Path::new("/")));
    // The spelling, read off the bytes, is what `Path::components` rebuilds.
    for p in [
        "/", "/a", "/a/b", "/a/.b", "/a/..b", "/a/b.", "//", "/a/", "/a//b", "/./a", "/a/.",
        "/a/../b", "a", "", "./a", "/..", "/a/...",
    ] {
        let p = Path::new(p);
        let rebuilt = p.is_absolute()
            && !p.components().any(|c| {
                matches!(
                    c,
                    std::path::Component::CurDir | std::path::Component::ParentDir
                )
            })
            && p.components().collect::<PathBuf>().as_os_str() == p.as_os_str();
        assert_eq!(spelled_canonically(p), rebuilt, "{}", p.display());
    }
    let through_link = root.join("link/objects");
    let dotted = PathBuf::from(format!("{}/./objects", root.join("a").display()));
    let up = root.join("a/objects/../objects");
    let doubled = PathBuf::from(format!("{}//objects", root.join("a").display()));
    let trailing = PathBuf::from(format!("{}/", dir.display()));
    for p in [&through_link, &dotted, &up, &doubled, &trailing] {
        assert!(!already_canonical(p), "{}", p.display());
        assert_eq!(canonical(p).unwrap(), dir, "{}", p.display());
    }
    assert!(!already_canonical(Path::new("a/objects")));
    assert_eq!(canonical(&dir).unwrap(), dir);
    let missing = root.join("missing");
    assert!(!already_canonical(&missing));
    assert!(matches!(canonical(&missing), Err(Error::Io { path, .. }) if path == missing));
}

/// Discovery answers the same whether the path it is given is canonical (then it asks relative to the
/// directory it opened) or not (through a symbolic link, with a trailing slash: by path), for every layout:
/// a bare repository, a work tree with a `.git` directory or file, objects directories inside a git
/// directory (found by its `HEAD` or its `config` alone) and outside one, and paths that are no repository.
/// The store's variant skips the parent only when the format is given.
#[cfg(unix)]
#[test]
fn discovery_by_descriptor_and_by_path_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(tmp.path()).unwrap();
    let sha256 = "[extensions]\n\tobjectformat = sha256\n";
    let mk = |dir: &str, files: &[(&str, &str)]| {
        let d = root.join(dir);
        std::fs::create_dir_all(d.join("objects/pack")).unwrap();
        for (name, text) in files {
            std::fs::write(d.join(name), text).unwrap();
        }
        d
    };
    let bare = mk(
        "bare.git",
        &[("HEAD", "ref: refs/heads/main\n"), ("config", sha256)],
    );
    mk("work/.git", &[("HEAD", "ref: refs/heads/main\n")]);
    let config_only = mk("config-only", &[("config", sha256)]);
    let neither = mk("neither", &[]);
    std::fs::create_dir_all(root.join("store/pack")).unwrap();
    std::fs::create_dir_all(root.join("work2")).unwrap();
    std::fs::write(root.join("work2/.git"), "gitdir: ../bare.git\n").unwrap();
    std::fs::create_dir_all(root.join("plain/zz")).unwrap();
    std::os::unix::fs::symlink(&root, root.join("link")).unwrap();
    let cases = [
        "bare.git",
        "bare.git/objects",
        "work",
        "work/.git",
        "work/.git/objects",
        "config-only/objects",
        "neither/objects",
        "store",
        "work2",
        "work2/.git",
        "plain",
        "missing",
    ];
    for case in cases {
        let canonical_path = root.join(case);
        let answer = |p: &Path| match discover(p) {
            Ok(r) => Ok(r),
            Err(e) => Err(std::mem::discriminant(&e)),
        };
        let want = answer(&canonical_path);
        // (A file spelled with a trailing slash is no file at all.)
        let slash = (!canonical_path.is_file())
            .then(|| PathBuf::from(format!("{}/", canonical_path.display())));
        for other in [Some(root.join("link").join(case)), slash]
            .into_iter()
            .flatten()
        {
            assert_eq!(answer(&other), want, "{case} as {}", other.display());
        }
        if let Ok(r) = &want {
            let (by_store, _) = discover_objects(&canonical_path, None).unwrap();
            assert_eq!(&by_store, r, "{case}");
            let (given, _) = discover_objects(&canonical_path, Some(HashKind::Sha1)).unwrap();
            assert_eq!(given.objects_dir, r.objects_dir, "{case}");
            assert_eq!(given.hash_kind, HashKind::Sha1, "{case}");
        }
    }
    let found = |p: &Path| discover(p).unwrap();
    assert_eq!(found(&bare.join("objects")).hash_kind, HashKind::Sha256);
    assert_eq!(found(&bare.join("objects")).git_dir, Some(bare.clone()));
    assert_eq!(
        found(&config_only.join("objects")).git_dir,
        Some(config_only.clone())
    );
    assert_eq!(
        found(&config_only.join("objects")).hash_kind,
        HashKind::Sha256
    );
    assert_eq!(found(&neither.join("objects")).git_dir, None);
    assert_eq!(found(&root.join("work2")).objects_dir, bare.join("objects"));
    // The store's variant with the format given does not look at the parent; the public one does.
    let objects = bare.join("objects");
    let (r, opened) = discover_objects(&objects, Some(HashKind::Sha1)).unwrap();
    assert_eq!((r.git_dir, r.hash_kind), (None, HashKind::Sha1));
    #[cfg(any(target_os = "linux", target_os = "android"))]
    assert!(
        opened.is_some(),
        "a canonical objects directory is handed over opened"
    );
    let _ = opened;
    let r = discover_with_hash_kind(&objects, HashKind::Sha1).unwrap();
    assert_eq!(r.git_dir, Some(bare));
    let (_, opened) = discover_objects(&root.join("link/bare.git/objects"), None).unwrap();
    assert!(
        opened.is_none(),
        "a path through a symbolic link is not opened"
    );
}

/// The `FileProblem` inside an `Error::Io` naming `path`.
#[cfg(unix)]
fn io_problem(e: &Error, path: &Path) -> crate::data::FileProblem {
    match e {
        Error::Io { path: p, source } if p == path => crate::data::file_problem(source)
            .cloned()
            .unwrap_or_else(|| panic!("no file problem in {e}")),
        other => panic!("unexpected {other:?}"),
    }
}

/// A FIFO, a device or a directory where `config`, `commondir`, a `.git` file or `info/alternates` should be
/// is an error naming it (or, for alternates, a reported problem), never a hang; reads are bounded.
#[cfg(unix)]
#[test]
fn special_files_are_errors_never_hangs() {
    use crate::data::{FileKind, FileProblem};
    let fifo_problem = FileProblem::NotRegular {
        kind: FileKind::Fifo,
    };
    let tmp = tempfile::tempdir().unwrap();
    let git = tmp.path().join("repo.git");
    std::fs::create_dir_all(git.join("objects/info")).unwrap();
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    // config: a FIFO, /dev/zero (through a symbolic link), a directory, a file past the bound.
    let config = git.join("config");
    mkfifo(&config);
    let e = discover(&git).unwrap_err();
    assert_eq!(io_problem(&e, &config), fifo_problem);
    assert!(e.to_string().contains("FIFO"), "{e}");
    std::fs::remove_file(&config).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
    assert_eq!(
        io_problem(&object_format(&git).unwrap_err(), &config),
        FileProblem::NotRegular {
            kind: FileKind::CharDevice
        }
    );
    std::fs::remove_file(&config).unwrap();
    std::fs::create_dir(&config).unwrap();
    assert_eq!(
        io_problem(&object_format(&git).unwrap_err(), &config),
        FileProblem::NotRegular {
            kind: FileKind::Directory
        }
    );
    std::fs::remove_dir(&config).unwrap();
    let f = std::fs::File::create(&config).unwrap();
    f.set_len(MAX_CONFIG_LEN + 1).unwrap();
    drop(f);
    assert_eq!(
        io_problem(&object_format(&git).unwrap_err(), &config),
        FileProblem::TooLarge {
            len: MAX_CONFIG_LEN + 1,
            limit: MAX_CONFIG_LEN
        }
    );
    std::fs::write(&config, "[core]\n").unwrap();
    assert_eq!(discover(&git).unwrap().hash_kind, HashKind::Sha1);
    // info/alternates: reported, not fatal.
    let alternates_file = git.join("objects/info/alternates");
    mkfifo(&alternates_file);
    let alts = alternates(&git.join("objects")).unwrap();
    assert!(alts.dirs.is_empty());
    match &alts.problems[..] {
        [AlternateProblem::Unreadable { path, error }] => {
            assert_eq!(
                path,
                &git.join("objects")
                    .canonicalize()
                    .unwrap()
                    .join("info/alternates")
            );
            assert_eq!(crate::data::file_problem(error), Some(&fifo_problem));
        }
        other => panic!("{other:?}"),
    }
    // A .git file that is a FIFO, then one that is a file naming the repository.
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let dot_git = work.join(".git");
    mkfifo(&dot_git);
    assert_eq!(
        io_problem(&discover(&work).unwrap_err(), &dot_git),
        fifo_problem
    );
    assert_eq!(
        io_problem(&discover(&dot_git).unwrap_err(), &dot_git),
        fifo_problem
    );
    std::fs::remove_file(&dot_git).unwrap();
    std::fs::write(&dot_git, format!("gitdir: {}\n", git.display())).unwrap();
    assert_eq!(
        discover(&work).unwrap().objects_dir,
        git.join("objects").canonicalize().unwrap()
    );
    // A .git file longer than git accepts.
    std::fs::write(&dot_git, vec![b'x'; MAX_PATH_FILE_LEN as usize + 1]).unwrap();
    assert!(matches!(
        io_problem(&discover(&work).unwrap_err(), &dot_git),
        FileProblem::TooLarge { .. }
    ));
    // A linked worktree's commondir that is a FIFO.
    let wt = git.join("worktrees/w");
    std::fs::create_dir_all(&wt).unwrap();
    std::fs::write(
        wt.join("HEAD"),
        "0000000000000000000000000000000000000000\n",
    )
    .unwrap();
    let commondir = wt.join("commondir");
    mkfifo(&commondir);
    assert_eq!(
        io_problem(&discover(&wt).unwrap_err(), &commondir),
        fifo_problem
    );
    std::fs::remove_file(&commondir).unwrap();
    std::fs::write(&commondir, "../..\n").unwrap();
    assert_eq!(
        discover(&wt).unwrap().objects_dir,
        git.join("objects").canonicalize().unwrap()
    );
}
