//! Arbitrary bytes as a pack index (`.idx`) of both hash kinds: opening, lookups of ids taken from the input,
//! iteration and verification must never panic. Offsets are checked when used (opening is constant time):
//! `find` answers an offset only if it is past the pack header, inside the 64-bit table's range and (with a
//! pack length) before the pack's trailer, and otherwise names the problem; `lookup` answers exactly what
//! `find` answers. A file that verifies finds every id it lists, with or without the pack's length.
#![no_main]

use libfuzzer_sys::fuzz_target;
use odb_index::HashKind;
use odb_index::data::Data;
use odb_index::idx::PackIndex;
use odb_index::testing::{PackIndexExt, offset_in_pack};

/// Entries looked at per input (keeps each execution fast on huge claimed counts).
const MAX_ENTRIES: u32 = 4096;

fuzz_target!(|data: &[u8]| {
    for kind in [HashKind::Sha1, HashKind::Sha256] {
        let Ok(idx) = PackIndex::from_data(Data::from(data.to_vec()), "fuzz.idx".into(), kind)
        else {
            continue;
        };
        let h = kind.len();
        // A pack length taken from the input too (0 when short), so the bound is sometimes hit.
        let pack_len = data
            .get(..8)
            .map_or(0, |b| u64::from_be_bytes(b.try_into().unwrap()) % (1 << 34));
        // Ids taken from the input at every id-aligned position, and a few of other lengths.
        for w in data.chunks(h) {
            let found = idx.find(w);
            let a = idx.lookup(w);
            let b = idx.lookup_binary(w);
            assert_eq!(a, found.clone().ok().flatten(), "lookup disagrees with find");
            if w.len() != h {
                assert_eq!(found, Ok(None), "an id of the wrong length was found");
            }
            if let Some(off) = a {
                assert!(off >= 12, "an offset inside the pack header was answered");
            }
            let _ = b;
        }
        let _ = (idx.pack_checksum(), idx.index_checksum(), idx.version());
        let n = idx.len();
        let listed = idx.iter().take(MAX_ENTRIES as usize).count();
        let verified = idx.verify().is_ok();
        let mut readable = 0usize;
        for i in 0..n.min(MAX_ENTRIES) {
            let id = idx.id_at(i).expect("id_at below len()");
            let checked = idx.checked_offset_at(i).expect("checked_offset_at below len()");
            let raw = idx.offset_at(i);
            let _ = idx.crc32_at(i);
            readable += usize::from(raw.is_some());
            if let Ok(off) = checked {
                assert_eq!(raw, Some(off), "checked and raw offsets differ");
                assert!(off >= 12);
            }
            if verified {
                // Sorted, bucketed, checksummed, every offset usable: both searches find every listed id.
                let off = checked.expect("verify passed a bad offset");
                assert_eq!(idx.lookup(id), Some(off), "interpolated search missed entry {i}");
                assert_eq!(idx.lookup_binary(id), Some(off), "binary search missed entry {i}");
            }
        }
        assert_eq!(listed, readable, "iter() disagrees with offset_at");
        let _ = (idx.id_at(n), idx.offset_at(n), idx.id_at(u32::MAX));
        // With the pack's length: an offset is answered only inside the pack.
        let bounded = idx.with_pack_len(pack_len);
        for w in data.chunks(h).take(MAX_ENTRIES as usize) {
            if let Ok(Some(off)) = bounded.find(w) {
                assert!(offset_in_pack(off, pack_len, h), "{off} outside a {pack_len}-byte pack");
            }
        }
        if bounded.verify().is_ok() {
            for i in 0..n.min(MAX_ENTRIES) {
                let off = bounded.offset_at(i).expect("verified");
                assert!(offset_in_pack(off, pack_len, h), "verify passed {off} in a {pack_len}-byte pack");
            }
        }
    }
});
