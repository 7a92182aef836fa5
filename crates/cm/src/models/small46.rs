//! The short-match family of CM revision 46 (doc/FORMAT.md 4.57.2: the
//! `max` line's twenty-second round), after revision 44's families: what
//! followed the last occurrence of the last one, two and three bytes,
//! followed byte by byte while it is right, as expected bytes (per-bit
//! inputs) and in hashed contexts. The match model needs a longer match;
//! on small code and markup most of the cost is in the bytes it does not
//! predict (FORMAT 4.45.2), and these short candidates learn within a few
//! hundred bytes.
//!
//! - **Candidates.** For each order `k` in [`ORDERS`] (1, 2, 3) a table
//!   of `2^bits` `u32` ([`table_bits`]) holds, per hash of the last `k`
//!   bytes ([`Small46Contexts::slot`]), the block position after their
//!   last occurrence (0: never seen). Each order has a candidate pointer
//!   `c[k]` (0: none) and an agreement length `n[k]`.
//! - **After each byte** `b` at position `pos`: a candidate whose expected
//!   byte was `b` moves on (`c += 1`, `n += 1`); every other dies (`c = 0`,
//!   `n = 0`). Then, `h` the hash of the last `k` bytes (`b` the last), a
//!   dead candidate is seeded from the table (`c = t[h]`, `n = 0`) and the
//!   table learns `t[h] = pos + 1`.
//! - **Expected bytes.** Before the byte at `pos`, candidate `k`'s
//!   expected byte is `data[c]` when `0 < c < pos` and the decoder has it.
//! - **Inputs** (three per bit, [`ExpectedBits`] with count limit 1023,
//!   starting at weight 0): the expected bytes in situation `((b0 * 6 +
//!   b1) * 6 + b2) * 2 + same`, `bk` the agreement bucket of order `k`
//!   ([`bucket`]: 0 no expected byte, then lengths 0, 1-2, 3-5, 6-11, 12
//!   and more) and `same` 1 when every live candidate expects the same
//!   byte (0 when none is live).
//! - **Contexts** (`xk` the expected byte with 0x100, 0 when none; `c1`
//!   the last byte, `c2` the last two):
//!   `hash2(hash2(0x46_0100 | b0 << 4 | b1, x0 << 9 | x1), c1)`,
//!   `hash2(0x46_0200 | b2 << 4 | b1, x2 << 9 | x1)`,
//!   `hash2(hash2(0x46_0300 | b0, x0), c2)` and
//!   `hash2(hash2(0x46_0400 | b1 << 4 | b2, x1 << 9 | x2), c1)`.
//!
//! Tried and not kept (FORMAT 4.57.2): orders 2-3-4 and others, an
//! averaged final APM by the leading candidate's expected bit, always the
//! latest occurrence instead of following, the inputs at the default
//! start weight.
//!
//! Every context and input is declared here; everything is integer.

use super::expected::ExpectedBits;
use super::wiki44::bucket;
use super::{ByteCtx, ContextModel, hash2};
use crate::cm::CmConfig;

/// Hashed contexts the family adds.
pub(crate) const CONTEXTS: usize = 4;

/// Per-bit inputs the family adds.
const INPUTS: usize = 3;

/// Situations of the expected-byte inputs.
const SITUATIONS: usize = 6 * 6 * 6 * 2;

/// The most and fewest bits of the candidate tables.
const MOST_BITS: u32 = 20;
const FEWEST_BITS: u32 = 12;

/// log2 of the entries of each candidate table for a model whose context
/// table has `2^table_bits` bytes: `table_bits - 7` within 12..=20.
pub(crate) fn table_bits(config: &CmConfig) -> u32 {
    u32::from(config.table_bits)
        .saturating_sub(7)
        .clamp(FEWEST_BITS, MOST_BITS)
}

/// Bytes the family allocates under `config`: the candidate tables of
/// `u32` and the inputs' probabilities.
pub(crate) fn memory(config: &CmConfig) -> u64 {
    INPUTS as u64 * 4 * (1u64 << table_bits(config)) + 8 * (SITUATIONS * 8 * INPUTS * 4) as u64
}

/// The revision-46 short-match family: see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Small46Contexts {
    /// log2 of the candidate tables' entries.
    bits: u32,
    /// The last eight bytes seen, the last lowest.
    hist: u64,
    /// Per order: the position after the last occurrence of each context.
    tables: [Vec<u32>; INPUTS],
    /// The candidates' positions (0: none) and agreement lengths.
    cand: [u32; INPUTS],
    agree: [u32; INPUTS],
    /// The expected bytes of the byte being coded (0x100 | byte; 0: none).
    expected: [u32; INPUTS],
    inputs: ExpectedBits<INPUTS>,
}

