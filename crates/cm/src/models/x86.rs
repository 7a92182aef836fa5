//! x86 / x86-64 code contexts (CM revision 1) for a block that starts with
//! an ELF header of machine 3 (i386) or 62 (x86-64).
//!
//! A small instruction-length decoder follows the byte stream as if it were
//! code (prefixes, REX, one- and two-byte opcodes, ModRM, SIB,
//! displacement, immediate): each byte then has a role (opcode, ModRM,
//! operand byte k of the instruction with opcode o) and the contexts are
//! built from it. Where the data is not code the decoder is merely wrong,
//! which costs compression, never correctness; it resynchronises on its own
//! as instructions end.

use super::{ByteCtx, ContextModel, hash2};

/// What the next byte is, for the decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A prefix or the opcode.
    Opcode,
    /// The byte after 0F.
    Opcode2,
    /// The byte after 0F 38 or 0F 3A.
    Opcode3,
    ModRm,
    Sib,
    /// Displacement or immediate bytes.
    Operand,
}

/// Immediate bytes of a one-byte opcode (`op16`: 66 prefix, `w`: REX.W).
pub(crate) fn imm1(op: u8, op16: bool, w: bool) -> u8 {
    let z = if op16 { 2 } else { 4 };
    match op {
        0x04 | 0x0C | 0x14 | 0x1C | 0x24 | 0x2C | 0x34 | 0x3C => 1,
        0x05 | 0x0D | 0x15 | 0x1D | 0x25 | 0x2D | 0x35 | 0x3D => z,
        0x6A | 0x6B | 0x70..=0x7F | 0x80 | 0x82 | 0x83 | 0xA8 | 0xB0..=0xB7 => 1,
        0xC0 | 0xC1 | 0xC6 | 0xCD | 0xD4 | 0xD5 | 0xE0..=0xE7 | 0xEB => 1,
        0x68 | 0x69 | 0x81 | 0xA9 | 0xC7 | 0xE8 | 0xE9 => z,
        0xB8..=0xBF => {
            if w {
                8
            } else {
                z
            }
        }
        0xC2 | 0xCA => 2,
        0xC8 => 3,
        0xA0..=0xA3 => 8,
        _ => 0,
    }
}

/// Whether a one-byte opcode has a ModRM byte.
pub(crate) fn modrm1(op: u8) -> bool {
    matches!(op & 0xC7, 0x00..=0x03)
        || matches!(
            op,
            0x62 | 0x63 | 0x69 | 0x6B | 0x80..=0x8F | 0xC0 | 0xC1 | 0xC4..=0xC7 | 0xD0..=0xD3
        )
        || matches!(op, 0xD8..=0xDF | 0xF6 | 0xF7 | 0xFE | 0xFF)
}

/// Displacement bytes after a ModRM byte of mode `md` whose r/m field (or,
/// after a SIB byte, its base field) is `rm`.
pub(crate) fn disp_size(md: u8, rm: u8) -> u8 {
    match md {
        0 if rm == 5 => 4,
        1 => 1,
        2 => 4,
        _ => 0,
    }
}

/// Whether ModRM byte `m` is followed by a SIB byte.
pub(crate) fn has_sib(m: u8) -> bool {
    m >> 6 != 3 && m & 7 == 4
}

/// What follows the byte `b` after a 0F opcode byte.
pub(crate) enum After0F {
    /// A third opcode byte (0F 38, 0F 3A).
    Opcode3,
    /// The operands directly (no ModRM).
    Operands,
    /// A ModRM byte.
    ModRm,
}

/// [`After0F`] for the byte `b` after 0F, and the instruction's immediate
/// bytes.
pub(crate) fn after_0f(b: u8) -> (After0F, u8) {
    match b {
        0x38 | 0x3A => (After0F::Opcode3, u8::from(b == 0x3A)),
        0x80..=0x8F => (After0F::Operands, 4),
        0x05 | 0x06 | 0x07 | 0x0B | 0x31 | 0xA2 | 0xC8..=0xCF => (After0F::Operands, 0),
        _ => (
            After0F::ModRm,
            u8::from(matches!(
                b,
                0x70..=0x73 | 0xA4 | 0xAC | 0xBA | 0xC2 | 0xC4..=0xC6
            )),
        ),
    }
}

/// The immediate bytes of F6/F7 `opcode` (test r/m, imm) once its ModRM
/// byte `m` is known (`None`: not a test, the immediate stays as it was).
pub(crate) fn test_imm(opcode: u32, m: u8, op16: bool) -> Option<u8> {
    (matches!(opcode, 0xF6 | 0xF7) && (m >> 3) & 7 < 2).then_some(if opcode == 0xF6 {
        1
    } else if op16 {
        2
    } else {
        4
    })
}

/// The x86 family (6 contexts).
#[derive(Debug, Clone)]
pub(crate) struct X86Contexts {
    role: Role,
    /// Operand bytes left, and immediate bytes to add after the ModRM/SIB
    /// and displacement.
    left: u8,
    imm: u8,
    /// Byte index of the current byte in the instruction.
    index: u8,
    op16: bool,
    rex_w: bool,
    /// The current instruction's opcode (0F xx as 0x100 | xx), ModRM, and
    /// the previous instruction's opcode.
    opcode: u32,
    modrm: u32,
    prev_opcode: u32,
}

