//! Bi-level image contexts of CM revision 7 (doc/FORMAT.md 4.18.4): the
//! revision-4 bi-level family ([`Bilevel4Contexts`], unchanged) plus
//! [`TEMPLATES`] per-pixel contexts built from runs and wide templates,
//! each a table of adaptive probabilities; a mixer of the family's own
//! over all of them (weight sets chosen by the nearest pixels and by the
//! runs), and an APM on that mixer's output whose context is the nearest
//! pixels. Per pixel it knows:
//!
//! - the rows above as windows of 56 pixels around the pixel being coded
//!   (up to [`ROWS`] rows),
//! - the pixels to its left in its row (up to 56),
//! - the length of the run of the left pixel's colour ending at it,
//! - in the row above (and the one above that) the distance from the pixel
//!   straight above to the nearest change of colour to its right and to
//!   its left,
//! - how many rows the pixel straight above has kept its colour (a vertical
//!   run, per pixel column),
//! - its column.

use super::bilevel4::Bilevel4Contexts;
use super::forward_family;
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::Apm;
use crate::mixer2::Mixer2;
use crate::prim::AdaptiveProbs;

/// Count limit of the fast-adapting tables.
const FAST_LIMIT: u32 = 6;
/// Index bits of each new table.
const TABLE_BITS: u32 = 20;
/// Rows above kept as windows.
const ROWS: usize = 4;
/// The new per-pixel contexts.
pub(crate) const TEMPLATES: usize = 8;
/// Inputs the revision-4 family gives per bit.
const INNER: usize = 12;
/// Inputs of the family's mixer: the revision-4 family's, the new tables'
/// (slow and fast), a bias.
const MIX_INPUTS: usize = INNER + 2 * TEMPLATES + 1;

/// Per-bit inputs the family gives the model's mixer (at most 16): the
/// revision-1 family's three and the revision-4 mixer's output, the new
/// tables', the family's mixer and its APM.
const OUTPUTS: usize = 4 + TEMPLATES + 2;

/// Bytes the family allocates beyond the revision-4 family's.
pub(crate) const MEMORY: u64 =
    2 * TEMPLATES as u64 * (4 << TABLE_BITS) + (32 + 64) * 32 * 2 + (1 << 12) * 33 * 2 + 8192 * 8;

/// The revision-7 bi-level family (2 contexts, [`OUTPUTS`] per-bit inputs).
#[derive(Debug, Clone)]
pub(crate) struct Bilevel7Contexts {
    inner: Bilevel4Contexts,
    /// Bytes per row.
    width: usize,
    /// Rows above: bytes `above - 3 ..= above + 3` as 56 bits, the leftmost
    /// highest; the pixel straight above pixel `7 - i` of the byte is bit
    /// `24 + i`.
    rows: [u64; ROWS],
    /// The last 7 bytes of the stream, the last lowest.
    left: u64,
    /// Pixel column of the byte's first pixel.
    x: u32,
    /// Per pixel column: how many rows its last pixel has kept its colour
    /// (saturating), and this byte's eight columns' counts.
    vrun: Vec<u8>,
    vbyte: [u8; 8],
    tables: Vec<AdaptiveProbs>,
    index: [usize; TEMPLATES],
    mixer: Mixer2,
    apm: Apm,
    apm_ctx: usize,
    /// The same contexts' probabilities adapting fast (counts saturating
    /// at [`FAST_LIMIT`]), for the family's mixer only.
    fast: Vec<AdaptiveProbs>,
}

/// Distances from bit `b` of `r` (56 bits) to the nearest bit of the other
/// colour below it (to the right in the image) and above it (to the left),
/// capped at 31.
#[inline]
pub(super) fn transitions(r: u64, b: u32) -> (u32, u32) {
    let colour = (r >> b) & 1;
    let other = if colour == 1 { !r } else { r } & ((1 << 56) - 1);
    let below = other & ((1 << b) - 1);
    let right = if below == 0 {
        31
    } else {
        (b - (63 - below.leading_zeros())).min(31)
    };
    let above = other >> (b + 1);
    let left = if above == 0 {
        31
    } else {
        (above.trailing_zeros() + 1).min(31)
    };
    (right, left)
}

