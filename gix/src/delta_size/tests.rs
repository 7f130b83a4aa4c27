//! [`first_bytes`] against zlib-rs (through gix-zlib, as gix-pack calls it) on streams of every block kind, and on
//! damaged copies of them: wherever it answers, zlib writes the same 20 bytes without an error or the stream's end.

use gix_zlib::stream::deflate::{Compress, FlushCompress};
use gix_zlib::{Compression, Status};

use super::{LEN, first_bytes, zlib_first_bytes};

/// `data` compressed at `level`, fed in pieces of `piece` bytes each followed by `flush` (several blocks).
fn deflate(data: &[u8], level: i32, piece: usize, flush: FlushCompress) -> Vec<u8> {
    let mut c = Compress::new(Compression::new(level).expect("a valid level"));
    // Room for every piece's flush marker too (a few bytes each).
    let mut out = vec![0u8; data.len() * 2 + data.len() / piece.max(1) * 16 + 4096];
    for chunk in data.chunks(piece.max(1)) {
        let mut rest = chunk;
        while !rest.is_empty() {
            let before = c.total_in();
            let at = c.total_out() as usize;
            c.compress(rest, &mut out[at..], flush).expect("compress");
            assert!(c.total_in() > before, "the output buffer is large enough");
            rest = &rest[(c.total_in() - before) as usize..];
        }
    }
    loop {
        let at = c.total_out() as usize;
        if c.compress(&[], &mut out[at..], FlushCompress::Finish)
            .expect("finish")
            == Status::StreamEnd
        {
            break;
        }
    }
    out.truncate(c.total_out() as usize);
    out
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Inputs of the kinds a pack holds: delta-like (two size varints, then copy and insert instructions), text,
/// random bytes, runs; 21 to a few thousand bytes.
fn sample(rng: &mut Rng) -> Vec<u8> {
    let most = if rng.below(4) == 0 { 4000 } else { 200 };
    let len = 21 + rng.below(most);
    let mut v = Vec::with_capacity(len);
    match rng.below(4) {
        0 => {
            for _ in 0..2 {
                let mut size = rng.next() >> rng.below(60);
                loop {
                    let b = (size & 0x7f) as u8;
                    size >>= 7;
                    v.push(if size > 0 { b | 0x80 } else { b });
                    if size == 0 {
                        break;
                    }
                }
            }
            while v.len() < len {
                v.push(0x90 | (rng.below(16) as u8));
                v.push(rng.below(256) as u8);
            }
        }
        1 => {
            let words = [
                "fn ", "let ", "self", ".clone()", "\n    ", "Some(", "None", ";", "{", "}",
                "impl ",
            ];
            while v.len() < len {
                v.extend_from_slice(words[rng.below(words.len())].as_bytes());
            }
        }
        2 => v.extend((0..len).map(|_| rng.below(256) as u8)),
        _ => {
            while v.len() < len {
                let b = rng.below(256) as u8;
                v.extend(std::iter::repeat_n(b, 1 + rng.below(40)));
            }
        }
    }
    v.truncate(len);
    v
}

/// Valid streams: `first_bytes` gives the input's first 20 bytes, as zlib does, and answers for all those written
/// in one piece and most of those written in flushed pieces, whatever the block kinds (stored at level 0, fixed
/// and dynamic codes, several blocks per stream).
#[test]
fn answers_as_zlib_on_valid_streams() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let flushes = [
        FlushCompress::None,
        FlushCompress::Sync,
        FlushCompress::Partial,
        FlushCompress::Full,
    ];
    // Per stream shape (in one piece, in small pieces each flushed): streams, answered.
    let (mut total, mut answered) = ([0; 2], [0; 2]);
    let mut kinds = [0usize; 3];
    for i in 0..3000 {
        let data = sample(&mut rng);
        let level = (i % 10) as i32;
        let piece = if i % 3 == 0 {
            1 + rng.below(30)
        } else {
            data.len()
        };
        let stream = deflate(&data, level, piece, flushes[i % flushes.len()]);
        let mut input = stream.clone();
        input.extend_from_slice(&[0xa5; 32]); // what follows an entry in a pack
        let want = zlib_first_bytes(&input).expect("zlib writes 20 bytes of a longer stream");
        assert_eq!(&want[..], &data[..LEN]);
        let shape = usize::from(piece < data.len());
        total[shape] += 1;
        if let Some(got) = first_bytes(&input) {
            assert_eq!(got, want, "stream {i} (level {level}, piece {piece})");
            answered[shape] += 1;
            kinds[usize::from(stream[2] >> 1 & 3).min(2)] += 1;
        }
    }
    // A stream written in one piece is always answered; in small flushed pieces, a block may end at the 20th
    // byte (zlib then reads the next block's header: left to zlib).
    assert_eq!(answered[0], total[0], "streams in one piece answered");
    assert!(
        answered[1] * 10 >= total[1] * 7,
        "streams in pieces: {answered:?} of {total:?}"
    );
    assert!(
        kinds.iter().all(|&k| k > 0),
        "first blocks stored, fixed, dynamic: {kinds:?}"
    );
}

