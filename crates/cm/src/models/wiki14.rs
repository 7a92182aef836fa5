//! Wiki markup, word-sequence and field contexts of CM revision 14
//! (doc/FORMAT.md 4.25.4), after revision 8's word family
//! ([`Words8Contexts`](super::words8::Words8Contexts)): what the earlier
//! text families lack for Wikipedia dumps and books.
//!
//! The family keeps its own state, updated in
//! [`observe`](ContextModel::observe) from the bytes in coding order: the
//! last two words (letters only, case-folded, bytes of 0x80 and above
//! count as letters), the word before the last punctuation mark, a stack
//! of wiki regions (`[[` link target, its label after `|`, `{{` template
//! name and its parameters), the escaped HTML tag of the text
//! (`&lt;ref&gt;` ...), the link target's first bytes (a label often
//! repeats them), the value of the XML field each header line opens with
//! (`<id>`, `<timestamp>` ...) and the last value of each field, and the
//! number being read. Every context is declared in
//! [`Wiki14Contexts::hashes`]; everything is integer.

use super::{ByteCtx, ContextModel, hash2};

/// How many hashed contexts the family adds.
pub(crate) const WIKI14_CONTEXTS: usize = 4;

/// Field slots of the XML header values, and the bytes kept of each value.
const FIELDS: usize = 16;
const FIELD_LEN: usize = 32;

/// Bytes kept of a link target.
const TARGET_LEN: usize = 64;

/// Wiki regions (4 bits each on [`Wiki14Contexts::regions`]).
const LINK_TARGET: u32 = 1;
const LINK_LABEL: u32 = 2;
const TEMPLATE_NAME: u32 = 3;
const TEMPLATE_PARAM: u32 = 4;

/// Bytes of memory the family allocates.
pub(crate) const MEMORY: u64 = (FIELDS * FIELD_LEN + TARGET_LEN) as u64;

/// The wiki family of revision 14: see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct Wiki14Contexts {
    /// Hash of the current word (0: not in a word) and of the last two
    /// (`words[0]` the latest).
    word: u32,
    words: [u32; 2],
    /// The last word before the last punctuation mark, and that mark.
    punct_word: u32,
    punct: u32,
    /// The open wiki regions, 4 bits each, the innermost lowest (0: none).
    regions: u32,
    /// The last link target's first bytes and their count, and the bytes
    /// of the label read so far.
    target: [u8; TARGET_LEN],
    target_len: u32,
    label_len: u32,
    /// The last byte and the one before.
    c2: u32,
    /// Escaped HTML (`&lt;` ... `&gt;`): the entity being read (its hash,
    /// 0: none), whether a tag is open, the tag name's hash and whether
    /// the name is complete, and whether the text is inside a `ref` tag.
    entity: u32,
    esc_open: bool,
    esc_tag: u32,
    esc_named: bool,
    in_ref: bool,
    /// The XML field the line opens with: its tag's hash (0: none), state
    /// (0 before `<`, 1 in the name, 2 in the value, 3 after it), the
    /// value's bytes so far.
    field: u32,
    field_state: u32,
    field_pos: u32,
    /// The last value of each field slot, and its length.
    values: Vec<u8>,
    value_len: [u8; FIELDS],
    /// Digits of the number being read, their hash, and the last number's
    /// digit count.
    digits: u32,
    number: u32,
    last_digits: u32,
    /// Whether the line has had only blanks so far.
    line_blank: bool,
}

impl Wiki14Contexts {
    /// A family with empty state.
    pub fn new() -> Self {
        Wiki14Contexts {
            word: 0,
            words: [0; 2],
            punct_word: 0,
            punct: 0,
            regions: 0,
            target: [0; TARGET_LEN],
            target_len: 0,
            label_len: 0,
            c2: 0,
            entity: 0,
            esc_open: false,
            esc_tag: 0,
            esc_named: false,
            in_ref: false,
            field: 0,
            field_state: 0,
            field_pos: 0,
            values: vec![0; FIELDS * FIELD_LEN],
            value_len: [0; FIELDS],
            digits: 0,
            number: 0,
            last_digits: 0,
            line_blank: true,
        }
    }

