//! A delta's result size without zlib's decoding tables: the first [`LEN`] bytes of a zlib stream, decoded
//! canonically (as zlib's `contrib/puff` does: a code's length found by comparing the next 15 bits with each
//! length's last code, a 128-entry table for the 19-symbol code-length code only) where zlib-rs builds full
//! lookup tables.
//!
//! A header read of a delta entry (`cat-file --batch-check`, [`Objects::info`](crate::Objects::info)) needs the
//! delta's result size: the second varint of its first bytes. gix-pack inflates the first 20 bytes with zlib-rs,
//! whose setup of a dynamic block fills lookup tables of 2^9 and more entries before the first byte comes out:
//! about 59 000 instructions a delta entry, nine tenths of the header reads of the bench's real history
//! (docs/BENCHMARKS.md, "Batches"). Twenty bytes need about twenty symbols, which need no table.
//!
//! [`first_bytes`] answers only where zlib, asked for the same 20 bytes of the same input (gix-pack's
//! `decompress_entry_from_data_offset_unchecked`), writes those bytes and reports neither an error nor the end of
//! the stream: it checks what zlib checks on the way (the header, every block's code sets, which must be
//! complete, the symbols and distances used) and also decodes the symbol after the 20th byte where zlib does
//! (zlib reads the next code before it stops). Anything else (an unusual or damaged stream, input that runs out)
//! is `None`, and the caller asks gix-pack, whose answer or error stands: this path changes the cost of an answer,
//! never the answer.

/// How many bytes [`first_bytes`] decodes: what gix-pack's `decode_delta_object_size` asks zlib for.
pub(crate) const LEN: usize = 20;

/// The first [`LEN`] bytes of the zlib stream at the start of `input`, if zlib would write them as they are and
/// stop there without an error or the stream's end (see the module's documentation); `None` otherwise.
pub(crate) fn first_bytes(input: &[u8]) -> Option<[u8; LEN]> {
    let (&cmf, &flg) = (input.first()?, input.get(1)?);
    // zlib's header checks: deflate, a window of at most 32 KiB, the check bits, no preset dictionary.
    if cmf & 0x0f != 8
        || cmf >> 4 > 7
        || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0
        || flg & 0x20 != 0
    {
        return None;
    }
    let mut s = State {
        bits: Bits {
            input,
            pos: 2,
            buf: 0,
            cnt: 0,
        },
        out: [0; LEN],
        n: 0,
    };
    loop {
        let last = s.bits.take(1)? == 1;
        let done = match s.bits.take(2)? {
            0 => s.stored()?,
            1 => s.codes(&FIXED_LENGTHS, &FIXED_DISTANCES)?,
            2 => {
                let (lengths, distances) = s.dynamic_codes()?;
                s.codes(&lengths, &distances)?
            }
            _ => return None,
        };
        if done {
            return Some(s.out);
        }
        if last {
            // The stream ends before LEN bytes: zlib reports its end (gix-pack then compares sizes).
            return None;
        }
    }
}

/// The bit reader: deflate's bits, least significant first.
struct Bits<'a> {
    input: &'a [u8],
    pos: usize,
    buf: u64,
    cnt: u32,
}

impl Bits<'_> {
    /// The next `n` (at most 16) bits, or `None` where the input ends first.
    #[inline]
    fn take(&mut self, n: u32) -> Option<u32> {
        while self.cnt < n {
            let b = *self.input.get(self.pos)?;
            self.pos += 1;
            self.buf |= u64::from(b) << self.cnt;
            self.cnt += 8;
        }
        Some(self.take_held(n))
    }

    /// The next `n` bits, which the buffer holds.
    #[inline]
    fn take_held(&mut self, n: u32) -> u32 {
        let v = (self.buf & ((1u64 << n) - 1)) as u32;
        self.buf >>= n;
        self.cnt -= n;
        v
    }

    /// Fills the buffer to at least 15 bits where the input has them (fewer at its end: the bits above are zero).
    #[inline]
    fn refill(&mut self) {
        while self.cnt < 15 {
            let Some(&b) = self.input.get(self.pos) else {
                return;
            };
            self.pos += 1;
            self.buf |= u64::from(b) << self.cnt;
            self.cnt += 8;
        }
    }

    /// The next 15 bits as a code is read, first bit highest, and the buffer filled for them.
    #[inline]
    fn peek15(&mut self) -> u32 {
        self.refill();
        u32::from((self.buf as u16).reverse_bits() >> 1)
    }
}