/// Damaged streams (a bit flipped, a byte changed, the input cut short): wherever `first_bytes` answers, zlib
/// writes the same 20 bytes without an error or the stream's end; where zlib errs or ends, it does not answer.
#[test]
fn never_answers_where_zlib_would_not_on_damaged_streams() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut tried, mut both, mut zlib_only, mut refused) = (0, 0, 0, 0);
    for i in 0..600i32 {
        let data = sample(&mut rng);
        let stream = deflate(&data, i % 10, data.len(), FlushCompress::None);
        for _ in 0..40 {
            let mut input = stream.clone();
            let at = rng.below(input.len().min(48));
            match rng.below(3) {
                0 => input[at] ^= 1 << rng.below(8),
                1 => input[at] = rng.below(256) as u8,
                _ => input.truncate(at),
            }
            tried += 1;
            match (first_bytes(&input), zlib_first_bytes(&input)) {
                (Some(got), Some(want)) => {
                    assert_eq!(got, want, "stream {i}");
                    both += 1;
                }
                (Some(got), None) => {
                    panic!("stream {i}: answered {got:?} where zlib errs or ends: {input:?}")
                }
                (None, Some(_)) => zlib_only += 1,
                (None, None) => refused += 1,
            }
        }
    }
    // The damage reaches the decoding (not only the header checks) and both outcomes occur.
    assert!(
        both > tried / 20 && refused > tried / 20,
        "{both} answered, {zlib_only} left to zlib, {refused} refused of {tried}"
    );
}

/// Hand-made streams at the edges zlib checks: the symbol after the 20th byte (a literal, a copy, the block's
/// end), a stored block that ends at the 20th byte, a stream that ends early.
#[test]
fn edges_zlib_checks() {
    // Stored blocks: header 0x78 0x01, then a final stored block of `n` bytes.
    let stored = |n: u16, extra: &[u8]| {
        let mut v = vec![0x78, 0x01, 0x01];
        v.extend_from_slice(&n.to_le_bytes());
        v.extend_from_slice(&(!n).to_le_bytes());
        v.extend((0..n).map(|b| b as u8));
        v.extend_from_slice(extra);
        v
    };
    let tail = [0u8; 8];
    // 21 bytes: zlib stops inside the block.
    assert_eq!(
        first_bytes(&stored(21, &tail)),
        zlib_first_bytes(&stored(21, &tail))
    );
    assert!(first_bytes(&stored(21, &tail)).is_some());
    // 20 bytes, the block's end at the 20th: zlib reads on (the check value): left to zlib.
    assert_eq!(first_bytes(&stored(20, &tail)), None);
    // 19 bytes: the stream ends first.
    assert_eq!(first_bytes(&stored(19, &tail)), None);
    assert_eq!(zlib_first_bytes(&stored(19, &tail)), None);
    // A bad length check.
    let mut bad = stored(30, &tail);
    bad[5] ^= 1;
    assert_eq!(first_bytes(&bad), None);
    // A preset dictionary, a bad header check, another method.
    for (cmf, flg) in [(0x78, 0x20 | 0x1b), (0x78, 0x02), (0x79, 0x01)] {
        let mut v = stored(30, &tail);
        v[0] = cmf;
        v[1] = flg;
        assert_eq!(first_bytes(&v), None, "{cmf:#x} {flg:#x}");
    }
    // Exactly 20 bytes of text, then the end: zlib reads the end-of-block code after the 20th byte.
    let twenty = deflate(b"abcdefghijklmnopqrst", 6, 20, FlushCompress::None);
    assert_eq!(first_bytes(&twenty), None);
    let more = deflate(b"abcdefghijklmnopqrstu", 6, 21, FlushCompress::None);
    assert_eq!(first_bytes(&more), Some(*b"abcdefghijklmnopqrst"));
    // A copy running past the 20th byte.
    let runs = deflate(&[7u8; 100], 6, 100, FlushCompress::None);
    assert_eq!(first_bytes(&runs), Some([7u8; LEN]));
}

/// Arbitrary bytes behind a valid zlib header (every block type's bits, code sets complete or not, lengths and
/// distances reaching before the start): never a panic (the debug build's overflow checks included), and
/// wherever `first_bytes` answers, zlib writes the same 20 bytes.
#[test]
fn arbitrary_bytes_never_panic_nor_disagree() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut answered = 0;
    for i in 0..200_000 {
        let len = rng.below(80);
        let mut input = vec![0x78, 0x9c];
        input.extend((0..len).map(|_| rng.next() as u8));
        if let Some(got) = first_bytes(&input) {
            assert_eq!(Some(got), zlib_first_bytes(&input), "input {i}: {input:?}");
            answered += 1;
        }
    }
    // Random fixed-code blocks decode 20 literals often enough for the comparison to be exercised.
    assert!(answered > 100, "{answered} answered");
}
