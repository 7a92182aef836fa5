//! Pixel contexts (CM revision 1) for the samples after a PNM header: the
//! neighbours of the same channel (W, N, NW, NE, WW, NN), the values that
//! neighbour predictors give (gradient W + N - NW, Paeth-like selection,
//! averages), and across channels the earlier channels of the same pixel
//! with their differences to the neighbours (a pixel's channels move
//! together).

use super::expected::ExpectedBits;
use super::image::ImageInfo;
use super::{ByteCtx, ContextModel, hash2};

/// The pixel family (14 contexts).
#[derive(Debug, Clone)]
pub(crate) struct PixelContexts {
    img: ImageInfo,
    /// Per-bit inputs from the bytes the predictors imply.
    bits: ExpectedBits<BIT_PREDICTIONS>,
}

impl PixelContexts {
    /// The family for the image laid out as `img`.
    pub fn new(img: ImageInfo) -> Self {
        PixelContexts {
            img,
            bits: ExpectedBits::new(4 * 16),
        }
    }
}

/// The sample `dx` pixels left and `dy` rows up of the byte at `ctx.pos` in
/// image `img` (negative `dx`: right), in the channel `dc` before its own; 0
/// outside the image or where not yet known. Shared by the pixel families.
pub(crate) fn sample(img: &ImageInfo, ctx: &ByteCtx<'_>, dy: usize, dx: isize, dc: usize) -> i32 {
    let (pb, rw) = (img.pixel_bytes, img.row_bytes);
    let rel = ctx.pos - img.start;
    let x = rel % rw;
    let left = dx * pb as isize + dc as isize;
    if left > x as isize || x as isize - left >= rw as isize || dy * rw > rel {
        return 0;
    }
    let p = (ctx.pos as isize - left) as usize - dy * rw;
    if ctx.vis.known(p) {
        i32::from(ctx.data[p])
    } else {
        0
    }
}

/// The block position of the byte `dx` pixels left and `dy` rows up of the
/// byte at `ctx.pos` in image `img` (negative `dx`: right), in its own
/// channel, if it is inside the image, before `ctx.pos` and known to the
/// decoder. Shared by the families that keep a ring of per-byte values
/// (revisions 16, 18 and 40).
pub(crate) fn coded_neighbour(
    img: &ImageInfo,
    ctx: &ByteCtx<'_>,
    dy: usize,
    dx: isize,
) -> Option<usize> {
    let (pb, rw) = (img.pixel_bytes, img.row_bytes);
    let rel = ctx.pos - img.start;
    let x = rel % rw;
    let left = dx * pb as isize;
    if left > x as isize || x as isize - left >= rw as isize || dy * rw > rel {
        return None;
    }
    let p = (ctx.pos as isize - left) as usize - dy * rw;
    (p < ctx.pos && ctx.vis.known(p)).then_some(p)
}

/// The Paeth-like predictor: of W, N and NW, the one nearest to W + N - NW.
fn paeth(w: i32, n: i32, nw: i32) -> i32 {
    let g = w + n - nw;
    let (dw, dn, dnw) = ((g - w).abs(), (g - n).abs(), (g - nw).abs());
    if dw <= dn && dw <= dnw {
        w
    } else if dn <= dnw {
        n
    } else {
        nw
    }
}

impl PixelContexts {
    /// The sample `dx` pixels left and `dy` rows up of the byte at
    /// `ctx.pos` (negative `dx`: right), in the channel `dc` before its own;
    /// 0 outside the image or where not yet known.
    fn at(&self, ctx: &ByteCtx<'_>, dy: usize, dx: isize, dc: usize) -> i32 {
        sample(&self.img, ctx, dy, dx, dc)
    }
}

/// Predictions that give per-bit inputs: gradient, Paeth, average of W and
/// N; W, N, the gradient and NE moved by the previous channel's difference
/// to its own (unmoved for the first channel); average of W and NE.
const BIT_PREDICTIONS: usize = 8;

impl ContextModel for PixelContexts {
    fn bit_inputs(&self) -> usize {
        BIT_PREDICTIONS
    }

