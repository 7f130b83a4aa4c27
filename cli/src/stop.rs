//! Why a batch stops: git's fatal errors ([`GitFatal`]) and the other errors around them ([`Stop`]).

/// Why the command stops as git dies: git's message (without `fatal: `), exit status 128.
#[derive(Debug)]
pub struct GitFatal(pub String);

/// What stops a batch: an I/O error on the side it happened, or git's fatal error (after the answers written
/// so far).
#[derive(Debug)]
pub enum Stop {
    /// Reading standard input.
    Input(std::io::Error),
    /// Writing standard output.
    Output(std::io::Error),
    /// The store failed (listing its objects for `--batch-all-objects`).
    Store(odb_index::Error),
    /// An object or command git dies on.
    Git(GitFatal),
}

impl From<GitFatal> for Stop {
    fn from(e: GitFatal) -> Stop {
        Stop::Git(e)
    }
}

impl From<odb_index::Error> for Stop {
    fn from(e: odb_index::Error) -> Stop {
        Stop::Store(e)
    }
}
