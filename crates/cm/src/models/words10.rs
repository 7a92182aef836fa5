//! Deeper word, structure and indirect contexts of CM revision 10
//! (doc/FORMAT.md 4.21.7), after revision 8's word family
//! ([`Words8Contexts`](super::words8::Words8Contexts)), whose contexts
//! they complement rather than repeat.
//!
//! The family keeps its own text state, updated in
//! [`observe`](ContextModel::observe) from the bytes in coding order: the
//! last four words (letters only, case-folded; bytes of 0x80 and above
//! count as letters), their stems (a few English suffixes dropped), their
//! first letters and capitalisation, the non-letters between the last word
//! and the current one, the words since the last punctuation mark, the
//! brace depth and indentation of code, the previous line's first token
//! and the current line so far, the wiki template and parameter being
//! read, the last twelve bytes, and two indirect histories: the three
//! bytes that followed each byte, and the two bytes that followed each
//! (hashed) order-3 context.
//!
//! Its [`WORDS10_CONTEXTS`] contexts (declared in
//! [`Words10Contexts::own_contexts`]) are not hashed into the model's
//! shared table: added there as inputs of the model's mixer they cost as
//! much as they bring. The family keeps them in its own tables (an
//! adaptive probability and a bit-history state per entry, 16 entries per
//! context and nibble), mixes their two inputs each in two mixers of its
//! own and a final mixer of those, and gives the model's mixer the three
//! outputs ([`BIT_INPUTS`]). Everything is integer.

use super::text::class;
use super::{ByteCtx, ContextModel, hash2};
use crate::prim::{AdaptiveProbs, Mixer, StateMap};
use crate::state::STATES;

/// How many contexts the family has (in its own tables).
pub(crate) const WORDS10_CONTEXTS: usize = 14;

/// Mixer inputs the family adds at revision 10: its two mixers' outputs.
const BIT_INPUTS: usize = 3;

/// Inputs of each of the family's mixers: two per own context and a bias.
const MIX_INPUTS: usize = 2 * WORDS10_CONTEXTS + 1;

/// log2 of the entries of the own contexts' tables (revision 10).
const TABLE_BITS: u32 = 24;

/// log2 of the entries of the order-3 indirect table.
const AFTER3_BITS: u32 = 16;

/// Longest word prefix kept for stemming.
const STEM_LETTERS: usize = 24;

/// The family of revisions 9 and 10: see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Words10Contexts {
    /// This byte's own contexts, and each one's 16-entry group of the
    /// tables for the nibble being coded.
    cur: [u32; WORDS10_CONTEXTS],
    base: [usize; WORDS10_CONTEXTS],
    /// The entries used for this bit.
    idx: [usize; WORDS10_CONTEXTS],
    /// Per entry: adaptive probability and bit-history state.
    table: AdaptiveProbs,
    states: Vec<u8>,
    /// Per context: the probability of each bit-history state.
    maps: Vec<StateMap>,
    /// The two mixers of the own contexts' inputs (weight sets: the
    /// partial byte; the class of the last byte with the bit position).
    mixers: [Mixer<MIX_INPUTS>; 2],
    /// The final mixer of the two (weight sets: the bit position).
    fin: Mixer<3>,
    /// Class of the last byte.
    class1: u32,
    /// Hash of the current word (0: not in a word) and of the last four
    /// words before it (`words[0]` the latest), as revision 8's family
    /// hashes them.
    word: u32,
    words: [u32; 4],
    /// The current word's first [`STEM_LETTERS`] letters (case-folded) and
    /// its length.
    letters: [u8; STEM_LETTERS],
    len: u32,
    /// Stems of the last two words (`stems[0]` the latest).
    stems: [u32; 2],
    /// The first letters of the last four words, the latest lowest.
    initials: u32,
    /// Capitalisation of the current word (bit 0: first letter upper case,
    /// bit 1: a later one) and of the last three words, 2 bits each, the
    /// latest lowest.
    caps: u32,
    caps_words: u32,
    /// The last four non-letters since the last word (the latest lowest),
    /// and those before the current word while in one.
    gap: u32,
    gap_before: u32,
    /// Hash of the words since the last punctuation mark.
    segment: u32,
    /// Brace depth (`{` less `}`), the line's indentation (blanks before
    /// its first other byte), whether the line has had only blanks, and
    /// the previous line's indentation.
    braces: u32,
    indent: u32,
    in_indent: bool,
    prev_indent: u32,
    /// Hash of the line's first token (bytes up to the first blank after
    /// the indentation), whether it is complete, the previous line's, and
    /// the hash of the line after its indentation so far.
    token: u32,
    token_done: bool,
    prev_token: u32,
    line: u32,
    /// Wiki templates: how deep (`{{` less `}}`), the innermost's name
    /// hash and the current parameter's name hash; what is being read (0:
    /// text, 1: the name, 2: a parameter name).
    templates: u32,
    template: u32,
    param: u32,
    reading: u32,
    /// The last eight bytes (the latest lowest) and the four before them.
    c8: u64,
    c12: u32,
    /// Per byte value: the last three bytes that followed it.
    after1: Vec<u32>,
    /// Per order-3 context (hashed to [`AFTER3_BITS`]): the last two bytes
    /// that followed it.
    after3: Vec<u16>,
}

