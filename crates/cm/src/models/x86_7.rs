//! x86 / x86-64 code contexts of CM revisions 7 and 8 (doc/FORMAT.md
//! 4.18.5, 4.19.5): revision 4's decoder contexts ([`X86v4Contexts`]; at
//! revision 8 with revision 6's operand contexts, [`X86v5Contexts`]) plus
//! contexts from a longer instruction history, per-opcode tables of what
//! followed last time, and the ELF layout ([`ElfLayout`]): bytes outside
//! the executable segments get data contexts instead of the decoder's.
//!
//! Every context and the mixer selector are declared in
//! [`X86v7Contexts::hashes`] and [`X86v7Contexts::selector`].

use super::elf7::ElfLayout;
use super::text::{TEXT_CONTEXTS, TextContexts};
use super::x86_4::{DISP, IMM, MODRM, OPCODE, SIB, X86v4Contexts};
use super::x86_5::X86v5Contexts;
use super::{ByteCtx, ContextModel, hash2};

/// Contexts revision 7 adds.
const NEW: usize = 6;

/// Entries of the per-opcode tables (indexed by the opcode with the REX.W
/// and 66 bits: 0x300 opcodes, 4 prefix states).
const OP_KEYS: usize = 0x400 * 4;

/// Bytes of memory the family allocates, over a bound: revision 6's operand
/// table (64 KiB, allocated at 7 too), its own tables (32 KiB) and the
/// mixer selector's 4,096 weight sets of up to 64 i16 weights (512 KiB).
pub(crate) const MEMORY: u64 = 1 << 20;

/// The revision-7/8 x86 family.
#[derive(Debug, Clone)]
pub(crate) struct X86v7Contexts {
    /// The decoder and (revision 8) revision 6's operand table.
    v5: X86v5Contexts,
    /// Revision 8: revision 6's three operand contexts too.
    max: bool,
    elf: ElfLayout,
    /// The text contexts of data bytes (strings in `.rodata`).
    text: TextContexts,
    /// The opcode three instructions back (REX.W as bit 12).
    prev3_op: u32,
    /// A hash of the current instruction's bytes so far, and of the
    /// previous instruction's.
    ins: u32,
    prev_ins: u32,
    /// Per previous opcode: the opcode that followed it last time.
    next_op: Vec<u16>,
    /// Per opcode key: the last two ModRM bytes (each `0x100 | byte`).
    last_modrm: Vec<u32>,
    /// Per base register (REX.B with rm or SIB base) and mod: the last
    /// displacement (its first 4 bytes).
    last_disp: Vec<u32>,
    /// The bytes of the current operand so far.
    cur: u32,
}

impl X86v7Contexts {
    /// A decoder at an instruction boundary with empty tables; `max` for
    /// revision 8.
    pub fn new(max: bool) -> Self {
        X86v7Contexts {
            v5: X86v5Contexts::new(),
            max,
            elf: ElfLayout::default(),
            text: TextContexts::new(),
            prev3_op: 0,
            ins: 0,
            prev_ins: 0,
            next_op: vec![0; 0x2000],
            last_modrm: vec![0; OP_KEYS],
            last_disp: vec![0; 64],
            cur: 0,
        }
    }

    /// The instruction decoder (revision 4's).
    pub(crate) fn v4(&self) -> &X86v4Contexts {
        self.v5.v4()
    }

    /// Whether the byte at `pos` lies outside the ELF file's code.
    pub(crate) fn is_data(&self, pos: usize) -> bool {
        self.elf.is_data(pos)
    }

    /// The table key of the current opcode: the opcode (0 to 0x2FF), REX.W
    /// and the 66 prefix.
    fn op_key(&self) -> usize {
        let v = self.v4();
        let w = u32::from(v.rex & 8 != 0);
        let p66 = v.prefixes & 1;
        (v.opcode as usize & 0x3FF) << 2 | (w << 1 | p66) as usize
    }

    /// The base register of the current memory operand (REX.B with the rm
    /// field, or with the SIB's base) with the mod field.
    fn base(&self) -> usize {
        let v = self.v4();
        let rm = if v.sib & 0x100 != 0 {
            v.sib & 7
        } else {
            v.modrm & 7
        };
        let b = (v.rex & 1) << 3 | rm;
        ((v.modrm >> 6 & 3) << 4 | b) as usize & 63
    }
}

