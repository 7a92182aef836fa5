//! x86 / x86-64 ELF contexts of CM revision 32 (doc/FORMAT.md 4.43.2): a
//! fifth family installed after revision 30's
//! ([`X86v30Contexts`](super::x86_30)) for an x86 ELF block. Like the
//! earlier x86 families it follows the bytes with its own instruction
//! decoder ([`X86v4Contexts`], restarted where the ELF program headers put
//! an executable segment, [`ElfLayout`]); its contexts are all in the code
//! (outside every executable segment they are constants). After public
//! descriptions of x86 models in context-mixing compressors (no code
//! taken):
//!
//! - branch targets: a short or near branch (70-7F, E0-E3, EB, 0F 80-8F,
//!   rel8 or rel32) or a jump (E9, absolute after the E8/E9 transform)
//!   often goes where a recent branch went (several exits to one label):
//!   the bytes of the operand that would reach the last target, the
//!   nearest recent target ahead of the instruction and the nearest behind
//!   it; likewise the last three call targets for a call (E8);
//! - rip-relative displacements: the bytes that would reach the last two
//!   rip-relative targets and the highest one so far;
//! - other displacements: the last one off the same base register with the
//!   same ModRM reg and mod (a register spilled and reloaded);
//! - register dataflow: the registers the last instructions wrote and read
//!   (by the opcode's direction, REX included, registers in the opcode
//!   byte too) with the opcode for a ModRM, with the previous opcodes for
//!   an opcode, with the opcode and ModRM reg for an immediate;
//! - the ModRM of the last instruction with the same opcode after the same
//!   previous opcode;
//! - at an opcode, whether the instruction starts where a recent branch or
//!   call went.
//!
//! Every context is declared in [`X86v32Contexts::hashes`].

use super::elf7::ElfLayout;
use super::x86_4::{DISP, IMM, MODRM, OPCODE, X86v4Contexts};
use super::{ByteCtx, ContextModel, hash2, move_to_front};

/// Contexts of the family.
const CONTEXTS: usize = 4;

/// Branch targets remembered.
const TARGETS: usize = 16;
/// Entries of the ModRM-per-opcode-pair table and of the displacement
/// table.
const PAIR_BITS: u32 = 12;
/// No register (a register number is 0 to 15).
const NO_REG: u32 = 16;

/// Bytes of memory the family adds, over a bound: the ModRM-per-pair
/// table (u16 each), the displacement table (u32 each), a state map
/// (1 KiB) per context and its own state.
pub(crate) const MEMORY: u64 = (6 << PAIR_BITS) + CONTEXTS as u64 * 1024 + 1024;

/// The revision-32 x86 family.
#[derive(Debug, Clone)]
pub(crate) struct X86v32Contexts {
    dec: X86v4Contexts,
    elf: ElfLayout,
    /// The bytes of the current operand so far (little-endian).
    cur: u32,
    /// Recent branch targets (block positions), the newest first.
    targets: [u32; TARGETS],
    /// The last two rip-relative targets (block positions, end of the
    /// instruction plus the displacement), the newest first.
    rip: [u32; 2],
    /// The registers the last two instructions that wrote one wrote (the
    /// newest lowest, 5 bits each), and the register the last instruction
    /// that read one read.
    written: u32,
    read: u32,
    /// The last ModRM (0x100 | byte) per hashed (opcode, previous opcode).
    pair_modrm: Vec<u16>,
    /// Recent call targets, the newest first.
    calls: [u32; 3],
    /// The highest rip-relative target so far.
    frontier: u32,
    /// The last displacement per hashed (base, ModRM reg, mod).
    spill: Vec<u32>,
}

/// Whether `op` (the decoder's opcode) is a branch with a relative operand
/// (rel8: 70-7F, E0-E3, EB; rel32: 0F 80-8F).
fn relative_branch(op: u32) -> bool {
    matches!(op, 0x70..=0x7F | 0xE0..=0xE3 | 0xEB | 0x180..=0x18F)
}

