//! Word, line, markup and code-point contexts of CM revisions 7 and 8
//! (doc/FORMAT.md 4.18.7 and 4.19.7), after the revision-2 text family
//! ([`TextContexts`](super::text::TextContexts)), whose contexts they
//! complement rather than repeat.
//!
//! The family keeps its own text state, updated in
//! [`observe`](ContextModel::observe) from the bytes in coding order: the
//! last words (letters only, case-folded; bytes of 0x80 and above count as
//! letters), the word that followed each word the last time, the current
//! and previous lines, the UTF-8 code points, the wiki/markup state, the
//! text since the last opening bracket, the number being read, the classes
//! of the last bytes and the last letters. Revision 7 takes the first
//! [`REV7_CONTEXTS`] of its hashed contexts; revision 8 takes all
//! [`WORDS8_CONTEXTS`] and adds [`RUNS`] run inputs per bit: for four more
//! contexts, the byte that followed the context last and how many times in
//! a row, as a prediction of the byte's bits. Every context is declared in
//! [`Words8Contexts::hashes`], every run context in
//! [`Words8Contexts::run_hashes`]; everything is integer.

use super::text::class;
use super::{ByteCtx, ContextModel, hash2};
use crate::prim::{AdaptiveProbs, expected_bit};

/// How many hashed contexts the family adds at revision 8.
pub(crate) const WORDS8_CONTEXTS: usize = 12;

/// How many of them (the first) revision 7 takes.
pub(crate) const REV7_CONTEXTS: usize = 2;

/// How many run inputs the family adds at revision 8 (per bit, after its
/// hashed contexts).
pub(crate) const RUNS: usize = 4;

/// log2 of the entries of the word-successor table.
const NEXT_BITS: u32 = 16;

/// log2 of the entries of the run table.
const RUN_BITS: u32 = 22;

/// Wiki/markup state bits ([`Words8Contexts::markup`]).
const IN_LINK: u32 = 1;
const IN_TEMPLATE: u32 = 2;
const IN_TAG: u32 = 4;
const IN_ENTITY: u32 = 8;
const HEADING: u32 = 16;
const TABLE: u32 = 32;
const LIST: u32 = 64;
const EMPHASIS: u32 = 128;
const TAG_NAME: u32 = 256;

/// The word family of revisions 7 and 8: see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Words8Contexts {
    /// Hashed contexts used: [`REV7_CONTEXTS`] or [`WORDS8_CONTEXTS`].
    contexts: usize,
    /// Whether the run inputs are used (revision 8).
    run_inputs: bool,
    /// Hashes of the current word (0: not in a word) and of the last three
    /// words before it (`words[0]` the latest).
    word: u32,
    words: [u32; 3],
    /// The last byte that was not a letter.
    before: u32,
    /// For each word (by [`slot`](Self::slot) of its hash), the word that
    /// followed it last.
    next: Vec<u32>,
    /// Block positions of the current and previous lines' first bytes and
    /// the previous line's length.
    line_start: usize,
    prev_line_start: usize,
    prev_line_len: usize,
    /// The line's first byte that is not a blank (0 while none), and the
    /// words completed on the line.
    line_first: u32,
    line_words: u32,
    /// The last two complete code points (`cps[0]` the latest; a byte below
    /// 0x80 is one), the bytes of the one being read and how many more it
    /// needs.
    cps: [u32; 2],
    cp_cur: u32,
    cp_left: u32,
    /// Markup state bits (`IN_LINK` ...), and the hash of the current or
    /// last tag name.
    markup: u32,
    tag: u32,
    /// The opener of the last opening bracket (0 after a closing one) and
    /// the hash of the text since it, the last byte lowest.
    opener: u32,
    inner: u32,
    /// Digits of the number being read, and its first digit.
    digits: u32,
    number: u32,
    /// Classes of the last eight bytes, 4 bits each, the latest lowest.
    classes: u32,
    /// The last six letters (case-folded), the latest lowest.
    letters: u64,
    /// Words since the last sentence end (`.`, `!`, `?`, newline), and that
    /// byte.
    sentence_words: u32,
    sentence_end: u32,
    /// Per run slot: `check << 16 | byte << 8 | count`, the byte that
    /// followed the context last and how many times in a row (count 0: an
    /// empty slot).
    runs: Vec<u32>,
    /// This byte's slot and check of each run context.
    run_slot: [usize; RUNS],
    run_check: [u32; RUNS],
    /// This byte's expected byte of each run context (`0x100 | byte`; 0:
    /// none) and its count.
    run_expected: [u32; RUNS],
    run_count: [u32; RUNS],
    /// How often an expected bit was right, per run context, count (up to
    /// 15) and whether it is the byte's first bit.
    run_probs: AdaptiveProbs,
    /// The entry of `run_probs` used for this bit and the expected bit,
    /// `entry << 1 | bit` (`usize::MAX`: none).
    run_used: [usize; RUNS],
}

