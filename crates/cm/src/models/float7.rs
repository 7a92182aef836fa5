//! Float-array inputs of CM revisions 7 and 8 (doc/FORMAT.md 4.18.6,
//! 4.19.6), next to revision 4's float family ([`super::float4`]) for the
//! same detected layout ([`FloatInfo`]), for arrays of 4-byte numbers in
//! records of at most [`MAX_RECORD`] elements ([`Float7Contexts::applies`]).
//!
//! Revision 4 predicts values and codes bytes against the bytes a
//! prediction implies; arrays of short records that repeat (rotations
//! stored as quaternions, seismic traces) are better told by whole
//! values. The family adds per-bit inputs only: six candidate values (the
//! same field one and two records back, the previous three elements, and
//! the element one record and one element back) as expected bytes, in a
//! situation of which candidates agree with the element's bytes coded so
//! far; and two vocabularies, of recent records and of recent elements,
//! whose entries that agree with what was coded so far vote for each bit
//! ([`Vocabulary`]). Records of four elements are also matched with their
//! fields swapped as a quaternion's are under quarter turns ([`VIEWS`]).
//! Revision 8 keeps larger vocabularies. Hashed contexts on exact values
//! (the field one to three records back, the previous elements, the
//! record so far, each with the element's coded bytes) were tried and cost
//! bytes on the corpus's quaternion file: left out. All arithmetic is
//! integer.

use super::expected::ExpectedBits;
use super::float::{FloatInfo, read};
use super::{ByteCtx, ContextModel};
use crate::logistic::stretch;
use crate::prim::AdaptiveProbs;

/// Candidate values (per-bit inputs).
const INPUTS: usize = 6;

/// Per-bit inputs of the record vocabulary ([`Vocabulary`]).
const VOCAB_INPUTS: usize = 2;

/// Records the vocabulary keeps at revisions 7 and 8.
const VOCAB_CHEAP: usize = 16;
const VOCAB_COSTLY: usize = 128;

/// Longest record, in bytes, that the vocabulary keeps.
const MAX_RECORD_BYTES: usize = 64;

/// Longest record (in elements) whose fields are told apart.
const MAX_RECORD: usize = 16;

/// Fields told apart in the per-bit situations (later ones share the last).
const FIELDS: usize = 4;

/// What the family knows about the byte being coded.
struct Frame {
    /// Significance of the byte (0: the most significant).
    rank: usize,
    /// Bit shift of the byte in the element.
    shift: u32,
    /// The element's bytes coded so far, bits in place.
    known: u64,
    /// Field of the element in its record (0 for long rows).
    col: usize,
    /// The candidate values.
    cand: [u64; INPUTS],
    /// Bit `k`: candidate `k` agrees with the bytes coded so far.
    agree: u32,
}

/// The element orders a record of four elements is also read in: the
/// sign changes and swaps of a quaternion's fields under rotations by
/// quarter turns (`(x, y, z, w)` as `(x, w, z, y)`, `(z, w, x, y)` and
/// `(z, y, x, w)`), compared without the elements' sign bits.
const VIEWS: [[usize; 4]; 4] = [[0, 1, 2, 3], [0, 3, 2, 1], [2, 3, 0, 1], [2, 1, 0, 3]];

/// The last distinct records, most recently seen first, and how often a
/// record repeated the one at each rank (in each view): for each bit, the
/// records that agree with the record's bytes coded so far vote for the
/// next bit, weighted by their rank's hits (the first input), and a table
/// learns how often the first agreeing record's bit comes, by its rank and
/// view, whether the voters are unanimous, how many they are, the byte in
/// the record and the bit (the second).
#[derive(Debug, Clone)]
struct Vocabulary {
    /// Bytes per record (0: records too long, no vocabulary).
    len: usize,
    /// Views used: all of [`VIEWS`] for records of four elements, else the
    /// first.
    views: usize,
    /// Records kept.
    size: usize,
    /// `size` records of `len` bytes, rank 0 first.
    records: Vec<u8>,
    /// Records filled.
    filled: usize,
    /// Per view and rank, then one for new records: decaying hit counts.
    hits: Vec<u32>,
    /// The record position of the byte being coded.
    at: usize,
    /// The agreeing records' ranks, views and bytes at `at`.
    voters: Vec<(u8, u8, u8)>,
    /// Per view and record byte `p` (`v * len + p`): the byte of the stored
    /// record that view `v` reads at `p`, and the bits compared.
    src: Vec<u16>,
    mask: Vec<u8>,
    /// The ranks and views (in scan order) of the records that agree with
    /// `agreed`, a prefix of a record, while `agreed_valid` (records
    /// unchanged since): a speed cache, so that the next byte of the same
    /// record filters them rather than comparing every record again. The
    /// voters are the same either way.
    agreeing: Vec<(u8, u8)>,
    agreed: Vec<u8>,
    agreed_valid: bool,
    /// The learned table and the entry of the bit being coded.
    table: AdaptiveProbs,
    entry: usize,
}

