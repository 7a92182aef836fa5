//! Word contexts: the current word (letters, case-folded) with the last
//! byte, the current and previous word, and the column (bytes since the
//! last newline) with the last byte.

use super::{ByteCtx, ContextModel, hash2};

/// A stream's word history.
#[derive(Debug, Clone, Default)]
pub(crate) struct WordState {
    /// Hash of the current word (0: not in a word).
    pub word: u32,
    /// Hash of the previous word.
    pub word_prev: u32,
    /// Hash of the word before that.
    pub word_prev2: u32,
    /// Bytes since the last newline.
    pub col: u32,
}

impl WordState {
    /// Sees the next byte of the stream.
    #[inline]
    pub fn observe(&mut self, byte: u8) {
        let is_letter = byte.is_ascii_alphabetic() || byte >= 0x80;
        if is_letter {
            self.word = (self.word ^ u32::from(byte.to_ascii_lowercase()))
                .wrapping_mul(0x2C9F_3C51)
                .wrapping_add(1);
        } else if self.word != 0 {
            self.word_prev2 = self.word_prev;
            self.word_prev = self.word;
            self.word = 0;
        }
        self.col = if byte == b'\n' { 0 } else { self.col + 1 };
    }
}

/// The word family (three contexts: word, words, column).
#[derive(Debug, Clone)]
pub(crate) struct WordContexts;

impl ContextModel for WordContexts {
    fn contexts(&self) -> usize {
        3
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let w = &ctx.st.words;
        let c1 = ctx.c4() & 0xFF;
        out[0] = hash2(w.word, 0x100 + c1);
        out[1] = hash2(hash2(w.word, w.word_prev), 0x200);
        out[2] = hash2(w.col.min(60), 0x600 + c1);
    }
}
