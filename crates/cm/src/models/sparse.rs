//! Sparse contexts: single earlier bytes that skip the nearest ones (bytes
//! -2, -3, -4, and -2 with -4), for data with a fixed stride.

use super::{ByteCtx, ContextModel, hash2};

/// The sparse family (four contexts).
#[derive(Debug, Clone)]
pub(crate) struct SparseContexts;

impl ContextModel for SparseContexts {
    fn contexts(&self) -> usize {
        4
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let c4 = ctx.c4();
        let masks = [0xFF00, 0xFF_0000, 0xFF00_0000, 0xFF00_FF00];
        for ((h, mask), j) in out.iter_mut().zip(masks).zip(0u32..) {
            *h = hash2(c4 & mask, 0x300 + j);
        }
    }
}
