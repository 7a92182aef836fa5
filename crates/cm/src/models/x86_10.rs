//! x86 / x86-64 code contexts of CM revision 10 (doc/FORMAT.md 4.21.5):
//! revision 8's family ([`X86v7Contexts`] with revision 6's operand
//! contexts) plus contexts from the bytes of the last instruction with the
//! same opcode at the same place, the last immediate of each instruction
//! form, a two-instruction history and, outside the code, record (stride)
//! contexts for tables of 8, 16 and 24 bytes.
//!
//! Every context is declared in [`X86v10Contexts::hashes`]; the mixer
//! selector and the order-1 APM byte are revision 7's.

use super::forward_family;
use super::x86_4::{DISP, IMM, OPCODE, X86v4Contexts};
use super::x86_7::X86v7Contexts;
use super::{ByteCtx, ContextModel, hash2};

/// Contexts revision 10 adds.
const NEW: usize = 6;

/// Entries of the per-opcode tables (the opcode, 0 to 0x2FF, with REX.W as
/// bit 12, as the decoder's `prev_op`).
const OPS: usize = 0x2000;

/// Entries of the per-form immediate table (hashed opcode and ModRM).
const FORM_BITS: u32 = 14;

/// Bytes of memory the family allocates besides revision 7's, over a
/// bound: the last instruction per opcode (16 bytes each), the immediates
/// per form (4 bytes each), what followed each opcode (4 bytes each).
pub(crate) const MEMORY: u64 = (OPS as u64) * 20 + (4 << FORM_BITS) + 4096;

/// The revision-10 x86 family: revision 8's 17 contexts and 6 of its own.
#[derive(Debug, Clone)]
pub(crate) struct X86v10Contexts {
    v7: X86v7Contexts,
    /// Per opcode (with REX.W): the bytes of the last instruction with it,
    /// from its first byte (prefixes included), at most 16.
    last_ins: Vec<[u8; 16]>,
    /// The bytes of the current instruction so far.
    cur_ins: [u8; 16],
    /// Per form (hash of opcode, prefixes and ModRM): the last immediate.
    last_imm: Vec<u32>,
    /// Per previous opcode (with REX.W): the first 4 bytes of the
    /// instruction that followed it last time.
    follow: Vec<u32>,
    /// A hash of the instruction before the previous one.
    prev2_ins: u32,
    /// A hash of the previous instruction (the same as revision 7's).
    prev_ins: u32,
    /// A hash of the current instruction's bytes so far.
    ins: u32,
    /// The bytes of the current operand so far.
    cur: u32,
}

impl X86v10Contexts {
    /// A decoder at an instruction boundary with empty tables.
    pub fn new() -> Self {
        X86v10Contexts {
            v7: X86v7Contexts::new(true),
            last_ins: vec![[0; 16]; OPS],
            cur_ins: [0; 16],
            last_imm: vec![0; 1 << FORM_BITS],
            follow: vec![0; OPS],
            prev2_ins: 0,
            prev_ins: 0,
            ins: 0,
            cur: 0,
        }
    }

    fn v4(&self) -> &X86v4Contexts {
        self.v7.v4()
    }

    /// The current instruction's opcode with REX.W as bit 12.
    fn op_w(&self) -> usize {
        let v = self.v4();
        (v.opcode | u32::from(v.rex & 8 != 0) << 12) as usize & (OPS - 1)
    }

    /// The immediate table's slot of the current form.
    fn form(&self) -> usize {
        let v = self.v4();
        (hash2(self.op_w() as u32, v.modrm << 12 | v.prefix_state()) >> (32 - FORM_BITS)) as usize
    }
}

impl ContextModel for X86v10Contexts {
    forward_family!(v7; selector_size, selector, apm_byte);

