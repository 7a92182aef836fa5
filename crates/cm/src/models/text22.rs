//! The text family of CM revision 22 (doc/FORMAT.md 4.33.1: the `max`
//! line's tenth round): revision 20's family ([`Text20Contexts`]) and
//! direct contexts of English morphology.
//!
//! - **Stemmer.** Each finished word (ASCII letters, case-folded, at most
//!   [`WORD_MAX`] of them; [`Morph`]) loses up to two suffixes of a fixed
//!   list ([`SUFFIXES`], tried in order, each leaving a stem of at least
//!   three letters), a doubled final consonant and a final `e`, and `y`
//!   becomes `i`: the word's stem hash. Its class is the first suffix's
//!   number, or a function word's group ([`function_class`]), with a flag
//!   for a capital first letter.
//! - **Direct contexts** ([`MORPH`], one mixer input each, in a third
//!   table of revision 16's kind: 1/n-rate counted slots): the previous
//!   stem with the current word's first letter and length; the last two
//!   stems; the last two classes with the punctuation between and order
//!   2; the stem two words back with the word so far
//!   ([`Text22Contexts::morph_hashes`]).
//!
//! Every context and input is declared here; everything is integer.

use super::text16::{self, Text16Contexts};
use super::text20::{self, Text20Contexts};
use super::{ByteCtx, ContextModel, forward_family, hash2};
use crate::cm::CmConfig;

/// Direct contexts this family adds to revision 20's.
pub(crate) const MORPH: usize = 4;

/// Bytes the family allocates under `config` beyond revision 20's.
pub(crate) fn memory(config: &CmConfig) -> u64 {
    ((MORPH as u64) << text16::bucket_bits(config)) * 64
}

/// The longest word the stemmer reads (a longer one is its own stem).
const WORD_MAX: usize = 24;

/// Suffixes, tried in this order (a longer one before a shorter one
/// that ends it), and their classes (1..).
const SUFFIXES: &[(&[u8], u32)] = &[
    (b"ational", 11),
    (b"ization", 11),
    (b"fulness", 9),
    (b"ousness", 9),
    (b"iveness", 9),
    (b"ations", 11),
    (b"ements", 10),
    (b"ingly", 6),
    (b"ments", 10),
    (b"ement", 10),
    (b"ation", 11),
    (b"ities", 18),
    (b"ness", 9),
    (b"ment", 10),
    (b"tion", 11),
    (b"sion", 11),
    (b"able", 12),
    (b"ible", 12),
    (b"ally", 6),
    (b"ical", 13),
    (b"ings", 5),
    (b"ized", 17),
    (b"izes", 17),
    (b"ised", 17),
    (b"ises", 17),
    (b"ious", 15),
    (b"less", 21),
    (b"ship", 22),
    (b"ers", 7),
    (b"est", 8),
    (b"ing", 5),
    (b"ies", 3),
    (b"ied", 4),
    (b"ful", 14),
    (b"ous", 15),
    (b"ive", 16),
    (b"ize", 17),
    (b"ise", 17),
    (b"ity", 18),
    (b"ism", 19),
    (b"ist", 20),
    (b"ant", 23),
    (b"ent", 23),
    (b"ance", 23),
    (b"ence", 23),
    (b"ed", 4),
    (b"ly", 6),
    (b"er", 7),
    (b"al", 13),
    (b"ic", 13),
    (b"es", 2),
    (b"s", 1),
];

/// Function words' classes (32..): determiners, prepositions,
/// conjunctions, pronouns, auxiliary verbs, other common words.
fn function_class(w: &[u8]) -> u32 {
    match w {
        b"the" | b"a" | b"an" | b"this" | b"that" | b"these" | b"those" | b"his" | b"her"
        | b"its" | b"their" | b"my" | b"your" | b"our" | b"some" | b"any" | b"no" | b"every"
        | b"each" | b"all" => 32,
        b"of" | b"in" | b"to" | b"for" | b"with" | b"on" | b"at" | b"by" | b"from" | b"as"
        | b"into" | b"about" | b"over" | b"after" | b"before" | b"under" | b"between"
        | b"through" | b"during" | b"against" | b"upon" => 33,
        b"and" | b"or" | b"but" | b"nor" | b"if" | b"when" | b"while" | b"because" | b"than"
        | b"so" => 34,
        b"he" | b"she" | b"it" | b"they" | b"we" | b"i" | b"you" | b"him" | b"them" | b"us"
        | b"me" | b"who" | b"which" | b"what" => 35,
        b"is" | b"was" | b"are" | b"were" | b"be" | b"been" | b"being" | b"has" | b"have"
        | b"had" | b"will" | b"would" | b"can" | b"could" | b"may" | b"might" | b"should"
        | b"shall" | b"must" | b"do" | b"did" | b"does" => 36,
        b"not" | b"there" | b"then" | b"also" | b"only" | b"very" | b"more" | b"most" => 37,
        _ => 0,
    }
}

/// The stem of a case-folded ASCII word `w` (how many of its letters it
/// keeps; a kept final `y` reads as `i`) and its class (0: no suffix).
fn stem(w: &[u8]) -> (usize, u32) {
    let f = function_class(w);
    if f != 0 {
        return (w.len(), f);
    }
    let mut n = w.len();
    let mut class = 0;
    for round in 0..2 {
        let Some(&(s, c)) = SUFFIXES.iter().find(|(s, _)| {
            n >= s.len() + 3
                && &w[n - s.len()..n] == *s
                && !(s == b"s" && matches!(w[n - 2], b's' | b'u' | b'i'))
        }) else {
            break;
        };
        n -= s.len();
        if round == 0 {
            class = c;
        }
    }
    if class != 0 {
        // A doubled final consonant (stopp-ed), a final e (make, mak-ing).
        if n >= 4 && w[n - 1] == w[n - 2] && !matches!(w[n - 1], b'l' | b's' | b'z' | b'e') {
            n -= 1;
        }
    }
    if n >= 4 && w[n - 1] == b'e' {
        n -= 1;
    }
    (n, class)
}

