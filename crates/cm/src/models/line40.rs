//! The line and field family of CM revision 40 (doc/FORMAT.md 4.51.2:
//! the `max` line's nineteenth round), after revision 32's families:
//! hashed contexts anchored at the start of the line and at the fields
//! within it rather than at the last few bytes, for URL lists, markup
//! and source code.
//!
//! - **Classes.** A byte's class is 1 for an ASCII digit, 2 for an ASCII
//!   letter, else the byte plus 3 ([`class`]).
//! - **Line.** `line` is the hash of the current line's bytes so far:
//!   0 after a newline (`\n`), then `line = step(line, b)` for each byte
//!   `b` of the line, with `step(h, x) = (h ^ x) * 0x2F0F_3D25 + 1`
//!   (`u32`, wrapping). `indent` counts the blanks (0x20 and tab) before
//!   the line's first other byte.
//! - **Shape.** `shape` is 0 after a newline; for each byte of the line
//!   with class `k`, `shape = step(shape, k & 0xFF)` unless `k` is 1 or 2
//!   and equals the class of the line's byte before (a run of digits or
//!   of letters counts once).
//! - **Fields.** A separator is one of `/ ? & = ; :` and the blank
//!   (0x20). `field` is the hash of the bytes since the last separator or
//!   newline (0 after one; `field = step(field, b)`), `flen` their count
//!   (at most 255), `index` the separators seen in the line (at most 15),
//!   `anchor` the value of `line` after the line's third `/` (0 until
//!   then: for a URL, its scheme and host).
//! - **Contexts** ([`CONTEXTS`] hashed contexts, in mixer order; `c` the
//!   class of the last byte, 3 at a block's start):
//!   - `hash2(hash2(anchor, field), 0x40_0200 | index)`: the field so far
//!     with its index and the line's host;
//!   - `hash2(hash2(anchor, flen | c << 8), 0x40_0500 | index)`: the
//!     field's length so far and the last byte's class;
//!   - `hash2(hash2(anchor, shape), 0x40_0A00 | c)`: the line's shape;
//!   - `hash2(hash2(indent, shape), 0x40_0D00 | index)`: the line's shape
//!     with its indentation.
//!
//! Tried and not kept (FORMAT 4.51.2): the line so far alone, the field
//! with the previous field, the line with the last byte, the previous
//! line's shape, more separators (`, ( ) < > " { } . - _` and tab).
//!
//! Every context is declared here; everything is integer.

use super::{ByteCtx, ContextModel, hash2};

/// Hashed contexts the family adds.
pub(crate) const CONTEXTS: usize = 4;

/// The most separators [`Line40Contexts`] counts in a line.
const MOST_FIELDS: u32 = 15;

/// The longest field length [`Line40Contexts`] counts.
const MOST_LENGTH: u32 = 255;

/// One byte `x` added to a line's, field's or shape's hash `h`.
fn step(h: u32, x: u8) -> u32 {
    (h ^ u32::from(x)).wrapping_mul(0x2F0F_3D25).wrapping_add(1)
}

/// A byte's class: 1 for a digit, 2 for a letter, else the byte plus 3.
fn class(b: u8) -> u32 {
    if b.is_ascii_digit() {
        1
    } else if b.is_ascii_alphabetic() {
        2
    } else {
        u32::from(b) + 3
    }
}

/// The revision-40 line and field family: see the module documentation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Line40Contexts {
    /// The current line's hash so far (0: at its start).
    line: u32,
    /// The current field's hash so far (0: at its start).
    field: u32,
    /// The current field's length (at most [`MOST_LENGTH`]).
    flen: u32,
    /// Separators seen in the line (at most [`MOST_FIELDS`]).
    index: u32,
    /// `/` seen in the line (at most 3).
    slashes: u32,
    /// The line's hash after its third `/` (0 until then).
    anchor: u32,
    /// The line's shape so far.
    shape: u32,
    /// The class of the line's last byte (0: none yet).
    last: u32,
    /// Leading blanks of the line.
    indent: u32,
    /// Whether the line has had a byte other than a blank.
    started: bool,
}

impl Line40Contexts {
    /// A family with empty state.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ContextModel for Line40Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let c = class(ctx.c4() as u8);
        out[0] = hash2(hash2(self.anchor, self.field), 0x40_0200 | self.index);
        out[1] = hash2(
            hash2(self.anchor, self.flen | c << 8),
            0x40_0500 | self.index,
        );
        out[2] = hash2(hash2(self.anchor, self.shape), 0x40_0A00 | c);
        out[3] = hash2(hash2(self.indent, self.shape), 0x40_0D00 | self.index);
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        if byte == b'\n' {
            *self = Self::default();
            return;
        }
        if !self.started {
            if matches!(byte, b' ' | b'\t') {
                self.indent += 1;
            } else {
                self.started = true;
            }
        }
        self.line = step(self.line, byte);
        let k = class(byte);
        if k != self.last || k > 2 {
            self.shape = step(self.shape, k as u8);
        }
        self.last = k;
        if matches!(byte, b'/' | b'?' | b'&' | b'=' | b';' | b':' | b' ') {
            self.field = 0;
            self.flen = 0;
            self.index = (self.index + 1).min(MOST_FIELDS);
            if byte == b'/' && self.slashes < 3 {
                self.slashes += 1;
                if self.slashes == 3 {
                    self.anchor = self.line;
                }
            }
        } else {
            self.field = step(self.field, byte);
            self.flen = (self.flen + 1).min(MOST_LENGTH);
        }
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        let mut started = u32::from(self.started);
        for x in [
            &mut self.line,
            &mut self.field,
            &mut self.flen,
            &mut self.index,
            &mut self.slashes,
            &mut self.anchor,
            &mut self.shape,
            &mut self.last,
            &mut self.indent,
            &mut started,
        ] {
            v.u32s(std::slice::from_mut(x));
        }
        self.started = started != 0;
        self.flen = self.flen.min(MOST_LENGTH);
        self.index = self.index.min(MOST_FIELDS);
        self.slashes = self.slashes.min(3);
    }
}
