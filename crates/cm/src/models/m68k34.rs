//! 68000 code contexts of CM revision 34 (doc/FORMAT.md 4.45.3): revision
//! 12's family ([`M68k12Contexts`], with revision 5's resource-fork and
//! instruction decoder) plus contexts from where the code's branches,
//! calls and PC-relative references went.
//!
//! A 68000 branch (`Bcc`, `BRA`, `BSR`: opcode 0x6xyy, an 8-bit
//! displacement in the opcode's low byte or a 16-bit one in the extension
//! word; `DBcc`: a 16-bit one) or a `d16(PC)` operand (`JSR`, `JMP`,
//! `PEA`, `LEA`) names its target relative to the program counter, so the
//! same label is reached by different bytes from different places. The
//! family remembers the targets as block positions and, at a displacement
//! byte, offers the byte that would reach a recent target (several exits
//! to one label, a loop's head after the `BRA` into its test), the call
//! targets, the `JSR d16(A5)` jump-table offsets and the `PEA`/`LEA
//! d16(PC)` references (with the highest so far) likewise, for a
//! `DBcc` the byte that would reach the instruction after the last one
//! that set its counter register (the loop's head), and at an opcode word
//! whether a recent branch or call went where it starts; elsewhere, the
//! instruction so far with the last two or three whole instructions and
//! with the last one in the current function. Every context is declared
//! in `M68k34Contexts::hashes_at`; the mixer selector and the order-1 APM
//! byte are revision 5's.

use super::forward_family;
use super::m68k12::M68k12Contexts;
use super::{ByteCtx, ContextModel, hash2, move_to_front};

/// Contexts revision 34 adds.
const NEW: usize = 5;

/// Branch targets remembered.
const TARGETS: usize = 16;

/// Call targets (and jump-table offsets, and PC-relative references)
/// remembered.
const CALLS: usize = 3;

/// Bytes of memory the family allocates besides revision 12's, over a
/// bound (its target lists and positions).
pub(crate) const MEMORY: u64 = 4 * (TARGETS as u64 + 3 * CALLS as u64) + 64;

/// What a displacement byte's operand names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operand {
    /// A branch (`Bcc`, `BRA`, `DBcc`, `JMP d16(PC)`), relative.
    Branch,
    /// A call (`BSR`, `JSR d16(PC)`), relative.
    Call,
    /// A `PEA`/`LEA d16(PC)` reference, relative.
    Ref,
    /// A `JSR d16(A5)` jump-table offset, absolute.
    Table,
}

/// The revision-34 68000 family: revision 12's 27 contexts and 5 of its own.
#[derive(Debug, Clone)]
pub(crate) struct M68k34Contexts {
    m12: M68k12Contexts,
    /// Recent branch targets (block positions), the newest first; 0: none.
    targets: [u32; TARGETS],
    /// Recent call targets, the newest first.
    calls: [u32; CALLS],
    /// Recent `PEA`/`LEA d16(PC)` targets, the newest first.
    refs: [u32; CALLS],
    /// Recent `JSR d16(A5)` offsets, the newest first (0x1_0000: none).
    table: [u32; CALLS],
    /// Block position after the last `BRA` (where a loop's body starts).
    after_bra: u32,
    /// Hash of the current instruction's words so far.
    cur: u32,
    /// Hashes of the two instructions before the current one, the last
    /// first.
    hist: [u32; 2],
    /// Block position of the last `LINK` opcode word (the function's
    /// start).
    link: u32,
    /// Per data register: the block position after the last instruction
    /// that wrote it (`MOVEQ`, `MOVE` to it; where a `DBcc` loop on it
    /// starts), 0: none.
    dreg_end: [u32; 8],
    /// The data register the current instruction writes (8: none).
    dreg: usize,
    /// The highest `PEA`/`LEA d16(PC)` target so far (0: none).
    frontier: u32,
}

