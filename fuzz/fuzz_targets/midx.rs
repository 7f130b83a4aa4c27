//! Arbitrary bytes as a multi-pack-index of both hash kinds: opening, lookups of ids taken from the input,
//! iteration and verification must never panic; a file that verifies must find every id it lists.
#![no_main]

use libfuzzer_sys::fuzz_target;
use odb_index::HashKind;
use odb_index::data::Data;
use odb_index::midx::MultiPackIndex;
use odb_index::testing::MultiPackIndexExt;

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
        // Pack lengths taken from the input (entries are checked when used, against them when given).
        let lens: Vec<u64> = data
            .chunks_exact(8)
            .take(packs)
            .map(|b| u64::from_be_bytes(b.try_into().unwrap()) % (1 << 34))
            .collect();
        for w in data.chunks(h) {
            // The store's lookup (the bounds of the pack lengths) and the check that explains a bad entry agree.
            assert!(
                midx.fuzz_bounds_agree(w, &lens),
                "the lookup with the packs' bounds disagrees with the check that explains a bad entry"
            );
            let r = midx.lookup(w);
            assert_eq!(r, midx.find(w).ok().flatten(), "lookup disagrees with find");
            if w.len() != h {
                assert_eq!(r, None, "an id of the wrong length was found");
            }
            if let Some((pack, off)) = r {
                assert!((pack as usize) < packs, "pack int id {pack} out of range");
                assert!(off >= 12, "an offset inside the pack header was answered");
            }
            if let Ok(Some((pack, off))) = midx.find_in(w, &lens) {
                if let Some(&len) = lens.get(pack as usize) {
                    assert!(off < len.saturating_sub(h as u64), "{off} past a {len}-byte pack");
                }
            }
        }
        let _ = (
            midx.len(),
            midx.is_empty(),
            midx.version(),
            midx.hash_kind(),
        );
        let verified = midx.verify().is_ok();
        // The store's miss confirmation: never panics, and a file that verifies has every bucket in order.
        for first in 0..=255u8 {
            let in_order = midx.fuzz_bucket_in_order(first);
            assert!(in_order || !verified, "bucket {first} out of order in a file that verifies");
        }
        let mut seen = 0usize;
        for (id, pack, off) in midx.iter().take(MAX_ENTRIES) {
            seen += 1;
            assert!((pack as usize) < packs, "pack int id {pack} out of range");
            assert!(off >= 12, "an offset inside the pack header was listed");
            if verified {
                assert_eq!(
                    midx.lookup(id.as_bytes()),
                    Some((pack, off)),
                    "listed id not found"
                );
            }
        }
        if verified {
            // Every entry checked by verify: iteration skips none.
            assert_eq!(
                seen,
                (midx.len() as usize).min(MAX_ENTRIES),
                "iter() skipped entries of a verified file"
            );
        }
    }
});
