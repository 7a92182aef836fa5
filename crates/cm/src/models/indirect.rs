//! Indirect contexts of CM revision 4 (doc/FORMAT.md 4.15.1): for the last
//! byte, and for the last two bytes, the two bytes that followed their last
//! two occurrences, each hashed with the context itself. Where a context
//! was followed by the same bytes before, the prediction of what follows
//! carries over from those bytes.
//!
//! Contexts (in mixer order):
//! 0. `hash2(after1[c1] | c1 << 16, 0x4_0004)`
//! 1. `hash2(after2[c2 c1] | (c2 c1) << 16, 0x4_0005 ^ c1)`
//!
//! where `after1[x]` (256 entries) and `after2[x]` (65,536 entries) are
//! 16-bit histories: after a byte `b` that followed the byte `x` (the pair
//! `x`), `after1[x] = after1[x] << 8 | b` (and likewise `after2`), the last
//! byte lowest; both start at 0. The family reads only the bytes passed to
//! [`observe`](ContextModel::observe), in coding order.

use super::{ByteCtx, ContextModel, hash2};

/// How many contexts the family adds.
pub(crate) const INDIRECT_CONTEXTS: usize = 2;

/// The indirect family: see the module documentation.
#[derive(Debug, Clone)]
pub(crate) struct IndirectContexts {
    /// Per byte value: the last two bytes that followed it (the last lowest).
    after1: Box<[u16; 256]>,
    /// Per pair of bytes: the last two bytes that followed it.
    after2: Vec<u16>,
    /// The last two bytes seen by `observe` (the last lowest).
    last: u32,
}

impl IndirectContexts {
    /// Bytes of memory the family allocates.
    pub const MEMORY: u64 = 2 * 256 + 2 * 65536;

    /// A family with empty histories.
    pub fn new() -> Self {
        IndirectContexts {
            after1: Box::new([0; 256]),
            after2: vec![0; 1 << 16],
            last: 0,
        }
    }
}

impl ContextModel for IndirectContexts {
    fn contexts(&self) -> usize {
        INDIRECT_CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let c4 = ctx.c4();
        let c1 = c4 & 0xFF;
        let c2 = c4 & 0xFFFF;
        out[0] = hash2(u32::from(self.after1[c1 as usize]) | c1 << 16, 0x4_0004);
        out[1] = hash2(
            u32::from(self.after2[c2 as usize]) | c2 << 16,
            0x4_0005 ^ c1,
        );
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        let mut last = [self.last];
        v.u32s(&mut last);
        self.last = last[0];
        v.u16s(&mut self.after1[..]);
        v.u16s(&mut self.after2);
    }

    fn observe(&mut self, _data: &[u8], _pos: usize, b: u8) {
        let c1 = (self.last & 0xFF) as usize;
        let c2 = (self.last & 0xFFFF) as usize;
        self.after1[c1] = self.after1[c1] << 8 | u16::from(b);
        self.after2[c2] = self.after2[c2] << 8 | u16::from(b);
        self.last = self.last << 8 | u32::from(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_what_followed_the_last_bytes() {
        let mut t = IndirectContexts::new();
        let text = b"abxaby";
        for (pos, &b) in text.iter().enumerate() {
            t.observe(text, pos, b);
        }
        assert_eq!(
            t.after1[usize::from(b'b')],
            u16::from(b'x') << 8 | u16::from(b'y')
        );
        assert_eq!(
            t.after1[usize::from(b'a')],
            u16::from(b'b') << 8 | u16::from(b'b')
        );
        assert_eq!(t.after2[usize::from(b'a') << 8 | usize::from(b'b')], 0x7879);
        assert_eq!(t.last & 0xFFFF, u32::from(b'b') << 8 | u32::from(b'y'));
    }
}