impl Words10Contexts {
    /// Bytes of memory the family allocates: the indirect tables, the
    /// contexts' tables (probability and state per entry) and the mixers.
    pub const MEMORY: u64 = 4 * 256
        + (2 << AFTER3_BITS)
        + (5 << TABLE_BITS)
        + ((256 + 128) * MIX_INPUTS as u64 + 8 * 3) * 4;

    /// A family with empty state.
    pub fn new() -> Self {
        Words10Contexts {
            cur: [0; WORDS10_CONTEXTS],
            base: [0; WORDS10_CONTEXTS],
            idx: [0; WORDS10_CONTEXTS],
            table: AdaptiveProbs::new(1 << TABLE_BITS, 1023),
            states: vec![0; 1 << TABLE_BITS],
            maps: vec![StateMap::default(); WORDS10_CONTEXTS],
            mixers: [Mixer::new(256, 3, 2048), Mixer::new(128, 3, 2048)],
            fin: Mixer::new(8, 2, 32768),
            class1: 0,
            word: 0,
            words: [0; 4],
            letters: [0; STEM_LETTERS],
            len: 0,
            stems: [0; 2],
            initials: 0,
            caps: 0,
            caps_words: 0,
            gap: 0,
            gap_before: 0,
            segment: 0,
            braces: 0,
            indent: 0,
            in_indent: true,
            prev_indent: 0,
            token: 0,
            token_done: false,
            prev_token: 0,
            line: 0,
            templates: 0,
            template: 0,
            param: 0,
            reading: 0,
            c8: 0,
            c12: 0,
            after1: vec![0; 256],
            after3: vec![0; 1 << AFTER3_BITS],
        }
    }

