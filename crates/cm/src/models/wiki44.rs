//! The word-follower family of CM revision 44 (doc/FORMAT.md 4.55.2: the
//! `max` line's twenty-first round), after revision 40's line family:
//! the text that followed the last word, the last two words, and the
//! last word with the current word so far the last time they were seen,
//! replayed byte by byte as expected bytes while the text agrees with it.
//!
//! - **Words.** As revision 32's (`models/text32.rs`): letters are ASCII
//!   letters and bytes of 0x80 and up, case-folded, hashed
//!   `(h ^ letter) * 0x2C9F_3C51 + 1` from 0; a byte that is not a letter
//!   ends the word. `w0` is the current word's hash (0 between words).
//! - **Follower tables.** Three tables of `2^bits` `u32` ([`table_bits`],
//!   indexed by a hash's top bits, [`Wiki44Contexts::slot`]), each entry a
//!   block position plus one (0: never seen). When a word `W` completes
//!   with the byte `s` at position `e` (`P` the word completed before it):
//!   `two[hash2(hash2(P, W), 0x4400 | s)] = e + 1` and
//!   `one[hash2(W, 0x4400 | s)] = e + 1`. After each letter at position
//!   `e`, `w0` the current word's hash with it:
//!   `pre[hash2(hash2(w1, w0), 0x4402)] = e + 1` (`w1` the last completed
//!   word).
//! - **Candidates.** Three pointers `c[k]` (0: none) with agreement
//!   lengths `n[k]`: `c[0]` from `two`, `c[1]` from `one`, `c[2]` from
//!   `pre`. A candidate with `c[k] = 0` is seeded (`n[k] = 0`) from its
//!   table's entry just before that entry is written (`two`/`one` when a
//!   word completes, `pre` after each letter). Before each byte at `pos`
//!   the candidate's expected byte is `data[c[k]]` when `c[k] > 0`,
//!   `c[k] < pos` and the decoder has it, else none. After the byte `b`
//!   (before any seeding): a candidate whose expected byte equals `b`
//!   ASCII-case-folded moves on (`c[k] += 1`, `n[k] += 1`); every other
//!   candidate dies (`c[k] = 0`, `n[k] = 0`).
//! - **Inputs** (three per bit, [`ExpectedBits`] with count limit 1023):
//!   the three expected bytes (raw), in situation `((b0 * 6 + b1) * 6 +
//!   b2) * 2 + (w0 != 0)`, `bk` the agreement bucket of candidate `k`
//!   ([`bucket`]: 0 no expected byte, then lengths 0, 1-2, 3-5, 6-11, 12
//!   and more).
//! - **Contexts** ([`CONTEXTS`] hashed contexts, `xk` the expected byte
//!   with 0x100, 0 when none): `hash2(0x44_0100 | b0 << 4 | b1, x0 << 9 |
//!   x1)` and `hash2(hash2(0x44_0200 | b2 << 4, x2), w0)`.
//!
//! Every context and input is declared here; everything is integer.

use super::expected::ExpectedBits;
use super::{ByteCtx, ContextModel, hash2};
use crate::cm::CmConfig;

/// Hashed contexts the family adds.
pub(crate) const CONTEXTS: usize = 2;

/// Per-bit inputs the family adds.
const INPUTS: usize = 3;

/// Situations of the expected-byte inputs.
const SITUATIONS: usize = 6 * 6 * 6 * 2;

/// The most and fewest bits of the follower tables.
const MOST_BITS: u32 = 22;
const FEWEST_BITS: u32 = 12;

/// log2 of the entries of each follower table for a model whose context
/// table has `2^table_bits` bytes: `table_bits - 7` within 12..=22.
pub(crate) fn table_bits(config: &CmConfig) -> u32 {
    u32::from(config.table_bits)
        .saturating_sub(7)
        .clamp(FEWEST_BITS, MOST_BITS)
}

/// Bytes the family allocates under `config`: three follower tables of
/// `u32` and the inputs' probabilities.
pub(crate) fn memory(config: &CmConfig) -> u64 {
    3 * 4 * (1u64 << table_bits(config)) + 8 * (SITUATIONS * 8 * INPUTS * 4) as u64
}

/// One letter `b` (case-folded) added to a word's hash `h`.
fn word_step(h: u32, b: u8) -> u32 {
    (h ^ u32::from(b.to_ascii_lowercase()))
        .wrapping_mul(0x2C9F_3C51)
        .wrapping_add(1)
}

/// The agreement bucket of a candidate (`live`: it has an expected byte).
pub(crate) fn bucket(live: bool, n: u32) -> u32 {
    if !live {
        return 0;
    }
    match n {
        0 => 1,
        1..=2 => 2,
        3..=5 => 3,
        6..=11 => 4,
        _ => 5,
    }
}

