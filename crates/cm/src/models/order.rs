//! Order-N contexts: the hash of the last `k` bytes for `k` in 1..=7, and the
//! "long" contexts of the last 8, 12, 16 or 24 bytes.

use super::{ByteCtx, ContextModel, hash2};

/// Context lengths of the `long` contexts.
pub const LONG_ORDERS: [usize; 4] = [8, 12, 16, 24];

/// The order-N family: bit `k - 1` of `orders` selects order `k`, bit `i`
/// of `long` the last `LONG_ORDERS[i]` bytes. Contexts come in that order:
/// orders ascending, then the long ones.
#[derive(Debug, Clone)]
pub(crate) struct OrderContexts {
    orders: Vec<u8>,
    long: Vec<u8>,
}

impl OrderContexts {
    /// The family for the `orders` and `long` bit sets of the configuration.
    pub fn new(orders: u8, long: u8) -> Self {
        OrderContexts {
            orders: (1..=7u8).filter(|k| orders & (1 << (k - 1)) != 0).collect(),
            long: (0..4u8).filter(|i| long & (1 << i) != 0).collect(),
        }
    }
}

impl ContextModel for OrderContexts {
    fn contexts(&self) -> usize {
        self.orders.len() + self.long.len()
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let (c4, c8) = (ctx.c4(), ctx.c8());
        let (short, long) = out.split_at_mut(self.orders.len());
        for (h, &k) in short.iter_mut().zip(&self.orders) {
            let lo = if k >= 4 {
                c4
            } else {
                c4 & ((1u32 << (8 * k)) - 1)
            };
            let hi = if k > 4 {
                c8 & ((1u32 << (8 * (k - 4))) - 1)
            } else {
                0
            };
            *h = hash2(hash2(lo, u32::from(k)), hi);
        }
        for (h, &j) in long.iter_mut().zip(&self.long) {
            let k = LONG_ORDERS[usize::from(j)];
            let from = ctx.pos.saturating_sub(k).max(ctx.st.start);
            let mut v = 0x500 + u32::from(j);
            for &b in &ctx.data[from..ctx.pos] {
                v = (v ^ u32::from(b)).wrapping_mul(0x0100_0193);
            }
            *h = hash2(v, k as u32);
        }
    }
}
