//! 16-bit big-endian word contexts of CM revision 4 (doc/FORMAT.md 4.15.4)
//! for a block that starts with a Macintosh resource fork header, whose
//! CODE resources are 68000 machine code: instructions of one to five
//! big-endian 16-bit words (an opcode word, whose high byte mostly names
//! the instruction, then extension words).
//!
//! The family sees the block as 16-bit words aligned on even block
//! positions: each byte is the high (even position) or low (odd) byte of a
//! word, and its contexts are the previous whole words (as opcode words
//! and as their top-nibble instruction groups) with, for a low byte, the
//! word's high byte. Its contexts are declared in [`WordBeContexts::hashes`].

use super::{ByteCtx, ContextModel, hash2};

/// The 16-bit word family (8 contexts and the order-1 APM's byte: a low
/// byte's high byte, or the previous word's high byte); it keeps no state
/// of its own.
#[derive(Debug, Clone, Default)]
pub(crate) struct WordBeContexts;

/// Whether `h` is exactly the first 16 bytes of a Macintosh resource fork:
/// big-endian data offset, map offset, data length and map length, with the
/// data between 16 and 64 KiB into the file, ending at or before the map,
/// and a map of at least its 28-byte header and below 16 MiB.
pub(crate) fn is_resource_fork(h: &[u8]) -> bool {
    if h.len() != 16 {
        return false;
    }
    let be = |k: usize| u64::from(u32::from_be_bytes([h[k], h[k + 1], h[k + 2], h[k + 3]]));
    let (data_off, map_off, data_len, map_len) = (be(0), be(4), be(8), be(12));
    (16..=1 << 16).contains(&data_off)
        && data_len > 0
        && data_off + data_len <= map_off
        && (28..1 << 24).contains(&map_len)
}

impl WordBeContexts {
    /// The 16-bit word of the block ending just before position `end`
    /// (0 where not known).
    fn word(ctx: &ByteCtx<'_>, end: usize) -> u32 {
        let at = |p: usize| -> u32 {
            if p < ctx.pos && ctx.vis.known(p) {
                u32::from(ctx.data[p])
            } else {
                0
            }
        };
        match end.checked_sub(2) {
            Some(p) => at(p) << 8 | at(p + 1),
            None => 0,
        }
    }

    /// `(low, high byte + 0x100 or 0, w1, w2, w3)`: whether the byte is a
    /// low byte (`low`, given), the word's high byte (for a low byte) and the three whole
    /// words before it.
    fn words(ctx: &ByteCtx<'_>, low: bool) -> (u32, u32, u32, u32, u32) {
        let low = u32::from(low);
        let hi = if low == 1 {
            0x100 | (ctx.c4() & 0xFF)
        } else {
            0
        };
        let end = ctx.pos - low as usize;
        let w = |k: usize| end.checked_sub(2 * k).map_or(0, |e| Self::word(ctx, e));
        (low, hi, w(0), w(1), w(2))
    }
}

impl ContextModel for WordBeContexts {
    fn contexts(&self) -> usize {
        8
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        self.hashes_at(ctx, ctx.pos & 1 == 1, out);
    }

    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        Some(self.apm_byte_at(ctx, ctx.pos & 1 == 1))
    }
}

impl WordBeContexts {
    /// The contexts of [`ContextModel::hashes`] with the byte's place in its
    /// word given: a low byte when `low` (revision 4: odd block positions;
    /// revision 5's [`M68k5Contexts`](super::m68k5::M68k5Contexts): odd
    /// positions within a resource).
    pub(crate) fn hashes_at(&self, ctx: &ByteCtx<'_>, low: bool, out: &mut [u32]) {
        let (low, hi, w1, w2, w3) = Self::words(ctx, low);
        let at = low << 9 | hi;
        // 0: the previous word.
        out[0] = hash2(at, w1 | 0x68 << 16);
        // 1: the three previous words.
        out[1] = hash2(hash2(at << 16 | w1, w2), w3 | 0x6A << 16);
        // 2: the word two back alone (an opcode word before an extension
        // word).
        out[2] = hash2(at, w2 | 0x6B << 16);
        // 3: the instruction groups (top nibbles) of the three words before.
        out[3] = hash2(
            at,
            (w1 >> 12) << 8 | (w2 >> 12) << 4 | w3 >> 12 | 0x6C << 16,
        );
        // 4: the previous word's high byte and the byte before the word.
        let before = if low == 1 {
            (ctx.c4() >> 8) & 0xFF
        } else {
            ctx.c4() & 0xFF
        };
        out[4] = hash2(at, (w1 >> 8) << 8 | before | 0x6D << 16);
        // 5: the previous word and the one three back.
        out[5] = hash2(at << 16 | w1, w3 | 0x6E << 16);
        // 6: nothing (an order-0 bit history); 7: the byte's place alone
        // (with the high byte for a low byte).
        out[6] = hash2(0x70, 0x6F);
        out[7] = hash2(at, 0x6F);
    }

    /// The order-1 APM byte of [`ContextModel::apm_byte`] with the byte's
    /// place in its word given.
    pub(crate) fn apm_byte_at(&self, ctx: &ByteCtx<'_>, low: bool) -> u32 {
        let (low, hi, w1, _, _) = Self::words(ctx, low);
        if low == 1 { hi & 0xFF } else { w1 >> 8 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_fork_headers() {
        let obj2 = [
            0, 0, 1, 0, 0, 3, 0xBE, 0xEC, 0, 3, 0xBD, 0xEC, 0, 0, 5, 0x32,
        ];
        assert!(is_resource_fork(&obj2));
        assert!(!is_resource_fork(&obj2[..15]));
        let mut bad = obj2;
        bad[11] = 0xED; // data past the map
        assert!(!is_resource_fork(&bad));
        assert!(!is_resource_fork(b"0123456789abcdef"));
        assert!(!is_resource_fork(&[0; 16]));
    }
}
