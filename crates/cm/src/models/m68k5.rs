//! 68000 instruction contexts of CM revision 5 (doc/FORMAT.md 4.16.3) for a
//! block that starts with a Macintosh resource fork header: revision 4's
//! 16-bit word contexts ([`WordBeContexts`]) plus contexts from an
//! instruction-length decoder.
//!
//! The family follows the resource fork's data area: every resource is a
//! 4-byte big-endian length and its data, one after the other from the
//! header's data offset, so the family knows where each resource starts and
//! aligns its 16-bit words on the resource (a resource of odd length would
//! shift the block's word alignment). The first two words of each resource
//! (a CODE resource's header: jump-table offset and entry count) are skipped,
//! then the words are decoded as 68000 instructions: an opcode word and the
//! extension words its effective addresses, immediates and displacements
//! need ([`extension_words`]). The contexts know whether a word is an opcode
//! word or which extension word of which opcode, the opcodes of the previous
//! instructions, and the extension words the same opcode had the last time
//! it was seen (stack-frame offsets, jump-table offsets of `JSR d16(A5)`,
//! immediates repeat per opcode). Where the data is not code the decoder is
//! merely wrong, which costs compression, never correctness. Its contexts,
//! mixer selector and order-1 APM byte are declared in
//! [`M68k5Contexts::hashes`], [`M68k5Contexts::selector`] and
//! [`M68k5Contexts::apm_byte`].

use super::m68k::WordBeContexts;
use super::{ByteCtx, ContextModel, hash2};

/// Entries of the last-extension table (indexed by the opcode word).
const LAST_EXT: usize = 1 << 16;

/// Extension words an effective address of `mode`/`reg` needs, for an
/// operand of `size` bytes (1, 2 or 4; only immediates depend on it).
fn ea_words(mode: u16, reg: u16, size: u8) -> u8 {
    match mode {
        5 | 6 => 1,
        7 => match reg {
            0 | 2 | 3 => 1,
            1 => 2,
            4 => {
                if size == 4 {
                    2
                } else {
                    1
                }
            }
            _ => 0,
        },
        _ => 0,
    }
}

/// Operand size in bytes of the usual two size bits (0: byte, 1: word,
/// 2: long; 3 counts as a word).
fn size_of(bits: u16) -> u8 {
    match bits & 3 {
        0 => 1,
        2 => 4,
        _ => 2,
    }
}

/// How many extension words follow the 68000 opcode word `w` (0 to 4): its
/// immediates, displacements, register masks and the extension words of its
/// effective addresses. The zero word, which pads code between functions,
/// counts as one word without extensions. An invalid opcode is read as one
/// without extensions.
pub(crate) fn extension_words(w: u16) -> u8 {
    let mode = (w >> 3) & 7;
    let reg = w & 7;
    let size = (w >> 6) & 3;
    let ea = |sz: u8| ea_words(mode, reg, sz);
    match w >> 12 {
        0x0 => {
            if w == 0 {
                0
            } else if w & 0x0100 != 0 {
                if mode == 1 {
                    1 // MOVEP
                } else {
                    ea(1) // BTST/BCHG/BCLR/BSET Dn, <ea>
                }
            } else if (w >> 9) & 7 == 4 {
                1 + ea(1) // BTST/BCHG/BCLR/BSET #n, <ea>
            } else if mode == 7 && reg == 4 {
                1 // ORI/ANDI/EORI to CCR or SR
            } else {
                let sz = size_of(size);
                let imm = if sz == 4 { 2 } else { 1 };
                imm + ea(sz)
            }
        }
        0x1..=0x3 => {
            let sz = match w >> 12 {
                1 => 1,
                2 => 4,
                _ => 2,
            };
            ea(sz) + ea_words((w >> 6) & 7, (w >> 9) & 7, sz)
        }
        0x4 => match w {
            0x4E72 | 0x4E74 => 1,                                // STOP, RTD
            0x4E50..=0x4E57 => 1,                                // LINK
            0x4E40..=0x4E7F => 0,                                // TRAP, UNLK, MOVE USP, RTS...
            _ if w & 0xFB80 == 0x4880 && mode != 0 => 1 + ea(2), // MOVEM
            _ if w & 0xFFF8 == 0x4840 => 0,                      // SWAP
            _ => ea(if size == 3 { 2 } else { size_of(size) }),
        },
        0x5 => {
            if size == 3 && mode == 1 {
                1 // DBcc
            } else {
                ea(size_of(size))
            }
        }
        0x6 => match w & 0xFF {
            0 => 1,
            0xFF => 2,
            _ => 0,
        },
        0x7 | 0xA | 0xF => 0,
        0x8 | 0xC => {
            if size == 3 {
                ea(2) // DIVU/DIVS, MULU/MULS
            } else if w & 0x1F0 == 0x100 || (w >> 12 == 0xC && w & 0x130 == 0x100) {
                0 // SBCD, ABCD, EXG
            } else {
                ea(size_of(size))
            }
        }
        0x9 | 0xB | 0xD => {
            let opmode = (w >> 6) & 7;
            if opmode == 3 {
                ea(2)
            } else if opmode == 7 {
                ea(4)
            } else if opmode >= 4 && mode <= 1 {
                0 // SUBX, ADDX, CMPM (EOR with Dn/An: no extension either)
            } else {
                ea(size_of(opmode))
            }
        }
        _ => {
            if size == 3 {
                ea(2) // memory shifts
            } else {
                0
            }
        }
    }
}