/// `len` pixels of window `r` centred on bit `b`, `half` either side.
#[inline]
pub(super) fn span(r: u64, b: u32, half: u32) -> u64 {
    (r >> (b - half)) & ((1 << (2 * half + 1)) - 1)
}

/// A run or distance (0..=63) in 3 bits: exact up to 3, then logarithmic.
#[inline]
pub(super) fn q(d: u32) -> u32 {
    match d {
        0..=3 => d,
        4..=5 => 4,
        6..=9 => 5,
        10..=17 => 6,
        _ => 7,
    }
}

impl Bilevel7Contexts {
    /// The family for rows of `width` bytes.
    pub fn new(width: usize) -> Self {
        Bilevel7Contexts {
            inner: Bilevel4Contexts::new(width),
            width,
            rows: [0; ROWS],
            left: 0,
            x: 0,
            vrun: vec![0; width * 8],
            vbyte: [0; 8],
            tables: (0..TEMPLATES)
                .map(|_| AdaptiveProbs::new(1 << TABLE_BITS, 255))
                .collect(),
            index: [0; TEMPLATES],
            mixer: Mixer2::new(MIX_INPUTS, &[32, 64], 1, 12, 2),
            apm: Apm::new(1 << 12, 7),
            apm_ctx: 0,
            fast: (0..TEMPLATES)
                .map(|_| AdaptiveProbs::new(1 << TABLE_BITS, FAST_LIMIT))
                .collect(),
        }
    }

    /// Bytes `a - 3 ..= a + 3` as 56 bits (0 where unknown or not before
    /// `ctx.pos`).
    pub(super) fn row(ctx: &ByteCtx<'_>, above: Option<usize>) -> u64 {
        let Some(a) = above else {
            return 0;
        };
        let at = |p: Option<usize>| -> u64 {
            match p {
                Some(p) if p < ctx.pos && ctx.vis.known(p) => u64::from(ctx.data[p]),
                _ => 0,
            }
        };
        (0..7).fold(0, |acc, k| acc << 8 | at((a + k).checked_sub(3)))
    }
}

impl ContextModel for Bilevel7Contexts {
    forward_family!(inner; contexts, hashes, selector_size, selector, apm_byte);

