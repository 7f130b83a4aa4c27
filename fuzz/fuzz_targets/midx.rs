//! Arbitrary bytes as a multi-pack-index of both hash kinds: opening, lookups of ids taken from the input,
//! iteration and verification must never panic; a file that verifies must find every id it lists.
#![no_main]

use libfuzzer_sys::fuzz_target;
use odb_index::HashKind;
use odb_index::data::Data;
use odb_index::midx::MultiPackIndex;

/// Entries looked at per input (keeps each execution fast on huge claimed counts).
const MAX_ENTRIES: usize = 4096;

fuzz_target!(|data: &[u8]| {
    for kind in [HashKind::Sha1, HashKind::Sha256] {
        let Ok(midx) =
            MultiPackIndex::from_data(Data::from(data.to_vec()), "multi-pack-index".into(), kind)
        else {
            continue;
        };
        let h = kind.len();
        let packs = midx.pack_names().len();
        for w in data.chunks(h) {
            let r = midx.lookup(w);
            if w.len() != h {
                assert_eq!(r, None, "an id of the wrong length was found");
            }
            if let Some((pack, _)) = r {
                assert!((pack as usize) < packs, "pack int id {pack} out of range");
            }
        }
        let _ = (
            midx.len(),
            midx.is_empty(),
            midx.version(),
            midx.hash_kind(),
        );
        let verified = midx.verify().is_ok();
        let mut seen = 0usize;
        for (id, pack, off) in midx.iter().take(MAX_ENTRIES) {
            seen += 1;
            assert!((pack as usize) < packs, "pack int id {pack} out of range");
            if verified {
                assert_eq!(
                    midx.lookup(id.as_bytes()),
                    Some((pack, off)),
                    "listed id not found"
                );
            }
        }
        assert_eq!(
            seen,
            (midx.len() as usize).min(MAX_ENTRIES),
            "iter() skipped entries"
        );
    }
});
