//! The word-prediction family of CM revision 32 (doc/FORMAT.md 4.43.1:
//! the `max` line's fifteenth round), after revision 30's text family:
//! hashed contexts that predict a word's first letters from the words
//! before it, a direct input and an APM stage keyed by the last word and
//! the current word so far.
//!
//! - **Words.** Letters are ASCII letters and bytes of 0x80 and up,
//!   case-folded; a word's hash is `(h ^ letter) * 0x2C9F_3C51 + 1` from
//!   0 over its letters ([`word_step`]); a byte that is not a letter ends
//!   the word. `w0` is the current word's hash (0 between words), `w1`
//!   and `w2` the last two completed words'. `sep` is the last byte while
//!   `w0` is 0, else 0.
//! - **Followers.** Tables of `2^bits` entries ([`table_bits`]; indexed by
//!   a hash's top bits, [`Text32Contexts::slot`]): `last[w]` and
//!   `older[w]` the word that followed `w` the last time and the last
//!   different word before it, `pair[hash2(w2, w1)]` the word that
//!   followed the two words last. When a word `W` completes after `P1`
//!   and `P2`: if `last[P1] != W`, `older[P1] = last[P1]` and
//!   `last[P1] = W`; `pair[hash2(P2, P1)] = W`; `W` becomes `w1`.
//! - **Sentence.** `first` is the first word completed since the last
//!   `.`, `!`, `?` or newline, `count` the words completed since then.
//! - **Contexts** ([`CONTEXTS`] hashed contexts, in mixer order):
//!   - `hash2(hash2(pair[hash2(w2, w1)], w0), 0x32_0100 | sep)`: the
//!     word that followed the last two words, with the word so far;
//!   - `hash2(hash2(older[w1], w0), 0x32_0200 | sep)`: the word that
//!     followed the last word the time before;
//!   - `hash2(hash2(first, w0), 0x32_0600 | sep | min(count, 7) << 12)`.
//! - **Word key.** `key = hash2(hash2(w1, w0), sep)` for the byte; at
//!   the byte's first and fifth bit `nib = hash2(key, c0)` (`c0` the
//!   bits so far with a leading 1), and the bit's node in the nibble's
//!   tree is `node = 1 << k | (the nibble's k bits so far)`, `k` = 0..=3.
//! - **Direct input** (one per bit): a 16-bit probability at entry
//!   `(nib >> (32 - bits - 2 + 4)) << 4 | node` of `2^(bits + 2)`,
//!   starting at 32768, moved by `(target - p) >> 4` (target 65535 or
//!   0) after the bit; the input is its stretch.
//! - **APM stage** (after every other refinement of the final
//!   probability `p`): an [`Apm`] of `2^bits` contexts and rate [`RATE`]
//!   in context `(hash2(nib, 0x5555) >> (32 - bits + 4)) << 4 | node`
//!   gives `a`; the result is `(p + 3a) / 4` clamped to `1..=65535`.
//!
//! Every context and input is declared here; everything is integer.

use super::{ByteCtx, ContextModel, hash2};
use crate::apm::Apm;
use crate::cm::CmConfig;

/// Hashed contexts the family adds.
pub(crate) const CONTEXTS: usize = 3;

/// The APM's adaptation shift.
const RATE: u32 = 5;

/// The most and fewest bits of the follower tables and the APM.
const MOST_BITS: u32 = 20;
const FEWEST_BITS: u32 = 12;

/// log2 of the entries of each follower table and of the APM's contexts
/// for a model whose context table has `2^table_bits` bytes:
/// `table_bits - 9` within 12..=20.
pub(crate) fn table_bits(config: &CmConfig) -> u32 {
    u32::from(config.table_bits)
        .saturating_sub(9)
        .clamp(FEWEST_BITS, MOST_BITS)
}

/// Bytes the family allocates under `config`: three follower tables of
/// `u32`, the direct input's `u16` probabilities (four per follower
/// entry) and the APM (33 `u16` per context).
pub(crate) fn memory(config: &CmConfig) -> u64 {
    let n = 1u64 << table_bits(config);
    3 * 4 * n + 2 * 4 * n + 33 * 2 * n
}

/// One letter `b` (case-folded) added to a word's hash `h`.
fn word_step(h: u32, b: u8) -> u32 {
    (h ^ u32::from(b.to_ascii_lowercase()))
        .wrapping_mul(0x2C9F_3C51)
        .wrapping_add(1)
}

/// The revision-32 word-prediction family: see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Text32Contexts {
    /// log2 of the follower tables' entries ([`table_bits`]).
    bits: u32,
    /// The current word's hash (0: between words) and the last two
    /// completed words' (`words[0]` the latest).
    word: u32,
    words: [u32; 2],
    /// Per word: the word that followed it last, and the last different
    /// one before that.
    last: Vec<u32>,
    older: Vec<u32>,
    /// Per pair of words: the word that followed them last.
    pair: Vec<u32>,
    /// The sentence's first word and the words completed in it.
    first: u32,
    count: u32,
    /// This byte's word key.
    key: u32,
    /// The direct input's probabilities and the entry used for this bit.
    direct: Vec<u16>,
    direct_at: usize,
    /// This nibble's hash of the key and the bits so far, and the APM
    /// context of this bit.
    nibble: u32,
    apm_at: usize,
    /// The APM stage.
    apm: Apm,
}