/// The revision-44 word-follower family: see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Wiki44Contexts {
    /// log2 of the follower tables' entries.
    bits: u32,
    /// The current word's hash (0: between words) and the last completed
    /// word's.
    word: u32,
    last: u32,
    /// Followers by the last two words, by the last word, and by the last
    /// word with the current word so far.
    two: Vec<u32>,
    one: Vec<u32>,
    pre: Vec<u32>,
    /// The candidates' positions (0: none) and agreement lengths.
    cand: [u32; 3],
    agree: [u32; 3],
    /// The expected bytes of the byte being coded (0x100 | byte; 0: none).
    expected: [u32; 3],
    inputs: ExpectedBits<INPUTS>,
}

impl Wiki44Contexts {
    /// A family with empty state, its tables sized for `config`.
    pub fn new(config: &CmConfig) -> Self {
        let bits = table_bits(config);
        Wiki44Contexts {
            bits,
            word: 0,
            last: 0,
            two: vec![0; 1 << bits],
            one: vec![0; 1 << bits],
            pre: vec![0; 1 << bits],
            cand: [0; 3],
            agree: [0; 3],
            expected: [0; 3],
            inputs: ExpectedBits::with_limit(SITUATIONS, 1023),
        }
    }

    /// A follower table's entry for hash `h`.
    fn slot(&self, h: u32) -> usize {
        (h >> (32 - self.bits)) as usize
    }

    /// The agreement buckets of the two candidates.
    fn buckets(&self) -> [u32; 3] {
        [0, 1, 2].map(|k| bucket(self.expected[k] != 0, self.agree[k]))
    }

    /// Learns that word `w` completed with byte `s` at position `pos`.
    fn complete(&mut self, w: u32, s: u8, pos: usize) {
        let s = 0x4400 | u32::from(s);
        let k2 = self.slot(hash2(hash2(self.last, w), s));
        let k1 = self.slot(hash2(w, s));
        if self.cand[0] == 0 {
            self.cand[0] = self.two[k2];
            self.agree[0] = 0;
        }
        if self.cand[1] == 0 {
            self.cand[1] = self.one[k1];
            self.agree[1] = 0;
        }
        let next = u32::try_from(pos + 1).unwrap_or(0);
        self.two[k2] = next;
        self.one[k1] = next;
        self.last = w;
    }
}

impl ContextModel for Wiki44Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        // The expected bytes of this byte (begin_byte comes after).
        let e = self.cand.map(|c| {
            let c = c as usize;
            if c > 0 && c < ctx.pos && ctx.vis.known(c) {
                0x100 | u32::from(ctx.data[c])
            } else {
                0
            }
        });
        let b = [0, 1, 2].map(|k| bucket(e[k] != 0, self.agree[k]));
        out[0] = hash2(0x44_0100 | b[0] << 4 | b[1], e[0] << 9 | e[1]);
        out[1] = hash2(hash2(0x44_0200 | b[2] << 4, e[2]), self.word);
    }

    fn bit_inputs(&self) -> usize {
        INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.expected = self.cand.map(|c| {
            let c = c as usize;
            if c > 0 && c < ctx.pos && ctx.vis.known(c) {
                0x100 | u32::from(ctx.data[c])
            } else {
                0
            }
        });
        let [b0, b1, b2] = self.buckets();
        let situation = (((b0 * 6 + b1) * 6 + b2) * 2 + u32::from(self.word != 0)) as usize;
        self.inputs.begin(self.expected, situation);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.inputs.predict(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.inputs.update(bit);
    }

    fn observe(&mut self, _data: &[u8], pos: usize, byte: u8) {
        let fold = |x: u32| u32::from((x as u8).to_ascii_lowercase());
        for k in 0..3 {
            if self.expected[k] != 0 && fold(self.expected[k]) == fold(u32::from(byte)) {
                self.cand[k] += 1;
                self.agree[k] += 1;
            } else {
                self.cand[k] = 0;
                self.agree[k] = 0;
            }
        }
        self.expected = [0; 3];
        if byte.is_ascii_alphabetic() || byte >= 0x80 {
            self.word = word_step(self.word, byte);
            let k = self.slot(hash2(hash2(self.last, self.word), 0x4402));
            if self.cand[2] == 0 {
                self.cand[2] = self.pre[k];
                self.agree[2] = 0;
            }
            self.pre[k] = u32::try_from(pos + 1).unwrap_or(0);
        } else if self.word != 0 {
            let w = self.word;
            self.word = 0;
            self.complete(w, byte, pos);
        }
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        v.u32s(std::slice::from_mut(&mut self.word));
        v.u32s(std::slice::from_mut(&mut self.last));
        v.u32s(&mut self.cand);
        v.u32s(&mut self.agree);
        v.u32s(&mut self.two);
        v.u32s(&mut self.one);
        v.u32s(&mut self.pre);
        self.inputs.visit(v);
    }

    fn positions_within(&self, history: usize) -> bool {
        self.cand
            .iter()
            .chain(&self.two)
            .chain(&self.one)
            .chain(&self.pre)
            .all(|&c| c as usize <= history)
    }
}
