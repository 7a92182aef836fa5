//! x86 / x86-64 code contexts of CM revision 4 (doc/FORMAT.md 4.15.4), in
//! place of revision 1's [`X86Contexts`](super::x86::X86Contexts) for a
//! block that starts with an x86 ELF header.
//!
//! Like revision 1's family it follows the bytes with an instruction-length
//! decoder, but it keeps more of each instruction: the prefixes (66, 67,
//! F2/F3, REX and its W/R/X/B bits), the opcode (0F xx as 0x100 | xx, 0F 38 xx
//! and 0F 3A xx as 0x200 | xx), the ModRM fields (mod, reg, rm) and the SIB
//! byte, whether an operand byte is displacement or immediate, its index and
//! the operand's size, the two previous instructions' opcodes and the
//! previous ModRM, and the absolute target of the last call (after the E8/E9
//! transform of `sep-transform` the rel32 of a call holds an absolute
//! address). Its contexts and its mixer selector are all declared in
//! [`X86v4Contexts::hashes`] and [`X86v4Contexts::selector`]. Where the data
//! is not code the decoder is merely wrong, which costs compression, never
//! correctness.

use super::x86::{After0F, after_0f, disp_size, has_sib, imm1, modrm1, test_imm};
use super::{ByteCtx, ContextModel, hash2};

/// What the next byte is, for the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A prefix or the opcode.
    Opcode = 0,
    /// The byte after 0F.
    Opcode2 = 1,
    /// The byte after 0F 38 or 0F 3A.
    Opcode3 = 2,
    ModRm = 3,
    Sib = 4,
    /// Displacement bytes.
    Disp = 5,
    /// Immediate bytes.
    Imm = 6,
}

/// Role of a prefix or opcode byte ([`X86v4Contexts::role`] 0).
pub(crate) const OPCODE: u32 = Role::Opcode as u32;
/// Role of a ModRM byte ([`X86v4Contexts::role`] 3).
pub(crate) const MODRM: u32 = Role::ModRm as u32;
/// Role of a SIB byte ([`X86v4Contexts::role`] 4).
pub(crate) const SIB: u32 = Role::Sib as u32;
/// Role of a displacement byte ([`X86v4Contexts::role`] 5).
pub(crate) const DISP: u32 = Role::Disp as u32;
/// Role of an immediate byte ([`X86v4Contexts::role`] 6).
pub(crate) const IMM: u32 = Role::Imm as u32;

/// Prefix bits of [`X86v4Contexts::prefixes`].
const P66: u32 = 1;
const P67: u32 = 2;
const PF2: u32 = 4;
const PF3: u32 = 8;
const PSEG: u32 = 16;
const PLOCK: u32 = 32;

/// The revision-4 x86 family (8 contexts, a mixer selector of 7 * 64
/// byte contexts, the order-1 APM's byte).
#[derive(Debug, Clone)]
pub(crate) struct X86v4Contexts {
    role: Role,
    /// Displacement and immediate bytes left, and their sizes.
    pub(crate) disp_left: u8,
    pub(crate) imm_left: u8,
    pub(crate) disp_size: u8,
    pub(crate) imm_size: u8,
    /// Byte index of the next byte in the instruction.
    pub(crate) index: u8,
    /// Prefix bits (`P66`...) and the REX byte (0: none).
    pub(crate) prefixes: u32,
    pub(crate) rex: u32,
    /// The current instruction's opcode, ModRM (0x100 | byte once read) and
    /// SIB (likewise); the two previous instructions' opcodes (with their
    /// REX.W as bit 12) and the previous ModRM.
    pub(crate) opcode: u32,
    pub(crate) modrm: u32,
    pub(crate) sib: u32,
    pub(crate) prev_op: u32,
    pub(crate) prev2_op: u32,
    pub(crate) prev_modrm: u32,
    /// The operand bytes read so far (little-endian, the last 4), and the
    /// operand of the last E8 (call) instruction.
    pub(crate) operand: u32,
    pub(crate) last_call: u32,
}

