//! The SSE stage of CM revision 2 (doc/FORMAT.md 4.12): two more APMs
//! after the v1 chain ([`ApmChain`](crate::apm::ApmChain)), on contexts the
//! v1 chain does not see: the hash of the current word, and the match
//! model's predicted byte with its length. Each maps the v1 chain's output;
//! the final probability averages the three.
//!
//! Measured (README, "CM revision 2"): an APM on a hash of the last three
//! bytes as well gained 17 bytes in 742,011 for a third more APM time, so
//! there is none.

use crate::apm::Apm;
use crate::logistic::stretch;
use crate::models::hash2;
use crate::prim::expected_bit;

/// The revision-2 APMs.
#[derive(Debug, Clone)]
pub(crate) struct TextSse {
    word: Apm,
    matched: Apm,
}

/// What the revision-2 APMs see of a byte (fixed for its eight bits).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SseByte {
    /// Hash of the current word (0: not in a word) with the last byte.
    pub word: u32,
    /// The match model's predicted byte with a leading 1 (0: none) and its
    /// length, capped at 15.
    pub expected: u32,
    pub len: u32,
    /// The byte before the last (a mixer selector's context).
    pub c2: u32,
}

impl TextSse {
    /// Walks both maps (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.word.visit(v);
        self.matched.visit(v);
    }

    /// Fresh APMs (2^16 contexts of 33 points each, 4.3 MB each).
    /// `rate` is the adaptation shift (7 in CM revision 2, 6 in revision 4).
    pub fn with_rate(rate: u32) -> Self {
        TextSse {
            word: Apm::new(1 << 16, rate),
            matched: Apm::new(1 << 16, rate),
        }
    }

    /// Refines `p` (the v1 chain's 16-bit probability) for bit `i` of the
    /// byte, `c0` the bits so far with a leading 1.
    #[inline]
    pub fn refine(&mut self, p: u32, b: &SseByte, c0: u32, i: u32) -> u32 {
        let d = stretch(p);
        let (word, matched) = Self::contexts(b, c0, i);
        let a1 = self.word.refine_stretched(d, word);
        let a2 = self.matched.refine_stretched(d, matched);
        ((p + a1 + a2 + 1) / 3).clamp(1, 65535)
    }

    /// The contexts of the word and match APMs for bit `i` of the byte,
    /// `c0` the bits so far with a leading 1.
    #[inline]
    fn contexts(b: &SseByte, c0: u32, i: u32) -> (usize, usize) {
        // An 8-bit hash of the byte's context, then the partial byte: the
        // eight bits of a byte stay within 16 KiB of the table.
        let slot = |h: u32| ((hash2(h, 0x55) >> 24) << 8 | c0) as usize;
        // The predicted bit (or none, when the byte left the match).
        let m = match expected_bit(b.expected, c0, i) {
            Some(bit) => 2 + bit,
            None => u32::from(b.expected != 0),
        };
        (slot(b.word), slot(b.expected << 8 | b.len << 2 | m))
    }

    /// Starts loading the rows that [`refine`](Self::refine) with these
    /// arguments will read (a cache hint: changes nothing).
    #[inline]
    pub fn prefetch(&self, b: &SseByte, c0: u32, i: u32) {
        let (word, matched) = Self::contexts(b, c0, i);
        self.word.prefetch(word);
        self.matched.prefetch(matched);
    }

    /// Trains the APMs that [`refine`](Self::refine) used.
    #[inline]
    pub fn update(&mut self, bit: u32) {
        self.word.update(bit);
        self.matched.update(bit);
    }
}

/// The final APM stage of CM revision 8 (doc/FORMAT.md 4.19.1): three
/// more APMs after [`TextSse`], each with `2^bits` hashed contexts times
/// the partial byte: the last two bytes, the last three bytes, and the
/// current word with the last byte. Each maps the stage's input
/// probability; the output averages the input (weight `keep`) with the
/// three.
#[derive(Debug, Clone)]
pub(crate) struct FinalSse {
    apms: [Apm; 3],
    bits: u32,
    keep: u32,
}

/// What [`FinalSse`] sees of a byte (fixed for its eight bits).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FinalByte {
    /// Hashes of the last two and three bytes and of the word with the
    /// last byte.
    pub hashes: [u32; 3],
}

impl FinalSse {
    /// Walks the maps (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        for a in &mut self.apms {
            a.visit(v);
        }
    }

    /// Bytes a stage of `bits` hash bits allocates.
    pub(crate) const fn memory(bits: u32) -> u64 {
        3 * 2 * 33 * (256u64 << bits)
    }

    /// Fresh maps of `2^bits * 256` contexts each (identity), adaptation
    /// shift `rate`; the input's weight in the output average is `keep`.
    pub fn new(bits: u32, rate: u32, keep: u32) -> Self {
        FinalSse {
            apms: std::array::from_fn(|_| Apm::new(256 << bits, rate)),
            bits,
            keep,
        }
    }

    /// The three contexts' rows for the partial byte `c0`.
    #[inline]
    fn rows(&self, b: &FinalByte, c0: u32) -> [usize; 3] {
        b.hashes
            .map(|h| ((hash2(h, 0x3C6E_F372) >> (32 - self.bits)) << 8 | c0) as usize)
    }

    /// Starts loading the rows of partial byte `c0` (a cache hint).
    #[inline]
    pub fn prefetch(&self, b: &FinalByte, c0: u32) {
        for (a, r) in self.apms.iter().zip(self.rows(b, c0)) {
            a.prefetch(r);
        }
    }

    /// Refines `p` (16-bit) for the partial byte `c0`.
    #[inline]
    pub fn refine(&mut self, p: u32, b: &FinalByte, c0: u32) -> u32 {
        let rows = self.rows(b, c0);
        let d = stretch(p);
        let mut sum = p * self.keep;
        for (a, r) in self.apms.iter_mut().zip(rows) {
            sum += a.refine_stretched(d, r);
        }
        let n = self.keep + 3;
        ((sum + n / 2) / n).clamp(1, 65535)
    }

    /// Trains the maps that [`refine`](Self::refine) used.
    #[inline]
    pub fn update(&mut self, bit: u32) {
        for a in &mut self.apms {
            a.update(bit);
        }
    }
}