/// The 68000 opcode `op`'s kind of PC-relative (or jump-table) first
/// extension word, if it has one.
fn ext_operand(op: u16) -> Option<Operand> {
    match op {
        _ if op >> 12 == 6 && op & 0xFF == 0 => Some(if op >> 8 == 0x61 {
            Operand::Call
        } else {
            Operand::Branch
        }),
        _ if op & 0xF0F8 == 0x50C8 => Some(Operand::Branch),
        0x4EFA => Some(Operand::Branch),
        0x4EBA => Some(Operand::Call),
        0x4EAD => Some(Operand::Table),
        0x487A => Some(Operand::Ref),
        _ if op & 0xF1FF == 0x41FA => Some(Operand::Ref),
        _ => None,
    }
}

/// The data register the 68000 opcode `w` writes whole or in part as a
/// `MOVEQ` or a `MOVE` destination (8: none).
fn dest_dreg(w: u16) -> usize {
    let reg = usize::from((w >> 9) & 7);
    match w >> 12 {
        7 if w & 0x0100 == 0 => reg,
        1..=3 if (w >> 6) & 7 == 0 => reg,
        _ => 8,
    }
}

impl M68k34Contexts {
    /// A family before the resource fork header.
    pub fn new() -> Self {
        M68k34Contexts {
            m12: M68k12Contexts::new(),
            targets: [0; TARGETS],
            calls: [0; CALLS],
            refs: [0; CALLS],
            table: [0x1_0000; CALLS],
            after_bra: 0,
            cur: 0,
            hist: [0; 2],
            link: 0,
            dreg_end: [0; 8],
            dreg: 8,
            frontier: 0,
        }
    }

    /// The expected byte `j` (0: high, 1: low; `bytes` 1 for a short
    /// branch's) of the displacement that reaches target `t` from `base`,
    /// with whether the bytes so far (`hi`, for `j == 1`) agree: `agrees
    /// << 8 | byte`, or 0x200 when `t` is 0 or out of reach.
    fn expect(t: u32, base: u32, bytes: u32, j: u32, hi: u32) -> u32 {
        if t == 0 {
            return 0x200;
        }
        let v = t.wrapping_sub(base);
        let reach = if bytes == 1 { 0x80 } else { 0x8000 };
        if v.wrapping_add(reach) >= 2 * reach || (bytes == 1 && (v & 0xFF == 0 || v & 0xFF == 0xFF))
        {
            return 0x200;
        }
        Self::expect_abs(v & 0xFFFF, bytes, j, hi)
    }

    /// [`expect`](Self::expect) of an absolute 16-bit value `v` (0x1_0000:
    /// none).
    fn expect_abs(v: u32, bytes: u32, j: u32, hi: u32) -> u32 {
        if v > 0xFFFF {
            return 0x200;
        }
        if bytes == 1 {
            return 0x100 | (v & 0xFF);
        }
        if j == 0 {
            0x100 | v >> 8
        } else {
            u32::from(hi == v >> 8) << 8 | (v & 0xFF)
        }
    }
}

impl ContextModel for M68k34Contexts {
    forward_family!(m12; selector_size, selector, apm_byte);

    fn contexts(&self) -> usize {
        self.m12.contexts() + NEW
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        self.hashes_at(ctx, out);
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.follow(pos, byte);
        self.m12.observe(data, pos, byte);
    }
}

impl M68k34Contexts {
    /// Instruction-level contexts (`o`, 3 of them): the instruction so far
    /// with the last two or three whole instructions, and with the last
    /// one in the current function.
    fn instructions(&self, ctx: &ByteCtx<'_>, o: &mut [u32]) {
        let m = self.m12.m5();
        let slot = m.slot();
        let low = m.low(ctx.pos);
        let hi = if low { 0x100 | (ctx.c4() & 0xFF) } else { 0 };
        let at = slot << 12 | u32::from(low) << 9 | hi;
        let (part, i1, i2, i3) = if slot == 0 {
            (0, self.cur, self.hist[0], self.hist[1])
        } else {
            (self.cur, self.hist[0], self.hist[1], 0)
        };
        o[0] = hash2(hash2(0x3501 ^ at << 8, part), hash2(i1, i2));
        o[1] = hash2(hash2(0x3502 ^ at << 8, part), hash2(hash2(i1, i2), i3));
        o[2] = hash2(hash2(0x3503 ^ at << 8, part), hash2(i1, self.link));
    }

