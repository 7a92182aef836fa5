//! The text family of CM revision 20 (doc/FORMAT.md 4.31.1: the `max`
//! line's ninth round): revision 18's direct contexts
//! ([`Text16Contexts`]) and more of the same kind keyed by a wiki/markup
//! parse state, with counted rates.
//!
//! - **Parse state.** Kept here from the coded bytes ([`Parse`]): inside an
//!   XML tag, an `&entity;`, a `[[link]]` (its target, or its text after
//!   `|`), a `{{template}}`, a URL; the line's kind by its first byte
//!   (heading `=`, list `*#:;`, table `{|!`, indented, other); the hash of
//!   the text since the innermost link's or template's opener.
//! - **Direct contexts** ([`EXTRA`], one mixer input each, in a second
//!   table of revision 16's kind: 1/n-rate counted slots): the region's
//!   text so far inside a link target, template or URL (else the parse
//!   state with the word so far and the last byte); the parse state with
//!   orders 2, 3 and 1; the line's first word with the word so far and
//!   the parse state.
//! - No APM: one keyed by the word so far, the last byte and the partial
//!   byte, averaged with the final probability, cost 0.03-0.07% on
//!   `enwik8`'s head (doc/FORMAT.md 4.31.1).
//!
//! Every context and input is declared here; everything is integer.

use super::text16::{self, Text16Contexts};
use super::{ByteCtx, ContextModel, forward_family, hash2};
use crate::cm::CmConfig;

/// Direct contexts this family adds to revision 18's six.
pub(crate) const EXTRA: usize = 5;

/// Bytes the family allocates under `config` beyond revision 18's.
pub(crate) fn memory(config: &CmConfig) -> u64 {
    ((EXTRA as u64) << text16::bucket_bits(config)) * 64
}

/// Line kinds (by the line's first byte).
const LINE_PROSE: u32 = 0;
const LINE_HEADING: u32 = 1;
const LINE_LIST: u32 = 2;
const LINE_TABLE: u32 = 3;
const LINE_INDENT: u32 = 4;
const LINE_OTHER: u32 = 5;

/// The wiki/markup parse state, updated from each coded byte.
#[derive(Debug, Clone, Default)]
struct Parse {
    /// Inside `<...>`, `&...;`, a URL.
    tag: bool,
    entity: bool,
    url: bool,
    /// `[[` depth (up to 3) and whether the innermost link's `|` was seen.
    link: u32,
    pipe: bool,
    /// `{{` depth (up to 3).
    template: u32,
    /// The line's kind (`LINE_*`) and whether a byte of it was seen.
    line: u32,
    in_line: bool,
    /// Hash of the text since the innermost opener (`[[`, `|` in a link,
    /// `{{`, `http`), the last byte folded in last.
    region: u32,
    /// Hash of the line's first word (while it is read, and after).
    first_word: u32,
    first_done: bool,
    /// The last byte and the six before it (for `http://`).
    last: u64,
}

