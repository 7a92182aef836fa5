//! CM revision 28 (doc/FORMAT.md 4.39.2): two more mixer weight-set
//! selectors for the configured families (text, code, markup), after
//! revision 8's longest-order selector:
//!
//! - the position in the current word (letters and bytes of 128 and up
//!   since the last other byte, 0 to 8) with the class of the byte before
//!   the word (space, newline, an opening bracket, bar, `<` or `=`, other)
//!   and the partial byte: `(class * 9 + position) * 256 + c0`;
//! - the match model's length bucket (none, 1-7, 8-11, 12 and up) with the
//!   word position, the match's expected bit (none, 0, 1) and the bit
//!   position: `((bucket * 9 + position) * 3 + expected) * 8 + i`.
//!
//! Tried and not kept (FORMAT 4.39.2): a third APM stage after revision 8's
//! (order 1 with the expected byte and length, order 2 with the expected
//! byte, order 4 with the long match's length).
//!
//! The model calls these helpers from `install`, `code_byte` and
//! `predict_bit`.

use super::{Cm, CmStream};
use crate::prim::expected_bit;

/// How many word positions the selectors tell apart (0 to 8).
const POSITIONS: usize = 9;

/// The first selector's weight sets: 4 classes of the byte before the
/// word, the word position, the partial byte.
pub(crate) const SETS1: usize = 4 * POSITIONS * 256;

/// The second selector's weight sets: 4 match-length buckets, the word
/// position, 3 expected-bit states, 8 bit positions.
pub(crate) const SETS2: usize = 4 * POSITIONS * 3 * 8;

/// Bytes the two selectors' weight sets allocate (counted in
/// `CmConfig::memory_bytes`): a set holds up to
/// [`MAX_INPUTS`](crate::mixer2::MAX_INPUTS) weights of 2 bytes.
pub(crate) const MEMORY: u64 = ((SETS1 + SETS2) * crate::mixer2::MAX_INPUTS * 2) as u64;

/// What the selectors see of a byte (fixed for its eight bits).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sel28 {
    /// `class * 9 + position`.
    word: usize,
    /// `bucket * 9 + position`.
    matched: usize,
    /// The match model's expected byte with a leading 1 (0: none).
    expected: u32,
}

/// The match length's bucket: 0 none, 1 for 1 to 7, 2 for 8 to 11, 3 for
/// 12 and up.
fn length_bucket(len: usize) -> usize {
    match len {
        0 => 0,
        1..=7 => 1,
        8..=11 => 2,
        _ => 3,
    }
}

/// The class of the byte before a word: 0 space, 1 newline, 2 an opening
/// bracket (`[`, `(`, `{`), `|`, `<` or `=`, 3 anything else.
fn before_class(b: u8) -> usize {
    match b {
        b' ' => 0,
        b'\n' => 1,
        b'[' | b'|' | b'(' | b'{' | b'<' | b'=' => 2,
        _ => 3,
    }
}

impl Sel28 {
    /// The selectors' view of the byte after the stream's history `st`.
    pub(crate) fn of(st: &CmStream) -> Self {
        let hist = u64::from(st.c8) << 32 | u64::from(st.c4);
        let byte = |k: usize| (hist >> (8 * k)) as u8;
        let position = (0..8)
            .find(|&k| {
                let b = byte(k);
                !(b.is_ascii_alphabetic() || b >= 0x80)
            })
            .unwrap_or(8);
        // A word of 8 or more letters: the byte before it is unknown.
        let class = if position < 8 {
            before_class(byte(position))
        } else {
            3
        };
        let m = &st.matcher;
        Sel28 {
            word: class * POSITIONS + position,
            matched: length_bucket(m.len()) * POSITIONS + position,
            expected: m.expected_byte().map_or(0, |b| 0x100 | u32::from(b)),
        }
    }

    /// The two selectors' contexts for bit `i` (partial byte `c0`).
    #[inline]
    pub(crate) fn contexts(&self, c0: u32, i: u32) -> [usize; 2] {
        let expected = expected_bit(self.expected, c0, i).map_or(0, |bit| 1 + bit as usize);
        [
            self.word << 8 | c0 as usize,
            (self.matched * 3 + expected) * 8 + i as usize,
        ]
    }
}

impl Cm {
    /// Revision 28: whether the two selectors are installed (the
    /// configured families of a revision-28 model).
    #[inline]
    pub(super) fn mix28_active(&self) -> bool {
        self.text_mix && self.config.since(28)
    }

    /// Revision 28: the selectors' sizes, for `install`.
    pub(super) fn mix28_sets(&self) -> &'static [usize] {
        if self.mix28_active() {
            &[SETS1, SETS2]
        } else {
            &[]
        }
    }

    /// Revision 28: notes the byte's view (called at the byte's start).
    #[inline]
    pub(super) fn mix28_begin_byte(&mut self, st: &CmStream) {
        if self.mix28_active() {
            self.sel28 = Sel28::of(st);
        }
    }

    /// Revision 28: selects the two selectors' sets from selector `k` on.
    #[inline]
    pub(super) fn mix28_select(&mut self, k: usize, c0: u32, i: u32) {
        if self.mix28_active() {
            for (j, ctx) in self.sel28.contexts(c0, i).into_iter().enumerate() {
                self.mixer.select(k + j, ctx);
            }
        }
    }
}
