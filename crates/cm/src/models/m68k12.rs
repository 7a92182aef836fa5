//! 68000 code contexts of CM revision 12 (doc/FORMAT.md 4.23.4): revision
//! 7's family ([`M68k7Contexts`], with revision 5's resource-fork and
//! instruction decoder) plus contexts from a longer opcode history, the
//! last two displacements per address register, the last A-line traps
//! (Toolbox calls), the extension words so far with the previous opcode,
//! the resource and the function being read.
//!
//! Its contexts are declared in [`M68k12Contexts::hashes`]; the mixer
//! selector and the order-1 APM byte are revision 5's.

use super::forward_family;
use super::m68k7::M68k7Contexts;
use super::{ByteCtx, ContextModel, hash2};

/// Contexts revision 12 adds.
const NEW: usize = 7;

/// Bytes of memory the family allocates besides revision 7's, over a
/// bound: two displacements per address register and extension slot, the
/// opcode and trap histories, the function's start.
pub(crate) const MEMORY: u64 = 4 * 32 + 72;

/// The revision-12 68000 family: revision 7's 20 contexts and 7 of its own.
#[derive(Debug, Clone)]
pub(crate) struct M68k12Contexts {
    m7: M68k7Contexts,
    /// The opcode words before the three revision 5 keeps (the fourth
    /// and fifth back).
    older: [u16; 2],
    /// Per address register (the effective address's register field) and
    /// extension slot (1 to 4): the last two extension words of a `d16(An)`
    /// or `d8(An,Xn)` operand, the last lowest.
    disp: [u32; 32],
    /// The last two A-line words (Toolbox traps), the last lowest.
    traps: u32,
    /// Block position of the last `LINK` opcode word's low byte (where the
    /// current function starts).
    link: usize,
}

impl M68k12Contexts {
    /// A family before the resource fork header.
    pub fn new() -> Self {
        M68k12Contexts {
            m7: M68k7Contexts::new(),
            older: [0; 2],
            disp: [0; 32],
            traps: 0,
            link: 0,
        }
    }

    /// Revision 5's decoder and contexts.
    pub(crate) fn m5(&self) -> &super::m68k5::M68k5Contexts {
        self.m7.m5()
    }

    /// The `disp` slot of opcode `op`'s effective address (its low six
    /// bits) for extension slot `slot` (1 to 4), if its mode is `d16(An)`
    /// (5) or `d8(An,Xn)` (6).
    fn disp_slot(op: u16, slot: u32) -> Option<usize> {
        let mode = (op >> 3) & 7;
        (mode == 5 || mode == 6)
            .then(|| usize::from(op & 7) << 2 | (slot.wrapping_sub(1) & 3) as usize)
    }
}

impl ContextModel for M68k12Contexts {
    forward_family!(m7; selector_size, selector, apm_byte);

    fn contexts(&self) -> usize {
        self.m7.contexts() + NEW
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let n7 = self.m7.contexts();
        self.m7.hashes(ctx, &mut out[..n7]);
        let m = self.m7.m5();
        let low = m.low(ctx.pos);
        let hi = if low { 0x100 | (ctx.c4() & 0xFF) } else { 0 };
        let at = u32::from(low) << 9 | hi;
        let slot = m.slot();
        let op = u32::from(m.op);
        let [p1, p2, p3] = m.prev.map(u32::from);
        let [p4, p5] = self.older.map(u32::from);
        let o = &mut out[n7..];
        let s = slot << 28 | at << 16;
        if slot == 0 {
            o[0] = hash2(
                hash2(s | op, p1 << 16 | p2),
                hash2(p3 << 16 | p4, p5 ^ 0x6C00),
            );
            o[1] = hash2(hash2(s | op, self.traps), 0x6C01);
            o[2] = hash2(hash2(s | op, m.ext), p1 ^ 0x6C02 << 16);
            o[3] = hash2(
                hash2(s | (op >> 12), (p1 >> 12) << 4 | p2 >> 12),
                hash2(p3 >> 12, m.ext & 0xFFFF) ^ 0x6C03,
            );
            o[4] = hash2(hash2(s | op, p1), self.traps & 0xFFFF ^ 0x6C04 << 16);
        } else {
            let d = Self::disp_slot(m.op, slot).map_or(0x1_0000, |k| self.disp[k]);
            o[0] = hash2(hash2(s | op, p1 << 16 | p2), hash2(p3, m.ext ^ 0x6C10));
            o[1] = hash2(hash2(s | (op & 0x3F), d), 0x6C11);
            o[2] = hash2(hash2(s | op, m.ext), p1 ^ 0x6C12 << 16);
            o[3] = hash2(hash2(s | op, d), m.ext & 0xFFFF ^ 0x6C13 << 16);
            o[4] = hash2(hash2(s | op, self.traps & 0xFFFF), 0x6C14);
        }
        // The resource being read (where its words start).
        o[5] = hash2(0x6C22, hash2(s | op, m.word_base as u32));
        // The function being read (where its `LINK` is).
        o[6] = hash2(0x6C23, hash2(s | op, self.link as u32));
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        let m = self.m7.m5();
        let header = m.next_resource >= 16 && pos == m.next_resource.saturating_add(3);
        let word = !header && m.next_resource != 0 && m.low(pos);
        let (slot, op, prev3) = (m.slot(), m.op, m.prev[2]);
        if word && slot != 7 {
            let w = m.high << 8 | u16::from(byte);
            if slot == 0 {
                // `op` becomes the first previous opcode: the third one
                // leaves revision 5's history for ours.
                self.older = [prev3, self.older[0]];
                if w & 0xFFF8 == 0x4E50 {
                    self.link = pos;
                }
                if w >> 12 == 0xA {
                    self.traps = self.traps << 16 | u32::from(w);
                }
            } else if let Some(k) = Self::disp_slot(op, slot) {
                self.disp[k] = self.disp[k] << 16 | u32::from(w);
            }
        }
        self.m7.observe(data, pos, byte);
    }
}