/// The registers (0-15, or [`NO_REG`]) an instruction writes and reads, from
/// its opcode, REX byte, ModRM and SIB (0x100 | byte, or 0): a rough
/// dataflow of the common integer instructions.
fn dataflow(op: u32, rex: u32, modrm: u32, sib: u32) -> (u32, u32) {
    let b = (rex & 1) << 3;
    match op {
        // push r / pop r / xchg eax, r / mov r, imm / bswap r.
        0x50..=0x57 => return (NO_REG, b | op & 7),
        0x58..=0x5F | 0x91..=0x97 | 0xB0..=0xBF | 0x1C8..=0x1CF => return (b | op & 7, NO_REG),
        _ => {}
    }
    if modrm & 0x100 == 0 {
        return (NO_REG, NO_REG);
    }
    let reg = (rex >> 2 & 1) << 3 | (modrm >> 3 & 7);
    let direct = modrm >> 6 & 3 == 3;
    let rm = if direct {
        b | modrm & 7
    } else if sib & 0x100 != 0 {
        b | sib & 7
    } else {
        b | modrm & 7
    };
    let rm_dest = if direct { rm } else { NO_REG };
    match op {
        // cmp, test: read both.
        0x38 | 0x39 | 0x3A | 0x3B | 0x84 | 0x85 => (NO_REG, reg),
        // ALU r/m, r and mov r/m, r: the r/m written, reg read.
        0x00..=0x3F if op & 6 == 0 => (rm_dest, reg),
        0x88 | 0x89 => (rm_dest, reg),
        // ALU r, r/m; mov, lea, movsxd, movzx/movsx, cmov, imul: reg
        // written, r/m (or the base) read.
        0x00..=0x3F if op & 6 == 2 => (reg, rm),
        0x8A
        | 0x8B
        | 0x8D
        | 0x63
        | 0x69
        | 0x6B
        | 0x1B6
        | 0x1B7
        | 0x1BE
        | 0x1BF
        | 0x1AF
        | 0x140..=0x14F => (reg, rm),
        // Groups on r/m (ALU imm, shifts, mov imm, not/neg, inc/dec).
        0x80..=0x83 | 0xC0 | 0xC1 | 0xD0..=0xD3 | 0xC6 | 0xC7 | 0xF6 | 0xF7 | 0xFE | 0xFF => {
            (rm_dest, rm)
        }
        _ => (NO_REG, rm),
    }
}

impl X86v32Contexts {
    /// A decoder at an instruction boundary.
    pub fn new() -> Self {
        X86v32Contexts {
            dec: X86v4Contexts::new(),
            elf: ElfLayout::default(),
            cur: 0,
            targets: [0; TARGETS],
            rip: [0; 2],
            written: NO_REG << 5 | NO_REG,
            read: NO_REG,
            pair_modrm: vec![0; 1 << PAIR_BITS],
            calls: [0; 3],
            frontier: 0,
            spill: vec![0; 1 << PAIR_BITS],
        }
    }

    /// Whether the next operand bytes are a rip-relative displacement of 4
    /// bytes (ModRM mod 0, rm 5, no SIB).
    fn rip_relative(&self) -> bool {
        let d = &self.dec;
        d.role() == DISP && d.modrm & 0x1C7 == 0x105 && d.sib == 0 && d.disp_size == 4
    }

    /// The branch kind of the next operand bytes: 1 a relative branch, 2 an
    /// E9 jump (absolute after the transform), 0 none.
    fn branch(&self) -> u32 {
        let d = &self.dec;
        if d.role() != IMM {
            0
        } else if relative_branch(d.opcode) {
            1
        } else if d.opcode == 0xE9 && d.imm_size == 4 {
            2
        } else {
            0
        }
    }

    /// The operand of a branch to `target` for the current instruction
    /// ending at `end` (kind as [`Self::branch`]; for a rip-relative
    /// displacement kind 1), or `None` when a short operand cannot reach.
    fn operand_for(&self, kind: u32, target: u32, end: u32) -> Option<u32> {
        if target == 0 {
            return None;
        }
        if kind == 2 {
            return Some(target);
        }
        let v = target.wrapping_sub(end);
        let size = self.dec.operand_slot() >> 4;
        if size == 1 && v.wrapping_add(128) >= 256 {
            return None;
        }
        Some(v)
    }

