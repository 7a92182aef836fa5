//! x86 / x86-64 ELF contexts of CM revision 30 (doc/FORMAT.md 4.41.2): a
//! fourth family installed after revision 16's
//! ([`X86v16Contexts`](super::x86_16)) for an x86 ELF block. Like the
//! earlier x86 families it follows the bytes with its own instruction
//! decoder ([`X86v4Contexts`], restarted where the ELF program headers put
//! an executable segment, [`ElfLayout`]) and gives its contexts one meaning
//! in the code and another in the data (outside every executable segment).
//! After public descriptions of x86 models in context-mixing compressors
//! (no code taken), in the code:
//!
//! - the last operand (displacement or immediate) of the same instruction
//!   form (opcode, prefix state, ModRM, operand kind and size): its byte at
//!   the current operand slot, and whether its lower bytes agree with the
//!   bytes so far;
//! - the last displacement off the same base register (SIB base or ModRM
//!   rm, REX.B included) with the same ModRM mod and size, likewise;
//! - the two previous instructions (opcode, prefix state, whole ModRM) with
//!   the current instruction's bytes so far;
//! - an instruction-aligned match: the instruction that followed the last
//!   occurrence of the previous instruction (all its bytes, operands
//!   included), its byte at the current index while the current
//!   instruction's bytes agree with it;
//! - the register the previous instruction's ModRM reg field named, and
//!   the registers (reg and rm) of the last two instructions, with the
//!   opcode, the current instruction so far or the operand so far.
//!
//! In the data: tables of 4-byte entries (the jump tables of `.rodata`):
//! the byte 4 back at the same column with the last byte, and the bytes 4
//! and 8 back.
//!
//! Every context is declared in [`X86v30Contexts::hashes`].

use super::elf7::ElfLayout;
use super::x86_4::{DISP, IMM, MODRM, X86v4Contexts};
use super::{ByteCtx, ContextModel, hash2};

/// Contexts of the family.
const CONTEXTS: usize = 6;

/// Entries of each last-operand table (u32 each).
const TABLE_BITS: u32 = 14;
/// Entries of the instruction-start table (u32 each).
pub(crate) const NEXT_BITS: u32 = 16;
/// No register (a register field is 0 to 15).
const NO_REG: u32 = 16;

/// Bytes of memory the family adds, over a bound: two last-operand tables,
/// the instruction-start table, a state map (1 KiB) per context and its own
/// state.
pub(crate) const MEMORY: u64 =
    2 * (4 << TABLE_BITS) + (4 << NEXT_BITS) + CONTEXTS as u64 * 1024 + 1024;

/// The revision-30 x86 family.
#[derive(Debug, Clone)]
pub(crate) struct X86v30Contexts {
    dec: X86v4Contexts,
    elf: ElfLayout,
    /// The bytes of the current operand so far.
    cur: u32,
    /// Hash of the current instruction's bytes so far.
    ins: u32,
    /// The previous instruction (a hash of its opcode, prefix state and
    /// ModRM), and the one before.
    prev: u32,
    prev2: u32,
    /// The register the previous instruction's ModRM reg field named (REX.R
    /// included; [`NO_REG`]: no ModRM).
    prev_reg: u32,
    /// The reg fields of the last two instructions (5 bits each, the newest
    /// lowest).
    regs: u32,
    /// The reg and rm fields of the last two instructions with a ModRM (5
    /// bits each, the newest lowest).
    regs4: u32,
    /// The instruction that followed the last occurrence of the previous
    /// instruction.
    next: NextInstruction,
    /// The last operand of each instruction form, and the last displacement
    /// of each base register.
    last_form: Vec<u32>,
    last_base: Vec<u32>,
}

impl X86v30Contexts {
    /// A decoder at an instruction boundary.
    pub fn new() -> Self {
        X86v30Contexts {
            dec: X86v4Contexts::new(),
            elf: ElfLayout::default(),
            cur: 0,
            ins: 0,
            prev: 0,
            prev2: 0,
            prev_reg: NO_REG,
            regs: NO_REG << 5 | NO_REG,
            regs4: 0,
            next: NextInstruction::new(),
            last_form: vec![0; 1 << TABLE_BITS],
            last_base: vec![0; 1 << TABLE_BITS],
        }
    }

    /// The current operand's bytes so far.
    fn so_far(&self) -> u32 {
        self.dec.operand_so_far(self.cur)
    }

