//! Record matches of CM revision 10 (doc/FORMAT.md 4.21.4): a family next
//! to revision 7's ([`super::float7`]) for arrays of 4-byte numbers in
//! short records (the same layouts, [`Float7Contexts::applies`]).
//!
//! Arrays of records that repeat (animation keys, rotations) repeat
//! *runs* of records: when the last record was seen before, the record
//! that followed it then is likely to follow it now, and more so when the
//! last two records were seen together before. The family keeps, for
//! every record, where it (and the pair of it and the record before it)
//! last occurred, and predicts each element from the record that followed
//! that occurrence: the bytes those two candidates imply are expected-bit
//! inputs, in a situation of the byte's significance, the field, whether
//! each candidate agrees with the element's bytes coded so far and how
//! many records in a row the first candidate got right; one hashed context
//! holds the same. All arithmetic is integer.
//!
//! [`Float7Contexts::applies`]: super::float7::Float7Contexts::applies

use super::expected::ExpectedBits;
use super::float::{FloatInfo, read};
use super::{ByteCtx, ContextModel, hash2};

/// Hashed contexts.
const CONTEXTS: usize = 2;

/// Candidates (per-bit inputs).
const INPUTS: usize = 2;

/// Longest record, in bytes, that the family follows.
const MAX_RECORD_BYTES: usize = 64;

/// Log2 of the slots of each occurrence table.
const TABLE_BITS: u32 = 16;

/// Fields told apart (later ones share the last).
const FIELDS: usize = 4;

/// Run-length buckets of the first candidate.
const RUNS: usize = 4;

/// Per-element states of the two candidates: none, disagrees, agrees.
const STATES: usize = 9;

/// Per-bit situations.
const SITUATIONS: usize = 4 * FIELDS * STATES * RUNS;

/// Bytes the family allocates: the two occurrence tables (`u64`) and the
/// expected-bit table.
pub(crate) const MEMORY: u64 = 2 * (8 << TABLE_BITS) + (SITUATIONS * 8 * INPUTS * 4 * 4) as u64;

/// The revision-10 record-match family (1 context, [`INPUTS`] per-bit
/// inputs).
#[derive(Debug, Clone)]
pub(crate) struct Float10Contexts {
    info: FloatInfo,
    /// Bytes per record (0: records too long, the family is idle).
    len: usize,
    /// Where the last record and the last two records occurred before,
    /// keyed by their hash: the block position of the (last) record plus
    /// one (0: none).
    once: Vec<u64>,
    twice: Vec<u64>,
    /// Block positions of the records the candidates say follow now.
    cand: [Option<usize>; INPUTS],
    /// Records in a row that the first candidate predicted exactly.
    run: u32,
    bits: ExpectedBits<INPUTS>,
    /// The per-byte contexts.
    hash: [u32; CONTEXTS],
}

impl Float10Contexts {
    /// The family for an array laid out as `info`.
    pub fn new(info: FloatInfo) -> Self {
        let elems = info.lag.max(1);
        let len = if elems * info.width <= MAX_RECORD_BYTES {
            elems * info.width
        } else {
            0
        };
        Float10Contexts {
            info,
            len,
            once: vec![0; 1 << TABLE_BITS],
            twice: vec![0; 1 << TABLE_BITS],
            cand: [None; INPUTS],
            run: 0,
            bits: ExpectedBits::new(SITUATIONS),
            hash: [0; CONTEXTS],
        }
    }

    /// The slot of a hash.
    #[inline]
    fn slot(h: u32) -> usize {
        (h >> (32 - TABLE_BITS)) as usize
    }

