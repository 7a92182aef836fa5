//! x86 / x86-64 code contexts of CM revision 14 (doc/FORMAT.md 4.25.2): a
//! family installed after revision 10's ([`X86v10Contexts`](super::x86_10))
//! for an x86 ELF block. It follows the bytes with its own instruction
//! decoder ([`X86v4Contexts`], restarted where the ELF program headers put
//! an executable segment, [`ElfLayout`]) and adds contexts the earlier
//! families lack: the current instruction's bytes so far, alone and with
//! the opcode history, the two previous instructions' bytes or the
//! registers the last instructions named; operands per base and register;
//! and, outside the code, contexts within a C string.
//!
//! Every context is declared in [`X86v14Contexts::hashes`].

use super::elf7::ElfLayout;
use super::x86_4::{DISP, IMM, X86v4Contexts};
use super::{ByteCtx, ContextModel, hash2};

/// Contexts of the family.
const CONTEXTS: usize = 6;

/// Bytes of memory the family adds, over a bound: a state map (1 KiB) per
/// context and its own state (a few words).
pub(crate) const MEMORY: u64 = CONTEXTS as u64 * 1024 + 1024;

/// The revision-14 x86 family.
#[derive(Debug, Clone)]
pub(crate) struct X86v14Contexts {
    dec: X86v4Contexts,
    elf: ElfLayout,
    /// The registers the last instructions named (4 bits each, REX
    /// extension included, the newest lowest): the ModRM's reg field, then
    /// its rm field (or the SIB base).
    regs: u32,
    /// The bytes of the current operand so far.
    cur: u32,
    /// A hash of the current C string so far (data bytes) and its length.
    string: u32,
    string_len: u32,
    /// Hashes of the current instruction so far and of the two before.
    ins: u32,
    prev_ins: u32,
    prev2_ins: u32,
}

impl X86v14Contexts {
    /// A decoder at an instruction boundary.
    pub fn new() -> Self {
        X86v14Contexts {
            dec: X86v4Contexts::new(),
            elf: ElfLayout::default(),
            regs: 0,
            cur: 0,
            string: 0,
            string_len: 0,
            ins: 0,
            prev_ins: 0,
            prev2_ins: 0,
        }
    }

    /// The register numbers of the current ModRM: (reg, rm or SIB base),
    /// each with its REX bit.
    fn modrm_regs(&self) -> (u32, u32) {
        let d = &self.dec;
        regs_of(d.rex, d.modrm, d.sib)
    }

    /// The current operand's bytes so far.
    fn so_far(&self) -> u32 {
        let j = self.dec.operand_slot() & 0xF;
        if j >= 4 {
            self.cur
        } else {
            self.cur & ((1u32 << (8 * j)) - 1)
        }
    }
}

impl ContextModel for X86v14Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let (c4, pos) = (ctx.c4(), ctx.pos);
        if self.elf.is_data(pos) {
            let c1 = c4 & 0xFF;
            let n = self.string_len.min(15);
            out[0] = hash2(0x5100, self.string);
            out[1] = hash2(0x5101 | n << 8, c4 & 0xFFFF);
            out[2] = hash2(0x5102, (pos as u32 & 7) << 24 | c4 & 0xFF_FFFF);
            out[3] = hash2(0x5103, hash2(c4, ctx.c8() & 0xFFFF));
            out[4] = hash2(0x5104 | (pos as u32 & 3) << 8, c1 | n << 8);
            out[5] = hash2(0x5105, (pos as u32 & 7) << 8 | c1);
        } else {
            let d = &self.dec;
            let role = d.role();
            let idx = u32::from(d.index).min(15);
            let pre = d.prefix_state();
            let (op, modrm, _, prev) = d.instruction();
            let slot = d.operand_slot();
            let so_far = self.so_far();
            // The current instruction's bytes so far (`ins`) with the
            // opcode history, the two previous instructions' bytes, the
            // previous opcode, the last registers, and alone.
            out[0] = hash2(hash2(self.ins, prev << 13 | d.prev2_op), 0x5250);
            out[1] = hash2(hash2(self.ins, self.prev_ins), self.prev2_ins ^ idx);
            out[2] = hash2(hash2(self.ins, prev), 0x5230);
            out[3] = hash2(hash2(self.ins, self.regs & 0xFF), 0x5260);
            // Operands per base and register, per opcode; elsewhere the
            // previous opcode with the position in a 16-byte line.
            out[4] = match role {
                DISP => {
                    let (reg, rm) = self.modrm_regs();
                    hash2(
                        hash2(reg << 4 | rm, modrm >> 6 | slot << 2 | op << 12),
                        so_far,
                    )
                }
                IMM => hash2(hash2(op << 8 | slot, pre << 8 | prev), so_far),
                _ => hash2(prev << 8 | (pos as u32 & 15), c4 & 0xFF | role << 8),
            };
            out[5] = hash2(self.ins, 0x5220 | idx);
        }
        for (h, j) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0x5E00 + j);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.elf.observe(data, pos);
        if byte == 0 {
            self.string = 0;
            self.string_len = 0;
        } else {
            self.string = hash2(self.string, u32::from(byte) | 0x5300);
            self.string_len = self.string_len.saturating_add(1);
        }
        let role = self.dec.role();
        let slot = self.dec.operand_slot();
        if (role == DISP || role == IMM)
            && X86v4Contexts::add_operand_byte(&mut self.cur, slot, byte)
        {
            self.cur = 0;
        }
        let (rex, modrm, sib) = self.dec.step_fields(byte);
        self.ins = hash2(self.ins, u32::from(byte) | 0x5400);
        if self.dec.index == 0 {
            self.prev2_ins = self.prev_ins;
            self.prev_ins = self.ins;
            self.ins = 0;
            self.cur = 0;
            if modrm & 0x100 != 0 {
                let (reg, rm) = regs_of(rex, modrm, sib);
                self.regs = self.regs << 8 | rm << 4 | reg;
            }
        }
        if self.elf.code_starts(pos + 1) {
            self.dec = X86v4Contexts::new();
        }
    }
}

/// The register numbers a ModRM (and SIB) byte names, each with its REX
/// bit: (reg, rm or the SIB's base).
fn regs_of(rex: u32, modrm: u32, sib: u32) -> (u32, u32) {
    let reg = (rex >> 2 & 1) << 3 | (modrm >> 3 & 7);
    let rm = if sib & 0x100 != 0 { sib & 7 } else { modrm & 7 };
    (reg, (rex & 1) << 3 | rm)
}
