//! x86 / x86-64 ELF per-bit inputs of CM revision 42 (doc/FORMAT.md
//! 4.53.4): a sixth family installed after revision 32's
//! ([`X86v32Contexts`](super::x86_32)) for an x86 ELF block. It adds no
//! hashed context; it turns three *expected bytes* into per-bit mixer
//! inputs ([`ExpectedBits`]), which learn across byte values (a hashed
//! context of the same byte learns each value apart). Like the earlier x86
//! families it follows the bytes with its own instruction decoder
//! ([`X86v4Contexts`], restarted where the ELF program headers put an
//! executable segment, [`ElfLayout`]).
//!
//! The expected bytes of a code byte (all in [`X86v42Contexts::keys`]):
//!
//! - the *fine* byte: what the last byte coded in the same fine field
//!   context was (a table of the last byte per hashed context): an opcode
//!   byte by the previous instruction and the current one so far; a ModRM
//!   by the opcode, prefix state and previous opcode; a SIB by the opcode
//!   and ModRM; a displacement byte by its base register, ModRM reg and
//!   mod, slot and the operand bytes so far; an immediate byte by the
//!   opcode, prefix state, ModRM, slot and the bytes so far;
//! - the *coarse* byte: the same with less (the previous opcode and the
//!   bytes so far; the opcode and prefix state; the ModRM; the base and
//!   mod; the opcode and slot);
//! - the *match* byte: the instruction that followed the last occurrence
//!   of the previous instruction (all its bytes), its byte at the current
//!   index while the current instruction's bytes agree with it.
//!
//! In the data (outside the executable segments) the fine byte is the last
//! byte after the same three bytes, the coarse one after the same two, and
//! the match byte the byte four back (tables of 4-byte entries).
//!
//! The inputs' situation is the role (7: data) with a detail (an opcode
//! byte: its index and the prefixes; a ModRM or SIB: a hash of the opcode;
//! an operand byte: a hash of the opcode, operand size and slot; data: the
//! position mod 4 and the previous byte's high nibble) and five flags
//! (which of the three bytes exist, whether the fine byte equals the match
//! byte, and the coarse byte). Three final APMs (in
//! [`ContextModel::refine_final`]) refine the model's probability by the
//! bit position and the partial byte's state against an expected byte
//! (none, already different, agreeing with its next bit 0 or 1): the fine
//! byte with the role and detail, the match byte with the role and flags,
//! the coarse byte with the role and detail; the output is
//! `(2 p + a1 + a2 + a3 + 2) / 5`.

use super::elf7::ElfLayout;
use super::expected::ExpectedBits;
use super::x86_4::{DISP, IMM, MODRM, OPCODE, SIB, X86v4Contexts};
use super::x86_30::{NEXT_BITS, NextInstruction};
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::Apm;

/// Entries of the last-byte table (u16 each).
const TABLE_BITS: u32 = 18;
/// Situations of the inputs: 8 roles (7: data) times 64 role details
/// times 32 flag sets.
const SITUATIONS: usize = 8 * 64 * 32;

/// Contexts of each final APM: 512 (role, detail) pairs times 8 bit
/// positions times 4 states of the partial byte against its expected
/// byte.
const APM_ROWS: usize = 512 * 8 * 4;
/// The final APMs' adaptation shift.
const APM_RATE: u32 = 6;

/// Bytes of memory the family adds, over a bound: the last-byte table, the
/// instruction-start table, the inputs' probabilities, the final APMs and
/// its own state.
pub(crate) const MEMORY: u64 = ExpectedHead::MEMORY + (4 << NEXT_BITS) + 1024;

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

/// The part of the family that revision 46's 68000 family
/// ([`M68k46Contexts`](super::m68k46::M68k46Contexts)) shares: the fine and
/// coarse bytes (the last byte per hashed key, a table of
/// 2^`TABLE_BITS`), the three expected bytes' per-bit inputs in one of
/// `SITUATIONS` situations and the three final APMs.
#[derive(Debug, Clone)]
pub(crate) struct ExpectedHead {
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
}

impl ExpectedHead {
    /// Bytes of memory it takes, over a bound: the last-byte table, the
    /// inputs' probabilities and the final APMs.
    pub(crate) const MEMORY: u64 =
        (2 << TABLE_BITS) + 4 * (SITUATIONS as u64 * 8 * 3 * 4) + 3 * 66 * APM_ROWS as u64;

    /// Empty tables.
    pub(crate) fn new() -> Self {
        ExpectedHead {
            last: vec![0; 1 << TABLE_BITS],
            slots: [usize::MAX; 2],
            inputs: ExpectedBits::with_limit(SITUATIONS, 1023),
            apms: std::array::from_fn(|_| Apm::new(APM_ROWS, APM_RATE)),
            apm_ctx: [0; 3],
            apm_expected: [0; 3],
        }
    }

    /// The byte at `p` as an expected byte (0x100 | byte) if it lies
    /// before the current byte and is known (0: none).
    pub(crate) fn known(ctx: &ByteCtx<'_>, p: usize) -> u32 {
        if p < ctx.pos && ctx.vis.known(p) {
            0x100 | u32::from(ctx.data[p])
        } else {
            0
        }
    }

    /// Starts a byte: the fine and coarse bytes last seen under keys
    /// `fine` and `coarse`, with match byte `em` (0x100 | byte, 0: none),
    /// in role `role` (below 8) with detail `sub` (below 64).
    pub(crate) fn begin(&mut self, fine: u32, coarse: u32, em: u32, role: u32, sub: u32) {
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

    /// The three inputs for bit `i` of partial byte `c0`.
    pub(crate) fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.inputs.predict(c0, i, out);
    }