/// The orders (bytes of context) of the three candidates.
const ORDERS: [u32; INPUTS] = [1, 2, 3];

impl Small46Contexts {
    /// A family with empty state, its tables sized for `config`.
    pub fn new(config: &CmConfig) -> Self {
        let bits = table_bits(config);
        Small46Contexts {
            bits,
            hist: 0,
            tables: std::array::from_fn(|_| vec![0; 1 << bits]),
            cand: [0; INPUTS],
            agree: [0; INPUTS],
            expected: [0; INPUTS],
            inputs: ExpectedBits::with_limit(SITUATIONS, 1023),
        }
    }

    /// The expected bytes of the byte at `ctx.pos` (0x100 | byte; 0: none).
    fn expect(&self, ctx: &ByteCtx<'_>) -> [u32; INPUTS] {
        self.cand.map(|c| {
            let c = c as usize;
            if c > 0 && c < ctx.pos && ctx.vis.known(c) {
                0x100 | u32::from(ctx.data[c])
            } else {
                0
            }
        })
    }

    /// The agreement buckets of the candidates whose expected bytes are `e`.
    fn buckets(&self, e: &[u32; INPUTS]) -> [u32; INPUTS] {
        [0, 1, 2].map(|k| bucket(e[k] != 0, self.agree[k]))
    }

    /// The table entry for the last `order` bytes.
    fn slot(&self, k: usize) -> usize {
        let order = ORDERS[k];
        let key = if order >= 8 {
            self.hist
        } else {
            self.hist & ((1u64 << (8 * order)) - 1)
        };
        let h = hash2(hash2(key as u32, (key >> 32) as u32), 0x46_0000 | order);
        (h >> (32 - self.bits)) as usize
    }
}

impl ContextModel for Small46Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let e = self.expect(ctx);
        let b = self.buckets(&e);
        let c1 = ctx.c4() & 0xFF;
        let c2 = ctx.c4() & 0xFFFF;
        out[0] = hash2(hash2(0x46_0100 | b[0] << 4 | b[1], e[0] << 9 | e[1]), c1);
        out[1] = hash2(0x46_0200 | b[2] << 4 | b[1], e[2] << 9 | e[1]);
        out[2] = hash2(hash2(0x46_0300 | b[0], e[0]), c2);
        out[3] = hash2(hash2(0x46_0400 | b[1] << 4 | b[2], e[1] << 9 | e[2]), c1);
    }

    fn bit_inputs(&self) -> usize {
        INPUTS
    }

    fn initial_weight(&self) -> Option<i16> {
        Some(0)
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.expected = self.expect(ctx);
        let [b0, b1, b2] = self.buckets(&self.expected);
        let mut live = self.expected.iter().filter(|&&x| x != 0);
        let same = match live.next() {
            Some(&first) => live.all(|&x| x == first),
            None => false,
        };
        let situation = (((b0 * 6 + b1) * 6 + b2) * 2 + u32::from(same)) as usize;
        self.inputs.begin(self.expected, situation);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.inputs.predict(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.inputs.update(bit);
    }

    fn observe(&mut self, _data: &[u8], pos: usize, byte: u8) {
        for k in 0..INPUTS {
            if self.expected[k] != 0 && self.expected[k] & 0xFF == u32::from(byte) {
                self.cand[k] += 1;
                self.agree[k] += 1;
            } else {
                self.cand[k] = 0;
                self.agree[k] = 0;
            }
        }
        self.expected = [0; INPUTS];
        self.hist = self.hist << 8 | u64::from(byte);
        let next = u32::try_from(pos + 1).unwrap_or(0);
        for k in 0..INPUTS {
            let s = self.slot(k);
            if self.cand[k] == 0 {
                self.cand[k] = self.tables[k][s];
                self.agree[k] = 0;
            }
            self.tables[k][s] = next;
        }
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        let mut hist = [self.hist as u32, (self.hist >> 32) as u32];
        v.u32s(&mut hist);
        self.hist = u64::from(hist[0]) | u64::from(hist[1]) << 32;
        v.u32s(&mut self.cand);
        v.u32s(&mut self.agree);
        for t in &mut self.tables {
            v.u32s(t);
        }
        self.inputs.visit(v);
    }

    fn positions_within(&self, history: usize) -> bool {
        self.cand
            .iter()
            .chain(self.tables.iter().flatten())
            .all(|&c| c as usize <= history)
    }
}