    /// The record at `rec` (all of it before the byte being coded) just
    /// ended, the one before it at `rec - len` when `two`: checks the
    /// candidates that predicted it, finds where it (and the pair) occurred
    /// before and remembers where it occurs now.
    fn learn(&mut self, data: &[u8], rec: usize, two: bool) {
        let len = self.len;
        let now = &data[rec..rec + len];
        let right = self.cand[0].is_some_and(|c| data[c..c + len] == *now);
        self.run = if right { self.run + 1 } else { 0 };
        let h1 = now.chunks(4).fold(0x5EC0_u32, |h, c| {
            hash2(h, u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        });
        let s1 = Self::slot(h1);
        let q = self.once[s1] as usize;
        self.cand[0] = (q > 0 && data[q - 1..q - 1 + len] == *now).then(|| q - 1 + len);
        self.once[s1] = rec as u64 + 1;
        self.cand[1] = None;
        if two {
            let before = &data[rec - len..rec];
            let h2 = before.chunks(4).fold(hash2(h1, 0x5EC2), |h, c| {
                hash2(h, u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            });
            let s2 = Self::slot(h2);
            let q = self.twice[s2] as usize;
            self.cand[1] = (q > len
                && data[q - 1..q - 1 + len] == *now
                && data[q - 1 - len..q - 1] == *before)
                .then(|| q - 1 + len);
            self.twice[s2] = rec as u64 + 1;
        }
    }
}

impl ContextModel for Float10Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, out: &mut [u32]) {
        out.copy_from_slice(&self.hash);
    }

    fn bit_inputs(&self) -> usize {
        INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let FloatInfo {
            width,
            big_endian,
            offset,
            ..
        } = self.info;
        let (data, pos, start) = (ctx.data, ctx.pos, ctx.st.start);
        let len = self.len;
        let first = start + offset % width;
        if len == 0 || pos < first {
            self.hash = [0; CONTEXTS];
            self.bits.begin([0; INPUTS], 0);
            return;
        }
        let at = (pos - first) % len;
        let rec = pos - at;
        if at == 0 && rec >= first + len {
            self.learn(data, rec - len, rec >= first + 2 * len);
        }
        let k = at % width;
        let here = pos - k;
        let col = (at / width).min(FIELDS - 1);
        let rank = if big_endian { k } else { width - 1 - k };
        let shift = 8 * (width - 1 - rank) as u32;
        let (mut known, mut mask) = (0u64, 0u64);
        for j in 0..k {
            let r = if big_endian { j } else { width - 1 - j };
            known |= u64::from(data[here + j]) << (8 * (width - 1 - r));
            mask |= 0xFF << (8 * (width - 1 - r));
        }
        let mut expected = [0u32; INPUTS];
        let mut state = 0usize;
        for (j, c) in self.cand.iter().enumerate() {
            let s = match c {
                Some(c) => {
                    let v = read(data, c + (here - rec), width, big_endian);
                    let v = if big_endian && rank > 0 {
                        v.clamp(known, known | ((1u64 << (shift + 8)) - 1))
                    } else {
                        v
                    };
                    expected[j] = ((v >> shift) & 0xFF) as u32;
                    if (v ^ known) & mask == 0 { 2 } else { 1 }
                }
                None => 0,
            };
            state = state * 3 + s;
        }
        let run = (self.run as usize).min(RUNS - 1);
        let situation = ((rank * FIELDS + col) * STATES + state) * RUNS + run;
        self.bits.begin(expected, situation);
        self.hash = [
            hash2(
                hash2(
                    expected[0] | expected[1] << 8 | (state as u32) << 16,
                    situation as u32,
                ),
                0xF10A,
            ),
            // The field's values seen before, by the bytes coded so far.
            hash2(
                hash2((known ^ known >> 32) as u32, (rank * FIELDS + col) as u32),
                0xF10B,
            ),
        ];
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.bits.predict(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.bits.update(bit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicts_the_record_that_followed_last_time() {
        let info = FloatInfo {
            width: 4,
            big_endian: false,
            offset: 0,
            lag: 2,
        };
        let mut f = Float10Contexts::new(info);
        // Records A B C, then A B: the candidates after the second B
        // point at C (its first occurrence, at 16).
        let recs: [[u8; 8]; 3] = [[1; 8], [2; 8], [3; 8]];
        let mut data: Vec<u8> = [0, 1, 2, 0, 1].iter().flat_map(|&r| recs[r]).collect();
        data.extend([0; 8]);
        let st = crate::cm::CmStream::new(0);
        let vis = crate::matcher::Sequential(40);
        for pos in 0..=40 {
            let ctx = ByteCtx {
                data: &data,
                pos,
                st: &st,
                vis: &vis,
            };
            f.begin_byte(&ctx);
        }
        assert_eq!(f.cand, [Some(16), Some(16)]);
        assert_eq!(f.run, 1, "B followed A as before");
    }
}