    /// The family's contexts for the byte at `ctx.pos`: every context it
    /// has is declared here, in input order.
    fn own_contexts(&self, ctx: &ByteCtx<'_>) -> [u32; WORDS10_CONTEXTS] {
        let c4 = ctx.c4();
        let c1 = c4 & 0xFF;
        let [w1, w2, w3, _] = self.words;
        let w0 = self.word;
        let gap = if w0 != 0 { self.gap_before } else { self.gap };
        [
            // 0: the last three words.
            hash2(hash2(w0, w1), w2 ^ 0x10_0000),
            // 1: the word with the non-letters before it and the last word.
            hash2(hash2(w0, gap), w1 ^ 0x10_0001),
            // 2, 3: stems of the last one and two words with the word.
            hash2(w0, self.stems[0] ^ 0x10_0002),
            hash2(hash2(w0, self.stems[0]), self.stems[1] ^ 0x10_0003),
            // 4: first letters of the last three words with the word.
            hash2(w0, self.initials & 0xFF_FFFF | 0x04 << 24),
            // 5: the three bytes that followed the last byte before.
            hash2(self.after1[c1 as usize] & 0xFF_FFFF, c1 | 0x10_0500),
            // 6: the two bytes that followed the last three bytes before.
            hash2(
                u32::from(self.after3[Self::slot3(c4 & 0xFF_FFFF)]),
                c4 & 0xFF_FFFF | 0x06 << 24,
            ),
            // 7: code: brace depth and indentation with the word.
            hash2(
                self.braces.min(15)
                    | self.indent.min(63) << 4
                    | self.prev_indent.min(63) << 10
                    | u32::from(self.in_indent) << 16
                    | 0x07 << 24,
                w0,
            ),
            // 8: the previous line's first token with the line so far.
            hash2(self.prev_token, self.line ^ 0x10_0800),
            // 9: capitalisation with the word and the last byte.
            hash2(
                hash2(w0, c1),
                self.caps | self.caps_words << 2 | 0x10_0900 << 8,
            ),
            // 10: the last twelve bytes.
            hash2(
                hash2(self.c8 as u32, (self.c8 >> 32) as u32),
                self.c12 ^ 0x10_0A00,
            ),
            // 11: the wiki template and parameter with the word.
            hash2(
                hash2(self.template, self.param),
                hash2(w0, self.templates.min(3) | 0x10_0B00),
            ),
            // 12: the words since the last punctuation mark with the word.
            hash2(self.segment, w0 ^ 0x10_0C00),
            // 13: the last four words.
            hash2(hash2(hash2(w0, w1), w2), w3 ^ 0x10_0D00),
        ]
    }

    /// The order-3 indirect slot after the last three bytes `c3`.
    #[inline]
    fn slot3(c3: u32) -> usize {
        (hash2(c3, 0x10_0003) >> (32 - AFTER3_BITS)) as usize
    }

    /// The stem of the word whose letters are `w`: the hash of its letters
    /// without a final `ing`, `ed`, `es`, `ly` or `s` (where at least three
    /// letters remain, and `s` not after another `s`).
    fn stem(w: &[u8]) -> u32 {
        let n = w.len();
        let cut = if n >= 6 && w.ends_with(b"ing") {
            3
        } else if n >= 5 && (w.ends_with(b"ed") || w.ends_with(b"es") || w.ends_with(b"ly")) {
            2
        } else if n >= 4 && w.ends_with(b"s") && !w.ends_with(b"ss") {
            1
        } else {
            0
        };
        w[..n - cut].iter().fold(0x10_0100u32, |h, &b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        })
    }
}

