//! Pixel contexts (CM revision 1) for the samples after a PNM header: the
//! neighbours of the same channel (W, N, NW, NE, WW, NN), the values that
//! neighbour predictors give (gradient W + N - NW, Paeth-like selection,
//! averages), and across channels the earlier channels of the same pixel
//! with their differences to the neighbours (a pixel's channels move
//! together).

use super::image::ImageInfo;
use super::{ByteCtx, ContextModel, hash2};

/// The pixel family (14 contexts).
#[derive(Debug, Clone)]
pub(crate) struct PixelContexts {
    img: ImageInfo,
}

impl PixelContexts {
    /// The family for the image laid out as `img`.
    pub fn new(img: ImageInfo) -> Self {
        PixelContexts { img }
    }
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

impl ContextModel for PixelContexts {
    fn contexts(&self) -> usize {
        14
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let (data, pos) = (ctx.data, ctx.pos);
        let img = self.img;
        let (pb, rw) = (img.pixel_bytes, img.row_bytes);
        let rel = pos - img.start;
        let col = rel % pb;
        let x = rel % rw;
        // Sample `dx` pixels left and `dy` rows up (negative dx: right), in
        // the channel `col - dc`; 0 outside the image.
        let at = |dy: usize, dx: isize, dc: usize| -> i32 {
            let left = dx * pb as isize + dc as isize;
            if left > x as isize || x as isize - left >= rw as isize || dy * rw > rel {
                return 0;
            }
            let p = (pos as isize - left) as usize - dy * rw;
            if ctx.vis.known(p) {
                i32::from(data[p])
            } else {
                0
            }
        };
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