impl X86v4Contexts {
    /// A decoder at an instruction boundary.
    pub fn new() -> Self {
        X86v4Contexts {
            role: Role::Opcode,
            disp_left: 0,
            imm_left: 0,
            disp_size: 0,
            imm_size: 0,
            index: 0,
            prefixes: 0,
            rex: 0,
            opcode: 0,
            modrm: 0,
            sib: 0,
            prev_op: 0,
            prev2_op: 0,
            prev_modrm: 0,
            operand: 0,
            last_call: 0,
        }
    }

    fn end_instruction(&mut self) {
        if self.opcode == 0xE8 && self.imm_size == 4 {
            self.last_call = self.operand;
        }
        self.role = Role::Opcode;
        self.index = 0;
        self.prev2_op = self.prev_op;
        self.prev_op = self.opcode | u32::from(self.rex & 8 != 0) << 12;
        self.prev_modrm = self.modrm;
        self.prefixes = 0;
        self.rex = 0;
        self.modrm = 0;
        self.sib = 0;
        self.disp_size = 0;
        self.imm_size = 0;
        self.disp_left = 0;
        self.imm_left = 0;
    }

    /// Starts the operand bytes: `disp` displacement bytes, then the
    /// immediate.
    fn operands(&mut self, disp: u8) {
        self.disp_size = disp;
        self.disp_left = disp;
        self.imm_left = self.imm_size;
        self.operand = 0;
        self.role = if disp > 0 {
            Role::Disp
        } else if self.imm_size > 0 {
            Role::Imm
        } else {
            self.end_instruction();
            Role::Opcode
        };
    }

    fn after_modrm(&mut self, m: u8) {
        self.modrm = 0x100 | u32::from(m);
        if has_sib(m) {
            self.role = Role::Sib;
            return;
        }
        self.operands(disp_size(m >> 6, m & 7));
    }

    /// Follows the decoder over byte `b` (as [`step`](Self::step)) and
    /// returns the REX, ModRM and SIB of the instruction `b` belongs to,
    /// `b` included (ModRM and SIB with a leading 1 once read), before the
    /// step can start the next instruction: what the x86 families of
    /// revisions 14 and 32 learn from at an instruction's end.
    pub(crate) fn step_fields(&mut self, b: u8) -> (u32, u32, u32) {
        let (rex, mut modrm, mut sib) = (self.rex, self.modrm, self.sib);
        match self.role {
            Role::ModRm => modrm = 0x100 | u32::from(b),
            Role::Sib => sib = 0x100 | u32::from(b),
            _ => {}
        }
        self.step(b);
        (rex, modrm, sib)
    }

    /// Follows the decoder over byte `b`.
    pub(crate) fn step(&mut self, b: u8) {
        self.index = self.index.saturating_add(1);
        let op16 = self.prefixes & P66 != 0;
        match self.role {
            Role::Opcode => match b {
                0x66 => self.prefixes |= P66,
                0x67 => self.prefixes |= P67,
                0xF2 => self.prefixes |= PF2,
                0xF3 => self.prefixes |= PF3,
                0xF0 => self.prefixes |= PLOCK,
                0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 => self.prefixes |= PSEG,
                0x40..=0x4F => self.rex = u32::from(b),
                0x0F => self.role = Role::Opcode2,
                _ => {
                    self.opcode = u32::from(b);
                    self.imm_size = imm1(b, op16, self.rex & 8 != 0);
                    if b == 0xF6 || b == 0xF7 {
                        // test r/m, imm: decided by the ModRM's reg field.
                        self.imm_size = 0;
                    }
                    if modrm1(b) {
                        self.role = Role::ModRm;
                    } else {
                        self.operands(0);
                    }
                }
            },
            Role::Opcode2 => {
                self.opcode = 0x100 | u32::from(b);
                let (next, imm) = after_0f(b);
                self.imm_size = imm;
                match next {
                    After0F::Opcode3 => self.role = Role::Opcode3,
                    After0F::Operands => self.operands(0),
                    After0F::ModRm => self.role = Role::ModRm,
                }
            }
            Role::Opcode3 => {
                self.opcode = 0x200 | u32::from(b);
                self.role = Role::ModRm;
            }
            Role::ModRm => {
                if let Some(imm) = test_imm(self.opcode, b, op16) {
                    self.imm_size = imm;
                }
                self.after_modrm(b);
            }
            Role::Sib => {
                self.sib = 0x100 | u32::from(b);
                self.operands(disp_size((self.modrm >> 6) as u8 & 3, b & 7));
            }
            Role::Disp => {
                self.operand = self.operand << 8 | u32::from(b);
                self.disp_left -= 1;
                if self.disp_left == 0 {
                    self.operand = 0;
                    if self.imm_left > 0 {
                        self.role = Role::Imm;
                    } else {
                        self.end_instruction();
                    }
                }
            }
            Role::Imm => {
                self.operand = self.operand >> 8 | u32::from(b) << 24;
                self.imm_left -= 1;
                if self.imm_left == 0 {
                    self.end_instruction();
                }
            }
        }
        if self.index > 15 {
            self.end_instruction();
        }
    }