    /// The field slot of tag hash `t`.
    #[inline]
    fn field_slot(t: u32) -> usize {
        (t >> 28) as usize % FIELDS
    }

    /// The byte the structure expects next (`0x100 | byte`, 0: none), and
    /// a tag for where it came from: the link target's byte at the label's
    /// position, or the field's last value at the same position.
    fn expected(&self) -> (u32, u32) {
        if self.regions & 0xF == LINK_LABEL && self.label_len < self.target_len {
            let b = self.target[self.label_len as usize];
            return (0x100 | u32::from(b), 1 | self.label_len.min(7) << 4);
        }
        if self.field_state == 2 {
            let s = Self::field_slot(self.field);
            let p = self.field_pos as usize;
            if p < usize::from(self.value_len[s]) {
                let b = self.values[s * FIELD_LEN + p];
                return (0x100 | u32::from(b), 2 | self.field_pos.min(31) << 4);
            }
            return (0, 3 | self.field_pos.min(31) << 4);
        }
        (0, 0)
    }

    /// Sees the end of a word (a byte that is not a letter).
    fn end_word(&mut self) {
        if self.word == 0 {
            return;
        }
        self.words = [self.word, self.words[0]];
        self.word = 0;
    }

    /// Sees the end of an escaped HTML entity, `e` its hash.
    fn entity_end(&mut self, e: u32) {
        if e == entity_hash(b"&lt") {
            self.esc_open = true;
            self.esc_tag = 0;
            self.esc_named = false;
        } else if e == entity_hash(b"&gt") && self.esc_open {
            self.esc_open = false;
            if self.esc_tag == name_hash(b"ref") {
                self.in_ref = true;
            } else if self.esc_tag == name_hash(b"/ref") {
                self.in_ref = false;
            }
        }
    }
}

/// The hash of an entity's bytes (`&` included, `;` not).
fn entity_hash(s: &[u8]) -> u32 {
    s.iter().fold(0, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193).wrapping_add(1)
    })
}

/// The hash of an escaped tag's name.
fn name_hash(s: &[u8]) -> u32 {
    s.iter().fold(0, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x2C9F_3C51).wrapping_add(3)
    })
}

