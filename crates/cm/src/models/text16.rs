//! The text family of CM revision 16 (doc/FORMAT.md 4.27.1: the `max`
//! line's seventh round), after the configured families: a second kind of
//! estimate for the text contexts, per-bit inputs of the main mixer.
//!
//! - **Direct contexts.** For [`DIRECT`] contexts (orders 2, 3, 4 and 6,
//!   the current word with the last byte, and that with the previous word)
//!   a table of 16-bit probabilities, one per context, nibble and node of
//!   the nibble's bit tree, each with its count of updates: a slot learns
//!   at rate `2 / (2n + 3)` after `n` updates, then at the floor
//!   `2 / (2 LIMIT + 3)` (ideas of the published ZPAQ "CM" component; no
//!   code taken). Where the bit-history states of the shared table forget
//!   how many times a long context was right, these count. Each gives one
//!   mixer input per bit (its stretched probability; 0 while the slot is
//!   new).
//! - No last mixer: a small mixer over the final probability and these
//!   inputs (weight sets by partial byte, match state, classes of the last
//!   two bytes), averaged with the final probability, paid 0.02% on a
//!   `book1` head and was left out (doc/FORMAT.md 4.27.1).
//!
//! - **Revision 18** (doc/FORMAT.md 4.29.1): the tables follow the block's
//!   context-table size ([`bucket_bits`]), so a small input does not
//!   allocate 192 MiB, and the six inputs' first-layer weights start at
//!   [`INITIAL_WEIGHT_18`] (0) in every weight set: before the mixer has
//!   learned what they are worth they cost nothing (they cost 8-14 bytes
//!   on small files at revision 16).
//!
//! Every context and input is declared here; everything is integer.

use super::{ByteCtx, ContextModel, hash2};
use crate::cm::CmConfig;
use crate::logistic::stretch;

/// Direct contexts (and so per-bit mixer inputs).
pub(crate) const DIRECT: usize = 6;
/// log2 of each direct context's buckets (16 u32 each: a check word and
/// the 15 nodes of a nibble's bit tree).
const BUCKET_BITS: u32 = 19;
/// The count at which a slot's rate stops falling.
const LIMIT: u32 = 1023;

/// Revision 18: the first-layer weight (of 16384) with which the family's
/// inputs start in every weight set of the main mixer.
pub(crate) const INITIAL_WEIGHT_18: i16 = 0;

/// log2 of the buckets per context for a model whose context table has
/// `2^table_bits` bytes (from revision 18 the block's effective size,
/// `CmConfig::effective_bits`): [`BUCKET_BITS`] before revision 18, from
/// it `table_bits - 8` within 10..=[`BUCKET_BITS`].
pub(crate) fn bucket_bits(config: &CmConfig) -> u32 {
    if config.since(18) {
        u32::from(config.table_bits)
            .saturating_sub(8)
            .clamp(10, BUCKET_BITS)
    } else {
        BUCKET_BITS
    }
}

/// Bytes the family allocates under `config`: the direct tables (192 MiB
/// before revision 18, and from it at `table_bits` 27 and more).
pub(crate) fn memory(config: &CmConfig) -> u64 {
    ((DIRECT as u64) << bucket_bits(config)) * 64
}

/// `2^16 * 2 / (2n + 3)` for every count.
fn rates() -> Vec<u32> {
    (0..=LIMIT).map(|n| 131_072 / (2 * n + 3)).collect()
}

/// The most direct contexts one table holds (revision 20's family keeps a
/// second table of its own contexts: `text20.rs`).
pub(crate) const MOST: usize = 8;

/// The revision-16 text family (and, with other contexts, the direct
/// table of revision 20's).
#[derive(Debug, Clone)]
pub(crate) struct Text16Contexts {
    /// Every context's buckets, context `k` at `k << BUCKET_BITS`.
    t: Vec<u32>,
    /// Direct contexts ([`DIRECT`] for the revision-16 family).
    n: usize,
    /// This byte's context hashes.
    h: [u32; MOST],
    /// This nibble's bucket (index of its check word) per context.
    base: [usize; MOST],
    /// This bit's slot per context.
    slot: [usize; MOST],
    /// The rate of each count ([`rates`]).
    rate: Vec<u32>,
    /// log2 of the buckets per context ([`bucket_bits`]).
    bits: u32,
    /// Whether this bit was predicted (and so its slots learn), and
    /// whether the byte's contexts are set.
    predicted: bool,
    active: bool,
    /// Revision 18: a prior's snapshot holds the tables (section 11) and
    /// the inputs start silent ([`INITIAL_WEIGHT_18`]).
    walked: bool,
}

impl Text16Contexts {
    /// A fresh family for `config` (whose `table_bits` are the block's:
    /// from revision 18 the tables follow them).
    pub fn new(config: &CmConfig) -> Self {
        Self::with_contexts(config, DIRECT)
    }