impl Words8Contexts {
    /// Bytes of memory the family allocates at revision 8 (`max_line`) or
    /// 7.
    pub const fn memory(max_line: bool) -> u64 {
        (4 << NEXT_BITS) + if max_line { 4 << RUN_BITS } else { 0 }
    }

    /// A family with empty state: revision 8's (`max_line`) or 7's.
    pub fn new(max_line: bool) -> Self {
        Words8Contexts {
            contexts: if max_line {
                WORDS8_CONTEXTS
            } else {
                REV7_CONTEXTS
            },
            run_inputs: max_line,
            word: 0,
            words: [0; 3],
            before: 0,
            next: vec![0; 1 << NEXT_BITS],
            line_start: 0,
            prev_line_start: 0,
            prev_line_len: 0,
            line_first: 0,
            line_words: 0,
            cps: [0; 2],
            cp_cur: 0,
            cp_left: 0,
            markup: 0,
            tag: 0,
            opener: 0,
            inner: 0,
            digits: 0,
            number: 0,
            classes: 0,
            letters: 0,
            sentence_words: 0,
            sentence_end: 0,
            runs: if max_line {
                vec![0; 1 << RUN_BITS]
            } else {
                Vec::new()
            },
            run_slot: [0; RUNS],
            run_check: [0; RUNS],
            run_expected: [0; RUNS],
            run_count: [0; RUNS],
            run_probs: AdaptiveProbs::new(RUNS * 32, 1023),
            run_used: [usize::MAX; RUNS],
        }
    }

    /// The successor-table slot of word hash `w`.
    #[inline]
    fn slot(w: u32) -> usize {
        (hash2(w, 0x8_0001) >> (32 - NEXT_BITS)) as usize
    }

    /// The run contexts' hashes for the byte at `ctx.pos`.
    fn run_hashes(&self, ctx: &ByteCtx<'_>) -> [u32; RUNS] {
        let c4 = ctx.c4();
        let c1 = c4 & 0xFF;
        let [w1, w2, _] = self.words;
        let w0 = self.word;
        [
            hash2(c4 & 0xFF_FFFF, 0x8_0900),
            hash2(hash2(w0, c1), 0x8_0903),
            hash2(hash2(w0, w1), 0x8_0904),
            hash2(hash2(w0, w1), w2 ^ 0x8_0905),
        ]
    }
}

impl ContextModel for Words8Contexts {
    fn contexts(&self) -> usize {
        self.contexts
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let c4 = ctx.c4();
        let c1 = c4 & 0xFF;
        let [w1, w2, w3] = self.words;
        let w0 = self.word;
        // Revision 7's: the classes of the last eight bytes with the number
        // being read; the markup state with the word and the last byte.
        out[0] = hash2(
            self.classes,
            self.digits.min(15) | self.number << 4 | 0x8_0700 << 12,
        );
        out[1] = hash2(hash2(self.markup, self.tag), hash2(w0, c1) ^ 0x8_0600);
        if self.contexts == REV7_CONTEXTS {
            return;
        }
        let col = ctx.pos.saturating_sub(self.line_start);
        let above_at = |k: usize| {
            let p = self.prev_line_start + col + k;
            if col + k < self.prev_line_len && p < ctx.pos && ctx.vis.known(p) {
                u32::from(ctx.data[p])
            } else {
                0x100
            }
        };
        let (above, above1) = (above_at(0), above_at(1));
        // The word that followed the last word last time, with the word so
        // far; words with gaps; the word with the byte before it.
        out[2] = hash2(hash2(self.next[Self::slot(w1)], w0), 0x8_0300);
        out[3] = hash2(hash2(w0, w2), 0x8_0100);
        out[4] = hash2(hash2(w0, w3), 0x8_0102);
        out[5] = hash2(w0, self.before | 0x8_0200);
        // Lines: the two bytes above with the column; the line's first byte
        // and words so far with the word.
        out[6] = hash2(above | above1 << 9, (col.min(255) as u32) << 8 | 0x8_0400);
        out[7] = hash2(
            self.line_first | self.line_words.min(15) << 8,
            w0 ^ 0x8_0401,
        );
        // The code point before the last with the one being read.
        out[8] = hash2(self.cps[1], (self.cp_cur | self.cp_left << 24) ^ 0x8_0501);
        // The text since the last opening bracket.
        out[9] = hash2(self.inner, self.opener | 0x8_0601 << 8);
        // The last six letters; the word with its place in the sentence.
        out[10] = hash2(self.letters as u32, (self.letters >> 32) as u32 ^ 0x8_0A01);
        out[11] = hash2(
            w0,
            self.sentence_words.min(7) | self.sentence_end << 3 | 0x8_0A02 << 12,
        );
    }