    /// The byte operand `v` has at the current slot, with 0x100 set when its
    /// lower bytes agree with the bytes so far; 0x200 for none.
    fn expect(&self, v: Option<u32>) -> u32 {
        let j = self.dec.operand_slot() & 0xF;
        let Some(v) = v else { return 0x200 };
        if j >= 4 {
            return 0x200;
        }
        let mask = if j == 0 { 0 } else { (1u32 << (8 * j)) - 1 };
        let agrees = u32::from(v & mask == self.dec.operand_so_far(self.cur));
        agrees << 8 | (v >> (8 * j) & 0xFF)
    }

    /// The nearest remembered branch target at or after `end`.
    fn ahead(&self, end: u32) -> u32 {
        let mut best = 0;
        for &t in &self.targets {
            if t != 0 && t >= end && (best == 0 || t < best) {
                best = t;
            }
        }
        best
    }

    /// The spill table slot of the current displacement: base register
    /// (SIB base or ModRM rm, REX.B), ModRM reg (REX.R) and mod.
    fn spill_slot(&self) -> usize {
        let d = &self.dec;
        let base = if d.sib & 0x100 != 0 {
            d.sib & 7
        } else {
            d.modrm & 7
        };
        let key = (d.rex & 5) << 8 | base | (d.modrm & 0xF8) << 4;
        (hash2(0x8400, key) >> (32 - PAIR_BITS)) as usize
    }

    /// The ModRM-per-pair table slot of the current opcode after the
    /// previous one.
    fn pair_slot(&self) -> usize {
        let d = &self.dec;
        (hash2(0x8300 | d.opcode << 16, d.prev_op) >> (32 - PAIR_BITS)) as usize
    }
}