    /// The last-operand table slot of the current instruction form.
    fn form_slot(&self) -> usize {
        let d = &self.dec;
        let key = d.opcode << 20 | d.prefix_state() << 9 | d.modrm;
        (hash2(key, d.role() << 8 | d.operand_slot() >> 4) >> (32 - TABLE_BITS)) as usize
    }

    /// The last-displacement table slot of the current base register (the
    /// SIB base or ModRM rm, with REX.B), ModRM mod and displacement size.
    fn base_slot(&self) -> usize {
        let d = &self.dec;
        let base = if d.sib & 0x100 != 0 {
            d.sib & 7
        } else {
            d.modrm & 7
        };
        let key = (d.rex & 1) << 3 | base | (d.modrm & 0xC0) << 4 | u32::from(d.disp_size) << 12;
        (hash2(0x7300, key) >> (32 - TABLE_BITS)) as usize
    }

    /// The byte a remembered operand `last` predicts at the current slot,
    /// with 0x100 set when its lower bytes agree with the bytes so far.
    fn expect(&self, last: u32) -> u32 {
        let j = self.dec.operand_slot() & 0xF;
        if j >= 4 {
            return 0x200;
        }
        let mask = if j == 0 { 0 } else { (1u32 << (8 * j)) - 1 };
        let agrees = u32::from(last & mask == self.so_far());
        agrees << 8 | (last >> (8 * j) & 0xFF)
    }
}

impl ContextModel for X86v30Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let (c4, pos) = (ctx.c4(), ctx.pos);
        if self.elf.is_data(pos) {
            // Tables of 4-byte entries: the same column of the two entries
            // before.
            let back = |k: usize| -> u32 {
                match pos.checked_sub(k) {
                    Some(p) if ctx.vis.known(p) => u32::from(ctx.data[p]),
                    _ => 0x100,
                }
            };
            let col = pos as u32 & 3;
            out[0] = hash2(0x7103 | col << 8, back(4) << 9 | c4 & 0xFF);
            out[1] = hash2(0x7104 | col << 8, back(4) << 9 | back(8));
            out[2] = 0x7105;
            out[3] = 0x7106;
            out[4] = 0x7107;
            out[5] = 0x7108;
        } else {
            let d = &self.dec;
            let role = d.role();
            let slot = d.operand_slot();
            let pre = d.prefix_state();
            // The same form's last operand; for a ModRM the register the
            // previous instruction named; else the previous instruction.
            out[0] = match role {
                DISP | IMM => {
                    let e = self.expect(self.last_form[self.form_slot()]);
                    hash2(0x7210 | e << 16, d.opcode << 8 | slot)
                }
                MODRM => hash2(0x7220 | self.prev_reg << 8, d.opcode << 12 | pre),
                _ => hash2(hash2(0x7230, self.prev), self.ins),
            };
            // The same base register's last displacement; the immediate so
            // far with the previous instruction; the opcode with the
            // previous register.
            out[1] = match role {
                DISP => {
                    let e = self.expect(self.last_base[self.base_slot()]);
                    hash2(
                        0x7240 | e << 16,
                        (d.rex & 1) << 12 | d.sib << 4 | (d.modrm & 0xC7),
                    ) ^ slot
                }
                IMM => hash2(
                    hash2(0x7250, d.opcode << 12 | slot),
                    self.prev ^ self.so_far(),
                ),
                _ => hash2(hash2(0x7260 | role, d.opcode << 12 | pre), self.prev_reg),
            };
            // The two previous instructions with the current one so far.
            out[2] = hash2(hash2(0x7270, self.prev), hash2(self.prev2, self.ins));
            // The instruction that followed the last occurrence of the
            // previous instruction: its byte at the current index while the
            // bytes so far agree.
            let idx = u32::from(d.index).min(15);
            let pred = match self.next.at(idx as usize) {
                Some(at) if at < pos && ctx.vis.known(at) => u32::from(ctx.data[at]),
                _ => 0x100,
            };
            out[3] = hash2(0x72C0 | idx << 8, pred << 4 | role);
            // Operands with the previous register and the ModRM; a ModRM
            // with the previous instruction; an opcode with the last two
            // instructions' reg fields.
            out[4] = match role {
                DISP | IMM => hash2(
                    hash2(0x7290 | self.prev_reg << 8, d.opcode << 12 | slot),
                    self.so_far() ^ d.modrm << 20,
                ),
                MODRM => hash2(hash2(0x72A0, d.opcode << 12 | pre), self.prev),
                _ => hash2(hash2(0x72B0, self.regs), self.ins),
            };
            // The registers (reg and rm) of the last two instructions.
            out[5] = match role {
                MODRM => hash2(hash2(0x72D0, d.opcode << 12 | pre), self.regs4),
                DISP | IMM => hash2(
                    hash2(0x72E0, d.opcode << 12 | slot),
                    self.so_far() ^ self.prev2,
                ),
                _ => hash2(hash2(0x72F0, self.regs4), self.ins),
            };
        }
        for (h, k) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0x7E00 + k);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.elf.observe(data, pos);
        let role = self.dec.role();
        let slot = self.dec.operand_slot();
        if (role == DISP || role == IMM)
            && X86v4Contexts::add_operand_byte(&mut self.cur, slot, byte)
        {
            let s = self.form_slot();
            self.last_form[s] = self.cur;
            if role == DISP {
                let s = self.base_slot();
                self.last_base[s] = self.cur;
            }
            self.cur = 0;
        }
        let (prefix, rex, modrm) = (self.dec.prefix_state(), self.dec.rex, self.dec.modrm);
        let modrm = if role == MODRM {
            0x100 | u32::from(byte)
        } else {
            modrm
        };
        let op = self.dec.opcode;
        self.next
            .observe(data, pos, usize::from(self.dec.index), byte);
        self.dec.step(byte);
        self.ins = hash2(self.ins, u32::from(byte) | 0x7400);
        if self.dec.index == 0 {
            self.prev2 = self.prev;
            self.prev = hash2(op << 11 | prefix, modrm);
            self.prev_reg = if modrm & 0x100 != 0 {
                (rex >> 2 & 1) << 3 | (modrm >> 3 & 7)
            } else {
                NO_REG
            };
            self.regs = (self.regs << 5 | self.prev_reg) & 0x3FF;
            if modrm & 0x100 != 0 {
                let rm = (rex & 1) << 3 | (modrm & 7);
                self.regs4 = (self.regs4 << 10 | self.prev_reg << 5 | rm) & 0xF_FFFF;
            }
            // The next instruction starts at `pos + 1`: remember it under
            // this instruction and look up what followed it last time.
            self.next.end(hash2(self.ins, 0x7500), pos);
            self.ins = 0;
            self.cur = 0;
        }
        if self.elf.code_starts(pos + 1) {
            self.dec = X86v4Contexts::new();
        }
    }
}