/// The revision-5 68000 family: [`WordBeContexts`]'s 8 contexts and 6 of
/// its own, a mixer selector of 2 * 8 * 16 byte contexts and the order-1
/// APM's byte.
#[derive(Debug, Clone)]
pub(crate) struct M68k5Contexts {
    pub(crate) words: WordBeContexts,
    /// Block position of the next resource's length (from the header's
    /// data offset on; 0 before the header is complete).
    pub(crate) next_resource: usize,
    /// Block position where the current resource's words start (its parity
    /// aligns the words).
    pub(crate) word_base: usize,
    /// Words of the current resource's header still to skip.
    pub(crate) skip: u8,
    /// The high byte of the word being read.
    pub(crate) high: u16,
    /// Extension words of the current instruction left, and how many it
    /// has (0 at an opcode word).
    pub(crate) ext_left: u8,
    pub(crate) ext_count: u8,
    /// The current opcode word and the three before it.
    pub(crate) op: u16,
    pub(crate) prev: [u16; 3],
    /// The extension words so far of the current instruction (the last
    /// two).
    pub(crate) ext: u32,
    /// The first extension word of the last instruction with each opcode
    /// word.
    pub(crate) last_ext: Vec<u16>,
}

impl M68k5Contexts {
    /// A family before the resource fork header.
    pub fn new() -> Self {
        M68k5Contexts {
            words: WordBeContexts,
            next_resource: 0,
            word_base: 0,
            skip: 0,
            high: 0,
            ext_left: 0,
            ext_count: 0,
            op: 0,
            prev: [0; 3],
            ext: 0,
            last_ext: vec![0; LAST_EXT],
        }
    }

    /// Follows the decoder over one whole word.
    fn step_word(&mut self, w: u16) {
        if self.skip > 0 {
            self.skip -= 1;
            return;
        }
        if self.ext_left == 0 {
            self.prev = [self.op, self.prev[0], self.prev[1]];
            self.op = w;
            self.ext_count = extension_words(w);
            self.ext_left = self.ext_count;
            self.ext = 0;
        } else {
            if self.ext_left == self.ext_count {
                self.last_ext[usize::from(self.op)] = w;
            }
            self.ext = self.ext << 16 | u32::from(w);
            self.ext_left -= 1;
        }
    }

    /// The next word's place: 0 for an opcode word, else the extension
    /// word's number (1 to 4); 7 in a resource's header.
    pub(crate) fn slot(&self) -> u32 {
        if self.skip > 0 {
            7
        } else if self.ext_left == 0 {
            0
        } else {
            u32::from(self.ext_count - self.ext_left) + 1
        }
    }

    /// Whether the byte at `pos` is a word's low byte.
    pub(crate) fn low(&self, pos: usize) -> bool {
        (pos ^ self.word_base) & 1 == 1
    }
}

