//! x86 / x86-64 code contexts of CM revision 16 (doc/FORMAT.md 4.27.3): a
//! third family installed after revision 14's
//! ([`X86v14Contexts`](super::x86_14)) for an x86 ELF block. It follows the
//! bytes with its own instruction decoder ([`X86v4Contexts`], restarted
//! where the ELF program headers put an executable segment,
//! [`ElfLayout`]) and adds, after public descriptions of x86 models in
//! context-mixing compressors (no code taken):
//!
//! - an instruction-level history: the last three instructions' opcode,
//!   prefixes and ModRM mod/reg fields, their immediates and displacements
//!   left out;
//! - the ModRM and SIB of the last instruction with the same opcode, the
//!   instructions since the last return or padding;
//! - "expected byte" contexts for the targets of rip-relative
//!   displacements (made absolute with the instruction's end) and of calls
//!   and jumps (absolute after the E8/E9 transform): a table of recent
//!   targets keyed by the target's low bytes known so far.
//!
//! Every context is declared in [`X86v16Contexts::hashes`].

use super::elf7::ElfLayout;
use super::x86_4::{DISP, IMM, MODRM, SIB, X86v4Contexts};
use super::{ByteCtx, ContextModel, hash2};

/// Contexts of the family.
const CONTEXTS: usize = 4;

/// Entries of the per-opcode tables (opcode 0 to 0x2FF).
const OPS: usize = 0x300;
/// Entries of the target table (u32 each).
const TARGET_BITS: u32 = 16;

/// Bytes of memory the family adds, over a bound: the target table, the
/// per-opcode tables, a state map (1 KiB) per context and its own state.
pub(crate) const MEMORY: u64 =
    (4 << TARGET_BITS) + (OPS as u64) * 4 + CONTEXTS as u64 * 1024 + 1024;

/// The revision-16 x86 family.
#[derive(Debug, Clone)]
pub(crate) struct X86v16Contexts {
    dec: X86v4Contexts,
    elf: ElfLayout,
    /// The last three instructions (newest first): opcode, prefix state
    /// and ModRM mod/reg fields.
    hist: [u32; 3],
    /// Hash of the current instruction's bytes so far.
    ins: u32,
    /// The bytes of the current operand so far.
    cur: u32,
    /// Instructions since the last return, int3 or jump (at most 15).
    since_ret: u32,
    /// The last ModRM and SIB (0x100 | byte) of each opcode.
    last_modrm: Vec<u16>,
    last_sib: Vec<u16>,
    /// Recent absolute targets keyed by (kind, byte count, low bytes).
    targets: Vec<u32>,
}

impl X86v16Contexts {
    /// A decoder at an instruction boundary.
    pub fn new() -> Self {
        X86v16Contexts {
            dec: X86v4Contexts::new(),
            elf: ElfLayout::default(),
            hist: [0; 3],
            ins: 0,
            cur: 0,
            since_ret: 0,
            last_modrm: vec![0; OPS],
            last_sib: vec![0; OPS],
            targets: vec![0; 1 << TARGET_BITS],
        }
    }

    /// The current operand's bytes so far.
    fn so_far(&self) -> u32 {
        self.dec.operand_so_far(self.cur)
    }

    /// Whether the next operand bytes are a rip-relative displacement of 4
    /// bytes (ModRM mod 0, rm 5, no SIB).
    fn rip_relative(&self) -> bool {
        let d = &self.dec;
        d.role() == DISP && d.modrm & 0x1C7 == 0x105 && d.sib == 0 && d.disp_size == 4
    }

    /// Whether the next operand bytes are the 4-byte target of a call or
    /// jump (E8, E9).
    fn call_target(&self) -> bool {
        let d = &self.dec;
        d.role() == IMM && matches!(d.opcode, 0xE8 | 0xE9) && d.imm_size == 4
    }

    /// The target-table slot of kind `kind` for byte `j` of a target whose
    /// low `j` bytes are `low` (for `j == 0`: keyed by `first`).
    fn slot(kind: u32, j: u32, low: u32, first: u32) -> usize {
        let key = if j == 0 { first } else { low };
        (hash2(kind << 4 | j, key) >> (32 - TARGET_BITS)) as usize
    }

    /// The key of a target's first byte: the instruction form.
    fn first_key(&self) -> u32 {
        let d = &self.dec;
        d.opcode << 16 | d.prefix_state() << 4 | (d.modrm >> 3 & 7)
    }

    /// The expected byte of the current 4-byte target, with 0x100 set
    /// when the table has a target that agrees with the bytes so far.
    fn expected(&self, kind: u32, end: u32) -> u32 {
        let j = self.dec.operand_slot() & 0xF;
        let mask = if j == 0 { 0 } else { (1u32 << (8 * j)) - 1 };
        let low = end.wrapping_add(self.so_far()) & mask;
        let t = self.targets[Self::slot(kind, j, low, self.first_key())];
        if t == 0 || t & mask != low {
            return 0;
        }
        0x100 | (t.wrapping_sub(end) >> (8 * j) & 0xFF)
    }
}

