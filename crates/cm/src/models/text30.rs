//! The text family of CM revision 30 (doc/FORMAT.md 4.41.1: the `max`
//! line's fourteenth round): revision 22's family ([`Text22Contexts`])
//! and mixer weight sets chosen by the markup region of the byte.
//!
//! - **Region.** Kept here from the coded bytes ([`Region`]): binary (a
//!   control byte among the last 32), inside an XML tag (a `<` followed
//!   by a letter, `/`, `!` or `?`), an `&entity;` (a `&` followed by a letter or `#`), a URL, a `[[link]]`'s
//!   target or its text after `|`, a `{{template}}`, a number (the last
//!   byte a digit); else outside an XML document's `<text>` element
//!   (after one was seen), or the line's kind by its first byte (prose,
//!   heading `=`, list `*#:;`, table `{|!`, other). [`REGIONS`] values,
//!   the first that applies in this order ([`Region::code`]).
//! - **Selector** ([`SELECTOR`] weight sets, after revision 28's two in
//!   the configured families' mixer): the region with the position in
//!   the word (0, 1, 2 or more letters since the last other byte, bytes of
//!   128 and up counting as letters) and the partial byte,
//!   `(region * 3 + min(position, 2)) * 256 + c0`.
//! - **Final layer** ([`FINAL_SETS`] weight sets in place of revision
//!   7's 256): the region, whether the byte starts a word (position 0)
//!   and the partial byte, `(region * 2 + start) * 256 + c0` (start 0 in
//!   the binary region).
//!
//! Tried and not kept (FORMAT 4.41.1): a second selector by region, word
//! position and bit position; a direct context of the last two words
//! with the word so far; the region selector in place of the partial-byte
//! selector.
//!
//! Every context and selector is declared here; everything is integer.

use super::text22::Text22Contexts;
use super::{ByteCtx, ContextModel, forward_family};
use crate::cm::CmConfig;

/// How many region values [`Region::code`] gives.
pub(crate) const REGIONS: usize = 14;

/// The selector's weight sets: region, word position (3) and partial
/// byte.
pub(crate) const SELECTOR: usize = REGIONS * 3 * 256;

/// The final layer's weight sets: region, word start and partial byte.
pub(crate) const FINAL_SETS: usize = REGIONS * 2 * 256;

/// Bytes the family allocates beyond revision 22's: the selector's weight
/// sets (`MAX_INPUTS` weights of 2 bytes each) and the final layer's extra
/// sets (at most 12 weights of 2 bytes).
pub(crate) const MEMORY: u64 =
    (SELECTOR * crate::mixer2::MAX_INPUTS * 2 + (FINAL_SETS - 256) * 12 * 2) as u64;

/// Region values ([`Region::code`]).
const R_PROSE: u32 = 0;
const R_HEADING: u32 = 1;
const R_LIST: u32 = 2;
const R_TABLE: u32 = 3;
const R_OTHER_LINE: u32 = 4;
const R_META: u32 = 5;
const R_TAG: u32 = 6;
const R_ENTITY: u32 = 7;
const R_URL: u32 = 8;
const R_LINK: u32 = 9;
const R_LINK_TEXT: u32 = 10;
const R_TEMPLATE: u32 = 11;
const R_NUMBER: u32 = 12;
const R_BINARY: u32 = 13;

/// The markup region state, updated from each coded byte.
#[derive(Debug, Clone, Default)]
struct Region {
    /// Inside `<...>`, `&...;`, a URL.
    tag: bool,
    entity: bool,
    url: bool,
    /// `[[` depth (up to 3) and whether the innermost link's `|` was seen.
    link: u32,
    pipe: bool,
    /// `{{` depth (up to 3).
    template: u32,
    /// The line's kind (`R_PROSE` to `R_OTHER_LINE`), and whether a byte
    /// of the line was seen.
    line: u32,
    in_line: bool,
    /// A `<text` tag was seen (an XML document), and whether its element
    /// is open.
    xml: bool,
    in_text: bool,
    /// The tag's name so far (its first bytes, a leading `/` kept) and
    /// whether it is still read.
    tag_name: u32,
    naming: bool,
    /// The last byte.
    last: u32,
    /// The last seven bytes (for `http://`).
    recent: u64,
    /// One bit per byte of the last 32: a control byte (below 0x20 but
    /// tab, newline, carriage return and form feed, or 0x7F).
    control: u32,
}

/// `<text` and `</text` as [`Region::tag_name`] reads them.
const TEXT_OPEN: u32 = u32::from_be_bytes(*b"text");
const TEXT_CLOSE: u32 = u32::from_be_bytes(*b"/tex");

