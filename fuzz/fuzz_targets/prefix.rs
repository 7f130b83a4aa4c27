//! Arbitrary bytes as the start of a pack entry's zlib stream: the adapter's prefix decoder
//! (`odb-index-gix`'s `delta_size::first_bytes`, which reads a delta's first 20 bytes without zlib's decoding tables)
//! must answer only where zlib-rs, asked for the same 20 bytes as gix-pack asks for them, writes those same bytes
//! and reports neither an error nor the stream's end; anywhere else it must answer `None` (the adapter then asks
//! gix-pack). It must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use odb_index_gix::fuzzing::{first_bytes, zlib_first_bytes};

fuzz_target!(|data: &[u8]| {
    if let Some(ours) = first_bytes(data) {
        assert_eq!(
            Some(ours),
            zlib_first_bytes(data),
            "the decoder answered where zlib does not write these bytes"
        );
    }
});