impl ContextModel for Words10Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        BIT_INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.cur = self.own_contexts(ctx);
        self.class1 = class(ctx.c4() as u8);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        if i == 7 || i == 3 {
            for (b, &h) in self.base.iter_mut().zip(&self.cur) {
                *b = (hash2(h, c0) >> (32 - TABLE_BITS)) as usize & !15;
            }
        }
        let nib = if i >= 4 {
            c0 as usize
        } else {
            (1 << (3 - i)) | (c0 as usize & ((1 << (3 - i)) - 1))
        };
        let mut x = [0i32; MIX_INPUTS];
        for j in 0..WORDS10_CONTEXTS {
            let e = self.base[j] + nib;
            self.idx[j] = e;
            x[2 * j] = if self.table.count(e) == 0 {
                0
            } else {
                self.table.stretched(e)
            };
            x[2 * j + 1] = self.maps[j].stretched(self.states[e]);
        }
        x[MIX_INPUTS - 1] = 256;
        out[0] = self.mixers[0].mix(x, c0 as usize);
        out[1] = self.mixers[1].mix(x, (self.class1 * 8 + i) as usize);
        out[2] = self.fin.mix([out[0], out[1], 256], i as usize);
    }

    fn update_bit(&mut self, bit: u32) {
        for (&e, map) in self.idx.iter().zip(&mut self.maps) {
            let s = self.states[e];
            map.update(s, bit, 1023);
            self.states[e] = STATES.next(s, bit);
            self.table.update(e, bit);
        }
        for m in &mut self.mixers {
            m.update(bit);
        }
        self.fin.update(bit);
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.table.visit(v);
        v.u8s(&mut self.states);
        for m in &mut self.maps {
            m.visit(v);
        }
        let mut words = [
            self.word,
            self.words[0],
            self.words[1],
            self.words[2],
            self.words[3],
            self.len,
            self.stems[0],
            self.stems[1],
            self.initials,
            self.caps,
            self.caps_words,
            self.gap,
            self.gap_before,
            self.segment,
            self.braces,
            self.indent,
            self.prev_indent,
            self.token,
            self.prev_token,
            self.line,
            self.templates,
            self.template,
            self.param,
            self.reading,
            self.c8 as u32,
            (self.c8 >> 32) as u32,
            self.c12,
        ];
        v.u32s(&mut words);
        let c8_lo;
        let c8_hi;
        [
            self.word,
            self.words[0],
            self.words[1],
            self.words[2],
            self.words[3],
            self.len,
            self.stems[0],
            self.stems[1],
            self.initials,
            self.caps,
            self.caps_words,
            self.gap,
            self.gap_before,
            self.segment,
            self.braces,
            self.indent,
            self.prev_indent,
            self.token,
            self.prev_token,
            self.line,
            self.templates,
            self.template,
            self.param,
            self.reading,
            c8_lo,
            c8_hi,
            self.c12,
        ] = words;
        self.c8 = u64::from(c8_hi) << 32 | u64::from(c8_lo);
        self.reading = self.reading.min(2);
        crate::snapshot::visit_bool(v, &mut self.in_indent);
        crate::snapshot::visit_bool(v, &mut self.token_done);
        v.u8s(&mut self.letters);
        v.u32s(&mut self.after1);
        v.u16s(&mut self.after3);
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, b: u8) {
        let c1 = (self.c8 & 0xFF) as u32;
        // Indirect histories (before the last bytes move on).
        self.after1[c1 as usize] = self.after1[c1 as usize] << 8 | u32::from(b);
        let s3 = Self::slot3(self.c8 as u32 & 0xFF_FFFF);
        self.after3[s3] = self.after3[s3] << 8 | u16::from(b);
        self.c12 = self.c12 << 8 | (self.c8 >> 56) as u32;
        self.c8 = self.c8 << 8 | u64::from(b);
        // Words.
        let lower = b.to_ascii_lowercase();
        if b.is_ascii_alphabetic() || b >= 0x80 {
            if self.word == 0 {
                self.gap_before = self.gap;
                self.caps = u32::from(b.is_ascii_uppercase());
            } else if b.is_ascii_uppercase() {
                self.caps |= 2;
            }
            self.word = (self.word ^ u32::from(lower))
                .wrapping_mul(0x2C9F_3C51)
                .wrapping_add(1);
            if (self.len as usize) < STEM_LETTERS {
                self.letters[self.len as usize] = lower;
            }
            self.len += 1;
        } else {
            if self.word != 0 {
                let n = (self.len as usize).min(STEM_LETTERS);
                self.stems = [Self::stem(&self.letters[..n]), self.stems[0]];
                self.initials = self.initials << 8 | u32::from(self.letters[0]);
                self.caps_words = (self.caps_words << 2 | self.caps) & 0x3F;
                self.segment = hash2(self.segment, self.word);
                self.words = [self.word, self.words[0], self.words[1], self.words[2]];
                self.word = 0;
                self.len = 0;
                self.caps = 0;
                self.gap = 0;
            }
            self.gap = self.gap << 8 | u32::from(b);
        }
        if matches!(
            b,
            b'.' | b',' | b';' | b':' | b'!' | b'?' | b'(' | b')' | b'\n'
        ) {
            self.segment = u32::from(b);
        }
        // Lines and code.
        match b {
            b'{' => self.braces += 1,
            b'}' => self.braces = self.braces.saturating_sub(1),
            _ => {}
        }
        if b == b'\n' {
            self.prev_indent = self.indent;
            self.prev_token = self.token;
            self.indent = 0;
            self.in_indent = true;
            self.token = 0;
            self.token_done = false;
            self.line = 0;
        } else if self.in_indent && (b == b' ' || b == b'\t') {
            self.indent += 1;
        } else {
            self.in_indent = false;
            if b == b' ' || b == b'\t' {
                self.token_done = true;
            } else if !self.token_done {
                self.token = (self.token ^ u32::from(b)).wrapping_mul(0x0100_0193) | 1;
            }
            self.line = (self.line ^ u32::from(b)).wrapping_mul(0x2C9F_3C51);
        }
        // Wiki templates.
        match b {
            b'{' if c1 == u32::from(b'{') => {
                self.templates += 1;
                self.template = 0;
                self.param = 0;
                self.reading = 1;
            }
            b'}' if c1 == u32::from(b'}') => {
                self.templates = self.templates.saturating_sub(1);
                if self.templates == 0 {
                    self.template = 0;
                    self.param = 0;
                }
                self.reading = 0;
            }
            b'|' if self.templates > 0 => {
                self.param = 0;
                self.reading = 2;
            }
            b'=' if self.reading == 2 => self.reading = 0,
            b'{' | b'}' => {}
            _ => match self.reading {
                1 => self.template = (self.template ^ u32::from(lower)).wrapping_mul(0x0100_0193),
                2 if b != b' ' => {
                    self.param = (self.param ^ u32::from(lower)).wrapping_mul(0x0100_0193)
                }
                _ => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(text: &[u8]) -> Words10Contexts {
        let mut t = Words10Contexts::new();
        for (pos, &b) in text.iter().enumerate() {
            t.observe(text, pos, b);
        }
        t
    }

    #[test]
    fn stems_drop_common_suffixes() {
        let s = Words10Contexts::stem;
        assert_eq!(s(b"walking"), s(b"walk"));
        assert_eq!(s(b"walked"), s(b"walk"));
        assert_eq!(s(b"walks"), s(b"walk"));
        assert_ne!(s(b"glass"), s(b"glas"));
        assert_ne!(s(b"is"), s(b"i"));
        assert_eq!(fed(b"The Walking ").stems[0], fed(b"a walks ").stems[0]);
    }

    #[test]
    fn tracks_words_gaps_and_capitals() {
        let t = fed(b"One, two [[Three");
        assert_eq!(t.gap_before, u32::from_be_bytes([0, b' ', b'[', b'[']));
        assert_eq!(t.caps, 1);
        assert_eq!(t.caps_words, 0b0100);
        assert_eq!(t.initials & 0xFFFF, u32::from(b'o') << 8 | u32::from(b't'));
        assert_eq!(t.words[0], fed(b"two ").words[0]);
    }

    #[test]
    fn tracks_code_lines_templates_and_indirect_bytes() {
        let t = fed(b"int f() {\n  if (x) {\n    y;\n");
        assert_eq!(t.braces, 2);
        assert_eq!(t.prev_indent, 4);
        assert_eq!(t.indent, 0);
        assert_eq!(t.prev_token, fed(b"y;\n").prev_token);
        let t = fed(b"{{Infobox city|name = x");
        assert_eq!(t.templates, 1);
        assert_eq!(t.template, fed(b"{{infobox city}").template);
        assert_eq!(t.param, fed(b"{{a|name=").param);
        assert_ne!(t.param, 0);
        let t = fed(b"abxabyabz");
        assert_eq!(t.after1[usize::from(b'b')] & 0xFF_FFFF, 0x78797A);
        let t = fed(b"abcXabcY");
        assert_eq!(t.after3[Words10Contexts::slot3(0x61_6263)], 0x5859);
    }
}