impl Parse {
    /// Walks the state (`snapshot.rs`).
    fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        use crate::snapshot::{visit_bool, visit_u32};
        for b in [
            &mut self.tag,
            &mut self.entity,
            &mut self.url,
            &mut self.pipe,
            &mut self.in_line,
            &mut self.first_done,
        ] {
            visit_bool(v, b);
        }
        for x in [
            &mut self.link,
            &mut self.template,
            &mut self.line,
            &mut self.region,
            &mut self.first_word,
        ] {
            visit_u32(v, x);
        }
        v.u64s(std::slice::from_mut(&mut self.last));
    }

    /// The state's bits: tag, entity, link, pipe, template, URL, line kind.
    fn code(&self) -> u32 {
        u32::from(self.tag)
            | u32::from(self.entity) << 1
            | u32::from(self.link > 0) << 2
            | u32::from(self.pipe) << 3
            | u32::from(self.template > 0) << 4
            | u32::from(self.url) << 5
            | self.line << 6
    }

    /// Learns `b`, the byte just coded.
    fn observe(&mut self, b: u8) {
        let prev = (self.last & 0xFF) as u8;
        self.last = (self.last << 8) | u64::from(b);
        if !self.in_line {
            self.in_line = true;
            self.line = match b {
                b'=' => LINE_HEADING,
                b'*' | b'#' | b':' | b';' => LINE_LIST,
                b'{' | b'|' | b'!' => LINE_TABLE,
                b' ' | b'\t' => LINE_INDENT,
                b if b.is_ascii_alphanumeric() || b >= 0x80 || b == b'[' || b == b'\'' => {
                    LINE_PROSE
                }
                _ => LINE_OTHER,
            };
        }
        let letter = b.is_ascii_alphabetic() || b >= 0x80;
        if !self.first_done {
            if letter {
                self.first_word =
                    hash2(self.first_word ^ 0x3101, u32::from(b.to_ascii_lowercase()));
            } else if self.first_word != 0 {
                self.first_done = true;
            }
        }
        self.region = hash2(self.region ^ 0x3102, u32::from(b));
        match b {
            b'<' => self.tag = true,
            b'>' => self.tag = false,
            b'&' => self.entity = true,
            b';' | b' ' => self.entity = false,
            _ => {}
        }
        match b {
            b'[' if prev == b'[' => {
                self.link = (self.link + 1).min(3);
                self.pipe = false;
                self.region = 0;
            }
            b']' if prev == b']' => {
                self.link = self.link.saturating_sub(1);
                self.pipe = false;
            }
            b'|' if self.link > 0 => {
                self.pipe = true;
                self.region = 0;
            }
            b'{' if prev == b'{' => {
                self.template = (self.template + 1).min(3);
                self.region = 0;
            }
            b'}' if prev == b'}' => self.template = self.template.saturating_sub(1),
            _ => {}
        }
        if self.last & 0xFF_FFFF_FFFF_FFFF == u64::from_be_bytes(*b"\0http://") {
            self.url = true;
            self.region = 0;
        } else if self.url && matches!(b, b' ' | b'\n' | b']' | b'|' | b'<') {
            self.url = false;
        }
        if b == b'\n' {
            self.in_line = false;
            self.link = 0;
            self.pipe = false;
            self.url = false;
            self.entity = false;
            self.first_word = 0;
            self.first_done = false;
        }
    }
}

/// The revision-20 text family.
#[derive(Debug, Clone)]
pub(crate) struct Text20Contexts {
    /// Revision 18's six direct contexts.
    base: Text16Contexts,
    /// This family's [`EXTRA`] direct contexts.
    extra: Text16Contexts,
    /// The wiki/markup parse state.
    parse: Parse,
}

impl Text20Contexts {
    /// A fresh family for `config` (the block's `table_bits`).
    pub fn new(config: &CmConfig) -> Self {
        Text20Contexts {
            base: Text16Contexts::new(config),
            extra: Text16Contexts::with_contexts(config, EXTRA),
            parse: Parse::default(),
        }
    }
}

impl ContextModel for Text20Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        text16::DIRECT + EXTRA
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        let c4 = ctx.c4();
        let w = &ctx.st.words;
        let p = &self.parse;
        let s = p.code();
        let word = hash2(w.word ^ 0x3201, c4 & 0xFF);
        let region = if p.link > 0 || p.template > 0 || p.url {
            hash2(p.region ^ 0x3202, s)
        } else {
            hash2(word ^ 0x3203, s)
        };
        self.extra.set_hashes(&[
            region,
            hash2(c4 & 0xFFFF, s ^ 0x3204),
            hash2(c4 & 0xFF_FFFF, s ^ 0x3205),
            hash2(hash2(p.first_word ^ 0x3206, s), word),
            hash2(c4 & 0xFF, s ^ 0x3207),
        ]);
    }

    fn prefetch_bit(&self, c0: u32, i: u32) {
        self.base.prefetch_bit(c0, i);
        self.extra.prefetch_bit(c0, i);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let (a, b) = out.split_at_mut(text16::DIRECT);
        self.base.predict_bit(c0, i, a);
        self.extra.predict_bit(c0, i, b);
    }

    fn update_bit(&mut self, bit: u32) {
        self.base.update_bit(bit);
        self.extra.update_bit(bit);
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        self.extra.observe(data, pos, byte);
        self.parse.observe(byte);
    }

    /// The tables and the parse state (a prior's model goes on parsing
    /// where its samples ended, as the trained one).
    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.base.visit_state(v);
        self.extra.visit_state(v);
        self.parse.visit(v);
    }

    forward_family!(base; initial_weight);
}
