//! Bi-level image contexts (CM revision 1) for fax-like bitmaps: one bit
//! per pixel, rows of a fixed number of bytes, most bytes white (0).
//!
//! Such data has no header to find; the model switches to this family when
//! the first 64 KiB of a block are mostly zero bytes and the record detector
//! has found a row length (doc/FORMAT.md 4.11). Per bit it looks up the
//! pixels around the one being coded, in two dimensions: the pixels to its
//! left in its row and the ones above it in the two rows before, in three
//! templates of growing size, each with its own table of adaptive
//! probabilities (per-bit mixer inputs); two hashed contexts give the bytes
//! above to the context table as well.

use super::{ByteCtx, ContextModel, hash2};
use crate::prim::AdaptiveProbs;

/// Entries of the largest template's (hashed) table.
const BIG_BITS: u32 = 20;

/// The bi-level family (2 contexts, 3 per-bit inputs).
#[derive(Debug, Clone)]
pub(crate) struct BilevelContexts {
    /// Bytes per row.
    width: usize,
    /// The rows above around the byte being coded (24 bits: the bytes
    /// above-left, above and above-right), and the byte to its left.
    r1: u32,
    r2: u32,
    left: u32,
    small: AdaptiveProbs,
    medium: AdaptiveProbs,
    big: AdaptiveProbs,
    index: [usize; 3],
}

impl BilevelContexts {
    /// The family for rows of `width` bytes.
    pub fn new(width: usize) -> Self {
        BilevelContexts {
            width,
            r1: 0,
            r2: 0,
            left: 0,
            small: AdaptiveProbs::new(1 << 12, 255),
            medium: AdaptiveProbs::new(1 << 16, 255),
            big: AdaptiveProbs::new(1 << BIG_BITS, 255),
            index: [0; 3],
        }
    }

    /// Bytes `above - 1`, `above`, `above + 1` as 24 bits (0 where unknown).
    fn row(ctx: &ByteCtx<'_>, above: Option<usize>) -> u32 {
        let Some(a) = above else {
            return 0;
        };
        let at = |p: usize| -> u32 {
            if p < ctx.pos && ctx.vis.known(p) {
                u32::from(ctx.data[p])
            } else {
                0
            }
        };
        (a.checked_sub(1).map_or(0, at)) << 16 | at(a) << 8 | at(a + 1)
    }
}

impl ContextModel for BilevelContexts {
    fn contexts(&self) -> usize {
        2
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let w = self.width;
        let r1 = Self::row(ctx, ctx.pos.checked_sub(w));
        let r2 = Self::row(ctx, ctx.pos.checked_sub(2 * w));
        out[0] = hash2(r1 >> 8 & 0xFF, (r2 >> 8 & 0xFF) | 0xC00);
        out[1] = hash2(r1, (ctx.c4() & 0xFF) | 0xC01 << 8);
    }

    fn bit_inputs(&self) -> usize {
        3
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let w = self.width;
        self.r1 = Self::row(ctx, ctx.pos.checked_sub(w));
        self.r2 = Self::row(ctx, ctx.pos.checked_sub(2 * w));
        self.left = ctx.c4() & 0xFF;
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        // Pixels to the left, nearest lowest: the previous byte, then this
        // byte's bits so far.
        let done = 7 - i;
        let left = self.left << done | (c0 ^ (1 << done));
        // The pixel above this one is bit `8 + i` of a row window.
        let (r1, r2) = (self.r1, self.r2);
        let small = (left & 0xF) | ((r1 >> (i + 6)) & 0x1F) << 4 | ((r2 >> (i + 7)) & 7) << 9;
        let medium = (left & 0x3F) | ((r1 >> (i + 5)) & 0x7F) << 6 | ((r2 >> (i + 7)) & 7) << 13;
        let big = hash2(
            (left & 0xFF) | ((r1 >> (i + 4)) & 0x1FF) << 8,
            (r2 >> (i + 6)) & 0x1F,
        ) >> (32 - BIG_BITS);
        self.index = [small as usize, medium as usize, big as usize];
        out[0] = self.small.stretched(self.index[0]);
        out[1] = self.medium.stretched(self.index[1]);
        out[2] = self.big.stretched(self.index[2]);
    }

    fn update_bit(&mut self, bit: u32) {
        self.small.update(self.index[0], bit);
        self.medium.update(self.index[1], bit);
        self.big.update(self.index[2], bit);
    }
}
