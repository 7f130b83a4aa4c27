//! Arbitrary bytes as a pack index (`.idx`) of both hash kinds: opening, lookups of ids taken from the input,
//! iteration and verification must never panic; a file that verifies must find every id it lists.
#![no_main]

use libfuzzer_sys::fuzz_target;
use odb_index::HashKind;
use odb_index::data::Data;
use odb_index::idx::PackIndex;

/// Entries looked at per input (keeps each execution fast on huge claimed counts).
const MAX_ENTRIES: u32 = 4096;

fuzz_target!(|data: &[u8]| {
    for kind in [HashKind::Sha1, HashKind::Sha256] {
        let Ok(idx) = PackIndex::from_data(Data::from(data.to_vec()), "fuzz.idx".into(), kind)
        else {
            continue;
        };
        let h = kind.len();
        // Ids taken from the input at every id-aligned position, and a few of other lengths.
        for w in data.chunks(h) {
            let a = idx.lookup(w);
            let b = idx.lookup_binary(w);
            if w.len() != h {
                assert_eq!(a, None, "an id of the wrong length was found");
            }
            let _ = (a, b);
        }
        let _ = (idx.pack_checksum(), idx.index_checksum(), idx.version());
        let n = idx.len();
        let listed = idx.iter().take(MAX_ENTRIES as usize).count();
        let verified = idx.verify().is_ok();
        for i in 0..n.min(MAX_ENTRIES) {
            let id = idx.id_at(i).expect("id_at below len()");
            let off = idx.offset_at(i).expect("offset_at below len()");
            let _ = idx.crc32_at(i);
            if verified {
                // Sorted, bucketed, checksummed: both searches find every listed id at its offset.
                assert_eq!(
                    idx.lookup(id),
                    Some(off),
                    "interpolated search missed entry {i}"
                );
                assert_eq!(
                    idx.lookup_binary(id),
                    Some(off),
                    "binary search missed entry {i}"
                );
            }
        }
        assert_eq!(listed as u32, n.min(MAX_ENTRIES), "iter() skipped entries");
        let _ = (idx.id_at(n), idx.offset_at(n), idx.id_at(u32::MAX));
    }
});