impl Vocabulary {
    /// A vocabulary of `size` records of `elems` elements of `width`
    /// bytes (`big_endian`: the sign in an element's first byte).
    fn new(elems: usize, width: usize, big_endian: bool, size: usize) -> Self {
        let len = if elems * width <= MAX_RECORD_BYTES {
            elems * width
        } else {
            0
        };
        let views = if elems == 4 { VIEWS.len() } else { 1 };
        let top = if big_endian { 0 } else { width - 1 };
        let (mut src, mut mask) = (Vec::new(), Vec::new());
        for (v, order) in VIEWS.iter().enumerate().take(views) {
            for p in 0..len {
                let (e, k) = (p / width, p % width);
                // View 0 is the identity, and the only view of a record
                // that is not of four elements (whose `e` may pass 3).
                src.push(if v == 0 { p } else { order[e] * width + k } as u16);
                mask.push(if v > 0 && k == top { 0x7F } else { 0xFF });
            }
        }
        Vocabulary {
            len,
            views,
            size,
            records: vec![0; len * size],
            filled: 0,
            hits: vec![0; views * size + 1],
            at: 0,
            voters: Vec::with_capacity(views * size),
            src,
            mask,
            agreeing: Vec::with_capacity(views * size),
            agreed: Vec::with_capacity(len),
            agreed_valid: false,
            table: AdaptiveProbs::new((16 * VIEWS.len() + 1) * 2 * 2 * 4 * 16 * 8, 255),
            entry: 0,
        }
    }

    /// Byte `p` of record `r` read in view `v`, with the bits compared.
    #[inline]
    fn byte(&self, r: usize, v: usize, p: usize) -> (u8, u8) {
        let at = v * self.len + p;
        (
            self.records[r * self.len + usize::from(self.src[at])],
            self.mask[at],
        )
    }

    /// Learns the record `rec` that just ended: the hit of the first rank
    /// and view it matches (or a new record's); moved or put to the front.
    fn learn(&mut self, rec: &[u8]) {
        self.agreed_valid = false;
        let len = self.len;
        let found = (0..self.filled).find(|&r| &self.records[r * len..(r + 1) * len] == rec);
        let (hit, last) = match found {
            Some(r) => (r, r),
            None => {
                let seen = (1..self.views).find_map(|v| {
                    (0..self.filled)
                        .find(|&r| {
                            (0..len).all(|p| {
                                let (b, m) = self.byte(r, v, p);
                                (b ^ rec[p]) & m == 0
                            })
                        })
                        .map(|r| v * self.size + r)
                });
                self.filled = (self.filled + 1).min(self.size);
                (seen.unwrap_or(self.views * self.size), self.filled - 1)
            }
        };
        for h in &mut self.hits {
            *h -= *h >> 5;
        }
        self.hits[hit] += 1 << 10;
        self.records.copy_within(0..last * len, len);
        self.records[..len].copy_from_slice(rec);
    }

    /// Starts byte `at` of a record whose bytes so far are `prefix`.
    fn begin(&mut self, at: usize, prefix: &[u8]) {
        self.at = at;
        self.voters.clear();
        let len = self.len;
        let mut agreeing = std::mem::take(&mut self.agreeing);
        if self.agreed_valid && at == self.agreed.len() + 1 && prefix[..at - 1] == self.agreed[..] {
            // The next byte of the same record: of the records that agreed
            // with the prefix before it, those that agree with its last byte.
            let (p, x) = (at - 1, prefix[at - 1]);
            agreeing.retain(|&(r, v)| {
                let (b, m) = self.byte(usize::from(r), usize::from(v), p);
                (b ^ x) & m == 0
            });
        } else {
            agreeing.clear();
            for v in 0..self.views {
                for r in 0..self.filled {
                    let agrees = if v == 0 {
                        self.records[r * len..r * len + at] == *prefix
                    } else {
                        prefix.iter().enumerate().all(|(p, &x)| {
                            let (b, m) = self.byte(r, v, p);
                            (b ^ x) & m == 0
                        })
                    };
                    if agrees {
                        agreeing.push((r as u8, v as u8));
                    }
                }
            }
        }
        for &(r, v) in &agreeing {
            let b = self.byte(usize::from(r), usize::from(v), at).0;
            self.voters.push((r, v, b));
        }
        self.agreeing = agreeing;
        self.agreed.clear();
        self.agreed.extend_from_slice(prefix);
        self.agreed_valid = true;
    }