impl ContextModel for X86v32Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let pos = ctx.pos;
        if self.elf.is_data(pos) {
            for (h, k) in out.iter_mut().zip(0u32..) {
                *h = 0x8100 + k;
            }
        } else {
            let d = &self.dec;
            let role = d.role();
            let slot = d.operand_slot();
            let op = d.opcode;
            let pre = d.prefix_state();
            let (w1, w2) = (self.written & 31, self.written >> 5);
            let kind = self.branch();
            if kind != 0 {
                // Branch operands: the last target, the nearest target
                // ahead, the two before the last.
                let end = self.dec.instruction_end(pos);
                let e = |t: u32| self.expect(self.operand_for(kind, t, end));
                let key = (op & 0xFF) << 8 | kind << 6 | slot;
                out[0] = hash2(0x8210 | e(self.targets[0]) << 16, key);
                out[1] = hash2(0x8220 | e(self.ahead(end)) << 16, key);
                out[2] = {
                    let mut b = 0;
                    for &t in &self.targets {
                        if t != 0 && t < end && t > b {
                            b = t;
                        }
                    }
                    hash2(0x8230 | e(b) << 16, key | e(self.targets[1]) << 20)
                };
                out[3] = hash2(
                    hash2(0x8240, key),
                    e(self.targets[0]) << 12 | e(self.ahead(end)),
                );
            } else if role == IMM && op == 0xE8 && d.imm_size == 4 {
                // Call targets: the last three.
                let e = |t: u32| self.expect(self.operand_for(2, t, 0));
                out[0] = hash2(0x8290 | e(self.calls[0]) << 16, slot);
                out[1] = hash2(0x82A0 | e(self.calls[1]) << 16, slot);
                out[2] = hash2(0x82B0 | e(self.calls[2]) << 16, slot);
                out[3] = hash2(
                    0x82C0 | e(self.calls[0]) << 16,
                    e(self.calls[1]) << 8 | slot,
                );
            } else if role == DISP && !self.rip_relative() {
                // Other displacements: the last one off the same base with
                // the same ModRM reg and mod.
                let v = self.spill[self.spill_slot()];
                let e = self.expect(if v == 0 { None } else { Some(v) });
                out[0] = hash2(0x82D0 | e << 16, slot);
                out[1] = hash2(0x82E0 | e << 16, op << 12 | (d.modrm & 0xFF) << 4 | slot);
                out[2] = 0x82F0;
                out[3] = 0x82F1;
            } else if self.rip_relative() {
                // Rip-relative targets: the last two, the highest so far.
                let end = self.dec.instruction_end(pos);
                let e = |t: u32| self.expect(self.operand_for(1, t, end));
                let key = op << 12 | (d.modrm >> 3 & 7) << 8 | slot;
                out[0] = hash2(0x8250 | e(self.rip[0]) << 16, key);
                out[1] = hash2(0x8260 | e(self.rip[1]) << 16, slot);
                out[2] = hash2(0x8270 | e(self.rip[0]) << 16, e(self.rip[1]) << 8 | slot);
                out[3] = hash2(0x8280 | e(self.frontier) << 16, slot | (op & 0xFF) << 8);
            } else if role == IMM {
                let reg = d.modrm >> 3 & 7;
                let so_far = self.dec.operand_so_far(self.cur);
                out[0] = hash2(hash2(0x82F8, op << 12 | reg << 8 | slot), w1 | so_far << 8);
                out[1] = 0x82F9;
                out[2] = 0x82FA;
                out[3] = 0x82FB;
            } else {
                match role {
                    MODRM => {
                        let last = u32::from(self.pair_modrm[self.pair_slot()]);
                        out[0] = hash2(hash2(0x8310, op << 12 | pre), w1 | w2 << 5);
                        out[1] = hash2(
                            hash2(0x8320, op << 12 | pre),
                            w1 | self.read << 5 | (d.prev_op & 0x1FFF) << 10,
                        );
                        out[2] = hash2(0x8330 | last << 16, op << 12 | pre);
                        out[3] = 0x8341;
                    }
                    OPCODE => {
                        out[0] = hash2(hash2(0x8380, d.prev_op), w1 | self.read << 5 | pre << 10);
                        out[1] = hash2(hash2(0x8390, d.prev_op << 13 | d.prev2_op), self.written);
                        out[2] = 0x8391;
                        let start = (pos as u32).wrapping_sub(u32::from(d.index));
                        let flags = u32::from(self.targets.contains(&start))
                            | u32::from(self.calls.contains(&start)) << 1;
                        out[3] = hash2(hash2(0x8392, d.prev_op), flags | pre << 4);
                    }
                    _ => {
                        for (h, k) in out.iter_mut().zip(0u32..) {
                            *h = 0x83A0 + (role << 4) + k;
                        }
                    }
                }
            }
        }
        for (h, k) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0x8E00 + k);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.elf.observe(data, pos);
        let role = self.dec.role();
        let slot = self.dec.operand_slot();
        if role == MODRM {
            let s = self.pair_slot();
            self.pair_modrm[s] = 0x100 | u16::from(byte);
        }
        if role == DISP || role == IMM {
            let size = slot >> 4;
            if X86v4Contexts::add_operand_byte(&mut self.cur, slot, byte) {
                let end = (pos as u32).wrapping_add(1);
                let kind = self.branch();
                let target = if kind == 1 {
                    let v = if size == 1 {
                        self.cur as u8 as i8 as u32
                    } else {
                        self.cur
                    };
                    Some(end.wrapping_add(v))
                } else if kind == 2 {
                    Some(self.cur)
                } else {
                    None
                };
                if role == DISP && self.rip_relative() {
                    let t = self.dec.instruction_end(pos).wrapping_add(self.cur);
                    self.rip = [t, self.rip[0]];
                    if t > self.frontier && t < 1 << 30 {
                        self.frontier = t;
                    }
                } else if role == DISP {
                    let s = self.spill_slot();
                    self.spill[s] = self.cur;
                }
                if role == IMM && self.dec.opcode == 0xE8 && size == 4 {
                    move_to_front(&mut self.calls, self.cur);
                }
                if let Some(t) = target {
                    move_to_front(&mut self.targets, t);
                }
                self.cur = 0;
            }
        }
        let (rex, modrm, sib) = self.dec.step_fields(byte);
        if self.dec.index == 0 {
            self.cur = 0;
            let op = self.dec.prev_op & 0x3FF;
            let (w, r) = dataflow(op, rex, modrm, sib);
            if w != NO_REG {
                self.written = (self.written << 5 | w) & 0x3FF;
            }
            if r != NO_REG {
                self.read = r;
            }
        }
        if self.elf.code_starts(pos + 1) {
            self.dec = X86v4Contexts::new();
        }
    }
}