/// A canonical Huffman code: the symbols in code order, and per length the end of its codes (left-aligned to 15
/// bits) and where its symbols start, for a decode that compares the next 15 bits with each length's end.
struct Code<const N: usize> {
    limit: [u32; 16],
    base: [i32; 16],
    symbol: [u16; N],
}

impl<const N: usize> Code<N> {
    /// The code of `lengths` (each at most 15), if it is complete: `None` for an over-subscribed or incomplete
    /// set, which zlib rejects (or, for a lone length-1 code or no distance code at all, accepts: that rare case
    /// goes to zlib too).
    const fn new(lengths: &[u8]) -> Option<Code<N>> {
        let mut count = [0u16; 16];
        let mut i = 0;
        while i < lengths.len() {
            count[lengths[i] as usize] += 1;
            i += 1;
        }
        let mut c = Code {
            limit: [0; 16],
            base: [0; 16],
            symbol: [0; N],
        };
        // Canonical codes: each length's first code follows the previous length's last, doubled.
        let (mut left, mut code, mut offs) = (1i32, 0u32, [0u16; 16]);
        let mut len = 1;
        while len < 16 {
            left = (left << 1) - count[len] as i32;
            if left < 0 {
                return None;
            }
            let n = count[len] as u32;
            c.limit[len] = (code + n) << (15 - len);
            c.base[len] = offs[len] as i32 - code as i32;
            if len < 15 {
                offs[len + 1] = offs[len] + count[len];
            }
            code = (code + n) << 1;
            len += 1;
        }
        if left != 0 {
            return None;
        }
        let mut sym = 0;
        while sym < lengths.len() {
            let l = lengths[sym] as usize;
            if l != 0 {
                c.symbol[offs[l] as usize] = sym as u16;
                offs[l] += 1;
            }
            sym += 1;
        }
        Some(c)
    }

    /// [`Code::new`] at run time, for `lengths` whose `count` per length the caller kept as it read them.
    #[inline]
    fn with_counts(lengths: &[u8], count: &[u16; 16]) -> Option<Code<N>> {
        let mut c = Code {
            limit: [0; 16],
            base: [0; 16],
            symbol: [0; N],
        };
        let (mut left, mut code, mut offs) = (1i32, 0u32, [0u16; 16]);
        for len in 1..16 {
            left = (left << 1) - i32::from(count[len]);
            if left < 0 {
                return None;
            }
            let n = u32::from(count[len]);
            c.limit[len] = (code + n) << (15 - len);
            c.base[len] = i32::from(offs[len]) - code as i32;
            if len < 15 {
                offs[len + 1] = offs[len] + count[len];
            }
            code = (code + n) << 1;
        }
        if left != 0 {
            return None;
        }
        for (sym, &l) in lengths.iter().enumerate() {
            if l != 0 {
                let o = &mut offs[usize::from(l & 15)];
                *c.symbol.get_mut(usize::from(*o))? = sym as u16;
                *o += 1;
            }
        }
        Some(c)
    }

    /// The next symbol (`None` where the input ends first).
    #[inline]
    fn decode(&self, bits: &mut Bits<'_>) -> Option<u16> {
        let next = bits.peek15();
        let mut len = 1;
        // A complete code's last end is 2^15: every 15 bits end some length's codes.
        while len < 15 && next >= self.limit[len] {
            len += 1;
        }
        if bits.cnt < len as u32 {
            return None;
        }
        bits.take_held(len as u32);
        let i = self.base[len] + (next >> (15 - len)) as i32;
        self.symbol.get(i as usize).copied()
    }
}