    /// A table of `n` (at most [`MOST`]) direct contexts whose hashes the
    /// owner sets ([`set_hashes`](Self::set_hashes)) in place of
    /// [`begin_byte`](ContextModel::begin_byte).
    pub fn with_contexts(config: &CmConfig, n: usize) -> Self {
        let bits = bucket_bits(config);
        let t = vec![0u32; (n << bits) * 16];
        sep_kernels::advise_huge_pages(&t);
        Text16Contexts {
            t,
            n,
            h: [0; MOST],
            base: [0; MOST],
            slot: [0; MOST],
            rate: rates(),
            bits,
            predicted: false,
            active: false,
            walked: config.since(18),
        }
    }

    /// Finds (or claims) every context's bucket for the nibble that
    /// starts with partial byte `c0`.
    fn find(&mut self, c0: u32) {
        for k in 0..self.n {
            let b = hash2(self.h[k], c0);
            let i = self.row(k, b);
            let check = b | 1;
            if self.t[i] != check {
                self.t[i] = check;
                self.t[i + 1..i + 16].fill(0);
            }
            self.base[k] = i;
        }
    }

    /// The first slot of context `k`'s row for the hash `b` of its
    /// context and nibble.
    #[inline]
    fn row(&self, k: usize, b: u32) -> usize {
        ((k << self.bits) | (b >> (32 - self.bits)) as usize) * 16
    }

    /// Starts loading the rows [`find`](Self::find)`(c0)` will read (a
    /// cache hint: changes nothing).
    fn prefetch_rows(&self, c0: u32) {
        for k in 0..self.n {
            sep_kernels::prefetch(&self.t, self.row(k, hash2(self.h[k], c0)));
        }
    }
}

impl Text16Contexts {
    /// Sets this byte's context hashes (`h.len()` the table's contexts)
    /// and makes the table predict its bits.
    pub fn set_hashes(&mut self, h: &[u32]) {
        debug_assert_eq!(h.len(), self.n, "one hash per direct context");
        self.h[..h.len()].copy_from_slice(h);
        self.active = true;
        self.predicted = false;
        // The first nibble's rows load while the model finds its buckets.
        self.prefetch_rows(1);
    }
}

/// A slot's probability of a 1 (16 bits) and count.
#[inline]
fn unpack(v: u32) -> (u32, u32) {
    ((v >> 16) ^ 0x8000, v & 0xFFFF)
}

impl ContextModel for Text16Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        self.n
    }

    /// Revision 18 (4.29.1): the inputs start silent.
    fn initial_weight(&self) -> Option<i16> {
        self.walked.then_some(INITIAL_WEIGHT_18)
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let c4 = ctx.c4();
        let c8 = ctx.c8();
        let w = &ctx.st.words;
        let c1 = c4 & 0xFF;
        let word = hash2(w.word ^ 0x7A11, c1);
        self.set_hashes(&[
            hash2(c4 & 0xFFFF, 0x1602),
            hash2(c4 & 0xFF_FFFF, 0x1603),
            hash2(c4, 0x1604),
            hash2(hash2(c4, c8 & 0xFFFF), 0x1606),
            word,
            hash2(word, w.word_prev ^ 0x1607),
        ]);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        if !self.active {
            out.fill(0);
            return;
        }
        if i == 7 || i == 3 {
            self.find(c0);
        }
        let done = 7 - i;
        let nib = (1 << (done % 4)) | (c0 & ((1 << (done % 4)) - 1));
        for (k, o) in out.iter_mut().enumerate() {
            let s = self.base[k] + nib as usize;
            self.slot[k] = s;
            let (p, n) = unpack(self.t[s]);
            *o = if n == 0 {
                0
            } else {
                stretch(p.clamp(1, 65535))
            };
        }
        self.predicted = true;
    }

    fn prefetch_bit(&self, c0: u32, i: u32) {
        if self.active && i == 3 {
            self.prefetch_rows(c0);
        }
    }

    fn update_bit(&mut self, bit: u32) {
        if self.predicted {
            let target: u32 = if bit == 1 { 65535 } else { 0 };
            for &s in &self.slot[..self.n] {
                let (p, n) = unpack(self.t[s]);
                let r = i64::from(self.rate[n as usize]);
                let p = (i64::from(p) + (((i64::from(target) - i64::from(p)) * r) >> 16))
                    .clamp(0, 65535) as u32;
                let n = (n + 1).min(LIMIT);
                self.t[s] = ((p ^ 0x8000) << 16) | n;
            }
            self.predicted = false;
        }
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, _byte: u8) {
        self.active = false;
    }

    /// From revision 18 a prior holds the direct tables (revision 16's
    /// walked nothing: a model restored from its prior started them empty
    /// under mixer weights trained with them full).
    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        if self.walked {
            v.u32s(&mut self.t);
        }
    }
}
