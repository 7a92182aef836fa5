//! Match contexts of CM revision 4 (doc/FORMAT.md 4.15.1): the byte the
//! match model expects, with its length and the last byte, as a hashed
//! context, so that the bit histories learn how far each expected byte is
//! trusted in each situation.

use super::{ByteCtx, ContextModel, hash2};

/// The match family (one context).
#[derive(Debug, Clone)]
pub(crate) struct MatchContexts;

impl ContextModel for MatchContexts {
    fn contexts(&self) -> usize {
        1
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let m = &ctx.st.matcher;
        let c1 = ctx.c4() & 0xFF;
        let expected = m.expected_byte().map_or(0, |b| 0x100 | u32::from(b));
        let len = match m.len() {
            0 => 0,
            n @ 1..=15 => n as u32,
            n if n < 32 => 16,
            _ => 17,
        };
        out[0] = hash2(expected | len << 9 | c1 << 16, 0x4_0006);
    }
}
