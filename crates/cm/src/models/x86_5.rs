//! x86 / x86-64 code contexts of CM revision 6 (doc/FORMAT.md 4.17.3):
//! revision 4's [`X86v4Contexts`] plus contexts from the operands the same
//! instruction form had before.
//!
//! Displacements and immediates repeat per instruction form: a stack-frame
//! offset per `mov reg, [rbp+disp]`, a structure member per ModRM, a
//! constant per opcode. The family keeps, for every (opcode, ModRM, operand
//! kind), the last whole operand (its first 4 bytes, little-endian) in a
//! table, and predicts an operand's bytes from that operand and the bytes
//! read so far. Its contexts are declared in [`X86v5Contexts::hashes`];
//! selector and order-1 APM byte are revision 4's.

use super::forward_family;
use super::x86_4::{DISP, IMM, X86v4Contexts};
use super::{ByteCtx, ContextModel, hash2};

/// Entries of the last-operand table.
const LAST_BITS: u32 = 14;

/// The revision-6 x86 family: revision 4's 8 contexts and 3 of its own.
#[derive(Debug, Clone)]
pub(crate) struct X86v5Contexts {
    v4: X86v4Contexts,
    /// The bytes of the operand being read (little-endian, the first 4).
    cur: u32,
    /// The last operand of each (opcode, ModRM, operand kind), by
    /// [`key`](Self::key).
    last: Vec<u32>,
}

impl X86v5Contexts {
    /// A decoder at an instruction boundary with an empty table.
    pub fn new() -> Self {
        X86v5Contexts {
            v4: X86v4Contexts::new(),
            cur: 0,
            last: vec![0; 1 << LAST_BITS],
        }
    }

    /// The revision-4 decoder inside.
    pub(crate) fn v4(&self) -> &X86v4Contexts {
        &self.v4
    }

    /// The table slot of the current instruction's operand of `role`.
    fn key(&self, role: u32) -> usize {
        let (op, modrm, _, _) = self.v4.instruction();
        (hash2(op << 12 | modrm << 3 | role, 0x5C00) >> (32 - LAST_BITS)) as usize
    }
}

impl ContextModel for X86v5Contexts {
    forward_family!(v4; selector_size, selector, apm_byte);

    fn contexts(&self) -> usize {
        8 + 3
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        self.v4.hashes(ctx, &mut out[..8]);
        let role = self.v4.role();
        let (op, modrm, sib, prev) = self.v4.instruction();
        let o = &mut out[8..];
        if role == DISP || role == IMM {
            let slot = self.v4.operand_slot();
            let last = self.last[self.key(role)];
            let idx = slot & 0xF;
            // The bytes so far, and whether they agree with the last
            // operand's.
            let mask = if idx >= 4 {
                u32::MAX
            } else {
                (1u32 << (8 * idx)) - 1
            };
            let same = u32::from(self.cur & mask == last & mask);
            o[0] = hash2(
                hash2(op << 12 | modrm << 3 | role, slot << 1 | same),
                last ^ 0x5C01,
            );
            o[1] = hash2(hash2(slot << 8 | role, self.cur), last ^ 0x5C02);
            o[2] = hash2(hash2(op << 12 | sib, slot << 9 | modrm), self.cur ^ 0x5C03);
        } else {
            let c1 = ctx.c4() & 0xFF;
            o[0] = hash2(role << 24 | op << 9 | modrm, prev ^ 0x5C11);
            o[1] = hash2(role << 24 | prev << 8 | c1, 0x5C12);
            o[2] = hash2(role << 24 | op, sib ^ 0x5C13);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        let role = self.v4.role();
        if role != DISP && role != IMM {
            self.v4.observe(data, pos, byte);
            return;
        }
        let slot = self.v4.operand_slot();
        let (size, idx) = (slot >> 4, slot & 0xF);
        if idx < 4 {
            self.cur |= u32::from(byte) << (8 * idx);
        }
        if idx + 1 >= size {
            let k = self.key(role);
            self.last[k] = self.cur;
            self.cur = 0;
        }
        self.v4.observe(data, pos, byte);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_operands_per_instruction_form() {
        let mut x = X86v5Contexts::new();
        // mov eax, [rbp-8]; mov ecx, 0x12345678; add rsp, 16
        let code = [
            0x8B, 0x45, 0xF8, 0xB9, 0x78, 0x56, 0x34, 0x12, 0x48, 0x83, 0xC4, 0x10, 0x90,
        ];
        for (pos, &b) in code.iter().enumerate() {
            x.observe(&code, pos, b);
        }
        let mut y = X86v5Contexts::new();
        for (pos, &b) in code[..2].iter().enumerate() {
            y.observe(&code, pos, b);
        }
        assert_eq!(x.last[y.key(DISP)], 0xF8);
        let mut y = X86v5Contexts::new();
        y.observe(&code, 0, 0xB9);
        assert_eq!(x.last[y.key(IMM)], 0x1234_5678);
        assert_eq!(x.cur, 0);
    }
}
