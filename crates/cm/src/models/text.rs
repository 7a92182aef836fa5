//! Text, code and markup contexts (CM revision 2, doc/FORMAT.md 4.12): in
//! place of the v1 word family (whose three contexts it keeps) and the PNM
//! image contexts (a revision-1 model detects PNM images and switches to
//! its pixel family anyway).
//!
//! Words are letters only, case-folded (bytes of 0x80 and above count as
//! letters, so UTF-8 words are words). The family keeps the block's text
//! state itself, updated in [`observe`](ContextModel::observe): the last
//! words, the line (its start, the previous line, indentation, first
//! characters), the text since the last punctuation, the bracket stack,
//! quote and XML/HTML tag state, the last key
//! (identifier before `:` or `=`), number tokens and the classes of the
//! last bytes. Everything is integer, and positions are read only where the
//! decoder has them.

use super::{ByteCtx, ContextModel, hash2};

/// How many contexts the family adds.
pub(crate) const TEXT_CONTEXTS: usize = 8;

/// Deepest bracket nesting whose openers are remembered.
const STACK: usize = 16;

/// The class of a byte for the char-class contexts (4 bits).
#[inline]
pub(crate) fn class(b: u8) -> u32 {
    match b {
        b' ' | b'\t' => 0,
        b'\n' | b'\r' => 1,
        b'a'..=b'z' => 2,
        b'A'..=b'Z' => 3,
        b'0'..=b'9' => 4,
        b'.' | b',' | b';' | b':' | b'!' | b'?' => 5,
        b'(' | b')' | b'[' | b']' | b'{' | b'}' => 6,
        b'"' | b'\'' | b'`' => 7,
        b'<' | b'>' | b'/' | b'=' => 8,
        b'-' | b'+' | b'*' | b'&' | b'%' | b'#' | b'@' | b'_' | b'|' | b'\\' | b'^' | b'~'
        | b'$' => 9,
        0xC0..=0xFF => 10,
        0x80..=0xBF => 11,
        _ => 12,
    }
}

/// The text family: 8 contexts, see [`TextContexts::hashes`].
#[derive(Debug, Clone, Default)]
pub(crate) struct TextContexts {
    /// Hash of the current word (0: not in a word).
    word: u32,
    /// The previous word's hash.
    prev: u32,
    /// Block position of the current line's first byte, and of the
    /// previous line's, with its length.
    line_start: usize,
    prev_line_start: usize,
    prev_line_len: usize,
    /// Leading blanks of the current line, and whether the line has had
    /// only blanks so far.
    indent: u32,
    in_indent: bool,
    /// The first two non-blank bytes of the line, and how many there are.
    first: u32,
    first_n: u32,
    /// Hash of the text since the last punctuation mark.
    punct: u32,
    /// Openers of the open brackets (innermost at `depth - 1`) and the
    /// nesting depth.
    stack: [u8; STACK],
    depth: u32,
    /// Inside a double-quoted string.
    quote: bool,
    /// Markup: 0 outside a tag, 1 in its name, 2 among its attributes, 3 in
    /// an attribute's quoted value; the tag name's hash (kept after the tag
    /// closes, for the text it encloses).
    tag: u8,
    tag_hash: u32,
    /// Hash of the current identifier (letters, digits, `_`; case kept), of
    /// the last one, and of the last one followed by `:` or `=` (the key).
    ident: u32,
    last_ident: u32,
    key: u32,
    /// Digits of the current number (0: none) and of the last one.
    digits: u32,
    last_digits: u32,
    /// Classes of the last eight bytes, 4 bits each, the last lowest.
    classes: u32,
}

impl TextContexts {
    /// A family with empty state.
    pub fn new() -> Self {
        TextContexts {
            in_indent: true,
            ..TextContexts::default()
        }
    }
}

impl ContextModel for TextContexts {
    fn contexts(&self) -> usize {
        TEXT_CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let c4 = ctx.c4();
        let c1 = c4 & 0xFF;
        let col = ctx.pos.saturating_sub(self.line_start) as u32;
        let above_pos = self.prev_line_start + col as usize;
        let above = if (col as usize) < self.prev_line_len
            && above_pos < ctx.pos
            && ctx.vis.known(above_pos)
        {
            u32::from(ctx.data[above_pos])
        } else {
            0x100
        };
        let p0 = self.prev;
        let w = self.word;
        // Words: the v1 family's three (word with the last byte, word
        // bigram, column with the last byte).
        out[0] = hash2(w, 0x100 + c1);
        out[1] = hash2(hash2(w, p0), 0x200);
        out[2] = hash2(col.min(60), 0x600 + c1);
        // Lines: the byte above with the last byte; the line's first bytes
        // and indentation with the word.
        out[3] = hash2(above | c1 << 9, 0x703);
        out[4] = hash2(
            hash2(self.first | self.first_n << 16, self.indent.min(31)),
            w ^ 0x705,
        );
        // The text since the last punctuation mark.
        out[5] = hash2(self.punct, 0x706);
        // Structure: bracket depth and opener with the quote state and the
        // last byte, and the markup tag; the key with the identifier being
        // read, the classes of the last bytes and the number lengths.
        let opener = if self.depth > 0 {
            u32::from(self.stack[(self.depth as usize - 1).min(STACK - 1)])
        } else {
            0
        };
        out[6] = hash2(
            opener | self.depth.min(15) << 8 | u32::from(self.quote) << 12 | c1 << 16,
            hash2(u32::from(self.tag), self.tag_hash) ^ 0x709,
        );
        out[7] = hash2(
            hash2(self.key, self.ident),
            (self.classes & 0xFF_FFFF) | self.digits.min(15) << 24 | self.last_digits.min(15) << 28,
        );
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        let mut words = [
            self.word,
            self.prev,
            self.indent,
            self.first,
            self.first_n,
            self.punct,
            self.depth,
            self.tag_hash,
            self.ident,
            self.last_ident,
            self.key,
            self.digits,
            self.last_digits,
            self.classes,
        ];
        v.u32s(&mut words);
        [
            self.word,
            self.prev,
            self.indent,
            self.first,
            self.first_n,
            self.punct,
            self.depth,
            self.tag_hash,
            self.ident,
            self.last_ident,
            self.key,
            self.digits,
            self.last_digits,
            self.classes,
        ] = words;
        crate::snapshot::visit_usize(v, &mut self.line_start);
        crate::snapshot::visit_usize(v, &mut self.prev_line_start);
        crate::snapshot::visit_usize(v, &mut self.prev_line_len);
        crate::snapshot::visit_bool(v, &mut self.in_indent);
        crate::snapshot::visit_bool(v, &mut self.quote);
        v.u8s(&mut self.stack);
        let mut tag = [self.tag];
        v.u8s(&mut tag);
        self.tag = tag[0];
    }