impl Text32Contexts {
    /// A family with empty state, its tables sized for `config`.
    pub fn new(config: &CmConfig) -> Self {
        let bits = table_bits(config);
        Text32Contexts {
            bits,
            word: 0,
            words: [0; 2],
            last: vec![0; 1 << bits],
            older: vec![0; 1 << bits],
            pair: vec![0; 1 << bits],
            first: 0,
            count: 0,
            key: 0,
            direct: vec![32768; 4 << bits],
            direct_at: 0,
            nibble: 0,
            apm_at: 0,
            apm: Apm::new(1 << bits, RATE),
        }
    }

    /// A follower table's entry for hash `h`.
    fn slot(&self, h: u32) -> usize {
        (h >> (32 - self.bits)) as usize
    }

    /// The direct input's entry and the APM context of bit `i` (partial
    /// byte `c0`) in the nibble hashed `nibble`. A nibble's 15 nodes lie
    /// side by side: one row of 16 per word key and first nibble.
    fn entries(&self, nibble: u32, c0: u32, i: u32) -> (usize, usize) {
        let done = 7 - i;
        let node = (1 << (done % 4) | (c0 & ((1 << (done % 4)) - 1))) as usize;
        let direct = ((nibble >> (32 - self.bits - 2 + 4)) as usize) << 4 | node;
        let apm = ((hash2(nibble, 0x5555) >> (32 - self.bits + 4)) as usize) << 4 | node;
        (direct, apm)
    }

    /// Learns that word `w` completed after the last two words.
    fn complete(&mut self, w: u32) {
        let [p1, p2] = self.words;
        let s = self.slot(p1);
        if self.last[s] != w {
            self.older[s] = self.last[s];
            self.last[s] = w;
        }
        let s = self.slot(hash2(p2, p1));
        self.pair[s] = w;
        self.words = [w, p1];
        if self.count == 0 {
            self.first = w;
        }
        self.count = (self.count + 1).min(7);
    }
}

impl ContextModel for Text32Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let [w1, w2] = self.words;
        let w0 = self.word;
        let sep = if w0 == 0 { ctx.c4() & 0xFF } else { 0 };
        let pair = self.pair[self.slot(hash2(w2, w1))];
        out[0] = hash2(hash2(pair, w0), 0x32_0100 | sep);
        let older = self.older[self.slot(w1)];
        out[1] = hash2(hash2(older, w0), 0x32_0200 | sep);
        out[2] = hash2(hash2(self.first, w0), 0x32_0600 | sep | self.count << 12);
    }

    fn bit_inputs(&self) -> usize {
        1
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let w0 = self.word;
        let sep = if w0 == 0 { ctx.c4() & 0xFF } else { 0 };
        self.key = hash2(hash2(self.words[0], w0), sep);
        // The first bit's rows load while the model finds its buckets.
        self.prefetch_bit(1, 7);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        if i == 7 || i == 3 {
            self.nibble = hash2(self.key, c0);
        }
        (self.direct_at, self.apm_at) = self.entries(self.nibble, c0, i);
        out[0] = crate::logistic::stretch(u32::from(self.direct[self.direct_at]));
    }

    fn prefetch_bit(&self, c0: u32, i: u32) {
        let nibble = if i == 7 || i == 3 {
            hash2(self.key, c0)
        } else {
            self.nibble
        };
        let (direct, apm) = self.entries(nibble, c0, i);
        sep_kernels::prefetch(&self.direct, direct);
        self.apm.prefetch(apm);
    }

    fn refine_final(&mut self, p: u32, _c0: u32) -> u32 {
        let a = self.apm.refine(p.clamp(1, 65535), self.apm_at);
        ((p + 3 * a) / 4).clamp(1, 65535)
    }

    fn update_bit(&mut self, bit: u32) {
        self.apm.update(bit);
        let v = &mut self.direct[self.direct_at];
        if bit == 1 {
            *v += (65535 - *v) >> 4;
        } else {
            *v -= *v >> 4;
        }
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        if byte.is_ascii_alphabetic() || byte >= 0x80 {
            self.word = word_step(self.word, byte);
        } else {
            if self.word != 0 {
                let w = self.word;
                self.word = 0;
                self.complete(w);
            }
            if matches!(byte, b'.' | b'!' | b'?' | b'\n') {
                self.count = 0;
            }
        }
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        for x in [&mut self.word, &mut self.first, &mut self.count] {
            v.u32s(std::slice::from_mut(x));
        }
        self.count = self.count.min(7);
        v.u32s(&mut self.words);
        v.u32s(&mut self.last);
        v.u32s(&mut self.older);
        v.u32s(&mut self.pair);
        v.u16s(&mut self.direct);
        self.apm.visit(v);
    }
}