    fn bit_inputs(&self) -> usize {
        if self.run_inputs { RUNS } else { 0 }
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        for (r, h) in self.run_hashes(ctx).into_iter().enumerate() {
            let slot = (h >> (32 - RUN_BITS)) as usize;
            let check = h & 0xFFFF;
            let e = self.runs[slot];
            self.run_slot[r] = slot;
            self.run_check[r] = check;
            if e & 0xFF != 0 && e >> 16 == check {
                self.run_expected[r] = 0x100 | (e >> 8 & 0xFF);
                self.run_count[r] = e & 0xFF;
            } else {
                self.run_expected[r] = 0;
                self.run_count[r] = 0;
            }
        }
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        for (r, o) in out[..RUNS].iter_mut().enumerate() {
            let e = self.run_expected[r];
            if let Some(bit) = expected_bit(e, c0, i) {
                let k = r * 32 + (self.run_count[r].min(15) as usize) * 2 + usize::from(i == 7);
                let x = self.run_probs.stretched(k);
                *o = if bit != 0 { x } else { -x };
                self.run_used[r] = k << 1 | bit as usize;
            } else {
                *o = 0;
                self.run_used[r] = usize::MAX;
            }
        }
    }

    fn update_bit(&mut self, bit: u32) {
        for u in self.run_used {
            if u != usize::MAX {
                self.run_probs
                    .update(u >> 1, u32::from(bit == (u & 1) as u32));
            }
        }
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        // One walk in field order (the visitors read and write flat
        // little-endian bytes, so single fields and arrays make the same
        // stream; `letters` as one u64 is its low then high 32 bits).
        fn one(v: &mut dyn crate::snapshot::Visitor, x: &mut u32) {
            v.u32s(std::slice::from_mut(x));
        }
        one(v, &mut self.word);
        v.u32s(&mut self.words);
        for x in [&mut self.before, &mut self.line_first, &mut self.line_words] {
            one(v, x);
        }
        v.u32s(&mut self.cps);
        for x in [
            &mut self.cp_cur,
            &mut self.cp_left,
            &mut self.markup,
            &mut self.tag,
            &mut self.opener,
            &mut self.inner,
            &mut self.digits,
            &mut self.number,
            &mut self.classes,
        ] {
            one(v, x);
        }
        v.u64s(std::slice::from_mut(&mut self.letters));
        self.letters &= 0xFFFF_FFFF_FFFF;
        one(v, &mut self.sentence_words);
        one(v, &mut self.sentence_end);
        // A restored sequence needs at most three more bytes.
        self.cp_left = self.cp_left.min(3);
        crate::snapshot::visit_usize(v, &mut self.line_start);
        crate::snapshot::visit_usize(v, &mut self.prev_line_start);
        crate::snapshot::visit_usize(v, &mut self.prev_line_len);
        v.u32s(&mut self.next);
        v.u32s(&mut self.runs);
        self.run_probs.visit(v);
    }

    fn positions_within(&self, history: usize) -> bool {
        self.line_start <= history
            && self
                .prev_line_start
                .checked_add(self.prev_line_len)
                .is_some_and(|end| end <= history)
    }