impl X86Contexts {
    /// A decoder at an instruction boundary.
    pub fn new() -> Self {
        X86Contexts {
            role: Role::Opcode,
            left: 0,
            imm: 0,
            index: 0,
            op16: false,
            rex_w: false,
            opcode: 0,
            modrm: 0,
            prev_opcode: 0,
        }
    }

    fn end_instruction(&mut self) {
        self.role = Role::Opcode;
        self.index = 0;
        self.op16 = false;
        self.rex_w = false;
        self.prev_opcode = self.opcode;
    }

    /// Starts the operand bytes (`disp` displacement, then the immediate).
    fn operands(&mut self, disp: u8) {
        self.left = disp + self.imm;
        if self.left == 0 {
            self.end_instruction();
        } else {
            self.role = Role::Operand;
        }
    }

    fn after_modrm(&mut self, m: u8) {
        self.modrm = u32::from(m);
        if has_sib(m) {
            self.role = Role::Sib;
            return;
        }
        self.operands(disp_size(m >> 6, m & 7));
    }

    fn step(&mut self, b: u8) {
        self.index = self.index.saturating_add(1);
        match self.role {
            Role::Opcode => match b {
                0x66 => self.op16 = true,
                0x67 | 0xF0 | 0xF2 | 0xF3 | 0x26 | 0x2E | 0x36 | 0x3E | 0x64 | 0x65 => {}
                0x40..=0x4F => self.rex_w = b & 8 != 0,
                0x0F => self.role = Role::Opcode2,
                _ => {
                    self.opcode = u32::from(b);
                    self.imm = imm1(b, self.op16, self.rex_w);
                    if b == 0xF6 || b == 0xF7 {
                        // test r/m, imm: decided by the ModRM's reg field.
                        self.imm = 0;
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
                self.imm = imm;
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
                if let Some(imm) = test_imm(self.opcode, b, self.op16) {
                    self.imm = imm;
                }
                self.after_modrm(b);
            }
            Role::Sib => {
                self.operands(disp_size((self.modrm >> 6) as u8 & 3, b & 7));
            }
            Role::Operand => {
                self.left -= 1;
                if self.left == 0 {
                    self.end_instruction();
                }
            }
        }
        if self.index > 15 {
            self.end_instruction();
        }
    }
}

impl ContextModel for X86Contexts {
    fn contexts(&self) -> usize {
        6
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let role = self.role as u32;
        let c1 = ctx.c4() & 0xFF;
        let c2 = (ctx.c4() >> 8) & 0xFF;
        let (op, prev) = (self.opcode, self.prev_opcode);
        let at_op = matches!(self.role, Role::Opcode);
        let pos = u32::from(self.index.min(15));
        out[0] = hash2(role, if at_op { prev } else { op << 8 | pos });
        out[1] = hash2(
            role | 0x10,
            if at_op {
                prev << 9 | c1
            } else {
                op << 8 | self.modrm
            },
        );
        out[2] = hash2(role | 0x20, op << 12 | u32::from(self.left) << 8 | c1);
        out[3] = hash2(role | 0x30, (op << 8 | c1) << 8 | c2);
        // Operand bytes of calls and jumps: the displacement's bytes so far.
        let rel = matches!(op, 0xE8 | 0xE9) && matches!(self.role, Role::Operand);
        out[4] = hash2(
            role | 0x40,
            if rel {
                let done = 4u32.saturating_sub(u32::from(self.left)).min(3);
                u32::from(self.left) << 24 | (ctx.c4() & ((1u32 << (8 * done)) - 1))
            } else {
                prev << 10 | op
            },
        );
        out[5] = hash2(
            role | 0x50,
            u32::from(self.op16) | u32::from(self.rex_w) << 1 | op << 2,
        );
        for (h, j) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0xA00 + j);
        }
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        self.step(byte);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roles(code: &[u8]) -> Vec<Role> {
        let mut x = X86Contexts::new();
        code.iter()
            .map(|&b| {
                let r = x.role;
                x.step(b);
                r
            })
            .collect()
    }

    #[test]
    fn decodes_instruction_lengths() {
        use Role::*;
        // call rel32; mov eax, [rbp-8]; add rsp, 16 (REX.W 83 /0 ib); ret
        let code = [
            0xE8, 1, 2, 3, 4, 0x8B, 0x45, 0xF8, 0x48, 0x83, 0xC4, 0x10, 0xC3, 0x90,
        ];
        assert_eq!(
            roles(&code),
            [
                Opcode, Operand, Operand, Operand, Operand, Opcode, ModRm, Operand, Opcode, Opcode,
                ModRm, Operand, Opcode, Opcode
            ]
        );
        // jne rel32 (0F 85), mov eax, [rsp+4] (8B 44 24 04)
        let code = [0x0F, 0x85, 0, 0, 0, 0, 0x8B, 0x44, 0x24, 0x04, 0x90];
        assert_eq!(
            roles(&code),
            [
                Opcode, Opcode2, Operand, Operand, Operand, Operand, Opcode, ModRm, Sib, Operand,
                Opcode
            ]
        );
    }
}
