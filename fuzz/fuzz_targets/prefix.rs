//! Arbitrary bytes as the start of a pack entry's zlib stream: the adapter's prefix decoder
//! (`odb-index-gix`'s `prefix::first_bytes`, which reads a delta's first 20 bytes without zlib's decoding tables)
//! must answer only where zlib-rs, asked for the same 20 bytes as gix-pack asks for them, writes those same bytes
//! and reports neither an error nor the stream's end; anywhere else it must answer `None` (the adapter then asks
//! gix-pack). It must never panic.
#![no_main]

use gix_zlib::Status;
use libfuzzer_sys::fuzz_target;
use odb_index_gix::fuzzing::{LEN, first_bytes};

/// What gix-pack's `decode_delta_object_size` gets from zlib for `input`: the bytes when zlib writes all of them
/// and neither errs nor ends the stream.
fn zlib_first_bytes(input: &[u8]) -> Option<[u8; LEN]> {
    let mut inflate = gix_zlib::Inflate::default();
    let mut buf = [0u8; LEN];
    match inflate.prefix(input, &mut buf) {
        Ok((status, _, n)) if status != Status::StreamEnd && n == LEN => Some(buf),
        _ => None,
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some(ours) = first_bytes(data) {
        assert_eq!(
            Some(ours),
            zlib_first_bytes(data),
            "the decoder answered where zlib does not write these bytes"
        );
    }
});