    /// Prefix state: the prefix bits and the REX byte's low nibble
    /// (W, R, X, B), with bit 10 set when a REX prefix was seen.
    pub(crate) fn prefix_state(&self) -> u32 {
        self.prefixes | (self.rex & 0xF) << 6 | u32::from(self.rex != 0) << 10
    }

    /// What the next byte is: 0 a prefix or opcode, 1 and 2 the bytes after
    /// 0F and 0F 38/3A, 3 ModRM, 4 SIB, 5 displacement, 6 immediate.
    pub(crate) fn role(&self) -> u32 {
        self.role as u32
    }

    /// The current instruction's opcode, ModRM and SIB (each 0x100 | byte
    /// once read) and the previous instruction's opcode (REX.W as bit 12).
    pub(crate) fn instruction(&self) -> (u32, u32, u32, u32) {
        (self.opcode, self.modrm, self.sib, self.prev_op)
    }

    /// Index of the next operand byte within its displacement or immediate,
    /// with the operand's size: `size << 4 | index`.
    pub(crate) fn operand_slot(&self) -> u32 {
        match self.role {
            Role::Disp => {
                u32::from(self.disp_size) << 4 | u32::from(self.disp_size - self.disp_left)
            }
            Role::Imm => u32::from(self.imm_size) << 4 | u32::from(self.imm_size - self.imm_left),
            _ => 0,
        }
    }

    /// Adds the operand byte `byte` at `slot` ([`Self::operand_slot`]'s
    /// `size << 4 | index`) to the operand's value `cur` (little-endian, its
    /// first four bytes) and says whether it was the operand's last byte.
    pub(crate) fn add_operand_byte(cur: &mut u32, slot: u32, byte: u8) -> bool {
        let (size, j) = (slot >> 4, slot & 0xF);
        if j < 4 {
            *cur |= u32::from(byte) << (8 * j);
        }
        j + 1 >= size
    }

    /// The end of the current instruction (block position), for a byte of
    /// its displacement or immediate at `pos` (the x86 families of
    /// revisions 16 and 32 make operands absolute with it).
    pub(crate) fn instruction_end(&self, pos: usize) -> u32 {
        let j = self.operand_slot() & 0xF;
        let left = match self.role {
            Role::Disp => u32::from(self.disp_size) - j + u32::from(self.imm_left),
            _ => u32::from(self.imm_size) - j,
        };
        (pos as u32).wrapping_add(left)
    }

    /// The bytes of the current operand read so far, from `cur`, which
    /// holds them little-endian (its byte j in bits 8j..8j+8, as the x86
    /// families of revisions 16 and 30 keep it): its low j bytes, all of
    /// it from the fourth on.
    pub(crate) fn operand_so_far(&self, cur: u32) -> u32 {
        let j = self.operand_slot() & 0xF;
        if j >= 4 {
            cur
        } else {
            cur & ((1u32 << (8 * j)) - 1)
        }
    }
}

