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

use super::expected::ExpectedBits;
use super::m68k5::M68k5Contexts;
use super::x86_30::{NEXT_BITS, NextInstruction};
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::Apm;

/// Hashed contexts the family adds (mixer inputs besides its 3 per-bit
/// ones).
const CONTEXTS: usize = 2;
/// Entries of the last-byte table (u16 each).
const TABLE_BITS: u32 = 18;
/// Situations of the inputs: 8 roles (7: outside the code) times 64
/// details times 32 flag sets.
const SITUATIONS: usize = 8 * 64 * 32;
/// Rows of each final APM: 512 (role, detail) pairs times 8 bit positions
/// times 4 states of the partial byte against its expected byte.
const APM_ROWS: usize = 512 * 8 * 4;
/// The final APMs' adaptation shift.
const APM_RATE: u32 = 6;

/// Bytes of memory the family adds, over a bound: its decoder's table,
/// the last-byte table, the instruction-start table, the inputs'
/// probabilities, the final APMs and its own state.
pub(crate) const MEMORY: u64 = (2 << 16)
    + (2 << TABLE_BITS)
    + (4 << NEXT_BITS)
    + 4 * (SITUATIONS as u64 * 8 * 3 * 4)
    + 3 * 66 * APM_ROWS as u64
    + 1024;

/// The state of partial byte `c0` (bits so far with a leading 1, before
/// bit `i`) against expected byte `e` (0x100 | byte, 0: none): 0 none, 1
/// the bits so far differ from it, 2 or 3 they agree and its bit `i` is 0
/// or 1.
fn expected_state(e: u32, c0: u32, i: u32) -> usize {
    if e == 0 {
        0
    } else if (e & 0xFF) >> (i + 1) != c0 ^ (1 << (7 - i)) {
        1
    } else {
        2 + ((e >> i) & 1) as usize
    }
}

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
    /// The last byte (0x100 | byte) per hashed key.
    last: Vec<u16>,
    /// This byte's fine and coarse table slots (`usize::MAX`: none).
    slots: [usize; 2],
    inputs: ExpectedBits<3>,
    /// The final APMs (by the fine, match and coarse expected bytes), this
    /// byte's rows of them and the expected bytes.
    apms: [Apm; 3],
    apm_ctx: [usize; 3],
    apm_expected: [u32; 3],
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
            last: vec![0; 1 << TABLE_BITS],
            slots: [usize::MAX; 2],
            inputs: ExpectedBits::with_limit(SITUATIONS, 1023),
            apms: std::array::from_fn(|_| Apm::new(APM_ROWS, APM_RATE)),
            apm_ctx: [0; 3],
            apm_expected: [0; 3],
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
        let known = |p: usize| -> u32 {
            if p < pos && ctx.vis.known(p) {
                0x100 | u32::from(ctx.data[p])
            } else {
                0
            }
        };
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
        let shift = 32 - TABLE_BITS;
        self.slots = [(fine >> shift) as usize, (coarse >> shift) as usize];
        let ef = u32::from(self.last[self.slots[0]]);
        let ec = u32::from(self.last[self.slots[1]]);
        let flags = u32::from(ef != 0)
            | u32::from(ec != 0) << 1
            | u32::from(em != 0) << 2
            | u32::from(ef != 0 && ef == em) << 3
            | u32::from(ef != 0 && ef == ec) << 4;
        self.inputs
            .begin([ef, ec, em], (((role * 64 + sub) * 32) | flags) as usize);
        let situation = (role * 64 + sub) as usize;
        self.apm_ctx = [situation, (role * 32 + flags) as usize, situation];
        self.apm_expected = [ef, em, ec];
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.inputs.predict(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.inputs.update(bit);
        for a in &mut self.apms {
            a.update(bit);
        }
    }

    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        let d = crate::stretch(p.clamp(1, 65535));
        let i = 7 - (31 - c0.leading_zeros());
        let mut sum = 2 * p + 2;
        for ((a, &c), &e) in self
            .apms
            .iter_mut()
            .zip(&self.apm_ctx)
            .zip(&self.apm_expected)
        {
            sum += a.refine_stretched(d, (c * 8 + i as usize) * 4 + expected_state(e, c0, i));
        }
        (sum / 5).clamp(1, 65535)
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        for &s in &self.slots {
            if s != usize::MAX {
                self.last[s] = 0x100 | u16::from(byte);
            }
        }
        self.slots = [usize::MAX; 2];
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