impl ContextModel for X86v7Contexts {
    fn contexts(&self) -> usize {
        8 + if self.max { 3 } else { 0 } + NEW
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let base = 8 + if self.max { 3 } else { 0 };
        if self.elf.is_data(ctx.pos) {
            // Data: the text contexts (strings), then columns of 2, 4, 8
            // and 16 bytes with the last bytes.
            let (c4, p) = (ctx.c4(), ctx.pos as u32);
            let c1 = c4 & 0xFF;
            let (text, rest) = out.split_at_mut(TEXT_CONTEXTS);
            self.text.hashes(ctx, text);
            for (j, h) in rest.iter_mut().enumerate() {
                let j = j as u32;
                *h = hash2(
                    0x7D00 + j,
                    match j % 7 {
                        0 => (p & 3) << 8 | c1,
                        1 => (p & 7) << 16 | c4 & 0xFFFF,
                        2 => (p & 15) << 24 | c4 & 0xFF_FFFF,
                        3 => hash2(c4, ctx.c8() & 0xFF),
                        4 => (p & 1) << 16 | c4 & 0xFFFF,
                        5 => (p & 3) << 24 | c4 >> 8 & 0xFF_FF00 | c1 >> 4,
                        _ => (p & 7) << 8 | c4 >> 8 & 0xFF,
                    } ^ j << 28,
                );
            }
            return;
        }
        if self.max {
            self.v5.hashes(ctx, &mut out[..base]);
        } else {
            self.v4().hashes(ctx, &mut out[..8]);
        }
        let v = self.v4();
        let role = v.role();
        let pre = v.prefix_state();
        let (op, modrm, sib, prev) = v.instruction();
        let (prev2, prev3, pmodrm) = (v.prev2_op, self.prev3_op, v.prev_modrm);
        let slot = v.operand_slot();
        let c1 = ctx.c4() & 0xFF;
        let key = self.op_key();
        let lm = self.last_modrm[key];
        let o = &mut out[base..];
        match role {
            OPCODE => {
                let next = u32::from(self.next_op[(prev & 0x1FFF) as usize]);
                o[0] = hash2(hash2(prev << 9 | pmodrm, prev2), pre);
                o[1] = hash2(hash2(prev << 13 | prev2, prev3), pre | 0x800);
                o[2] = hash2(self.prev_ins, prev2 << 11 | pre);
                o[3] = hash2(prev << 13 | next, pre | 0x1000);
                o[4] = hash2(self.ins, next << 13 | prev);
                o[5] = hash2(prev << 12 | pre, pmodrm >> 3 & 7 | 0x2000);
            }
            MODRM => {
                o[0] = hash2(hash2(op << 11 | pre, prev << 9 | pmodrm), 0x3000);
                o[1] = hash2(op << 11 | pre, lm | 0x1 << 24);
                o[2] = hash2(hash2(op << 11 | pre, prev), (pmodrm >> 3 & 7) | 0x3100);
                o[3] = hash2(hash2(op << 11 | pre, self.prev_ins), 0x3200);
                o[4] = hash2(hash2(op << 11 | pre, lm), prev | 0x3300 << 13);
                o[5] = hash2(op << 11 | pre, pmodrm | 0x3400 << 9);
            }
            DISP | IMM => {
                let idx = slot & 0xF;
                let so_far = if idx >= 4 {
                    self.cur
                } else {
                    self.cur & ((1u32 << (8 * idx)) - 1)
                };
                let last = self.last_disp[self.base()];
                let rel = matches!(op, 0xE8 | 0xE9) && role == IMM;
                // The byte of the current position's address this byte of
                // an absolute call target is near.
                let here = if rel {
                    ((ctx.pos as u32 + 4 - idx) >> (8 * idx.min(3))) & 0xFF
                } else {
                    0x100
                };
                o[0] = hash2(
                    hash2(role << 8 | slot, so_far),
                    last ^ (self.base() as u32) << 24,
                );
                o[1] = hash2(
                    hash2(op << 12 | modrm, slot << 4 | role),
                    so_far ^ prev << 20,
                );
                o[2] = hash2(hash2(slot << 4 | role, here), so_far);
                o[3] = hash2(hash2(op << 12 | slot, pre), so_far ^ lm << 20);
                o[4] = hash2(
                    hash2(op << 9 | sib, slot << 8 | role),
                    self.prev_ins ^ so_far,
                );
                o[5] = hash2(role << 8 | slot, so_far ^ 0x3500 << 16);
            }
            _ => {
                // 0F and 0F 38/3A maps, SIB.
                let t = role << 24;
                o[0] = hash2(hash2(t | op << 11 | pre, prev << 9 | pmodrm), 0x3600);
                o[1] = hash2(t | op << 11 | pre, lm | 0x37 << 24);
                o[2] = hash2(hash2(t | prev << 13 | prev2, prev3), pre);
                o[3] = hash2(t | self.ins, 0x3800);
                o[4] = hash2(t | modrm << 9 | op, if role == SIB { lm } else { c1 });
                o[5] = hash2(t | pre, prev | 0x39 << 16);
            }
        }
        for (h, j) in o.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0x7A00 + j);
        }
    }

    fn selector_size(&self) -> usize {
        8 * 64 * 8
    }

    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        if self.elf.is_data(ctx.pos) {
            return 7 * 64 + ((ctx.pos & 7) << 3 | (ctx.c4() as usize & 0xFF) >> 5);
        }
        self.v4().selector(ctx)
    }

    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        if self.elf.is_data(ctx.pos) {
            return None;
        }
        self.v4().apm_byte(ctx)
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.elf.observe(data, pos);
        self.text.observe(data, pos, byte);
        let (role, slot) = (self.v4().role(), self.v4().operand_slot());
        if role == DISP || role == IMM {
            let (size, idx) = (slot >> 4, slot & 0xF);
            if idx < 4 {
                self.cur |= u32::from(byte) << (8 * idx);
            }
            if idx + 1 >= size {
                if role == DISP {
                    let b = self.base();
                    self.last_disp[b] = self.cur;
                }
                self.cur = 0;
            }
        }
        if role == MODRM {
            let k = self.op_key();
            self.last_modrm[k] = (self.last_modrm[k] << 9 | 0x100 | u32::from(byte)) & 0x3FFFF;
        }
        let prev2 = self.v4().prev2_op;
        let prev = self.v4().prev_op;
        self.ins = hash2(self.ins, u32::from(byte));
        self.v5.observe(data, pos, byte);
        if self.v4().index == 0 {
            // An instruction ended.
            self.prev3_op = prev2;
            let op = self.v4().prev_op;
            self.next_op[(prev & 0x1FFF) as usize] = op as u16;
            self.prev_ins = self.ins;
            self.ins = 0;
            self.cur = 0;
        }
        if self.elf.code_starts(pos + 1) {
            // The decoder restarts at a code segment.
            self.v5 = X86v5Contexts::new();
        }
    }
}