/// Revision 30's match on whole instructions (revision 42's x86 family
/// keeps one too): where the instruction that followed the last occurrence
/// of the previous instruction began, and whether the current
/// instruction's bytes agree with it so far.
#[derive(Debug, Clone)]
pub(crate) struct NextInstruction {
    /// The candidate's start (a block position; 0: none).
    cand: u32,
    /// The current instruction's bytes so far agree with the candidate's.
    agree: bool,
    /// Instruction starts keyed by the hash of the instruction before.
    next_of: Vec<u32>,
}

impl NextInstruction {
    /// No candidate, an empty table of `2^NEXT_BITS` starts.
    pub(crate) fn new() -> Self {
        NextInstruction {
            cand: 0,
            agree: false,
            next_of: vec![0; 1 << NEXT_BITS],
        }
    }

    /// Where the candidate's byte at `index` of the instruction is, while
    /// the current instruction's bytes so far agree with it.
    pub(crate) fn at(&self, index: usize) -> Option<usize> {
        (self.cand != 0 && self.agree).then(|| self.cand as usize + index)
    }

    /// Checks `byte`, coded at `pos` as byte `index` of the current
    /// instruction, against the candidate's.
    pub(crate) fn observe(&mut self, data: &[u8], pos: usize, index: usize, byte: u8) {
        if let Some(at) = self.at(index) {
            self.agree = at < pos && at < data.len() && data[at] == byte;
        }
    }

    /// An instruction with hash `key` ended at `pos`: the next one starts
    /// at `pos + 1`. Remembers that under `key` and takes the instruction
    /// that followed `key` last time as the candidate.
    pub(crate) fn end(&mut self, key: u32, pos: usize) {
        let k = (key >> (32 - NEXT_BITS)) as usize;
        self.cand = self.next_of[k];
        self.agree = true;
        self.next_of[k] = (pos + 1) as u32;
    }
}