    fn observe(&mut self, _data: &[u8], pos: usize, b: u8) {
        // Runs (revision 8): the slots found for this byte learn it.
        if self.run_inputs {
            for r in 0..RUNS {
                let slot = self.run_slot[r];
                let e = self.runs[slot];
                let check = self.run_check[r];
                let same = e & 0xFF != 0 && e >> 16 == check && (e >> 8 & 0xFF) == u32::from(b);
                self.runs[slot] = if same {
                    e + u32::from(e & 0xFF < 0xFF)
                } else {
                    check << 16 | u32::from(b) << 8 | 1
                };
            }
        }
        let last = self.inner & 0xFF;
        // Words.
        let letter = b.is_ascii_alphabetic() || b >= 0x80;
        if letter {
            self.word = (self.word ^ u32::from(b.to_ascii_lowercase()))
                .wrapping_mul(0x2C9F_3C51)
                .wrapping_add(1);
            self.letters =
                (self.letters << 8 | u64::from(b.to_ascii_lowercase())) & 0xFFFF_FFFF_FFFF;
        } else {
            if self.word != 0 {
                self.next[Self::slot(self.words[0])] = self.word;
                self.words = [self.word, self.words[0], self.words[1]];
                self.word = 0;
                self.line_words += 1;
                self.sentence_words += 1;
            }
            self.before = u32::from(b);
        }
        if matches!(b, b'.' | b'!' | b'?' | b'\n') {
            self.sentence_words = 0;
            self.sentence_end = u32::from(b);
        }
        // Lines.
        if b == b'\n' {
            self.prev_line_start = self.line_start;
            self.prev_line_len = (pos + 1).saturating_sub(self.line_start);
            self.line_start = pos + 1;
            self.line_first = 0;
            self.line_words = 0;
            self.markup &= !(HEADING | TABLE | LIST | EMPHASIS);
        } else if self.line_first == 0 && b != b' ' && b != b'\t' {
            self.line_first = u32::from(b);
            match b {
                b'=' => self.markup |= HEADING,
                b'|' | b'!' => self.markup |= TABLE,
                b'*' | b'#' | b':' => self.markup |= LIST,
                _ => {}
            }
        }
        // Code points.
        if !(0x80..0xC0).contains(&b) || self.cp_left == 0 {
            if self.cp_left > 0 {
                // A sequence cut short counts as read.
                self.cps = [self.cp_cur, self.cps[0]];
            }
            self.cp_cur = u32::from(b);
            self.cp_left = match b {
                0xC0..=0xDF => 1,
                0xE0..=0xEF => 2,
                0xF0..=0xFF => 3,
                _ => 0,
            };
        } else {
            self.cp_cur = self.cp_cur << 8 | u32::from(b);
            self.cp_left -= 1;
        }
        if self.cp_left == 0 {
            self.cps = [self.cp_cur, self.cps[0]];
            self.cp_cur = 0;
        }
        // Markup.
        match b {
            b'[' if last == u32::from(b'[') => self.markup |= IN_LINK,
            b']' => self.markup &= !IN_LINK,
            b'{' if last == u32::from(b'{') => self.markup |= IN_TEMPLATE,
            b'}' => self.markup &= !IN_TEMPLATE,
            b'<' => {
                self.markup |= IN_TAG | TAG_NAME;
                self.tag = 0;
            }
            b'>' => self.markup &= !(IN_TAG | TAG_NAME),
            b'&' => self.markup |= IN_ENTITY,
            b';' => self.markup &= !IN_ENTITY,
            b' ' | b'\t' | b'\n' => self.markup &= !(IN_ENTITY | TAG_NAME),
            b'\'' if last == u32::from(b'\'') => self.markup ^= EMPHASIS,
            _ if self.markup & TAG_NAME != 0 => {
                self.tag = (self.tag ^ u32::from(b)).wrapping_mul(0x0100_0193);
            }
            _ => {}
        }
        // Brackets: the text since the last opener.
        match b {
            b'(' | b'[' | b'{' | b'<' => {
                self.opener = u32::from(b);
                self.inner = 0;
            }
            b')' | b']' | b'}' | b'>' => {
                self.opener = 0;
                self.inner = 0;
            }
            _ => {}
        }
        self.inner =
            (self.inner << 8 ^ u32::from(b)).wrapping_mul(0x2C9F_3C51) & !0xFF | u32::from(b);
        // Numbers.
        if b.is_ascii_digit() {
            self.digits += 1;
            if self.digits == 1 {
                self.number = u32::from(b - b'0');
            }
        } else if b != b'.' && b != b',' {
            self.digits = 0;
            self.number = 0;
        }
        self.classes = self.classes << 4 | class(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(text: &[u8]) -> Words8Contexts {
        let mut t = Words8Contexts::new(true);
        for (pos, &b) in text.iter().enumerate() {
            t.observe(text, pos, b);
        }
        t
    }

    #[test]
    fn tracks_words_successors_and_code_points() {
        let t = fed("one two three one 中文字".as_bytes());
        let u = fed(b"x two ");
        let three = fed(b"three ").words[0];
        assert_eq!(t.next[Words8Contexts::slot(u.words[0])], three);
        assert_eq!(t.cps[0], 0xE5_AD_97);
        assert_eq!(t.cps[1], 0xE6_96_87);
        assert_eq!(t.cp_left, 0);
        assert_eq!(fed(b"a Word ").words[0], fed(b"b word ").words[0]);
    }

    #[test]
    fn tracks_markup_and_lines() {
        let t = fed(b"== Head ==\n[[link|x");
        assert_eq!(t.markup & IN_LINK, IN_LINK);
        assert_eq!(t.markup & HEADING, 0);
        assert_eq!(t.line_first, u32::from(b'['));
        let t = fed(b"<p class=\"q\">&amp");
        assert_eq!(t.markup & (IN_TAG | IN_ENTITY), IN_ENTITY);
        assert_eq!(t.tag, fed(b"<p ").tag);
        assert_ne!(t.tag, 0);
    }
}
