//! Pixel contexts of CM revision 2: the revision-1 pixel family
//! ([`PixelContexts`], unchanged) plus an adaptive linear predictor per
//! channel, an integer normalised LMS over the neighbours (W, N, NW, NE, WW,
//! NN, and W and N moved by the previous channel's difference to its own
//! neighbours), which gives two hashed contexts and one per-bit input from
//! the bytes it implies (its prediction with the channel's recent error,
//! and the prediction moved by the previous channel's error at this pixel).

use super::expected::ExpectedBits;
use super::forward_family;
use super::image::ImageInfo;
use super::pixel::{PixelContexts, sample};
use super::{ByteCtx, ContextModel, hash2};

/// Inputs of the linear predictor.
const TAPS: usize = 8;
/// Fraction bits of its weights.
const FRAC: u32 = 16;
/// Channels with their own weights (more share the last).
const CHANNELS: usize = 4;

/// The revision-2 pixel family (14 + 2 contexts, 8 + 1 per-bit inputs).
#[derive(Debug, Clone)]
pub(crate) struct Pixel2Contexts {
    inner: PixelContexts,
    img: ImageInfo,
    /// Weights per channel.
    w: [[i64; TAPS]; CHANNELS],
    /// The inputs, channel and prediction of the byte being coded.
    x: [i64; TAPS],
    ch: usize,
    pred: i64,
    ready: bool,
    /// Recent absolute error per channel (4 fraction bits).
    err: [u32; CHANNELS],
    /// The last error (coded minus predicted) per channel: at a pixel's
    /// later channels, its earlier channels' errors at that pixel.
    last: [i64; CHANNELS],
    bits: ExpectedBits<1>,
}

impl Pixel2Contexts {
    /// The family for the image laid out as `img`.
    pub fn new(img: ImageInfo) -> Self {
        let mut w = [[0i64; TAPS]; CHANNELS];
        for ch in &mut w {
            // Start as the gradient W + N - NW.
            ch[0] = 1 << FRAC;
            ch[1] = 1 << FRAC;
            ch[2] = -(1 << FRAC);
        }
        Pixel2Contexts {
            inner: PixelContexts::new(img),
            img,
            w,
            x: [0; TAPS],
            ch: 0,
            pred: 0,
            ready: false,
            err: [0; CHANNELS],
            last: [0; CHANNELS],
            bits: ExpectedBits::new(CHANNELS * 16),
        }
    }

    /// The sample `dx` left and `dy` up, `dc` channels before (0 where
    /// unknown), as the revision-1 family reads it.
    fn at(&self, ctx: &ByteCtx<'_>, dy: usize, dx: isize, dc: usize) -> i64 {
        i64::from(sample(&self.img, ctx, dy, dx, dc))
    }

    /// The inputs, channel and clamped prediction for the byte at
    /// `ctx.pos`.
    fn predict(&self, ctx: &ByteCtx<'_>) -> ([i64; TAPS], usize, i64) {
        let col = (ctx.pos - self.img.start) % self.img.pixel_bytes;
        let at = |dy: usize, dx: isize, dc: usize| self.at(ctx, dy, dx, dc);
        let (w, n) = (at(0, 1, 0), at(1, 0, 0));
        let (dw, dn) = if col > 0 {
            let c = at(0, 0, 1);
            (c - at(0, 1, 1), c - at(1, 0, 1))
        } else {
            (0, 0)
        };
        let x = [
            w,
            n,
            at(1, 1, 0),
            at(1, -1, 0),
            at(0, 2, 0),
            at(2, 0, 0),
            w + dw,
            n + dn,
        ]
        .map(|v| v - 128);
        let ch = col.min(CHANNELS - 1);
        let dot: i64 = x.iter().zip(&self.w[ch]).map(|(a, b)| a * b).sum();
        let pred = ((dot >> FRAC) + 128).clamp(0, 255);
        (x, ch, pred)
    }
}

impl Pixel2Contexts {
    /// The prediction moved by the previous channel's error at this pixel
    /// (channels err together); the prediction itself for the first.
    fn corrected(&self, ch: usize, pred: i64) -> u32 {
        if ch == 0 {
            pred as u32
        } else {
            (pred + self.last[ch - 1]).clamp(0, 255) as u32
        }
    }
}

impl ContextModel for Pixel2Contexts {
    forward_family!(inner; selector_size, selector, apm_byte);

    fn contexts(&self) -> usize {
        self.inner.contexts() + 2
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let k = self.inner.contexts();
        self.inner.hashes(ctx, &mut out[..k]);
        let (_, ch, pred) = self.predict(ctx);
        let tag = (ch as u32) << 12 | 0xA00_0000;
        let err = (32 - self.err[ch].leading_zeros()).min(15);
        out[k] = hash2(hash2(pred as u32, err), tag);
        out[k + 1] = hash2(self.corrected(ch, pred), tag | 1 << 20);
    }

    fn bit_inputs(&self) -> usize {
        self.inner.bit_inputs() + 1
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.inner.begin_byte(ctx);
        let (x, ch, pred) = self.predict(ctx);
        self.x = x;
        self.ch = ch;
        self.pred = pred;
        self.ready = true;
        let err = (32 - self.err[ch].leading_zeros()).min(15) as usize;
        self.bits.begin([self.corrected(ch, pred)], ch * 16 + err);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let k = self.inner.bit_inputs();
        self.inner.predict_bit(c0, i, &mut out[..k]);
        self.bits.predict(c0, i, &mut out[k..]);
    }

    fn update_bit(&mut self, bit: u32) {
        self.inner.update_bit(bit);
        self.bits.update(bit);
    }

    /// Trains the channel's weights on the coded byte (normalised LMS,
    /// step 1/16).
    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.inner.observe(data, pos, byte);
        if !self.ready {
            return;
        }
        self.ready = false;
        let ch = self.ch;
        let e = i64::from(byte) - self.pred;
        self.last[ch] = e;
        self.err[ch] = (self.err[ch] * 7 + (e.unsigned_abs() as u32) * 16) / 8;
        let norm: i64 = 256 + self.x.iter().map(|v| v * v).sum::<i64>();
        for (w, &x) in self.w[ch].iter_mut().zip(&self.x) {
            *w = (*w + ((e * x) << FRAC) / (16 * norm)).clamp(-(4 << FRAC), 4 << FRAC);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cm::CmStream;
    use crate::matcher::Sequential;

    #[test]
    fn the_linear_predictor_learns_a_smooth_image() {
        // A gray image whose rows are ramps: the gradient already fits, and
        // the predictor keeps it within a few levels.
        let img = ImageInfo::parse_pnm(b"P5\n64 64\n255\n").expect("header");
        let mut data = b"P5\n64 64\n255\n".to_vec();
        for y in 0..64i64 {
            for x in 0..64i64 {
                data.push((x + y * 2) as u8);
            }
        }
        let mut f = Pixel2Contexts::new(img);
        let st = CmStream::new(0);
        let mut worst = 0;
        for pos in img.start..data.len() {
            let ctx = ByteCtx {
                data: &data,
                pos,
                st: &st,
                vis: &Sequential(pos),
            };
            f.begin_byte(&ctx);
            if pos > img.start + 3 * 64 && (pos - img.start) % 64 > 2 {
                worst = worst.max((f.pred - i64::from(data[pos])).abs());
            }
            f.observe(&data, pos, data[pos]);
        }
        assert!(worst <= 3, "prediction off by {worst}");
    }
}
