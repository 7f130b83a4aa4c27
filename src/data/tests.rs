//! The guarded read's tests: special files refused without blocking, bounds, sparse files, positioned reads.

use super::*;
use odb_index_testkit::mkfifo;

#[test]
fn fifos_sockets_devices_and_directories_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let sock = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    for (path, kind) in [
        (fifo.as_path(), FileKind::Fifo),
        (sock.as_path(), FileKind::Socket),
        (Path::new("/dev/zero"), FileKind::CharDevice),
        (dir.path(), FileKind::Directory),
    ] {
        for e in [
            open_regular(path).map(|_| ()).unwrap_err(),
            read_bounded(path, 100).map(|_| ()).unwrap_err(),
            read_tail(path, 20).map(|_| ()).unwrap_err(),
            Data::open(path, LoadMode::Mmap).map(|_| ()).unwrap_err(),
            Data::open(path, LoadMode::Read).map(|_| ()).unwrap_err(),
        ] {
            assert_eq!(
                file_problem(&e),
                Some(&FileProblem::NotRegular { kind }),
                "{}: {e}",
                path.display()
            );
        }
    }
}

#[test]
fn a_symlink_to_a_fifo_is_refused_and_to_a_file_followed() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let to_fifo = dir.path().join("to-fifo");
    std::os::unix::fs::symlink(&fifo, &to_fifo).unwrap();
    let e = read_bounded(&to_fifo, 10).unwrap_err();
    assert!(matches!(
        file_problem(&e),
        Some(FileProblem::NotRegular {
            kind: FileKind::Fifo
        })
    ));
    let file = dir.path().join("file");
    std::fs::write(&file, b"abc").unwrap();
    let to_file = dir.path().join("to-file");
    std::os::unix::fs::symlink(&file, &to_file).unwrap();
    assert_eq!(read_bounded(&to_file, 10).unwrap(), b"abc");
}

#[test]
fn bounded_reads_and_tails() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"0123456789").unwrap();
    assert_eq!(read_bounded(&file, 10).unwrap(), b"0123456789");
    let e = read_bounded(&file, 9).unwrap_err();
    assert_eq!(
        file_problem(&e),
        Some(&FileProblem::TooLarge { len: 10, limit: 9 })
    );
    assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
    assert_eq!(read_tail(&file, 3).unwrap(), (10, b"789".to_vec()));
    assert_eq!(read_tail(&file, 10).unwrap(), (10, b"0123456789".to_vec()));
    let e = read_tail(&file, 11).unwrap_err();
    assert_eq!(
        file_problem(&e),
        Some(&FileProblem::TooShort { len: 10, need: 11 })
    );
    let missing = dir.path().join("missing");
    assert_eq!(
        read_bounded(&missing, 10).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    assert_eq!(
        read_tail(&missing, 1).unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
}

#[test]
fn sparse_files_are_mapped_but_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sparse");
    let f = File::create(&file).unwrap();
    f.set_len(1 << 30).unwrap();
    drop(f);
    let e = Data::open(&file, LoadMode::Read).unwrap_err();
    match file_problem(&e) {
        Some(FileProblem::Sparse { len, allocated }) => {
            assert_eq!(*len, 1 << 30);
            assert!(*allocated < 1 << 29, "{allocated}");
        }
        other => panic!("{other:?}: {e}"),
    }
    let map = Data::open(&file, LoadMode::Mmap).unwrap();
    assert_eq!(map.len(), 1 << 30);
    // A small file, or a dense one, is read.
    std::fs::write(&file, vec![7u8; 3 << 20]).unwrap();
    assert_eq!(Data::open(&file, LoadMode::Read).unwrap().len(), 3 << 20);
}

#[test]
fn problems_display() {
    for p in [
        FileProblem::NotRegular {
            kind: FileKind::Fifo,
        },
        FileProblem::TooLarge { len: 2, limit: 1 },
        FileProblem::Sparse {
            len: 2,
            allocated: 1,
        },
        FileProblem::TooShort { len: 1, need: 2 },
    ] {
        let e: io::Error = p.clone().into();
        assert_eq!(e.to_string(), p.to_string());
        assert_eq!(file_problem(&e), Some(&p));
    }
}