impl Region {
    /// Walks the state (`snapshot.rs`).
    fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        use crate::snapshot::{visit_bool, visit_u32};
        for b in [
            &mut self.tag,
            &mut self.entity,
            &mut self.url,
            &mut self.pipe,
            &mut self.in_line,
            &mut self.xml,
            &mut self.in_text,
            &mut self.naming,
        ] {
            visit_bool(v, b);
        }
        for x in [
            &mut self.link,
            &mut self.template,
            &mut self.line,
            &mut self.tag_name,
            &mut self.last,
        ] {
            visit_u32(v, x);
        }
        v.u64s(std::slice::from_mut(&mut self.recent));
        visit_u32(v, &mut self.control);
    }

    /// The region of the next byte (below [`REGIONS`]).
    fn code(&self) -> u32 {
        if self.control != 0 {
            R_BINARY
        } else if self.tag {
            R_TAG
        } else if self.entity {
            R_ENTITY
        } else if self.url {
            R_URL
        } else if self.link > 0 {
            if self.pipe { R_LINK_TEXT } else { R_LINK }
        } else if self.template > 0 {
            R_TEMPLATE
        } else if (0x30..=0x39).contains(&self.last) {
            R_NUMBER
        } else if self.xml && !self.in_text {
            R_META
        } else if self.in_line {
            self.line
        } else {
            R_OTHER_LINE
        }
    }

    /// Learns `b`, the byte just coded.
    fn observe(&mut self, b: u8) {
        let prev = self.last as u8;
        self.last = u32::from(b);
        self.recent = (self.recent << 8 | u64::from(b)) & 0xFF_FFFF_FFFF_FFFF;
        let control = (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0C)) || b == 0x7F;
        self.control = self.control << 1 | u32::from(control);
        if !self.in_line {
            self.in_line = true;
            self.line = match b {
                b'=' => R_HEADING,
                b'*' | b'#' | b':' | b';' => R_LIST,
                b'{' | b'|' | b'!' => R_TABLE,
                b if b.is_ascii_alphanumeric() || b >= 0x80 || b == b'[' || b == b'\'' => R_PROSE,
                _ => R_OTHER_LINE,
            };
        }
        // A `<` or `&` not followed by a name's first byte opens nothing
        // (`a < b`, `&&` in code).
        if self.tag
            && self.naming
            && self.tag_name == 0
            && prev == b'<'
            && !(b.is_ascii_alphabetic() || matches!(b, b'/' | b'!' | b'?'))
        {
            self.tag = false;
            self.naming = false;
        }
        if self.entity && prev == b'&' && !(b.is_ascii_alphabetic() || b == b'#') {
            self.entity = false;
        }
        // Tags, and the `<text>` element of an XML document.
        if self.tag && self.naming {
            if b.is_ascii_alphanumeric() || (b == b'/' && self.tag_name == 0) {
                if self.tag_name < 1 << 24 {
                    self.tag_name = self.tag_name << 8 | u32::from(b);
                }
            } else {
                self.naming = false;
            }
        }
        match b {
            b'<' => {
                self.tag = true;
                self.naming = true;
                self.tag_name = 0;
            }
            b'>' if self.tag => {
                self.tag = false;
                self.naming = false;
                if self.tag_name == TEXT_OPEN {
                    self.xml = true;
                    self.in_text = true;
                } else if self.tag_name == TEXT_CLOSE {
                    self.in_text = false;
                }
            }
            b'&' => self.entity = true,
            b';' | b' ' | b'\n' => self.entity = false,
            _ => {}
        }
        match b {
            b'[' if prev == b'[' => {
                self.link = (self.link + 1).min(3);
                self.pipe = false;
            }
            b']' if prev == b']' => {
                self.link = self.link.saturating_sub(1);
                self.pipe = false;
            }
            b'|' if self.link > 0 => self.pipe = true,
            b'{' if prev == b'{' => self.template = (self.template + 1).min(3),
            b'}' if prev == b'}' => self.template = self.template.saturating_sub(1),
            _ => {}
        }
        if self.recent == u64::from_be_bytes(*b"\0http://") {
            self.url = true;
        } else if self.url && matches!(b, b' ' | b'\n' | b']' | b'|' | b'<') {
            self.url = false;
        }
        if b == b'\n' {
            self.in_line = false;
            self.tag = false;
            self.entity = false;
            self.link = 0;
            self.pipe = false;
            self.url = false;
        }
    }
}

/// The revision-30 text family.
#[derive(Debug, Clone)]
pub(crate) struct Text30Contexts {
    /// Revision 22's family.
    base: Text22Contexts,
    /// The region state.
    state: Region,
    /// This byte's region and position in the word (0 to 2; fixed for
    /// its bits).
    region: usize,
    position: usize,
}

impl Text30Contexts {
    /// A fresh family for `config` (the block's `table_bits`).
    pub fn new(config: &CmConfig) -> Self {
        Text30Contexts {
            base: Text22Contexts::new(config),
            state: Region::default(),
            region: 0,
            position: 0,
        }
    }
}

impl ContextModel for Text30Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn text_selectors(&self) -> &[usize] {
        &[SELECTOR]
    }

    fn text_selectors_ctx(&self, c0: u32, _i: u32, out: &mut [usize]) {
        out[0] = (self.region * 3 + self.position) << 8 | c0 as usize;
    }

    fn final_selector_size(&self) -> usize {
        FINAL_SETS
    }

    fn final_selector(&self, c0: u32) -> usize {
        let start = self.position == 0 && self.region != R_BINARY as usize;
        (self.region * 2 + usize::from(start)) << 8 | c0 as usize
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.base.begin_byte(ctx);
        self.region = self.state.code() as usize;
        let c4 = ctx.c4();
        let letter = |b: u8| b.is_ascii_alphabetic() || b >= 0x80;
        self.position = (0..2)
            .find(|&k| !letter((c4 >> (8 * k)) as u8))
            .unwrap_or(2);
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.base.observe(data, pos, byte);
        self.state.observe(byte);
    }

    /// Revision 22's state and this family's region state.
    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.base.visit_state(v);
        self.state.visit(v);
    }

    fn update_bit(&mut self, bit: u32) {
        self.base.update_bit(bit);
    }

    forward_family!(base; bit_inputs, initial_weight, predict_bit, prefetch_bit);
}
