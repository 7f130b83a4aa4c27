//! Finding a repository's objects directory, its object format and its alternates. (To be written.)
