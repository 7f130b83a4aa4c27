//! The lazy-loading protocol. (To be written.)