impl ContextModel for X86v4Contexts {
    fn contexts(&self) -> usize {
        8
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let role = self.role as u32;
        let c1 = ctx.c4() & 0xFF;
        let (op, prev, prev2) = (self.opcode, self.prev_op, self.prev2_op);
        let at_op = self.role == Role::Opcode;
        let pre = self.prefix_state();
        let idx = u32::from(self.index.min(15));
        let slot = self.operand_slot();
        let modrm = self.modrm;
        // ModRM fields: mod, reg, rm.
        let (md, reg, rm) = ((modrm >> 6) & 3, (modrm >> 3) & 7, modrm & 7);
        // Operand bytes so far, for the current operand only.
        let done = slot & 0xF;
        let so_far = if done == 0 {
            0
        } else if self.role == Role::Imm {
            self.operand >> (32 - 8 * done.min(4))
        } else {
            self.operand & ((1u64 << (8 * done.min(4))) - 1) as u32
        };
        // 0: the instruction so far (opcode, position, prefixes), or at an
        // opcode the two previous opcodes with the prefixes.
        out[0] = if at_op {
            hash2(prev << 13 | prev2, pre)
        } else {
            hash2(op << 8 | idx << 4 | role, pre | 0x800)
        };
        // 1: opcode, operand slot and the last byte.
        out[1] = hash2(role | 0x20, op << 16 | slot << 8 | c1);
        // 2: a call's or jump's operand: the bytes so far with the slot (the
        // high bytes of an absolute target); else the two opcodes.
        let rel = matches!(op, 0xE8 | 0xE9) && self.role == Role::Imm;
        out[2] = hash2(
            role | 0x40,
            if rel {
                slot << 24 | so_far & 0xFF_FFFF
            } else {
                prev << 10 | op
            },
        );
        // 3: prefix state (REX bits, 66, F2/F3, 0F maps) with the opcode.
        out[3] = hash2(role | 0x50, pre << 12 | op);
        // 4: the ModRM fields apart: by role, what the next byte depends on.
        out[4] = match self.role {
            Role::ModRm => hash2(
                0x60,
                op << 16 | prev_modrm_fields(self.prev_modrm) << 4 | pre >> 6,
            ),
            Role::Sib => hash2(0x61, op << 8 | md << 6 | reg << 3 | rm),
            Role::Disp => hash2(
                0x62,
                (op << 8 | md << 3 | rm) << 12 | (self.sib & 7) << 8 | slot,
            ),
            Role::Imm => hash2(0x63, (op << 3 | reg) << 8 | slot),
            _ => hash2(0x64 + role, prev << 9 | self.prev_modrm),
        };
        // 5: the operand bytes so far with the operand slot and opcode (and
        // reg for group opcodes); at an opcode, three instructions back.
        out[5] = if at_op {
            hash2(0x70, prev << 13 | prev2)
        } else if slot != 0 {
            hash2(0x71 | (op << 8), (slot << 3 | reg) << 24 ^ so_far)
        } else {
            hash2(0x72 | (op << 8), md << 6 | reg << 3 | rm)
        };
        // 6: the last call's target: its high bytes for the next call's
        // operand, all of it for what follows a call.
        out[6] = if rel {
            hash2(
                0x80 | slot << 8,
                (self.last_call >> 16) << 8 | so_far & 0xFF,
            )
        } else if at_op && prev == 0xE8 {
            hash2(0x81, self.last_call)
        } else {
            hash2(0x82 | role << 8, op << 8 | c1)
        };
        // 7: the role and operand slot alone.
        out[7] = hash2(role, slot);
        for (h, j) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0x4A00 + j);
        }
    }

    fn selector_size(&self) -> usize {
        7 * 64 * 8
    }

    fn apm_byte(&self, _ctx: &ByteCtx<'_>) -> Option<u32> {
        Some(match self.role {
            Role::Opcode => 0x80 | (self.prev_op & 0xFF) >> 1,
            _ => (self.role as u32) << 4 | self.operand_slot() & 0xF,
        })
    }

    fn selector(&self, _ctx: &ByteCtx<'_>) -> usize {
        let sub = match self.role {
            Role::Opcode => (self.prev_op & 0xFF) >> 2,
            Role::Opcode2 | Role::Opcode3 => u32::from(self.rex != 0) | (self.prefixes & 0xF) << 1,
            Role::ModRm => (self.opcode & 0xFF) >> 2,
            Role::Sib => (self.modrm >> 6) & 3,
            Role::Disp | Role::Imm => {
                let slot = self.operand_slot();
                (slot >> 4).min(7) << 3 | (slot & 7)
            }
        };
        self.role as usize * 64 + sub as usize
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        self.step(byte);
    }
}

