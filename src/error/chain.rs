//! What is wrong with an incremental multi-pack-index chain (re-exported as
//! `odb_index::midx::ChainProblem`).

use crate::oid::{HashKind, ObjectId};

/// What is wrong with a chain file or one of its layers.
///
/// ```
/// # let repo = tempfile::tempdir()?;
/// # let git = |args: &[&str]| std::process::Command::new("git").arg("-C").arg(repo.path()).args(args).output();
/// # git(&["init", "-q"])?;
/// # std::fs::write(repo.path().join("hello.txt"), "hello\n")?;
/// # git(&["add", "hello.txt"])?; // the blob ce013625030ba8dba906f756967f9e9ca394464a
/// # git(&["repack", "-adq"])?; // now in one pack
/// use odb_index::midx::ChainProblem;
/// use odb_index::{Error, Options, Store};
///
/// // An incremental multi-pack-index chain whose file is shorter than one checksum line.
/// let chain = repo.path().join(".git/objects/pack/multi-pack-index.d");
/// std::fs::create_dir(&chain)?;
/// std::fs::write(chain.join("multi-pack-index-chain"), "not a checksum\n")?;
/// let store = Store::open(repo.path(), Options::default())?;
/// let bad = store.verify().into_iter().find(|v| v.result.is_err()).expect("the chain is reported");
/// match bad.result {
///     Err(Error::CorruptChain { problem: ChainProblem::TooSmall { len: 15 }, .. }) => {}
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChainProblem {
    /// A line of the chain file is not a hex object id of the repository's kind.
    #[error("line {line} is not a {kind} checksum")]
    BadLine {
        /// The line number (1-based).
        line: usize,
        /// The repository's hash kind.
        kind: HashKind,
    },
    /// The chain file is shorter than one checksum (git: "multi-pack-index chain file too small").
    #[error("the chain file is too small ({len} bytes)")]
    TooSmall {
        /// Its length.
        len: u64,
    },
    /// A layer does not end with the checksum it is named after.
    #[error("the layer's checksum is {found}, not the {expected} it is named after")]
    ChecksumMismatch {
        /// The checksum in its name.
        expected: ObjectId,
        /// Its trailer.
        found: ObjectId,
    },
}