    fn positions_within(&self, history: usize) -> bool {
        self.line_start <= history
            && self
                .prev_line_start
                .checked_add(self.prev_line_len)
                .is_some_and(|end| end <= history)
            && [self.depth, self.indent, self.first_n, self.digits]
                .iter()
                .all(|&n| n as usize <= history)
    }

    fn observe(&mut self, _data: &[u8], pos: usize, b: u8) {
        // Words.
        let letter = b.is_ascii_alphabetic() || b >= 0x80;
        if letter {
            self.word = (self.word ^ u32::from(b.to_ascii_lowercase()))
                .wrapping_mul(0x2C9F_3C51)
                .wrapping_add(1);
        } else if self.word != 0 {
            self.prev = self.word;
            self.word = 0;
        }
        // Lines.
        if b == b'\n' {
            self.prev_line_start = self.line_start;
            // (With side-by-side streams the state is shared, and the line
            // may have started in another stream, past this position.)
            self.prev_line_len = (pos + 1).saturating_sub(self.line_start);
            self.line_start = pos + 1;
            self.indent = 0;
            self.in_indent = true;
            self.first = 0;
            self.first_n = 0;
        } else if self.in_indent && (b == b' ' || b == b'\t') {
            self.indent += 1;
        } else {
            self.in_indent = false;
            if self.first_n < 2 {
                self.first = self.first << 8 | u32::from(b);
                self.first_n += 1;
            }
        }
        // Text since the last punctuation.
        if matches!(b, b'.' | b',' | b';' | b':' | b'!' | b'?' | b'\n') {
            self.punct = u32::from(b);
        } else {
            self.punct = (self.punct ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
        // Brackets and quotes.
        match b {
            b'(' | b'[' | b'{' => {
                if (self.depth as usize) < STACK {
                    self.stack[self.depth as usize] = b;
                }
                self.depth += 1;
            }
            b')' | b']' | b'}' => self.depth = self.depth.saturating_sub(1),
            b'"' if self.tag == 0 => self.quote = !self.quote,
            _ => {}
        }
        // Markup.
        match (self.tag, b) {
            (0, b'<') => {
                self.tag = 1;
                self.tag_hash = 0;
            }
            (1 | 2, b'>') => self.tag = 0,
            (1, b' ' | b'\t' | b'\n') => self.tag = 2,
            (1, _) => self.tag_hash = (self.tag_hash ^ u32::from(b)).wrapping_mul(0x0100_0193),
            (2, b'"') => self.tag = 3,
            (3, b'"') => self.tag = 2,
            _ => {}
        }
        // Identifiers, keys and numbers.
        let ident = b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
        if ident {
            self.ident = (self.ident ^ u32::from(b))
                .wrapping_mul(0x0100_0193)
                .wrapping_add(1);
        } else if self.ident != 0 {
            self.last_ident = self.ident;
            self.ident = 0;
        }
        match b {
            b':' | b'=' => self.key = self.last_ident,
            b',' | b';' | b'\n' | b'{' => self.key = 0,
            _ => {}
        }
        if b.is_ascii_digit() {
            self.digits += 1;
        } else if b != b'.' && self.digits > 0 {
            self.last_digits = self.digits;
            self.digits = 0;
        }
        self.classes = self.classes << 4 | class(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(text: &[u8]) -> TextContexts {
        let mut t = TextContexts::new();
        for (pos, &b) in text.iter().enumerate() {
            t.observe(text, pos, b);
        }
        t
    }

    #[test]
    fn tracks_words_lines_brackets_and_markup() {
        let t = fed(b"Hello big World\n  if (a[1] == \"x\") {\n    <p class=\"q\">");
        assert_eq!(t.depth, 1);
        assert_eq!(t.stack[0], b'{');
        assert!(!t.quote);
        assert_eq!(t.indent, 4);
        assert_eq!(t.first, u32::from(b'<') << 8 | u32::from(b'p'));
        assert_eq!(t.tag, 0);
        assert_ne!(t.tag_hash, 0);
        // Words are case-folded: "World" and "world" hash alike.
        assert_eq!(fed(b"a World ").prev, fed(b"b world ").prev);
        assert_ne!(fed(b"Hello ").prev, fed(b"world ").prev);
    }

    #[test]
    fn keys_and_numbers() {
        let t = fed(b"{\"width\": 1234");
        assert_eq!(t.digits, 4);
        assert_eq!(t.key, fed(b"width ").last_ident);
        let t = fed(b"a: 12.5, ");
        assert_eq!(t.key, 0);
        assert_eq!(t.last_digits, 3);
    }
}
