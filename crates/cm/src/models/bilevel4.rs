//! Bi-level image contexts of CM revision 4 (doc/FORMAT.md 4.15.2): the
//! revision-1 bi-level family ([`BilevelContexts`], unchanged) plus eight
//! larger two-dimensional templates over the pixels to the left and in the
//! six rows above, each a table of adaptive probabilities (a per-bit mixer
//! input); the family's own mixer mixes all eleven per-bit predictions, its
//! weight sets chosen by the nearest pixels, into one more input. The byte
//! straight above is the model mixer's selector and the order-1 APM's
//! context.
//!
//! The templates, as pixels to the left, then per row above how many pixels
//! either side of the one straight above (`-` : row not used):
//!
//! | template | left | row 1 | row 2 | row 3 | row 4 | row 5 | row 6 |
//! |---|---:|---:|---:|---:|---:|---:|---:|
//! | 0 | 7 | 3 | 2 | 1 | - | - | - |
//! | 1 | 12 | 5 | 4 | 3 | 2 | - | - |
//! | 2 | 16 | 8 | - | - | - | - | - |
//! | 3 | 2 | 1 | 0 | 0 | 0 | 0 | 0 |
//! | 4 | 10 | 7 | 6 | 4 | 3 | 2 | 1 |
//! | 5 | 5 | 4 | 4 | 4 | - | - | - |
//! | 6 | 24 | 12 | - | - | - | - | - |
//! | 7 | 3 | 2 | 2 | 2 | 2 | - | - |
//!
//! Every table has `2^TABLE_BITS` entries: a template of at most
//! `TABLE_BITS` pixels indexes it directly, a larger one by hash.

use super::bilevel::BilevelContexts;
use super::forward_family;
use super::{ByteCtx, ContextModel, hash2};
use crate::mixer2::Mixer2;
use crate::prim::AdaptiveProbs;

/// Index bits of each template's table.
pub(crate) const TABLE_BITS: u32 = 20;
/// Rows above that the templates read.
const ROWS: usize = 6;
/// The templates: pixels to the left, then the half-width per row above
/// (`-1`: the row is not used).
const TEMPLATES: [(u32, [i32; ROWS]); 8] = [
    (7, [3, 2, 1, -1, -1, -1]),
    (12, [5, 4, 3, 2, -1, -1]),
    (16, [8, -1, -1, -1, -1, -1]),
    (2, [1, 0, 0, 0, 0, 0]),
    (10, [7, 6, 4, 3, 2, 1]),
    (5, [4, 4, 4, -1, -1, -1]),
    (24, [12, -1, -1, -1, -1, -1]),
    (3, [2, 2, 2, 2, -1, -1]),
];

/// The revision-4 bi-level family (2 contexts, 3 + 8 + 1 per-bit inputs).
#[derive(Debug, Clone)]
pub(crate) struct Bilevel4Contexts {
    inner: BilevelContexts,
    width: usize,
    /// Rows above: bytes `above - 2 ..= above + 2` as 40 bits, the
    /// leftmost highest (0 where unknown).
    rows: [u64; ROWS],
    /// The last 4 bytes of the stream, the last lowest.
    left: u32,
    tables: Vec<AdaptiveProbs>,
    index: [usize; TEMPLATES.len()],
    /// The family's mixer over its per-bit inputs, its weight sets chosen
    /// by the nearest pixels (template 3's and a 12-pixel template's).
    mixer: Mixer2,
}

/// Inputs of the family's mixer: the revision-1 family's three, the
/// templates', a bias.
const INNER: usize = 3 + TEMPLATES.len() + 1;

impl Bilevel4Contexts {
    /// The family for rows of `width` bytes.
    pub fn new(width: usize) -> Self {
        Bilevel4Contexts {
            inner: BilevelContexts::new(width),
            width,
            rows: [0; ROWS],
            left: 0,
            tables: TEMPLATES
                .iter()
                .map(|_| AdaptiveProbs::new(1 << TABLE_BITS, 255))
                .collect(),
            index: [0; TEMPLATES.len()],
            mixer: Mixer2::new(INNER, &[1 << 10, 1 << 12], 1, 6, 2),
        }
    }

    /// Bytes `a - 2 ..= a + 2` as 40 bits (0 where unknown or not before
    /// `ctx.pos`).
    fn row(ctx: &ByteCtx<'_>, above: Option<usize>) -> u64 {
        let Some(a) = above else {
            return 0;
        };
        let at = |p: Option<usize>| -> u64 {
            match p {
                Some(p) if p < ctx.pos && ctx.vis.known(p) => u64::from(ctx.data[p]),
                _ => 0,
            }
        };
        (0..5).fold(0, |acc, k| acc << 8 | at((a + k).checked_sub(2)))
    }
}

impl ContextModel for Bilevel4Contexts {
    forward_family!(inner; contexts, hashes);

    fn selector_size(&self) -> usize {
        256 * 8
    }

    /// The byte straight above.
    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        (Self::row(ctx, ctx.pos.checked_sub(self.width)) >> 16 & 0xFF) as usize
    }

    fn bit_inputs(&self) -> usize {
        self.inner.bit_inputs() + TEMPLATES.len() + 1
    }

    /// The byte straight above.
    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        Some(self.selector(ctx) as u32)
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.inner.begin_byte(ctx);
        for (k, r) in self.rows.iter_mut().enumerate() {
            *r = Self::row(ctx, ctx.pos.checked_sub((k + 1) * self.width));
        }
        self.left = ctx.c4();
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let k = self.inner.bit_inputs();
        self.inner.predict_bit(c0, i, &mut out[..k]);
        let done = 7 - i;
        // Pixels to the left, nearest lowest.
        let left = u64::from(self.left) << done | u64::from(c0 ^ (1 << done));
        for (t, (&(nl, half), o)) in TEMPLATES.iter().zip(&mut out[k..]).enumerate() {
            let mut bits = left & ((1 << nl) - 1);
            let mut n = nl;
            let mut h = 0u32;
            for (r, &hw) in self.rows.iter().zip(&half) {
                if hw < 0 {
                    continue;
                }
                // The pixel straight above is bit `16 + i` of the window.
                let w = 2 * hw as u32 + 1;
                let v = (r >> (16 + i - hw as u32)) & ((1 << w) - 1);
                if n + w > 48 {
                    h = hash2(h ^ bits as u32, (bits >> 32) as u32 | n << 16);
                    bits = 0;
                    n = 0;
                }
                bits |= v << n;
                n += w;
            }
            let idx = if h == 0 && n <= TABLE_BITS {
                bits as usize
            } else {
                (hash2(h ^ bits as u32, (bits >> 32) as u32 | (t as u32) << 20)
                    >> (32 - TABLE_BITS)) as usize
            };
            self.index[t] = idx;
            *o = self.tables[t].stretched(idx);
        }
        let n = k + TEMPLATES.len();
        for (j, &x) in out[..n].iter().enumerate() {
            self.mixer.set(j, x);
        }
        self.mixer.set(n, 256);
        self.mixer.select(0, self.index[3]);
        let (r1, r2) = (self.rows[0], self.rows[1]);
        let near = (left & 0xF) | ((r1 >> (14 + i)) & 0x1F) << 4 | ((r2 >> (15 + i)) & 7) << 9;
        self.mixer.select(1, near as usize);
        self.mixer.select_final(0);
        out[n] = self.mixer.mix();
    }

    fn update_bit(&mut self, bit: u32) {
        self.inner.update_bit(bit);
        for (t, &idx) in self.tables.iter_mut().zip(&self.index) {
            t.update(idx, bit);
        }
        self.mixer.update(bit);
    }
}