    fn bit_inputs(&self) -> usize {
        OUTPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.inner.begin_byte(ctx);
        for (k, r) in self.rows.iter_mut().enumerate() {
            *r = Self::row(ctx, ctx.pos.checked_sub((k + 1) * self.width));
        }
        self.left = u64::from(ctx.c8() & 0xFF_FFFF) << 32 | u64::from(ctx.c4());
        let col = ctx.pos % self.width;
        self.x = (col * 8) as u32;
        self.vbyte.copy_from_slice(&self.vrun[col * 8..][..8]);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let mut all = [0i32; MIX_INPUTS];
        self.inner.predict_bit(c0, i, &mut all[..INNER]);
        let done = 7 - i;
        // Pixels to the left, nearest lowest.
        let left = self.left << done | u64::from(c0 ^ (1 << done));
        let b = 24 + i;
        let [r1, r2, r3, r4] = self.rows;
        let colour = (left & 1) as u32;
        let lrun = if colour == 1 { !left } else { left }
            .trailing_zeros()
            .min(63);
        let (rn1, rp1) = transitions(r1, b);
        let (rn2, rp2) = transitions(r2, b);
        let up = ((r1 >> b) & 1) as u32;
        let v = u32::from(self.vbyte[done as usize]).min(31);
        let v_next = if done < 7 {
            u32::from(self.vbyte[done as usize + 1]).min(15)
        } else {
            16
        };
        let x = self.x + done;
        let l = |n: u32| left & ((1 << n) - 1);
        let ctxs: [u64; TEMPLATES] = [
            // JBIG2-like 16 pixels: 4 left, 5 and 3 above, 4 further away.
            l(4) | span(r1, b, 2) << 4
                | span(r2, b, 1) << 9
                | ((r1 >> (b + 3)) & 1) << 12
                | ((r1 >> (b - 3)) & 1) << 13
                | ((r2 >> (b + 2)) & 1) << 14
                | ((r2 >> (b - 2)) & 1) << 15,
            // A wide template over three rows (hashed).
            u64::from(hash2(
                (l(10) | span(r1, b, 5) << 10) as u32,
                (span(r2, b, 4) | span(r3, b, 2) << 9) as u32,
            )),
            // Runs: the left run, the changes around the pixel above.
            u64::from(colour | lrun << 1 | up << 7 | rn1 << 8 | rp1 << 13) | span(r1, b, 1) << 18,
            // Vertical runs, with the nearest pixels.
            u64::from(v | v_next << 5) | l(4) << 10 | span(r1, b, 2) << 14,
            // The column, with the nearest pixels.
            u64::from(x) | (l(2) | span(r1, b, 1) << 2 | ((r2 >> b) & 1) << 5) << 11,
            // Changes in two rows above, with the left run.
            u64::from(q(rn1) | q(rp1) << 3 | q(rn2) << 6 | q(rp2) << 9 | q(lrun) << 12)
                | (l(2) | span(r1, b, 1) << 2) << 15,
            // A row above 33 pixels wide (hashed): lines of text.
            u64::from(hash2(
                (l(8) | span(r1, b, 11) << 8) as u32,
                (span(r1, b, 16) >> 11) as u32 | 0x77 << 24,
            )),
            // A narrow column over four rows.
            l(3) | span(r1, b, 1) << 3
                | span(r2, b, 1) << 6
                | span(r3, b, 1) << 9
                | span(r4, b, 1) << 12
                | u64::from(q(v)) << 15,
        ];
        for (t, (&c, o)) in ctxs.iter().zip(&mut all[INNER..]).enumerate() {
            let idx = if c < 1 << TABLE_BITS && t != 1 && t != 6 {
                c as usize
            } else {
                (hash2(c as u32 ^ (c >> 32) as u32, t as u32) >> (32 - TABLE_BITS)) as usize
            };
            self.index[t] = idx;
            *o = self.tables[t].stretched(idx);
        }
        for (j, &x) in all[..INNER + TEMPLATES].iter().enumerate() {
            self.mixer.set(j, x);
        }
        out[..3].copy_from_slice(&all[..3]);
        out[3] = all[INNER - 1];
        out[4..4 + TEMPLATES].copy_from_slice(&all[INNER..INNER + TEMPLATES]);
        for (t, (f, &idx)) in self.fast.iter().zip(&self.index).enumerate() {
            self.mixer.set(INNER + TEMPLATES + t, f.stretched(idx));
        }
        self.mixer.set(INNER + 2 * TEMPLATES, 256);
        let near = (l(4) | span(r1, b, 2) << 4 | span(r2, b, 1) << 9) as usize;
        // Weight sets by the five nearest pixels, and by the left run and
        // the distance to the next change above.
        self.mixer.select(0, (l(2) | span(r1, b, 1) << 2) as usize);
        self.mixer.select(1, (q(lrun) << 3 | q(rn1)) as usize);
        self.mixer.select_final(0);
        let d = self.mixer.mix();
        out[4 + TEMPLATES] = d;
        self.apm_ctx = near;
        let p = self.apm.refine_stretched(d, near);
        out[5 + TEMPLATES] = crate::stretch(p.clamp(1, 65535));
    }

    fn update_bit(&mut self, bit: u32) {
        self.inner.update_bit(bit);
        for (t, &idx) in self.tables.iter_mut().zip(&self.index) {
            t.update(idx, bit);
        }
        for (t, &idx) in self.fast.iter_mut().zip(&self.index) {
            t.update(idx, bit);
        }
        self.mixer.update(bit);
        self.apm.update(bit);
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.inner.observe(data, pos, byte);
        let col = pos % self.width;
        let above = pos.checked_sub(self.width).map_or(0, |p| data[p]);
        let same = !(above ^ byte);
        for (k, v) in self.vrun[col * 8..][..8].iter_mut().enumerate() {
            *v = if same >> (7 - k) & 1 == 1 {
                v.saturating_add(1)
            } else {
                0
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_changes_of_colour() {
        // Bit 24 is 1, bits 25..=27 too, bit 28 is 0; bits 20..=23 are 0.
        let r = 0b0_1111u64 << 24;
        assert_eq!(transitions(r, 24), (1, 4));
        assert_eq!(transitions(r, 26), (3, 2));
        assert_eq!(transitions(0, 30), (31, 31));
        assert_eq!(span(0b1011_0000, 5, 2), 0b10110);
        assert_eq!([q(0), q(3), q(5), q(9), q(17), q(60)], [0, 3, 4, 5, 6, 7]);
    }
}