    /// The gradient prediction.
    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        let at = |dy: usize, dx: isize| self.at(ctx, dy, dx, 0);
        Some((at(0, 1) + at(1, 0) - at(1, 1)).clamp(0, 255) as u32)
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let col = (ctx.pos - self.img.start) % self.img.pixel_bytes;
        let at = |dy: usize, dx: isize, dc: usize| self.at(ctx, dy, dx, dc);
        let (w, n, nw, ne) = (at(0, 1, 0), at(1, 0, 0), at(1, 1, 0), at(1, -1, 0));
        let grad = w + n - nw;
        let (dw, dn, dg, dne) = if col > 0 {
            let c = at(0, 0, 1);
            let (cw, cn, cnw) = (at(0, 1, 1), at(1, 0, 1), at(1, 1, 1));
            (c - cw, c - cn, c - (cw + cn - cnw), c - at(1, -1, 1))
        } else {
            (0, 0, 0, 0)
        };
        let e = [
            grad,
            paeth(w, n, nw),
            (w + n + 1) / 2,
            w + dw,
            n + dn,
            grad + dg,
            ne + dne,
            (w + ne + 1) / 2,
        ]
        .map(|v| v.clamp(0, 255) as u32);
        let situation = self.selector(ctx);
        self.bits.begin(e, situation);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.bits.predict(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.bits.update(bit);
    }

    fn contexts(&self) -> usize {
        14
    }

    fn selector_size(&self) -> usize {
        8 * 4 * 16
    }

    /// The channel with how busy the neighbourhood is.
    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        let img = self.img;
        let rel = ctx.pos - img.start;
        let col = (rel % img.pixel_bytes).min(3);
        let (pb, rw) = (img.pixel_bytes, img.row_bytes);
        let get = |back: usize| -> i32 {
            match ctx.pos.checked_sub(back) {
                Some(p) if p >= img.start && ctx.vis.known(p) => i32::from(ctx.data[p]),
                _ => 0,
            }
        };
        let (w, n, nw) = (get(pb), get(rw), get(rw + pb));
        let busy = (w - nw).abs() + (n - nw).abs();
        col * 16 + (32 - (busy as u32).leading_zeros()).min(15) as usize
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let col = (ctx.pos - self.img.start) % self.img.pixel_bytes;
        let at = |dy: usize, dx: isize, dc: usize| self.at(ctx, dy, dx, dc);
        let (w, n, nw, ne) = (at(0, 1, 0), at(1, 0, 0), at(1, 1, 0), at(1, -1, 0));
        let (ww, nn) = (at(0, 2, 0), at(2, 0, 0));
        let grad = (w + n - nw).clamp(0, 255);
        let tag = (col as u32) << 12;
        let q = |v: i32| (v >> 2) as u32;
        let mut v = [
            hash2(w as u32, n as u32),
            grad as u32,
            hash2(n as u32, ne as u32),
            hash2(w as u32, nw as u32),
            ((w + n + 1) / 2) as u32,
            paeth(w, n, nw) as u32,
            hash2(w as u32, ww as u32),
            hash2(n as u32, nn as u32),
            0,
            0,
            0,
            hash2(q(grad), hash2(q(w - nw + 256), q(n - nw + 256))),
            hash2(hash2(q(w), q(n)), hash2(q(ne), q(nw))),
            ((w + ne + 1) / 2 + (2 * w - ww).clamp(0, 255) * 256) as u32,
        ];
        if col > 0 {
            // The channel before in this pixel, and its neighbours.
            let (c, cw, cn) = (at(0, 0, 1), at(0, 1, 1), at(1, 0, 1));
            v[8] = hash2((w + c - cw).clamp(0, 255) as u32, c as u32);
            v[9] = hash2((n + c - cn).clamp(0, 255) as u32, (c - cw + 256) as u32);
            v[10] = hash2(c as u32, if col > 1 { at(0, 0, 2) } else { 256 } as u32);
        } else {
            v[8] = hash2(w as u32, 1 << 20);
            v[9] = hash2(n as u32, 1 << 20);
            v[10] = hash2(hash2(w as u32, n as u32), ne as u32 | 1 << 20);
        }
        for ((h, v), j) in out.iter_mut().zip(v).zip(0u32..) {
            *h = hash2(v, tag | j << 4 | 0x900_0000);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paeth_picks_the_nearest_neighbour() {
        assert_eq!(paeth(10, 20, 10), 20);
        assert_eq!(paeth(20, 10, 10), 20);
        assert_eq!(paeth(10, 10, 30), 10);
    }
}