impl Default for Wiki14Contexts {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextModel for Wiki14Contexts {
    fn contexts(&self) -> usize {
        WIKI14_CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let c1 = ctx.c4() & 0xFF;
        let w1 = self.words[0];
        let w0 = self.word;
        // Markup: the two innermost regions, the escaped tag and whether
        // in a reference, with the last word and the word so far.
        let esc = if self.esc_open {
            self.esc_tag | 1
        } else {
            u32::from(self.in_ref)
        };
        out[0] = hash2(hash2(self.regions & 0xFF, esc), hash2(w0, w1) ^ 0xE_0102);
        // The byte the structure expects (a link label repeating its
        // target, a header field its last value), with the field; else
        // the last byte.
        let (e, src) = self.expected();
        out[1] = if src == 0 {
            hash2(c1, 0xE_0103)
        } else {
            hash2(e | src << 9, self.field ^ 0xE_0203)
        };
        // The word before the last punctuation mark with the mark and the
        // word so far.
        out[2] = hash2(hash2(self.punct_word, self.punct), w0 ^ 0xE_0104);
        // Numbers: the last word with the number so far, its length and
        // the last number's.
        out[3] = hash2(
            hash2(w1, self.number),
            self.digits.min(15) | self.last_digits.min(15) << 4 | 0xE_0105 << 8,
        );
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        let mut words = [
            self.word,
            self.words[0],
            self.words[1],
            self.punct_word,
            self.punct,
            self.regions,
            self.target_len,
            self.label_len,
            self.c2,
            self.entity,
            self.esc_tag,
            self.field,
            self.field_state,
            self.field_pos,
            self.digits,
            self.number,
            self.last_digits,
            u32::from(self.esc_open)
                | u32::from(self.esc_named) << 1
                | u32::from(self.in_ref) << 2
                | u32::from(self.line_blank) << 3,
        ];
        v.u32s(&mut words);
        let flags;
        [
            self.word,
            self.words[0],
            self.words[1],
            self.punct_word,
            self.punct,
            self.regions,
            self.target_len,
            self.label_len,
            self.c2,
            self.entity,
            self.esc_tag,
            self.field,
            self.field_state,
            self.field_pos,
            self.digits,
            self.number,
            self.last_digits,
            flags,
        ] = words;
        self.esc_open = flags & 1 != 0;
        self.esc_named = flags & 2 != 0;
        self.in_ref = flags & 4 != 0;
        self.line_blank = flags & 8 != 0;
        self.target_len = self.target_len.min(TARGET_LEN as u32);
        v.u8s(&mut self.target);
        v.u8s(&mut self.values);
        v.u8s(&mut self.value_len);
        for l in &mut self.value_len {
            *l = (*l).min(FIELD_LEN as u8);
        }
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, b: u8) {
        let c1 = self.c2 & 0xFF;
        let byte = u32::from(b);
        // Words.
        if b.is_ascii_alphabetic() || b >= 0x80 {
            let l = b.to_ascii_lowercase();
            self.word = (self.word ^ u32::from(l))
                .wrapping_mul(0x2C9F_3C51)
                .wrapping_add(1);
        } else {
            self.end_word();
        }
        if matches!(b, b'.' | b',' | b';' | b':' | b'!' | b'?' | b'(' | b')') {
            self.punct_word = self.words[0];
            self.punct = byte;
        }
        // Link labels: the bytes read against the target's.
        match self.regions & 0xF {
            LINK_TARGET if b != b'|' && b != b']' && (self.target_len as usize) < TARGET_LEN => {
                self.target[self.target_len as usize] = b;
                self.target_len += 1;
            }
            LINK_LABEL => self.label_len = self.label_len.saturating_add(1),
            _ => {}
        }
        // Wiki regions.
        let top = self.regions & 0xF;
        match b {
            b'[' if c1 == u32::from(b'[') => {
                self.regions = self.regions << 4 | LINK_TARGET;
                self.target_len = 0;
                self.label_len = 0;
            }
            b'{' if c1 == u32::from(b'{') => {
                self.regions = self.regions << 4 | TEMPLATE_NAME;
            }
            b']' if c1 == u32::from(b']') && matches!(top, LINK_TARGET | LINK_LABEL) => {
                self.regions >>= 4;
            }
            b'}' if c1 == u32::from(b'}') && matches!(top, TEMPLATE_NAME | TEMPLATE_PARAM) => {
                self.regions >>= 4;
            }
            b'|' if top == LINK_TARGET => {
                self.regions = self.regions & !0xF | LINK_LABEL;
                self.label_len = 0;
            }
            b'|' if top == TEMPLATE_NAME => {
                self.regions = self.regions & !0xF | TEMPLATE_PARAM;
            }
            _ => {}
        }
        // Escaped HTML.
        if b == b'&' {
            self.entity = entity_hash(b"&");
        } else if self.entity != 0 {
            if b == b';' {
                let e = self.entity;
                self.entity = 0;
                self.entity_end(e);
            } else if b.is_ascii_alphanumeric() || b == b'#' {
                self.entity = (self.entity ^ byte)
                    .wrapping_mul(0x0100_0193)
                    .wrapping_add(1);
            } else {
                self.entity = 0;
            }
        } else if self.esc_open && !self.esc_named {
            if b.is_ascii_alphanumeric() || b == b'/' || b == b'!' || b == b'-' {
                self.esc_tag = (self.esc_tag ^ byte)
                    .wrapping_mul(0x2C9F_3C51)
                    .wrapping_add(3);
            } else {
                self.esc_named = true;
            }
        }
        if self.esc_open && !self.esc_named && self.entity != 0 && b == b'&' {
            // `&gt;` right after the name ends it.
            self.esc_named = true;
        }
        // Header fields: a line that opens with `<name>`.
        match self.field_state {
            1 => {
                if b == b'>' {
                    self.field_state = 2;
                    self.field_pos = 0;
                } else if b == b' ' || b == b'\n' || b == b'/' && self.field != 0 {
                    self.field_state = 3;
                } else {
                    self.field = (self.field ^ byte)
                        .wrapping_mul(0x0100_0193)
                        .wrapping_add(1);
                }
            }
            2 => {
                let s = Self::field_slot(self.field);
                if b == b'<' || b == b'\n' {
                    self.value_len[s] = self.field_pos.min(FIELD_LEN as u32) as u8;
                    self.field_state = 3;
                } else {
                    if (self.field_pos as usize) < FIELD_LEN {
                        let at = s * FIELD_LEN + self.field_pos as usize;
                        // The old value stays readable beyond this byte.
                        self.values[at] = b;
                    }
                    self.field_pos = self.field_pos.saturating_add(1);
                }
            }
            _ => {}
        }
        // Numbers.
        if b.is_ascii_digit() {
            self.digits = self.digits.saturating_add(1);
            self.number = (self.number ^ byte)
                .wrapping_mul(0x0100_0193)
                .wrapping_add(1);
        } else if self.digits > 0 {
            self.last_digits = self.digits;
            self.digits = 0;
            self.number = 0;
        }
        // Lines.
        if b == b'\n' {
            self.line_blank = true;
            self.field = 0;
            self.field_state = 0;
        } else if self.line_blank && b != b' ' && b != b'\t' {
            self.line_blank = false;
            if b == b'<' {
                self.field_state = 1;
                self.field = 0;
            }
        }
        self.c2 = (self.c2 << 8 | byte) & 0xFFFF;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(text: &[u8]) -> Wiki14Contexts {
        let mut t = Wiki14Contexts::new();
        for (pos, &b) in text.iter().enumerate() {
            t.observe(text, pos, b);
        }
        t
    }

    #[test]
    fn tracks_links_labels_and_templates() {
        let t = fed(b"see [[Anarchism|anar");
        assert_eq!(t.regions & 0xF, LINK_LABEL);
        assert_eq!(&t.target[..t.target_len as usize], b"Anarchism");
        assert_eq!(t.expected(), (0x100 | u32::from(b'c'), 1 | 4 << 4));
        let t = fed(b"{{Infobox|name=[[x]] y");
        assert_eq!(t.regions, TEMPLATE_PARAM);
        let t = fed(b"{{a}} [[b]]");
        assert_eq!(t.regions, 0);
    }

    #[test]
    fn tracks_escaped_refs_and_fields() {
        let t = fed(b"text&lt;ref name=x&gt;Cite");
        assert!(t.in_ref && !t.esc_open);
        let t = fed(b"text&lt;ref&gt;a&lt;/ref&gt; b");
        assert!(!t.in_ref);
        let t = fed(b"  <id>1234</id>\n  <id>12");
        assert_eq!(t.field_state, 2);
        assert_eq!(t.expected(), (0x100 | u32::from(b'3'), 2 | 2 << 4));
    }

    #[test]
    fn keeps_the_word_before_punctuation() {
        let t = fed(b"the Red fox, ran ");
        let fox = fed(b"fox ").words[0];
        assert_eq!(t.punct_word, fox);
        assert_eq!(t.punct, u32::from(b','));
        assert_eq!(t.words[1], fox);
    }
}
