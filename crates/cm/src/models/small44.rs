//! The markup-structure family of CM revision 44 (doc/FORMAT.md 4.55.3:
//! the `max` line's twenty-first round), after revision 40's line family:
//! one hashed context keyed by the HTML/XML element that encloses the byte
//! and, in a closing tag, by the element it is expected to close.
//!
//! - **Tokens.** A token byte is an ASCII letter, digit or `_`; `word` is
//!   the hash of the current token so far (0 outside one: each token byte
//!   `b` makes it `step(word, b)`, any other byte ends the token), with
//!   `step(h, x) = (h ^ x) * 0x2F0F_3D25 + 1` (`u32`, wrapping).
//! - **Tags.** Outside a tag, `<` opens one: `naming` (its first token is
//!   its name), not `closing`, `tag` = `attr` = 0, no quote. A `/` right
//!   after the `<` makes it a closing tag. The first token that ends in
//!   the tag becomes `tag` (`naming` ends); a later token ended by `=`
//!   outside a quote becomes `attr`. Outside a quote, `"` or `'` opens one,
//!   closed by the same byte. A `>` outside a quote ends the tag: a closing
//!   tag pops the element stack down to and without the nearest entry equal
//!   to `tag` (nothing when none is); another tag with a name, not ended by
//!   `/>`, pushes `tag` (a stack of [`DEPTH`], the oldest dropped when full).
//! - **Context** (`top` the stack's top, 0 when it is empty): inside a tag,
//!   `hash2(hash2(hash2(name, attr), word), 0x44_0100 | quote << 1 |
//!   closing)` with `name` = `top ^ 0x5A5A` while a closing tag's name is
//!   being written, else `tag`, and `quote` the open quote byte (0: none);
//!   outside, `hash2(hash2(top, word), 0x44_0200)`.
//!
//! Tried and not kept (FORMAT 4.55.3): the bracket nesting (innermost
//! opener, the token before it, commas, depth) with the token so far; the
//! previous token with the token so far; the last byte in the text context.
//!
//! Every context is declared in [`Small44Contexts::hashes`]; everything is
//! integer.

use super::{ByteCtx, ContextModel, hash2};

/// Hashed contexts the family adds.
pub(crate) const CONTEXTS: usize = 1;

/// Entries of the element stack.
pub(crate) const DEPTH: usize = 16;

/// One byte `x` added to a token's hash `h`.
fn step(h: u32, x: u8) -> u32 {
    (h ^ u32::from(x)).wrapping_mul(0x2F0F_3D25).wrapping_add(1)
}

/// Whether `b` is part of a token.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The revision-44 markup-structure family: see the module documentation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Small44Contexts {
    /// The current token's hash so far (0: not in a token).
    word: u32,
    /// Whether a tag is open.
    in_tag: bool,
    /// Whether the open tag's name is still to end.
    naming: bool,
    /// Whether the open tag is a closing tag.
    closing: bool,
    /// The open tag's name (0: none yet).
    tag: u32,
    /// The open tag's last attribute name (0: none).
    attr: u32,
    /// The open quote inside the tag (0: none).
    quote: u8,
    /// The last byte seen (0 at the start).
    last: u8,
    /// The element stack, oldest first.
    tags: [u32; DEPTH],
    /// Entries in `tags`.
    ntags: usize,
}

impl Small44Contexts {
    /// A family with empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// The innermost open element (0: none).
    fn top(&self) -> u32 {
        self.ntags.checked_sub(1).map_or(0, |i| self.tags[i])
    }
}

impl ContextModel for Small44Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, out: &mut [u32]) {
        out[0] = if self.in_tag {
            let name = if self.naming && self.closing {
                self.top() ^ 0x5A5A
            } else {
                self.tag
            };
            hash2(
                hash2(hash2(name, self.attr), self.word),
                0x44_0100 | u32::from(self.quote) << 1 | u32::from(self.closing),
            )
        } else {
            hash2(hash2(self.top(), self.word), 0x44_0200)
        };
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        if is_token(byte) {
            self.word = step(self.word, byte);
        } else if self.word != 0 {
            if self.in_tag {
                if self.naming {
                    self.tag = self.word;
                    self.naming = false;
                } else if byte == b'=' && self.quote == 0 {
                    self.attr = self.word;
                }
            }
            self.word = 0;
        }
        if self.in_tag {
            if self.quote != 0 {
                if byte == self.quote {
                    self.quote = 0;
                }
            } else if byte == b'"' || byte == b'\'' {
                self.quote = byte;
            } else if byte == b'/' && self.last == b'<' {
                self.closing = true;
            } else if byte == b'>' {
                self.in_tag = false;
                self.naming = false;
                if self.closing {
                    let open = &self.tags[..self.ntags];
                    if let Some(i) = open.iter().rposition(|&t| t == self.tag) {
                        self.ntags = i;
                    }
                } else if self.last != b'/' && self.tag != 0 {
                    if self.ntags == DEPTH {
                        self.tags.copy_within(1.., 0);
                        self.ntags -= 1;
                    }
                    self.tags[self.ntags] = self.tag;
                    self.ntags += 1;
                }
            }
        } else if byte == b'<' {
            self.in_tag = true;
            self.naming = true;
            self.closing = false;
            self.tag = 0;
            self.attr = 0;
            self.quote = 0;
        }
        self.last = byte;
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        let mut flags = u32::from(self.in_tag)
            | u32::from(self.naming) << 1
            | u32::from(self.closing) << 2
            | u32::from(self.quote) << 8
            | u32::from(self.last) << 16;
        let mut ntags = self.ntags as u32;
        for x in [
            &mut self.word,
            &mut self.tag,
            &mut self.attr,
            &mut flags,
            &mut ntags,
        ] {
            v.u32s(std::slice::from_mut(x));
        }
        v.u32s(&mut self.tags);
        self.in_tag = flags & 1 != 0;
        self.naming = flags & 2 != 0;
        self.closing = flags & 4 != 0;
        self.quote = (flags >> 8) as u8;
        self.last = (flags >> 16) as u8;
        self.ntags = (ntags as usize).min(DEPTH);
    }
}