impl ContextModel for M68k5Contexts {
    fn contexts(&self) -> usize {
        8 + 6
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let low = self.low(ctx.pos);
        self.words.hashes_at(ctx, low, &mut out[..8]);
        let hi = if low { 0x100 | (ctx.c4() & 0xFF) } else { 0 };
        let at = u32::from(low) << 9 | hi;
        let slot = self.slot();
        let op = u32::from(self.op);
        let [p1, p2, p3] = self.prev.map(u32::from);
        let last = u32::from(self.last_ext[usize::from(self.op)]);
        let o = &mut out[8..];
        if slot == 0 {
            // At an opcode word: the previous opcodes.
            o[0] = hash2(at << 16 | op, 0x5100);
            o[1] = hash2(hash2(at << 16 | op, p1), 0x5101);
            o[2] = hash2(hash2(at << 16 | op, p1 << 16 | p2), 0x5102);
            o[3] = hash2(
                at << 16 | (op >> 12) << 8 | (p1 >> 12) << 4 | p2 >> 12,
                0x5103,
            );
            o[4] = hash2(hash2(at << 16 | op, p1 << 16 | p2), p3 | 0x5104 << 16);
            o[5] = hash2(at << 16 | (op & 0xF1C0), 0x5105);
        } else {
            // An extension word: of which opcode, which one, what the
            // opcode had last time, the previous opcode.
            let s = slot << 28 | at << 16;
            o[0] = hash2(s | op, 0x5110);
            o[1] = hash2(hash2(s | op, last), 0x5111);
            o[2] = hash2(hash2(s | op, self.ext), 0x5112);
            o[3] = hash2(hash2(s | op, p1), 0x5113);
            o[4] = hash2(hash2(s | op, p1 << 16 | p2), 0x5114);
            o[5] = hash2(s | last, 0x5115);
        }
    }

    fn selector_size(&self) -> usize {
        2 * 8 * 16 * 8
    }

    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        let low = usize::from(self.low(ctx.pos));
        let slot = self.slot() as usize;
        let group = usize::from(if slot == 0 { self.prev[0] } else { self.op } >> 12);
        (low * 8 + slot) * 16 + group
    }

    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        Some(self.words.apm_byte_at(ctx, self.low(ctx.pos)))
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        // The family is installed once the 16-byte header is complete.
        if self.next_resource == 0 && pos >= 15 {
            let off = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
            self.next_resource = (off as usize).max(16);
        }
        if self.next_resource >= 16 && pos == self.next_resource.saturating_add(3) {
            let b = &data[pos - 3..pos];
            let len = u32::from_be_bytes([b[0], b[1], b[2], byte]) as usize;
            self.word_base = pos + 1;
            self.next_resource = (pos + 1).saturating_add(len);
            self.skip = 2;
            self.ext_left = 0;
            return;
        }
        if self.low(pos) {
            self.step_word(self.high << 8 | u16::from(byte));
        } else {
            self.high = u16::from(byte);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_lengths() {
        for (w, n) in [
            (0x4E56u16, 1), // LINK A6, #d
            (0x2F2E, 1),    // MOVE.L d16(A6), -(SP)
            (0x486E, 1),    // PEA d16(A6)
            (0x3F3C, 1),    // MOVE.W #imm, -(SP)
            (0x2F3C, 2),    // MOVE.L #imm, -(SP)
            (0x4EAD, 1),    // JSR d16(A5)
            (0x4E75, 0),    // RTS
            (0x4E5E, 0),    // UNLK A6
            (0x6700, 1),    // BEQ.W
            (0x6704, 0),    // BEQ.S
            (0x48E7, 1),    // MOVEM.L regs, -(SP)
            (0x4CDF, 1),    // MOVEM.L (SP)+, regs
            (0x48C0, 0),    // EXT.L D0
            (0xA85C, 0),    // A-line trap
            (0x0C6E, 2),    // CMPI.W #imm, d16(A6)
            (0x1D7C, 2),    // MOVE.B #imm, d16(A6)
            (0x51CF, 1),    // DBRA D7
            (0x7000, 0),    // MOVEQ
            (0x0000, 0),    // padding
            (0x23F9, 4),    // MOVE.L abs.l, abs.l
            (0xD0BC, 2),    // ADD.L #imm, D0
            (0x9E41, 0),    // SUB.W D1, D7
            (0xB0AE, 1),    // CMP.L d16(A6), D0
        ] {
            assert_eq!(extension_words(w), n, "{w:04X}");
        }
    }

    #[test]
    fn follows_resources_and_instructions() {
        let mut m = M68k5Contexts::new();
        // Header: data at 16; one resource of 12 bytes: a 4-byte CODE
        // header, LINK A6,#0 (2 words), RTS (1 word).
        let mut data = vec![0, 0, 0, 16, 0, 0, 0, 32, 0, 0, 0, 16, 0, 0, 0, 40];
        data.extend([0, 0, 0, 10, 0, 0, 0, 1, 0x4E, 0x56, 0, 0, 0x4E, 0x75]);
        let mut slots = Vec::new();
        for (pos, &b) in data.iter().enumerate() {
            if pos >= 20 && !m.low(pos) {
                slots.push(m.slot());
            }
            m.observe(&data, pos, b);
        }
        assert_eq!(slots, [7, 7, 0, 1, 0]);
        assert_eq!((m.op, m.prev[0]), (0x4E75, 0x4E56));
        assert_eq!(m.last_ext[0x4E56], 0);
    }
}