impl ContextModel for X86v16Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let pos = ctx.pos;
        if self.elf.is_data(pos) {
            let c4 = ctx.c4();
            out[0] = hash2(0x6100, c4 & 0xFF_FFFF);
            out[1] = 0x6101;
            out[2] = 0x6102;
            out[3] = 0x6103;
        } else {
            let d = &self.dec;
            let role = d.role();
            let idx = u32::from(d.index).min(15);
            let op = d.opcode;
            let [h0, h1, h2] = self.hist;
            // The current instruction so far after the last three.
            out[0] = hash2(hash2(self.ins, h0), hash2(h1, h2) ^ idx);
            // The instruction form's last ModRM / SIB, the targets' expected
            // bytes, or the position after a return.
            let slot = d.operand_slot();
            out[1] = match role {
                MODRM => {
                    let last = u32::from(self.last_modrm[op as usize % OPS]);
                    hash2(0x6210 | last << 16, op << 12 | d.prefix_state())
                }
                SIB => {
                    let last = u32::from(self.last_sib[op as usize % OPS]);
                    hash2(0x6220 | last << 16, op << 12 | (d.modrm & 0x1FF))
                }
                DISP if self.rip_relative() => {
                    let e = self.expected(1, self.dec.instruction_end(pos));
                    hash2(0x6230 | e << 16, slot)
                }
                IMM if self.call_target() => {
                    let e = self.expected(2, 0);
                    hash2(0x6240 | e << 16, slot | (op & 1) << 8)
                }
                DISP | IMM => hash2(hash2(0x6250, op << 12 | slot), h0),
                _ => hash2(hash2(self.ins, self.since_ret << 8 | idx), h0),
            };
            // Operands: the target's bytes so far with the address.
            out[2] = match role {
                DISP if self.rip_relative() => {
                    let end = self.dec.instruction_end(pos);
                    hash2(hash2(0x6260, slot), self.so_far() ^ (end >> 16) << 24)
                }
                IMM if self.call_target() => hash2(
                    hash2(0x6270, slot),
                    self.so_far() ^ (pos as u32 >> 16) << 24,
                ),
                DISP | IMM => hash2(hash2(0x6280, op << 12 | slot), self.so_far()),
                _ => hash2(hash2(self.ins, h0 & 0x3FF), 0x6290 | idx),
            };
            out[3] = hash2(hash2(self.ins, self.since_ret), hash2(h0, 0x62A0 | idx));
        }
        for (h, j) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0x6E00 + j);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.elf.observe(data, pos);
        let role = self.dec.role();
        let slot = self.dec.operand_slot();
        if role == DISP || role == IMM {
            let last = X86v4Contexts::add_operand_byte(&mut self.cur, slot, byte);
            if slot == 0x43 {
                // The last byte of a four-byte operand.
                let kind = if self.rip_relative() {
                    1
                } else if self.call_target() {
                    2
                } else {
                    0
                };
                if kind != 0 {
                    let end = if kind == 1 {
                        self.dec.instruction_end(pos)
                    } else {
                        0
                    };
                    let t = end.wrapping_add(self.cur);
                    let first = self.first_key();
                    for k in 0..4 {
                        let mask = if k == 0 { 0 } else { (1u32 << (8 * k)) - 1 };
                        self.targets[Self::slot(kind, k, t & mask, first)] = t;
                    }
                }
            }
            if last {
                self.cur = 0;
            }
        }
        let op = self.dec.opcode as usize % OPS;
        if role == MODRM {
            self.last_modrm[op] = 0x100 | u16::from(byte);
        } else if role == SIB {
            self.last_sib[op] = 0x100 | u16::from(byte);
        }
        let (prefix, modrm) = (self.dec.prefix_state(), self.dec.modrm);
        let modrm = if role == MODRM {
            0x100 | u32::from(byte)
        } else {
            modrm
        };
        self.dec.step(byte);
        self.ins = hash2(self.ins, u32::from(byte) | 0x6400);
        if self.dec.index == 0 {
            let op = self.dec.prev_op & 0x3FF;
            let t = op | (prefix & 0x7FF) << 10 | (modrm >> 3 & 0x3F) << 21 | (modrm >> 8) << 27;
            self.hist = [t, self.hist[0], self.hist[1]];
            self.ins = 0;
            self.cur = 0;
            self.since_ret = if matches!(op, 0xC3 | 0xC2 | 0xCC | 0xE9 | 0xEB) {
                0
            } else {
                (self.since_ret + 1).min(15)
            };
        }
        if self.elf.code_starts(pos + 1) {
            self.dec = X86v4Contexts::new();
        }
    }
}
