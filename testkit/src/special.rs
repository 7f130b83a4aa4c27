//! Special files for the tests of hostile repositories: a FIFO where a file is expected.

use std::path::Path;

/// Make a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

/// Put a FIFO where `path` is, by rename (as a hostile rename over a listed file would).
pub fn fifo_over(path: &Path) {
    let tmp = path.with_file_name("tmp_hostile_fifo");
    mkfifo(&tmp);
    std::fs::rename(&tmp, path).unwrap();
}
