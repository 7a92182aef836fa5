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
        let m = if b.expected != 0 && b.expected >> (i + 1) == c0 {
            2 + (b.expected >> i & 1)
        } else {
            u32::from(b.expected != 0)
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