    /// The inputs for bit `i`, `c0` the bits so far with a leading 1.
    fn predict(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let prefix = c0 ^ (1 << (7 - i));
        let (mut s, mut best, mut count) = ([0u64; 2], None, 0usize);
        // A voter that disagrees with the bits so far never agrees again
        // this byte: dropped (in order) rather than skipped at every bit.
        self.voters
            .retain(|&(_, _, b)| u32::from(b) >> (i + 1) == prefix);
        for &(r, v, b) in &self.voters {
            let bit = (u32::from(b) >> i) & 1;
            let (r, v) = (usize::from(r), usize::from(v));
            s[bit as usize] += u64::from(self.hits[v * self.size + r]) + 1;
            best = best.or(Some((v * 16 + r.min(15), bit)));
            count += 1;
        }
        out[0] = if count == 0 {
            0
        } else {
            stretch((((s[1] + 1) << 16) / (s[0] + s[1] + 2)).clamp(1, 65535) as u32)
        };
        let (rank, bit) = best.map_or((16 * VIEWS.len(), 0), |(r, b)| (r, b as usize));
        let unanimous = usize::from(s[0] == 0 || s[1] == 0);
        let many = match count {
            0 | 1 => 0,
            2 => 1,
            3 | 4 => 2,
            _ => 3,
        };
        self.entry = (((((rank * 2 + bit) * 2 + unanimous) * 4 + many) * 16 + self.at.min(15))
            << 3)
            + i as usize;
        out[1] = self.table.stretched(self.entry);
    }

    fn update(&mut self, bit: u32) {
        self.table.update(self.entry, bit);
    }
}

/// The revision-7/8 float family.
#[derive(Debug, Clone)]
pub(crate) struct Float7Contexts {
    info: FloatInfo,
    bits: ExpectedBits<INPUTS>,
    /// Vocabularies of whole records and of single elements.
    vocab: Vocabulary,
    elems: Vocabulary,
}

impl Float7Contexts {
    /// Whether the family serves an array laid out as `info`: 4-byte
    /// numbers in records of at most [`MAX_RECORD`] elements.
    pub fn applies(info: &FloatInfo) -> bool {
        info.width == 4 && info.lag <= MAX_RECORD
    }

    /// The family for an array laid out as `info`; `costly` for revision 8
    /// (larger vocabularies).
    pub fn new(info: FloatInfo, costly: bool) -> Self {
        let size = if costly { VOCAB_COSTLY } else { VOCAB_CHEAP };
        Float7Contexts {
            info,
            bits: ExpectedBits::new((8 * FIELDS) << INPUTS),
            vocab: Vocabulary::new(info.lag.max(1), info.width, info.big_endian, size),
            elems: Vocabulary::new(1, info.width, info.big_endian, size),
        }
    }

    /// Elements per record ([`FloatInfo::lag`], at least 1).
    #[inline]
    fn record(&self) -> usize {
        self.info.lag.max(1)
    }

    fn frame(&self, ctx: &ByteCtx<'_>) -> Frame {
        let FloatInfo {
            width,
            big_endian,
            offset,
            ..
        } = self.info;
        let (data, pos) = (ctx.data, ctx.pos);
        let k = (pos + width - offset % width) % width;
        let here = pos - k;
        let rank = if big_endian { k } else { width - 1 - k };
        let shift = 8 * (width - 1 - rank) as u32;
        let value = |back: usize| -> u64 {
            match here.checked_sub(back * width) {
                Some(at) if at >= ctx.st.start => read(data, at, width, big_endian),
                _ => 0,
            }
        };
        let lag = self.record();
        let col = if lag <= MAX_RECORD {
            (here - offset % width) / width % lag
        } else {
            0
        };
        let mut known = 0u64;
        let mut mask = 0u64;
        for j in 0..k {
            let r = if big_endian { j } else { width - 1 - j };
            known |= u64::from(data[here + j]) << (8 * (width - 1 - r));
            mask |= 0xFF << (8 * (width - 1 - r));
        }
        let n1 = value(lag);
        let sign = 1u64 << (8 * width - 1);
        let cand = [lag, 2 * lag, 1, 2, 3, lag + 1].map(|b| {
            let v = value(b);
            if b == lag { v } else { v & !sign | n1 & sign }
        });
        let agree = cand
            .iter()
            .enumerate()
            .fold(0, |a, (j, &c)| a | u32::from((c ^ known) & mask == 0) << j);
        Frame {
            rank,
            shift,
            known,
            col,
            cand,
            agree,
        }
    }

