//! The miss filters' build: the store's split-block Bloom filter beside a binary fuse filter.

use super::*;

/// The split-block Bloom filter (the store's) and a binary fuse filter (xorf's `BinaryFuse8`) over the same
/// ids: build time per million ids, bytes per id, false-positive rate over fresh absent ids, ns per query.
pub(super) fn filter_build(ids: &[ObjectId], fresh: &Ids, runs: usize) -> Result<Vec<Row>, String> {
    use odb_index::testing::SplitBlockBloom;
    use xorf::Filter as _;
    let n = ids.len();
    let key = |id: &[u8]| u64::from_le_bytes(id[..8].try_into().expect("8 bytes"));
    let (mut sb_build, mut bf_build) = (Vec::new(), Vec::new());
    let mut sb = None;
    let mut bf = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        let f = SplitBlockBloom::from_ids(n, ids.iter().map(|id| id.as_bytes()));
        sb_build.push(t.elapsed().as_nanos() as f64);
        sb = Some(f);
        let t = Instant::now();
        // Binary fuse filters want distinct keys: sort and deduplicate first (part of the build).
        let mut keys: Vec<u64> = ids.iter().map(|id| key(id.as_bytes())).collect();
        keys.sort_unstable();
        keys.dedup();
        let f = xorf::BinaryFuse8::try_from(&keys).map_err(|e| format!("BinaryFuse8: {e}"))?;
        bf_build.push(t.elapsed().as_nanos() as f64);
        bf = Some(f);
    }
    let (sb, bf) = (sb.expect("built"), bf.expect("built"));
    // False positives and query time over the fresh absent ids.
    let (sb_fp, sb_ns) = false_positives(fresh, |id| sb.may_contain(black_box(id)));
    let (bf_fp, bf_ns) = false_positives(fresh, |id| bf.contains(&key(black_box(id))));
    let present_ok = ids.iter().all(|id| sb.may_contain(id.as_bytes()))
        && ids.iter().all(|id| bf.contains(&key(id.as_bytes())));
    if !present_ok {
        return Err("filter-build: a filter missed an inserted id".into());
    }
    let row = |arm: &str, build: &[f64], bytes: usize, fp: usize, q: f64| {
        let (bmin, bmed) = min_median(build);
        let per_m = bmed / 1e6 * 1e6 / n as f64;
        let rate = fp as f64 / fresh.len() as f64;
        Row {
            ns_min: Some(q),
            ns_median: Some(q),
            runs: build.len(),
            lookups: fresh.len(),
            note: format!(
                "{n} ids: build {:.1} ms median (min {:.1}; {per_m:.1} ms per million ids), {:.3} B/id, {:.3}% false positives; ns columns: one query of a fresh absent id",
                bmed / 1e6,
                bmin / 1e6,
                bytes as f64 / n as f64,
                100.0 * rate
            ),
            ..Row::new("filter-build", arm)
        }
        .with("build_ms_per_million_ids", Val::Num(per_m))
        .with("bytes_per_id", Val::Num(bytes as f64 / n as f64))
        .with("false_positive_rate", Val::Num(rate))
    };
    eprintln!("bench: filter-build done");
    Ok(vec![
        row(
            "split-block Bloom (store)",
            &sb_build,
            sb.bytes(),
            sb_fp,
            sb_ns,
        ),
        row(
            "binary fuse 8 (xorf)",
            &bf_build,
            bf.fingerprints.len() + std::mem::size_of_val(&bf),
            bf_fp,
            bf_ns,
        ),
    ])
}

/// How many of the `fresh` (absent) ids `may_contain` lets through, and its ns per query.
fn false_positives(fresh: &Ids, may_contain: impl Fn(&[u8]) -> bool) -> (usize, f64) {
    let t = Instant::now();
    let fp = fresh.raw.iter().filter(|id| may_contain(&id[..])).count();
    (fp, t.elapsed().as_nanos() as f64 / fresh.len() as f64)
}