/// The morphology state: the current word's letters and the last words'
/// stems and classes.
#[derive(Debug, Clone, Default)]
struct Morph {
    /// The current word's case-folded letters (the first [`WORD_MAX`]).
    buf: [u8; WORD_MAX],
    /// Letters seen in the current word (any count).
    len: u32,
    /// The current word has a byte >= 0x80 or is longer than the buffer.
    odd: bool,
    /// The current word's first letter was a capital.
    cap: bool,
    /// Hash of the current word's letters (for an odd word's stem).
    whole: u32,
    /// Stems of the last two words (newest first).
    stems: [u32; 2],
    /// Classes of the last two words (newest first).
    classes: [u32; 2],
    /// The last byte other than a letter or a space since the last word.
    punct: u32,
}

impl Morph {
    /// Walks the state (`snapshot.rs`).
    fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        use crate::snapshot::{visit_bool, visit_u32};
        v.u8s(&mut self.buf);
        visit_bool(v, &mut self.odd);
        visit_bool(v, &mut self.cap);
        for x in [&mut self.len, &mut self.whole, &mut self.punct] {
            visit_u32(v, x);
        }
        v.u32s(&mut self.stems);
        v.u32s(&mut self.classes);
    }

    /// Learns `b`, the byte just coded.
    fn observe(&mut self, b: u8) {
        let letter = b.is_ascii_alphabetic() || b >= 0x80;
        if letter {
            let l = b.to_ascii_lowercase();
            if self.len == 0 {
                self.cap = b.is_ascii_uppercase();
            }
            if (self.len as usize) < WORD_MAX {
                self.buf[self.len as usize] = l;
            } else {
                self.odd = true;
            }
            if b >= 0x80 {
                self.odd = true;
            }
            self.whole = hash2(self.whole ^ 0x2201, u32::from(l));
            self.len = self.len.saturating_add(1);
            return;
        }
        if self.len > 0 {
            let (h, class) = if self.odd {
                (self.whole, 31)
            } else {
                let w = &self.buf[..self.len as usize];
                let (n, class) = stem(w);
                let mut h = 0x2202;
                for (j, &c) in w[..n].iter().enumerate() {
                    let c = if j + 1 == n && c == b'y' { b'i' } else { c };
                    h = hash2(h, u32::from(c));
                }
                (h, class)
            };
            self.stems = [h | 1, self.stems[0]];
            self.classes = [class | u32::from(self.cap) << 6, self.classes[0]];
            self.len = 0;
            self.odd = false;
            self.cap = false;
            self.whole = 0;
            self.punct = 0;
        }
        if b != b' ' {
            self.punct = u32::from(b);
        }
    }
}

/// The revision-22 text family.
#[derive(Debug, Clone)]
pub(crate) struct Text22Contexts {
    /// Revision 20's family.
    base: Text20Contexts,
    /// This family's direct contexts.
    morph: Text16Contexts,
    /// The morphology state.
    state: Morph,
}

impl Text22Contexts {
    /// A fresh family for `config` (the block's `table_bits`).
    pub fn new(config: &CmConfig) -> Self {
        Text22Contexts {
            base: Text20Contexts::new(config),
            morph: Text16Contexts::with_contexts(config, MORPH),
            state: Morph::default(),
        }
    }

    /// This byte's morphology contexts: the previous word's stem with the
    /// current word's first letter and length (the last byte between
    /// words); the last two words' stems; their classes with the
    /// punctuation since the last word and order 2; the stem of the word
    /// before the previous one with the current word so far.
    fn morph_hashes(&self, ctx: &ByteCtx<'_>) -> [u32; MORPH] {
        let c4 = ctx.c4();
        let m = &self.state;
        let word = hash2(ctx.st.words.word ^ 0x2211, c4 & 0xFF);
        let [s1, s2] = m.stems;
        let [k1, k2] = m.classes;
        let first = if m.len > 0 {
            u32::from(m.buf[0]) | m.len.min(15) << 8
        } else {
            c4 & 0xFF
        };
        [
            hash2(s1 ^ 0x2215, first),
            hash2(hash2(s1 ^ 0x2217, s2), 0),
            hash2(hash2(k1 | k2 << 8, m.punct ^ 0x2218), c4 & 0xFFFF),
            hash2(s2 ^ 0x2219, word),
        ]
    }
}

impl ContextModel for Text22Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        text16::DIRECT + text20::EXTRA + MORPH
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        let h = self.morph_hashes(ctx);
        self.morph.set_hashes(&h);
    }

    fn prefetch_bit(&self, c0: u32, i: u32) {
        self.base.prefetch_bit(c0, i);
        self.morph.prefetch_bit(c0, i);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let (a, b) = out.split_at_mut(text16::DIRECT + text20::EXTRA);
        self.base.predict_bit(c0, i, a);
        self.morph.predict_bit(c0, i, b);
    }

    fn update_bit(&mut self, bit: u32) {
        self.base.update_bit(bit);
        self.morph.update_bit(bit);
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        self.morph.observe(data, pos, byte);
        self.state.observe(byte);
    }

    /// Revision 20's state, this family's table and its morphology state.
    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.base.visit_state(v);
        self.morph.visit_state(v);
        self.state.visit(v);
    }

    forward_family!(base; initial_weight);
}