    /// Learns the coded bit.
    pub(crate) fn update_bit(&mut self, bit: u32) {
        self.inputs.update(bit);
        for a in &mut self.apms {
            a.update(bit);
        }
    }

    /// The final probability: `(2 p + a1 + a2 + a3 + 2) / 5`.
    pub(crate) fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
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

    /// Records the coded byte under this byte's keys (if [`Self::begin`]
    /// ran for it).
    pub(crate) fn learn(&mut self, byte: u8) {
        for &s in &self.slots {
            if s != usize::MAX {
                self.last[s] = 0x100 | u16::from(byte);
            }
        }
        self.slots = [usize::MAX; 2];
    }
}

/// The revision-42 x86 family.
#[derive(Debug, Clone)]
pub(crate) struct X86v42Contexts {
    dec: X86v4Contexts,
    elf: ElfLayout,
    /// The bytes of the current operand so far (little-endian).
    cur: u32,
    /// Hash of the current instruction's bytes so far.
    ins: u32,
    /// Hash of the previous instruction's bytes.
    prev: u32,
    /// The instruction that followed the last occurrence of the previous
    /// instruction.
    next: NextInstruction,
    /// The fine, coarse and match bytes' inputs and final APMs.
    head: ExpectedHead,
}

impl X86v42Contexts {
    /// A decoder at an instruction boundary.
    pub fn new() -> Self {
        X86v42Contexts {
            dec: X86v4Contexts::new(),
            elf: ElfLayout::default(),
            cur: 0,
            ins: 0,
            prev: 0,
            next: NextInstruction::new(),
            head: ExpectedHead::new(),
        }
    }

    /// The fine and coarse field contexts of the next code byte.
    fn keys(&self) -> (u32, u32) {
        let d = &self.dec;
        let role = d.role();
        let slot = d.operand_slot();
        let pre = d.prefix_state();
        let so_far = d.operand_so_far(self.cur);
        let base = || {
            let b = if d.sib & 0x100 != 0 {
                d.sib & 7
            } else {
                d.modrm & 7
            };
            (d.rex & 1) << 3 | b
        };
        match role {
            OPCODE | 1 | 2 => (
                hash2(hash2(0x9100 | role, self.prev), self.ins),
                hash2(hash2(0x9110 | role, d.prev_op), self.ins),
            ),
            MODRM => (
                hash2(0x9120 | d.opcode << 16, pre << 13 | d.prev_op),
                hash2(0x9130, d.opcode << 12 | pre),
            ),
            SIB => (
                hash2(0x9140 | d.opcode << 16, d.modrm | (d.rex & 7) << 9),
                hash2(0x9150, d.modrm),
            ),
            DISP => (
                hash2(
                    hash2(
                        0x9160 | base() << 16,
                        (d.modrm & 0xF8) << 4 | (d.rex & 4) << 12 | slot,
                    ),
                    so_far,
                ),
                hash2(
                    hash2(0x9170 | base() << 16, (d.modrm & 0xC0) << 4 | slot),
                    so_far,
                ),
            ),
            _ => (
                hash2(
                    hash2(0x9180 | d.opcode << 16, pre << 9 | (d.modrm & 0x1FF)),
                    so_far ^ slot << 24,
                ),
                hash2(hash2(0x9190 | d.opcode << 16, slot), so_far),
            ),
        }
    }
}

impl ContextModel for X86v42Contexts {
    fn contexts(&self) -> usize {
        0
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, _out: &mut [u32]) {}

    fn bit_inputs(&self) -> usize {
        3
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let pos = ctx.pos;
        let c4 = ctx.c4();
        let known = |p: usize| ExpectedHead::known(ctx, p);
        let (fine, coarse, em, role, sub) = if self.elf.is_data(pos) {
            // Data: the last byte after the same three and two bytes, and
            // the byte four back (4-byte tables).
            (
                hash2(0x9600, c4 & 0xFF_FFFF),
                hash2(0x9610, c4 & 0xFFFF),
                pos.checked_sub(4).map_or(0, known),
                7,
                (pos as u32 & 3) << 4 | (c4 & 0xFF) >> 4,
            )
        } else {
            let (fine, coarse) = self.keys();
            let idx = usize::from(self.dec.index).min(15);
            let em = self.next.at(idx).map_or(0, known);
            let d = &self.dec;
            let role = d.role().min(6);
            let sub = match role {
                OPCODE | 1 | 2 => u32::from(d.index).min(3) << 4 | d.prefix_state() & 0xF,
                MODRM | SIB => hash2(0x9200, d.opcode) >> 26,
                _ => hash2(0x9220 | d.operand_slot() << 12, d.opcode) >> 26,
            };
            (fine, coarse, em, role, sub)
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
        self.elf.observe(data, pos);
        self.head.learn(byte);
        let role = self.dec.role();
        let slot = self.dec.operand_slot();
        if (role == DISP || role == IMM)
            && X86v4Contexts::add_operand_byte(&mut self.cur, slot, byte)
        {
            self.cur = 0;
        }
        self.next
            .observe(data, pos, usize::from(self.dec.index), byte);
        self.dec.step(byte);
        self.ins = hash2(self.ins, u32::from(byte) | 0x9400);
        if self.dec.index == 0 {
            self.prev = self.ins;
            self.next.end(hash2(self.ins, 0x9500), pos);
            self.ins = 0;
            self.cur = 0;
        }
        if self.elf.code_starts(pos + 1) {
            self.dec = X86v4Contexts::new();
        }
    }
}
