//! 68000 code contexts of CM revisions 7 and 8 (doc/FORMAT.md 4.18.5):
//! revision 5's resource-fork and instruction decoder
//! ([`M68k5Contexts`]) plus contexts from what followed an opcode last
//! time, the extension words per effective address, and register-free
//! opcode patterns.
//!
//! Its contexts are declared in [`M68k7Contexts::hashes`]; the mixer
//! selector and the order-1 APM byte are revision 5's.

use super::forward_family;
use super::m68k5::M68k5Contexts;
use super::{ByteCtx, ContextModel, hash2};

/// Contexts revision 7 adds.
const NEW: usize = 6;

/// Entries of the two-opcode table.
const PAIR_BITS: u32 = 16;

/// The opcode word with its register fields (bits 0-2 and 9-11) cleared:
/// the instruction's pattern.
fn pattern(w: u32) -> u32 {
    w & 0xF1F8
}

/// Bytes of memory the family allocates (its four tables), over a bound.
pub(crate) const MEMORY: u64 = 3 * (2 << 16) + 2 * 64 * 4 + (64 << 10);

/// The revision-7 68000 family: revision 5's 14 contexts and 6 of its own.
#[derive(Debug, Clone)]
pub(crate) struct M68k7Contexts {
    m5: M68k5Contexts,
    /// Per opcode word: the opcode word that followed it last time.
    next_op: Vec<u16>,
    /// Per pair of opcode words (hashed): the one that followed last time.
    next_pair: Vec<u16>,
    /// Per effective address (mode and register of the opcode's low six
    /// bits) and extension slot: the last extension word.
    last_ea: Vec<u16>,
    /// Per opcode word: the first extension word before the last one.
    older_ext: Vec<u16>,
}

impl M68k7Contexts {
    /// A family before the resource fork header.
    pub fn new() -> Self {
        M68k7Contexts {
            m5: M68k5Contexts::new(),
            next_op: vec![0; 1 << 16],
            next_pair: vec![0; 1 << PAIR_BITS],
            last_ea: vec![0; 64 * 4],
            older_ext: vec![0; 1 << 16],
        }
    }

    /// Revision 5's decoder and contexts.
    pub(crate) fn m5(&self) -> &M68k5Contexts {
        &self.m5
    }

    /// The two-opcode table's slot of opcode `a` after `b`.
    fn pair(a: u32, b: u32) -> usize {
        (hash2(a << 16 | b, 0x6870) >> (32 - PAIR_BITS)) as usize
    }

    /// The `last_ea` slot of the current opcode's effective address for
    /// extension slot `slot` (1 to 4).
    fn ea_slot(&self, slot: u32) -> usize {
        (usize::from(self.m5.op & 0x3F) << 2) | (slot.saturating_sub(1) as usize & 3)
    }
}

impl ContextModel for M68k7Contexts {
    forward_family!(m5; selector_size, selector, apm_byte);

    fn contexts(&self) -> usize {
        self.m5.contexts() + NEW
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let n5 = self.m5.contexts();
        self.m5.hashes(ctx, &mut out[..n5]);
        let m = &self.m5;
        let low = m.low(ctx.pos);
        let hi = if low { 0x100 | (ctx.c4() & 0xFF) } else { 0 };
        let at = u32::from(low) << 9 | hi;
        let slot = m.slot();
        let op = u32::from(m.op);
        let [p1, p2, _] = m.prev.map(u32::from);
        let o = &mut out[n5..];
        if slot == 0 {
            let next = u32::from(self.next_op[m.op as usize]);
            let next2 = u32::from(self.next_pair[Self::pair(op, p1)]);
            o[0] = hash2(hash2(at << 16 | op, next), 0x6800);
            o[1] = hash2(hash2(at << 16 | op, p1 << 16 | next2), 0x6801);
            o[2] = hash2(hash2(at << 16 | op, m.ext), 0x6802);
            o[3] = hash2(
                hash2(at << 16 | pattern(op), pattern(p1) << 16 | pattern(p2)),
                0x6803,
            );
            o[4] = hash2(hash2(at << 16 | op, m.ext & 0xFFFF), p1 ^ 0x6804 << 16);
            o[5] = hash2(at << 16 | pattern(op), next ^ 0x6805 << 16);
        } else {
            let s = slot << 28 | at << 16;
            let ea = u32::from(self.last_ea[self.ea_slot(slot)]);
            let older = u32::from(self.older_ext[m.op as usize]);
            let last = u32::from(m.last_ext[m.op as usize]);
            o[0] = hash2(hash2(s | (op & 0x3F), ea), 0x6810);
            o[1] = hash2(hash2(s | op, last << 16 | older), 0x6811);
            o[2] = hash2(hash2(s | op, p1), m.ext ^ 0x6812 << 16);
            o[3] = hash2(hash2(s | (op & 0x3F), m.ext), 0x6813);
            o[4] = hash2(hash2(s | pattern(op), pattern(p1)), m.ext ^ 0x6814);
            o[5] = hash2(hash2(s | op, ea), last ^ 0x6815 << 16);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        let m = &self.m5;
        let header = m.next_resource >= 16 && pos == m.next_resource.saturating_add(3);
        let word = !header && m.next_resource != 0 && m.low(pos);
        let (slot, op, p1) = (m.slot(), u32::from(m.op), u32::from(m.prev[0]));
        if word && slot != 7 {
            let w = m.high << 8 | u16::from(byte);
            if slot == 0 {
                self.next_op[op as usize] = w;
                self.next_pair[Self::pair(op, p1)] = w;
            } else {
                let k = self.ea_slot(slot);
                self.last_ea[k] = w;
                if slot == 1 {
                    self.older_ext[op as usize] = m.last_ext[op as usize];
                }
            }
        }
        self.m5.observe(data, pos, byte);
    }
}