    fn contexts(&self) -> usize {
        self.v7.contexts() + NEW
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let n7 = self.v7.contexts();
        self.v7.hashes(ctx, &mut out[..n7]);
        let o = &mut out[n7..];
        let (c4, pos) = (ctx.c4(), ctx.pos);
        let c1 = c4 & 0xFF;
        if self.v7.is_data(pos) {
            // Records: the bytes 8, 16 and 24 back at the same column.
            let at = |k: usize| -> u32 {
                match pos.checked_sub(k) {
                    Some(p) if ctx.vis.known(p) => u32::from(ctx.data[p]),
                    _ => 0x100,
                }
            };
            let (a8, a16, a24) = (at(8), at(16), at(24));
            let p = pos as u32;
            o[0] = hash2(0x7E00, (p & 7) << 18 | a8 << 9 | a16);
            o[1] = hash2(0x7E01, (p & 7) << 18 | a8 << 9 | c1);
            o[2] = hash2(0x7E02, ((p % 24) << 18) | a24 << 9 | at(48));
            o[3] = hash2(0x7E03, ((p % 24) << 18) | a24 << 9 | c1);
            o[4] = hash2(hash2(0x7E04, (p & 15) << 18 | a16 << 9 | at(32)), c1);
            // Order 0 of the data bytes.
            o[5] = 0x7E05;
        } else {
            let v = self.v4();
            let role = v.role();
            let idx = u32::from(v.index).min(15);
            let pre = v.prefix_state();
            let (_, modrm, _, prev) = v.instruction();
            let slot = v.operand_slot();
            if role == OPCODE {
                let f = self.follow[prev as usize & (OPS - 1)];
                let same = if idx < 4 {
                    f >> (8 * idx) & 0xFF
                } else {
                    0x100
                };
                o[0] = hash2(hash2(self.prev_ins, self.prev2_ins), pre << 4 | idx);
                o[1] = hash2(hash2(self.ins, self.prev_ins), 0x4100 | idx);
                o[2] = hash2(hash2(prev, v.prev2_op << 16 | idx), same << 12 | pre);
                o[3] = hash2(self.prev_ins, c4 & 0xFFFF | 0x42 << 24);
                o[4] = hash2(hash2(prev << 8 | c1, v.prev_modrm), idx | 0x43 << 8);
                // Order 0 of the instruction part.
                o[5] = hash2(0x7F50, idx);
            } else {
                let last = &self.last_ins[self.op_w()];
                let i = idx as usize;
                let same = u32::from(last[i]);
                let same2 = u32::from(last[(i + 1) & 15]) << 8 | same;
                let key = (self.op_w() as u32) << 4 | idx;
                let imm = self.last_imm[self.form()];
                let so_far = if role == DISP || role == IMM {
                    let j = slot & 0xF;
                    if j >= 4 {
                        self.cur
                    } else {
                        self.cur & ((1u32 << (8 * j)) - 1)
                    }
                } else {
                    0x100_0000 | c1
                };
                o[0] = hash2(hash2(key, same), pre | 0x45 << 16);
                o[1] = hash2(hash2(key, same2), so_far ^ 0x46 << 24);
                o[2] = hash2(hash2(key | role << 20, modrm), same << 8 ^ so_far);
                o[3] = if role == IMM {
                    hash2(hash2(key, imm), so_far ^ 0x47 << 24)
                } else {
                    hash2(hash2(key, self.ins), 0x48)
                };
                o[4] = hash2(hash2(key | role << 20, prev), so_far ^ same << 24);
                o[5] = hash2(0x7F60, role << 8 | slot);
            }
        }
        for (h, j) in o.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0x7F00 + j);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        let (role, slot, idx) = {
            let v = self.v4();
            (v.role(), v.operand_slot(), usize::from(v.index))
        };
        if idx < 16 {
            self.cur_ins[idx] = byte;
        }
        if (role == DISP || role == IMM)
            && X86v4Contexts::add_operand_byte(&mut self.cur, slot, byte)
        {
            if role == IMM {
                let f = self.form();
                self.last_imm[f] = self.cur;
            }
            self.cur = 0;
        }
        self.ins = hash2(self.ins, u32::from(byte) | 0x4900);
        let before = self.v4().prev_op as usize & (OPS - 1);
        self.v7.observe(data, pos, byte);
        if self.v4().index == 0 {
            // An instruction ended: its opcode is now the previous one.
            let k = self.v4().prev_op as usize & (OPS - 1);
            let n = (idx + 1).min(16);
            let mut rec = [0u8; 16];
            rec[..n].copy_from_slice(&self.cur_ins[..n]);
            self.last_ins[k] = rec;
            self.follow[before] = u32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]);
            self.prev2_ins = self.prev_ins;
            self.prev_ins = self.ins;
            self.ins = 0;
            self.cur = 0;
        }
    }
}