    /// The byte that `v` implies for the byte being coded: for a
    /// big-endian layout, `v` clamped to the values that start with the
    /// known higher bytes.
    #[inline]
    fn implied(&self, f: &Frame, v: u64) -> u32 {
        let v = if self.info.big_endian && f.rank > 0 {
            v.clamp(f.known, f.known | ((1u64 << (f.shift + 8)) - 1))
        } else {
            v
        };
        ((v >> f.shift) & 0xFF) as u32
    }

    /// The per-bit situation: byte significance, field, and which
    /// candidates agree with the bytes coded so far.
    #[inline]
    fn situation(&self, f: &Frame) -> usize {
        ((f.rank * FIELDS + f.col.min(FIELDS - 1)) << INPUTS) + f.agree as usize
    }
}

impl ContextModel for Float7Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        INPUTS + 2 * VOCAB_INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let f = self.frame(ctx);
        let expected = f.cand.map(|v| self.implied(&f, v));
        let situation = self.situation(&f);
        self.bits.begin(expected, situation);
        // The record vocabulary: a record that ended before this byte is
        // learned when all of it lies in this stream.
        let len = self.vocab.len;
        let (pos, start) = (ctx.pos, ctx.st.start);
        let first = self.info.offset % self.info.width;
        if len > 0 && pos >= first + start {
            let at = (pos - first) % len;
            let rec = pos - at;
            if at == 0 && rec >= start + len {
                self.vocab.learn(&ctx.data[rec - len..rec]);
            }
            if rec >= start {
                self.vocab.begin(at, &ctx.data[rec..pos]);
            } else {
                self.vocab.voters.clear();
            }
        } else {
            self.vocab.voters.clear();
        }
        let width = self.info.width;
        if pos >= first + start {
            let at = (pos - first) % width;
            let here = pos - at;
            if at == 0 && here >= start + width {
                self.elems.learn(&ctx.data[here - width..here]);
            }
            self.elems.begin(at, &ctx.data[here..pos]);
        } else {
            self.elems.voters.clear();
        }
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.bits.predict(c0, i, &mut out[..INPUTS]);
        self.vocab
            .predict(c0, i, &mut out[INPUTS..INPUTS + VOCAB_INPUTS]);
        self.elems.predict(c0, i, &mut out[INPUTS + VOCAB_INPUTS..]);
    }

    fn update_bit(&mut self, bit: u32) {
        self.bits.update(bit);
        self.vocab.update(bit);
        self.elems.update(bit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of four little-endian f32.
    fn record(x: [f32; 4]) -> Vec<u8> {
        x.iter().flat_map(|v| v.to_bits().to_le_bytes()).collect()
    }

    #[test]
    fn the_vocabulary_votes_for_recent_records_and_their_views() {
        let mut v = Vocabulary::new(4, 4, false, 4);
        let (a, b) = (record([0.0, 0.6, 0.0, 0.8]), record([0.1, 0.2, 0.3, 0.9]));
        v.learn(&a);
        v.learn(&b);
        // b is at rank 0, a at rank 1; both agree with an empty prefix.
        v.begin(0, &[]);
        assert_eq!(v.voters[..2], [(0, 0, b[0]), (1, 0, a[0])]);
        // a with its second and fourth fields swapped and signs flipped
        // agrees with a in views 1 (x, w, z, y) and 2 (z, w, x, y) so far,
        // not with b.
        let swapped = record([-0.0, 0.8, 0.0, -0.6]);
        v.begin(8, &swapped[..8]);
        assert_eq!(v.voters, [(1, 1, a[8]), (1, 2, a[0])]);
        // Learning the swapped record counts a hit of view 1 at rank 1.
        v.learn(&swapped);
        assert_eq!(v.hits[4 + 1], 1024);
        assert_eq!(v.filled, 3);
        // A repeat moves its record to the front.
        v.learn(&a);
        assert_eq!(v.records[..16], a[..]);
        assert_eq!(v.filled, 3);
    }

    #[test]
    fn only_short_records_of_4_byte_numbers_get_the_family() {
        let info = |width, lag| FloatInfo {
            width,
            big_endian: false,
            offset: 0,
            lag,
        };
        assert!(Float7Contexts::applies(&info(4, 4)));
        assert!(!Float7Contexts::applies(&info(8, 4)));
        assert!(!Float7Contexts::applies(&info(4, 540)));
    }
}