/// The fixed literal/length code of block type 1 (its symbols 286 and 287 are invalid where they occur).
const FIXED_LENGTHS: Code<288> = match Code::new(&fixed_lengths()) {
    Some(c) => c,
    None => panic!("the fixed literal/length code is complete"),
};

/// The fixed distance code: 32 codes of 5 bits, 30 and 31 invalid where they occur.
const FIXED_DISTANCES: Code<32> = match Code::new(&[5; 32]) {
    Some(c) => c,
    None => panic!("the fixed distance code is complete"),
};

const fn fixed_lengths() -> [u8; 288] {
    let mut l = [8u8; 288];
    let mut i = 144;
    while i < 256 {
        l[i] = 9;
        i += 1;
    }
    while i < 280 {
        l[i] = 7;
        i += 1;
    }
    l
}

/// Base and extra bits of the length symbols 257..=285, and of the distance symbols 0..=29.
const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// The code-length code of a dynamic block's header as a table of its (at most 7-bit) codes, indexed by the next
/// 7 bits: symbol | length << 8. `None` unless the code is complete (zlib rejects any other).
fn code_length_table(cl: &[u8; 19]) -> Option<[u16; 128]> {
    let code = Code::<19>::new(cl)?;
    let mut next = [0u32; 8];
    for (len, n) in next.iter_mut().enumerate().skip(1) {
        // The first code of each length: the end of the previous length's codes.
        *n = (code.limit[len - 1] >> (16 - len)) << 1;
    }
    let mut t = [0u16; 128];
    for (sym, &len) in cl.iter().enumerate() {
        if len == 0 {
            continue;
        }
        let l = u32::from(len);
        let c = next[len as usize];
        next[len as usize] += 1;
        let reversed = ((c as u16).reverse_bits() >> (16 - l)) as usize;
        for k in (reversed..128).step_by(1 << l) {
            t[k] = sym as u16 | (len as u16) << 8;
        }
    }
    Some(t)
}

/// The order of the code-length code's lengths in a dynamic block's header.
const ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// The decoder's state: the input's bits and the bytes written so far.
struct State<'a> {
    bits: Bits<'a>,
    out: [u8; LEN],
    n: usize,
}

