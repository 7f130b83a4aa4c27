//! Why a batch stops: git's fatal errors ([`Fatal`]) and the other errors around them ([`Stop`]).

/// Why the command stops as git dies: git's message (without `fatal: `), exit status 128.
#[derive(Debug)]
pub struct Fatal(pub String);

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
    Fatal(Fatal),
}

impl From<Fatal> for Stop {
    fn from(e: Fatal) -> Stop {
        Stop::Fatal(e)
    }
}

impl From<odb_index::Error> for Stop {
    fn from(e: odb_index::Error) -> Stop {
        Stop::Store(e)
    }
}
