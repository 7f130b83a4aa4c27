//! What else a caller asks of the store beyond one id's location: ids by prefix (`prefix.rs`), every object
//! (`iter.rs`), a lookup in one named pack (`in_pack.rs`), every copy of an object (`copies.rs`), a pack's
//! description and liveness (`pack.rs`) and the check of every index against its pack (`verify.rs`).

pub(in crate::store) mod copies;
pub(in crate::store) mod in_pack;
pub(in crate::store) mod iter;
pub(in crate::store) mod pack;
pub(in crate::store) mod prefix;
pub(in crate::store) mod verify;