impl State<'_> {
    /// A stored block (its 3 header bits read): `Some(true)` if it fills the output with bytes of its own left
    /// over (zlib stops there), `Some(false)` if it ends first.
    fn stored(&mut self) -> Option<bool> {
        let b = &mut self.bits;
        let drop = b.cnt % 8;
        b.take(drop)?;
        let (len, nlen) = (b.take(16)?, b.take(16)?);
        if len != !nlen & 0xffff {
            return None;
        }
        for left in (0..len).rev() {
            self.out[self.n] = self.bits.take(8)? as u8;
            self.n += 1;
            if self.n == LEN {
                // zlib stops in the block; at its end it would read the next block's header.
                return (left > 0).then_some(true);
            }
        }
        Some(false)
    }

    /// A dynamic block's codes from its header (zlib's checks: at most 286 length and 30 distance codes, a
    /// complete code-length code, no repeat before a first length or past the last, an end-of-block code).
    fn dynamic_codes(&mut self) -> Option<(Code<286>, Code<30>)> {
        let b = &mut self.bits;
        let nlen = b.take(5)? as usize + 257;
        let ndist = b.take(5)? as usize + 1;
        let ncode = b.take(4)? as usize + 4;
        if nlen > 286 || ndist > 30 {
            return None;
        }
        let mut cl = [0u8; 19];
        for &i in &ORDER[..ncode] {
            cl[i] = b.take(3)? as u8;
        }
        let clcode = code_length_table(&cl)?;
        let mut lengths = [0u8; 286 + 30];
        // Per length, how many literal/length and distance codes have it.
        let (mut lcount, mut dcount) = ([0u16; 16], [0u16; 16]);
        let mut i = 0;
        while i < nlen + ndist {
            b.refill();
            let e = clcode[(b.buf & 0x7f) as usize];
            let len = u32::from(e >> 8);
            if b.cnt < len {
                return None;
            }
            b.take_held(len);
            let sym = e & 0xff;
            let (len, rep) = match sym {
                0..=15 => (sym as u8, 1),
                16 => (lengths[i.checked_sub(1)?], 3 + b.take(2)? as usize),
                17 => (0, 3 + b.take(3)? as usize),
                _ => (0, 11 + b.take(7)? as usize),
            };
            if i + rep > nlen + ndist {
                return None;
            }
            lengths[i..i + rep].fill(len);
            let lit = (i + rep).min(nlen).saturating_sub(i);
            lcount[usize::from(len)] += lit as u16;
            dcount[usize::from(len)] += (rep - lit) as u16;
            i += rep;
        }
        if lengths[256] == 0 {
            return None;
        }
        Some((
            Code::with_counts(&lengths[..nlen], &lcount)?,
            Code::with_counts(&lengths[nlen..nlen + ndist], &dcount)?,
        ))
    }

    /// A block coded with `lengths` and `distances`: `Some(true)` once the output is full where zlib stops
    /// without an error, `Some(false)` at the block's end before.
    fn codes<const L: usize, const D: usize>(
        &mut self,
        lengths: &Code<L>,
        distances: &Code<D>,
    ) -> Option<bool> {
        loop {
            match self.symbol(lengths, distances)? {
                Symbol::End => return Some(false),
                Symbol::Literal(byte) => {
                    self.out[self.n] = byte;
                    self.n += 1;
                }
                Symbol::Copy { len, dist } => {
                    if dist > self.n {
                        return None;
                    }
                    for _ in 0..len {
                        if self.n == LEN {
                            // zlib stops inside the copy.
                            return Some(true);
                        }
                        self.out[self.n] = self.out[self.n - dist];
                        self.n += 1;
                    }
                }
            }
            if self.n == LEN {
                // zlib reads the next code before it stops: a literal, or a copy whose distance is within what
                // it wrote, and it stops cleanly; anything else (the block's end, a bad code) goes to zlib.
                return match self.symbol(lengths, distances)? {
                    Symbol::Literal(_) => Some(true),
                    Symbol::Copy { dist, .. } => (dist <= LEN).then_some(true),
                    Symbol::End => None,
                };
            }
        }
    }

    /// The next literal, copy or end of block (`None`: a symbol zlib rejects, or the input ends).
    #[inline]
    fn symbol<const L: usize, const D: usize>(
        &mut self,
        lengths: &Code<L>,
        distances: &Code<D>,
    ) -> Option<Symbol> {
        let sym = lengths.decode(&mut self.bits)? as usize;
        Some(match sym {
            0..=255 => Symbol::Literal(sym as u8),
            256 => Symbol::End,
            _ => {
                let i = sym - 257;
                let len = *LENGTH_BASE.get(i)? as usize
                    + self.bits.take(u32::from(LENGTH_EXTRA[i]))? as usize;
                let d = distances.decode(&mut self.bits)? as usize;
                let dist = *DIST_BASE.get(d)? as usize
                    + self.bits.take(u32::from(DIST_EXTRA[d]))? as usize;
                Symbol::Copy { len, dist }
            }
        })
    }
}

enum Symbol {
    Literal(u8),
    End,
    Copy { len: usize, dist: usize },
}

/// What gix-pack's `decode_delta_object_size` gets from zlib for `input` (gix-zlib's `Inflate::prefix`, as it
/// calls it): the bytes when zlib writes all [`LEN`] and neither errs nor ends the stream. The reference the tests
/// and the fuzz target (`fuzz/fuzz_targets/prefix.rs`) hold [`first_bytes`] to.
#[cfg(any(test, fuzzing))]
pub(crate) fn zlib_first_bytes(input: &[u8]) -> Option<[u8; LEN]> {
    let mut inflate = gix_zlib::Inflate::default();
    let mut buf = [0u8; LEN];
    match inflate.prefix(input, &mut buf) {
        Ok((status, _, n)) if status != gix_zlib::Status::StreamEnd && n == LEN => Some(buf),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
