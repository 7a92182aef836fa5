//! 68000 per-bit inputs of CM revision 46 (doc/FORMAT.md 4.57.3): a family
//! installed after revision 34's 68000 family ([`M68k34Contexts`] and the
//! indirect and match contexts) for a block detected as a Macintosh
//! resource fork. Like revision 42's x86 family ([`X86v42Contexts`]) it
//! turns three *expected bytes* into per-bit mixer inputs
//! ([`ExpectedBits`]), which learn across byte values, and refines the
//! model's final probability with three APMs keyed by the partial byte's
//! state against those bytes; it adds two hashed contexts scoped to the
//! current function (since its last `LINK`): the word's place with the
//! opcode, and with the function alone (an opcode word) or the opcode's
//! effective-address field (an extension word: the same local variable's
//! offset used by other instructions). It follows the fork with its
//! own copy of revision 5's resource and instruction decoder
//! ([`M68k5Contexts`]: 16-bit big-endian words, opcode and extension
//! words).
//!
//! The expected bytes of a code byte (all in [`M68k46Contexts::begin_byte`]):
//!
//! - the *fine* byte: the last byte coded under the same fine key (a table
//!   of the last byte per hashed key): an opcode word's byte by the
//!   previous whole instruction and the word's high byte so far; an
//!   extension word's byte by the opcode, the word's number, the previous
//!   opcode and the extension words so far;
//! - the *coarse* byte: the same with less (the previous opcode word; the
//!   opcode and the word's number);
//! - the *match* byte: the instruction that followed the last occurrence
//!   of the previous instruction (all its words), its byte at the current
//!   index while the current instruction's bytes agree with it.
//!
//! Outside the code (before the fork's header is complete, a resource's
//! length and header words) the fine byte is the last byte after the same
//! three bytes, the coarse one after the same two, and the match byte the
//! byte two back.
//!
//! [`X86v42Contexts`]: super::x86_42::X86v42Contexts
//! [`M68k34Contexts`]: super::m68k34::M68k34Contexts

use super::m68k5::M68k5Contexts;
use super::x86_30::{NEXT_BITS, NextInstruction};
use super::x86_42::ExpectedHead;
use super::{ByteCtx, ContextModel, hash2};

/// Hashed contexts the family adds (mixer inputs besides its 3 per-bit
/// ones).
const CONTEXTS: usize = 2;
/// Bytes of memory the family adds, over a bound: its decoder's table,
/// the last-byte table, the instruction-start table, the inputs'
/// probabilities, the final APMs and its own state.
pub(crate) const MEMORY: u64 = (2 << 16) + ExpectedHead::MEMORY + (4 << NEXT_BITS) + 1024;

/// The revision-46 68000 family.
#[derive(Debug, Clone)]
pub(crate) struct M68k46Contexts {
    dec: M68k5Contexts,
    /// Hash of the current instruction's bytes so far, and its bytes so
    /// far (the index of the next one).
    ins: u32,
    index: usize,
    /// Hash of the previous instruction's bytes.
    prev: u32,
    /// The instruction that followed the last occurrence of the previous
    /// instruction.
    next: NextInstruction,
    /// The fine, coarse and match bytes' inputs and final APMs.
    head: ExpectedHead,
    /// Block position of the last `LINK` opcode word's low byte (the
    /// current function's start; 0: none).
    func: u32,
}

impl M68k46Contexts {
    /// A family before the resource fork header.
    pub fn new() -> Self {
        M68k46Contexts {
            dec: M68k5Contexts::new(),
            ins: 0,
            index: 0,
            prev: 0,
            next: NextInstruction::new(),
            head: ExpectedHead::new(),
            func: 0,
        }
    }

    /// Whether the byte at `pos` is a code word's (not the header, not a
    /// resource's length or header words).
    fn code(&self, pos: usize) -> bool {
        let d = &self.dec;
        d.next_resource >= 16
            && d.word_base != 0
            && !(d.next_resource..=d.next_resource.saturating_add(3)).contains(&pos)
            && d.slot() != 7
    }
}

impl ContextModel for M68k46Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let pos = ctx.pos;
        if !self.code(pos) {
            out[0] = 0x46F0;
            out[1] = 0x46F1;
            return;
        }
        let d = &self.dec;
        let slot = d.slot();
        let j = u32::from(d.low(pos));
        let hi = if j == 1 { 0x100 | (ctx.c4() & 0xFF) } else { 0 };
        let at = slot.min(4) << 10 | j << 9 | hi;
        let op = u32::from(d.op);
        if slot == 0 {
            out[0] = hash2(hash2(0x46A0 | at << 16, op), self.func);
            out[1] = hash2(0x46B0 | at << 16, self.func);
        } else {
            out[0] = hash2(hash2(0x46C0 | at << 16, op), self.func);
            out[1] = hash2(hash2(0x46D0 | at << 16, op & 0x3F), self.func);
        }
    }

    fn bit_inputs(&self) -> usize {
        3
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let pos = ctx.pos;
        let c4 = ctx.c4();
        let known = |p: usize| ExpectedHead::known(ctx, p);
        let (fine, coarse, em, role, sub) = if self.code(pos) {
            let d = &self.dec;
            let slot = d.slot();
            let j = u32::from(d.low(pos));
            let hi = if j == 1 { 0x100 | (c4 & 0xFF) } else { 0 };
            let at = slot.min(2) << 10 | j << 9 | hi;
            let op = u32::from(d.op);
            let p1 = u32::from(d.prev[0]);
            let (fine, coarse, sub) = if slot == 0 {
                (
                    hash2(hash2(0x4600 | at << 16, self.prev), p1),
                    hash2(0x4610 | at << 16, op),
                    if j == 0 {
                        op >> 12
                    } else {
                        16 + (hi >> 4 & 0xF)
                    },
                )
            } else {
                (
                    hash2(hash2(0x4620 | at << 16, op << 16 | p1), d.ext),
                    hash2(0x4630 | at << 16, op),
                    hash2(0x4640 | slot << 12, op) >> 26,
                )
            };
            let em = self.next.at(self.index.min(15)).map_or(0, known);
            (fine, coarse, em, slot.min(2) * 2 + j, sub)
        } else {
            (
                hash2(0x4660, c4 & 0xFF_FFFF),
                hash2(0x4670, c4 & 0xFFFF),
                pos.checked_sub(2).map_or(0, known),
                7,
                (pos as u32 & 1) << 4 | (c4 & 0xFF) >> 4,
            )
        };
        self.head.begin(fine, coarse, em, role, sub);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.head.predict_bit(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.head.update_bit(bit);
    }

    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        self.head.refine_final(p, c0)
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.head.learn(byte);
        let code = self.code(pos);
        if code {
            self.next.observe(data, pos, self.index.min(15), byte);
            self.ins = hash2(self.ins, u32::from(byte) | 0x4680);
            self.index += 1;
        }
        let base = self.dec.word_base;
        if code
            && self.dec.slot() == 0
            && self.dec.low(pos)
            && (self.dec.high << 8 | u16::from(byte)) & 0xFFF8 == 0x4E50
        {
            self.func = pos as u32;
        }
        self.dec.observe(data, pos, byte);
        if self.dec.word_base != base {
            // A new resource: no instruction in progress.
            self.ins = 0;
            self.index = 0;
        } else if code && self.code(pos + 1) && self.dec.slot() == 0 && !self.dec.low(pos + 1) {
            // The next byte starts an instruction.
            self.prev = self.ins;
            self.next.end(hash2(self.ins, 0x4690), pos);
            self.ins = 0;
            self.index = 0;
        }
    }
}