    /// Follows the targets and instructions over the byte at `pos`.
    fn follow(&mut self, pos: usize, byte: u8) {
        let m = self.m12.m5();
        let header = m.next_resource >= 16 && pos == m.next_resource.saturating_add(3);
        let word = !header && m.next_resource != 0 && m.low(pos);
        let slot = m.slot();
        if word && slot != 7 {
            let p = pos as u32;
            let w = m.high << 8 | u16::from(byte);
            if slot == 0 && w >> 12 == 6 && !matches!(w & 0xFF, 0 | 0xFF) {
                // A short branch: from the opcode word's end.
                let t = (p + 1).wrapping_add(w as u8 as i8 as u32);
                if w >> 8 == 0x61 {
                    move_to_front(&mut self.calls, t);
                } else {
                    move_to_front(&mut self.targets, t);
                    if w >> 8 == 0x60 {
                        self.after_bra = p + 1;
                    }
                }
            } else if slot == 1 {
                let op = m.op;
                let t = (p - 1).wrapping_add(w as i16 as u32);
                match ext_operand(op) {
                    Some(Operand::Branch) => {
                        move_to_front(&mut self.targets, t);
                        if op == 0x6000 {
                            self.after_bra = p + 1;
                        }
                    }
                    Some(Operand::Call) => move_to_front(&mut self.calls, t),
                    Some(Operand::Ref) => {
                        self.frontier = self.frontier.max(t);
                        move_to_front(&mut self.refs, t);
                    }
                    Some(Operand::Table) => move_to_front(&mut self.table, u32::from(w)),
                    None => {}
                }
            }
            if slot == 0 {
                if self.dreg < 8 {
                    self.dreg_end[self.dreg] = p - 1;
                }
                self.dreg = dest_dreg(w);
                self.hist = [self.cur, self.hist[0]];
                self.cur = hash2(0x3500, u32::from(w));
                if w & 0xFFF8 == 0x4E50 {
                    self.link = p;
                }
            } else {
                self.cur = hash2(self.cur, u32::from(w));
            }
        }
    }
}