/// The instruction part of every byte of `code` as revision 4's decoder
/// reads it (0 prefix or opcode, 1 and 2 the bytes after 0F and 0F 38/3A,
/// 3 ModRM, 4 SIB, 5 displacement, 6 immediate): for cost dumps.
pub fn x86_roles(code: &[u8]) -> Vec<u8> {
    let mut x = X86v4Contexts::new();
    code.iter()
        .map(|&b| {
            let r = x.role as u8;
            x.step(b);
            r
        })
        .collect()
}

/// The previous ModRM's mod and rm fields (what a repeated addressing mode
/// shares), or 0x3F when there was none.
fn prev_modrm_fields(m: u32) -> u32 {
    if m & 0x100 == 0 {
        0x3F
    } else {
        (m >> 6 & 3) << 3 | (m & 7)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(code: &[u8]) -> Vec<Role> {
        let mut x = X86v4Contexts::new();
        code.iter()
            .map(|&b| {
                let r = x.role;
                x.step(b);
                r
            })
            .collect()
    }

    #[test]
    fn decodes_displacements_and_immediates() {
        use Role::*;
        // call rel32; mov eax, [rbp-8]; add rsp, 16 (REX.W 83 /0 ib); ret
        let code = [
            0xE8, 1, 2, 3, 4, 0x8B, 0x45, 0xF8, 0x48, 0x83, 0xC4, 0x10, 0xC3, 0x90,
        ];
        assert_eq!(
            roles(&code),
            [
                Opcode, Imm, Imm, Imm, Imm, Opcode, ModRm, Disp, Opcode, Opcode, ModRm, Imm,
                Opcode, Opcode
            ]
        );
        // jne rel32 (0F 85); mov dword [rsp+4], imm32 (C7 44 24 04 ...)
        let code = [
            0x0F, 0x85, 0, 0, 0, 0, 0xC7, 0x44, 0x24, 0x04, 1, 2, 3, 4, 0x90,
        ];
        assert_eq!(
            roles(&code),
            [
                Opcode, Opcode2, Imm, Imm, Imm, Imm, Opcode, ModRm, Sib, Disp, Imm, Imm, Imm, Imm,
                Opcode
            ]
        );
    }

    #[test]
    fn keeps_prefixes_history_and_call_targets() {
        let mut x = X86v4Contexts::new();
        // REX.W 66? no: 66 48 89 C8 (mov ax-sized with REX.W), call 0x00401234
        for b in [0x66, 0x48] {
            x.step(b);
        }
        assert_eq!(x.prefix_state(), P66 | 8 << 6 | 1 << 10);
        for b in [0x89, 0xC8, 0xE8, 0x34, 0x12, 0x40, 0x00] {
            x.step(b);
        }
        assert_eq!(x.last_call, 0x0040_1234);
        assert_eq!(x.prev_op, 0xE8);
        assert_eq!(x.prev2_op, 0x89 | 1 << 12);
        assert_eq!(x.prefix_state(), 0);
        assert_eq!(x.role, Role::Opcode);
    }
}