impl M68k34Contexts {
    /// The contexts of [`ContextModel::hashes`].
    fn hashes_at(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let n12 = self.m12.contexts();
        self.m12.hashes(ctx, &mut out[..n12]);
        let m = self.m12.m5();
        let o = &mut out[n12..n12 + 5];
        let code = m.next_resource >= 16
            && m.word_base != 0
            && !(m.next_resource..=m.next_resource.saturating_add(3)).contains(&ctx.pos);
        let slot = m.slot();
        if !code || slot == 7 {
            for (k, h) in o.iter_mut().enumerate() {
                *h = hash2(0x3400, k as u32);
            }
            return;
        }
        let pos = ctx.pos as u32;
        let low = m.low(ctx.pos);
        let j = u32::from(low);
        let hi = if low { ctx.c4() & 0xFF } else { 0x100 };
        // The operand this byte belongs to, its base (the PC its
        // displacement adds to) and its size.
        let operand = if slot == 0 && low && hi >> 4 == 6 {
            Some((
                if hi == 0x61 {
                    Operand::Call
                } else {
                    Operand::Branch
                },
                pos + 1,
                1,
            ))
        } else if slot == 1 {
            ext_operand(m.op).map(|k| (k, pos - j, 2))
        } else {
            None
        };
        match operand {
            Some((kind, base, bytes)) => {
                let key = (kind as u32) << 12
                    | if slot == 0 { hi } else { u32::from(m.op >> 8) } << 4
                    | bytes << 2
                    | j;
                let e = |t: u32| Self::expect(t, base, bytes, j, hi);
                match kind {
                    Operand::Branch => {
                        let ahead = self
                            .targets
                            .iter()
                            .filter(|&&t| t >= base)
                            .min()
                            .copied()
                            .unwrap_or(0);
                        let behind = self
                            .targets
                            .iter()
                            .filter(|&&t| t != 0 && t < base)
                            .max()
                            .copied()
                            .unwrap_or(0);
                        o[0] = hash2(0x3410 | e(self.targets[0]) << 16, key);
                        o[1] = hash2(0x3420 | e(ahead) << 16, key);
                        o[2] = hash2(0x3430 | e(behind) << 16, key);
                        let head = if m.op & 0xF0F8 == 0x50C8 && slot == 1 {
                            self.dreg_end[usize::from(m.op & 7)]
                        } else {
                            self.after_bra
                        };
                        o[3] = hash2(0x3440 | e(head) << 16, key);
                        o[4] = hash2(0x3450 | e(self.targets[1]) << 16, key);
                    }
                    Operand::Call | Operand::Ref | Operand::Table => {
                        let list = match kind {
                            Operand::Call => &self.calls,
                            Operand::Ref => &self.refs,
                            _ => &self.table,
                        };
                        let e = |t: u32| {
                            if kind == Operand::Table {
                                Self::expect_abs(t, bytes, j, hi)
                            } else {
                                e(t)
                            }
                        };
                        o[0] = hash2(0x3460 | e(list[0]) << 16, key);
                        o[1] = hash2(0x3470 | e(list[1]) << 16, key);
                        o[2] = hash2(0x3480 | e(list[2]) << 16, key);
                        o[3] = hash2(0x3490 | e(list[0]) << 16, key | e(list[1]) << 20);
                        let far = if kind == Operand::Ref {
                            self.frontier
                        } else {
                            0
                        };
                        o[4] = hash2(0x34A0 | e(far) << 16, key);
                    }
                }
            }
            None => {
                // At an opcode word: whether a recent branch went here.
                let start = if slot == 0 { pos - j } else { 0 };
                let hit = self
                    .targets
                    .iter()
                    .position(|&t| t == start)
                    .map_or(0, |k| k as u32 + 1);
                let call = u32::from(slot == 0 && self.calls.contains(&start));
                let s = slot << 12 | j << 9 | hi;
                o[0] = hash2(0x34B0 | hit.min(3) << 16 | call << 20, s);
                o[1] = hash2(
                    hash2(0x34C0 | u32::from(hit > 0) << 16 | call << 20, s),
                    u32::from(m.op),
                );
                self.instructions(ctx, &mut o[2..]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displacement_bytes() {
        // A word branch at 100 back to 60: displacement -40 = 0xFFD8.
        assert_eq!(M68k34Contexts::expect(60, 100, 2, 0, 0x100), 0x1FF);
        assert_eq!(M68k34Contexts::expect(60, 100, 2, 1, 0xFF), 0x1D8);
        assert_eq!(M68k34Contexts::expect(60, 100, 2, 1, 0x00), 0x0D8);
        // Out of a short branch's reach, or its 0 / 0xFF forms.
        assert_eq!(M68k34Contexts::expect(400, 100, 1, 1, 0x60), 0x200);
        assert_eq!(M68k34Contexts::expect(100, 100, 1, 1, 0x60), 0x200);
        assert_eq!(M68k34Contexts::expect(110, 100, 1, 1, 0x60), 0x10A);
        assert_eq!(M68k34Contexts::expect(0, 100, 2, 0, 0x100), 0x200);
        let mut l = [1, 2, 3, 4];
        move_to_front(&mut l, 3);
        assert_eq!(l, [3, 1, 2, 4]);
        move_to_front(&mut l, 9);
        assert_eq!(l, [9, 3, 1, 2]);
    }
}
