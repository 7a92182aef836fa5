//! Audio contexts of CM revision 4 (doc/FORMAT.md 4.15.5) for PCM samples
//! after a WAV header: 8-bit (unsigned) or 16-bit (little-endian, signed),
//! mono or stereo. Revision 1's family (`audio.rs`) stays as it was.
//!
//! Samples are kept as one interleaved history (for stereo the other
//! channel's samples sit between this channel's). Per channel the family
//! predicts the next sample with
//!
//! - three least-squares (OLS) predictors of orders 32, 16 and 8 over the
//!   last samples of that history, all solved from one exponentially
//!   decayed covariance matrix by an integer LDLᵀ factorisation every
//!   [`SOLVE_EVERY`](super::ols::SOLVE_EVERY) samples (a leading block's factor is the leading part
//!   of the whole factor: one factorisation serves the three orders),
//! - a sign-sign LMS over the same history,
//! - the OLS 32 prediction corrected by a cascade of two sign-sign LMS
//!   stages (512 and 16 taps) over its past residuals,
//! - the last sample, the linear extrapolation of the last two, and (stereo)
//!   the other channel's current sample moved by this channel's last step,
//!   or (mono) the quadratic extrapolation.
//!
//! Every predictor keeps the mean magnitude of its recent errors. Its
//! per-bit mixer input is the probability, under a logistic error
//! distribution around its prediction with that mean magnitude, that the
//! next bit is 1 given the bits of the sample already known (the low byte of
//! a 16-bit sample is coded first). Hashed contexts combine the bytes that
//! the predictions imply with the error magnitude; the mixer selector and
//! the APM byte follow the best predictor (smallest mean error).
//!
//! All arithmetic is integer.

use super::audio::AudioInfo;
use super::ols::{N, Ols};
use super::{ByteCtx, ContextModel, hash2};
use crate::logistic::{squash, stretch};

/// LMS taps (over the interleaved history).
pub(super) const TAPS: usize = 16;
/// Number of predictors: 3 OLS, LMS, s1, 2 s1 - s2, other channel / 3rd
/// order, OLS 32 with the cascade.
const P: usize = 8;
/// Error magnitude classes.
pub(super) const CLASSES: usize = 18;
/// Hashed contexts.
const CONTEXTS: usize = 3;

/// Taps of the cascade's first LMS over the OLS residuals.
pub(super) const LONG: usize = 512;
/// The cascade's weight step.
pub(super) const MU: i32 = 8;
/// Taps and weight step of the cascade's second stage (over the first
/// stage's residuals).
pub(super) const SHORT: usize = 16;
pub(super) const MU2: i32 = 32;

/// A sign-sign LMS over one channel's past residuals of an earlier
/// predictor, predicting the next residual (a cascade after the OLS
/// predictor: it learns what a short predictor misses, such as long
/// periods).
#[derive(Debug, Clone)]
pub(super) struct Cascade {
    /// Taps and weight step.
    taps: usize,
    mu: i32,
    /// Weights (16 fraction bits).
    w: Vec<i32>,
    /// Past residuals, a ring of `LONG` (`at` is the newest).
    u: Vec<i32>,
    at: usize,
}

impl Cascade {
    pub(super) fn new(taps: usize, mu: i32) -> Self {
        Cascade {
            taps,
            mu,
            w: vec![0; taps],
            u: vec![0; 2 * taps],
            at: 0,
        }
    }

    /// The predicted residual.
    pub(super) fn predict(&self) -> i32 {
        let u = &self.u[self.at..self.at + self.taps];
        let dot: i64 = self
            .w
            .iter()
            .zip(u)
            .map(|(&w, &x)| i64::from(w) * i64::from(x))
            .sum();
        (dot >> 16).clamp(-(1 << 18), 1 << 18) as i32
    }

    /// Learns residual `r` (the prediction was `predicted`) and shifts it in.
    pub(super) fn update(&mut self, r: i32, predicted: i32) {
        let sign = (r - predicted).signum() * self.mu;
        let u = &self.u[self.at..self.at + self.taps];
        for (w, &x) in self.w.iter_mut().zip(u) {
            *w = (*w + sign * x.signum()).clamp(-(1 << 20), 1 << 20);
        }
        // The ring is stored twice so that the newest `LONG` are contiguous.
        self.at = if self.at == 0 {
            self.taps - 1
        } else {
            self.at - 1
        };
        let r = r.clamp(-(1 << 17), 1 << 17);
        self.u[self.at] = r;
        self.u[self.at + self.taps] = r;
    }
}

/// A sign-sign LMS predictor over the interleaved history.
#[derive(Debug, Clone)]
pub(super) struct Lms {
    w: [i32; TAPS],
}

impl Lms {
    pub(super) fn new(last: usize) -> Self {
        let mut w = [0; TAPS];
        w[last] = 1 << 14;
        Lms { w }
    }

    pub(super) fn predict(&self, x: &[i32]) -> i32 {
        let dot: i64 = self
            .w
            .iter()
            .zip(x)
            .map(|(&w, &x)| i64::from(w) * i64::from(x))
            .sum();
        (dot >> 14).clamp(-(1 << 20), 1 << 20) as i32
    }

    pub(super) fn update(&mut self, x: &[i32], err: i32) {
        let sign = err.signum();
        for (w, &x) in self.w.iter_mut().zip(x) {
            *w = (*w + sign * x.signum() * 8).clamp(-(1 << 17), 1 << 17);
        }
    }
}

/// `floor(log2(v)) + 1`, 0 for 0.
pub(super) fn magnitude(v: u32) -> u32 {
    32 - v.leading_zeros()
}

/// The revision-4 audio family.
#[derive(Debug, Clone)]
pub(crate) struct Audio4Contexts {
    info: AudioInfo,
    /// Interleaved past samples, the last one first.
    hist: [i32; N],
    /// Samples seen.
    count: usize,
    ols: Vec<Ols>,
    lms: Vec<Lms>,
    /// The cascade's two stages.
    cascade: Vec<Cascade>,
    cascade2: Vec<Cascade>,
    /// The OLS 32 prediction and the cascade stages' residual predictions.
    ols_pred: i32,
    cascade_pred: i32,
    cascade2_pred: i32,
    /// Mean error magnitude per channel and predictor (4 fraction bits).
    mad: Vec<[i64; P]>,
    /// The predictions of the next sample.
    pred: [i32; P],
    /// Its channel.
    ch: usize,
    /// The best predictor for it.
    best: usize,
    /// The last error of the best predictor of each channel.
    last_err: Vec<i32>,
    /// Per-bit state of the current byte.
    bit: BitState,
}

/// What the per-bit inputs of the current byte need.
#[derive(Debug, Clone, Default)]
struct BitState {
    /// 0: the byte is the low byte of a 16-bit sample; 1: the byte
    /// determines the sample given `off` (high byte, or an 8-bit sample).
    kind: u8,
    /// Sample value of byte value `u` (flipped by `flip`): `mult * (u - 128) + off`.
    mult: i32,
    off: i32,
    flip: u32,
    /// Per predictor: the prediction and `2^16 * 256 * 1.386 / mad`.
    p: [i32; P],
    inv: [i64; P],
    /// For a low byte: the high bytes worth summing over, per predictor
    /// (empty: no input).
    h: [(i32, i32); P],
}

impl Audio4Contexts {
    /// The family for audio laid out as `info`.
    pub fn new(info: AudioInfo) -> Self {
        let last = info.channels - 1;
        Audio4Contexts {
            info,
            hist: [0; N],
            count: 0,
            ols: (0..info.channels).map(|_| Ols::revision4(last)).collect(),
            lms: (0..info.channels).map(|_| Lms::new(last)).collect(),
            cascade: (0..info.channels).map(|_| Cascade::new(LONG, MU)).collect(),
            cascade2: (0..info.channels)
                .map(|_| Cascade::new(SHORT, MU2))
                .collect(),
            cascade2_pred: 0,
            ols_pred: 0,
            cascade_pred: 0,
            mad: vec![[16 * 64; P]; info.channels],
            pred: [0; P],
            ch: 0,
            best: 0,
            last_err: vec![0; info.channels],
            bit: BitState::default(),
        }
    }

    /// Byte in the sample of block position `pos`.
    fn bis(&self, pos: usize) -> usize {
        (pos - self.info.start) % self.info.bytes
    }

    /// The low byte of the sample when `pos` is its high byte.
    fn low(&self, ctx: &ByteCtx<'_>) -> Option<i32> {
        (self.info.bytes == 2 && self.bis(ctx.pos) == 1).then(|| i32::from(ctx.data[ctx.pos - 1]))
    }

    /// The byte that sample value `v` implies for the byte at `pos` (9 bits
    /// for a high byte: the sign is kept).
    fn implied(&self, low: Option<i32>, v: i32) -> u32 {
        match low {
            _ if self.info.bytes == 1 => (v.clamp(-128, 127) + 128) as u32,
            None => (v & 0xFF) as u32,
            Some(low) => (((v - low + 128) >> 8) & 0x1FF) as u32,
        }
    }

    /// Magnitude class of predictor `k`'s recent errors.
    fn class(&self, k: usize) -> u32 {
        magnitude((self.mad[self.ch][k] >> 4) as u32).min(CLASSES as u32 - 1)
    }

    fn situation(&self, bis: usize) -> usize {
        (bis * 2 + self.ch) * CLASSES + self.class(self.best) as usize
    }

    /// Sees a complete sample `s`.
    fn sample_done(&mut self, s: i32) {
        let ch = self.ch;
        let mut best = (i64::MAX, 0);
        for k in 0..P {
            let e = i64::from(s - self.pred[k]).abs();
            let m = &mut self.mad[ch][k];
            *m += (e * 16 - *m) >> 4;
            if *m < best.0 {
                best = (*m, k);
            }
        }
        self.last_err[ch] = s - self.pred[self.best];
        self.cascade[ch].update(s - self.ols_pred, self.cascade_pred);
        self.cascade2[ch].update(s - self.ols_pred - self.cascade_pred, self.cascade2_pred);
        self.ols[ch].update(&self.hist, s);
        self.lms[ch].update(&self.hist, s - self.pred[3]);
        self.hist.copy_within(0..N - 1, 1);
        self.hist[0] = s;
        self.count += 1;
        let ch = self.count % self.info.channels;
        self.ch = ch;
        let x = &self.hist;
        let c = self.info.channels;
        let own = |k: usize| x[k * c + c - 1];
        let (s1, s2, s3) = (own(0), own(1), own(2));
        let third = if c == 2 && ch == 1 {
            // The other channel's current sample moved by this one's step.
            x[0] + s1 - x[2]
        } else {
            3 * s1 - 3 * s2 + s3
        };
        let ols = &self.ols[ch];
        self.ols_pred = ols.predict(0, x);
        self.cascade_pred = self.cascade[ch].predict();
        self.cascade2_pred = self.cascade2[ch].predict();
        self.pred = [
            self.ols_pred,
            ols.predict(1, x),
            ols.predict(2, x),
            self.lms[ch].predict(x),
            s1,
            2 * s1 - s2,
            third,
            self.ols_pred + self.cascade_pred + self.cascade2_pred,
        ];
        self.best = (0..P).min_by_key(|&k| (self.mad[ch][k], k)).unwrap_or(0);
    }

    /// The probability mass (16-bit scale) of sample values in `[a, b)`
    /// under predictor `k`'s distribution.
    #[inline]
    fn mass(&self, k: usize, a: i32, b: i32) -> i64 {
        i64::from(self.cdf(k, b)) - i64::from(self.cdf(k, a))
    }

    /// Predictor `k`'s probability (16-bit scale) of a value below `x`.
    #[inline]
    fn cdf(&self, k: usize, x: i32) -> u32 {
        let t = (2 * i64::from(x) - 1 - 2 * i64::from(self.bit.p[k])) * self.bit.inv[k];
        squash((t >> 17).clamp(-2047, 2047) as i32)
    }
}

impl ContextModel for Audio4Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn selector_size(&self) -> usize {
        8 * 4 * CLASSES
    }

    /// The byte's place in the sample and its channel, with the error
    /// magnitude class of the best predictor.
    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        self.situation(self.bis(ctx.pos))
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let bis = self.bis(ctx.pos);
        let low = self.low(ctx);
        let tag = (bis as u32) << 4 | (self.ch as u32) << 2 | self.info.bytes as u32;
        let e = self.pred.map(|v| self.implied(low, v));
        let class = |k: usize| self.class(k);
        let fine = |v: i32| -> u32 {
            match low {
                Some(low) => ((v - low) >> 4) as u32 & 0x3FFF,
                None => self.implied(None, v),
            }
        };
        let b = self.best;
        let err = magnitude(self.last_err[self.ch].unsigned_abs()) << 1
            | u32::from(self.last_err[self.ch] < 0);
        let hs = [
            hash2(e[0], class(0)),
            hash2(fine(self.pred[b]), class(b) << 4 | b as u32),
            hash2(e[b], err << 4 | b as u32),
        ];
        for (j, (o, h)) in out.iter_mut().zip(hs).enumerate() {
            *o = hash2(h, tag | (j as u32) << 8 | 0x4000);
        }
    }

    fn bit_inputs(&self) -> usize {
        P
    }

    /// The byte the best prediction implies.
    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        Some(self.implied(self.low(ctx), self.pred[self.best]) & 0xFF)
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let low = self.low(ctx);
        let mut b = BitState {
            p: self.pred,
            ..BitState::default()
        };
        for k in 0..P {
            let mad = self.mad[self.ch][k].max(8);
            // 256 * 1.386 / (mad / 16) in 2^17 units, halved for the
            // doubled distance in `cdf`: 355 * 2^20 / mad.
            b.inv[k] = (355i64 << 20) / mad;
        }
        match (self.info.bytes, low) {
            (1, _) => {
                b.kind = 1;
                b.mult = 1;
            }
            (_, Some(low)) => {
                b.kind = 1;
                b.mult = 256;
                b.off = low;
                b.flip = 0x80;
            }
            _ => {
                // Low byte first: sum over the high bytes within about six
                // mean errors of the prediction (none when too many).
                for k in 0..P {
                    let spread = ((self.mad[self.ch][k] * 6) >> 4) as i32;
                    let (lo, hi) = ((self.pred[k] - spread) >> 8, (self.pred[k] + spread) >> 8);
                    b.h[k] = if hi - lo < 4 { (lo, hi + 1) } else { (0, 0) };
                }
            }
        }
        self.bit = b;
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let prefix = c0 ^ (1 << (7 - i));
        let lo = prefix << (i + 1);
        let (mid, hi) = (lo + (1 << i), lo + (2 << i));
        for (k, o) in out[..P].iter_mut().enumerate() {
            let (m0, m1) = if self.bit.kind == 1 {
                // In the space of `u` (the byte with the sign bit flipped
                // for a signed high byte) values grow with `u`; `v(u)` is
                // where byte value `u`'s share of the sample values starts.
                let half = self.bit.mult / 2;
                let v = |u: u32| self.bit.mult * (u as i32 - 128) + self.bit.off - half;
                if i == 7 && self.bit.flip != 0 {
                    // The sign bit: a 1 is the lower half.
                    (self.mass(k, v(128), v(256)), self.mass(k, v(0), v(128)))
                } else {
                    let u = lo ^ self.bit.flip;
                    let (a, m, b) = (v(u), v(u + (1 << i)), v(u + (2 << i)));
                    (self.mass(k, a, m), self.mass(k, m, b))
                }
            } else {
                let (h0, h1) = self.bit.h[k];
                let (mut m0, mut m1) = (0, 0);
                for h in h0..h1 {
                    let base = h * 256;
                    let (a, m, b) = (base + lo as i32, base + mid as i32, base + hi as i32);
                    let (fa, fm, fb) = (self.cdf(k, a), self.cdf(k, m), self.cdf(k, b));
                    m0 += i64::from(fm) - i64::from(fa);
                    m1 += i64::from(fb) - i64::from(fm);
                }
                if h0 == h1 { (1, 1) } else { (m0, m1) }
            };
            let (m0, m1) = (m0.max(0) + 1, m1.max(0) + 1);
            *o = stretch(((m1 << 16) / (m0 + m1)) as u32);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, _byte: u8) {
        let AudioInfo { start, bytes, .. } = self.info;
        if pos < start || !(pos - start + 1).is_multiple_of(bytes) {
            return;
        }
        let first = pos + 1 - bytes;
        let s = if bytes == 2 {
            i32::from(i16::from_le_bytes([data[first], data[first + 1]]))
        } else {
            i32::from(data[first]) - 128
        };
        self.sample_done(s);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn cascade_learns_a_periodic_residual() {
        let mut c = Cascade::new(LONG, MU);
        let mut err = 0;
        // The residuals' mean magnitude is 281: the sign-sign cascade
        // removes a good part of it (not all: its steps are coarse).
        for t in 0..20000i32 {
            let r = [300, -200, 50, 900, -700, 0, 0, 100][(t % 8) as usize];
            let p = c.predict();
            if t >= 19000 {
                err += (r - p).abs();
            }
            c.update(r, p);
        }
        assert!(err / 1000 < 200, "mean error {}", err / 1000);
    }

    /// Codes the 16-bit sample 1000 (bytes 0xE8, 0x03) through `f`, whose
    /// prediction the caller has set to 1000 with a small error, and asserts
    /// that each byte's first three bits are favoured (input 0 beyond +-256
    /// towards the coded bit); `inputs` is the family's input count. Shared
    /// with revision 14's family (audio14.rs).
    pub(crate) fn assert_bits_follow_1000(f: &mut dyn ContextModel, inputs: usize) {
        let st = crate::cm::CmStream::new(0);
        let data = [0xE8u8, 0x03];
        let mut out = vec![0i32; inputs];
        for (pos, byte) in data.iter().enumerate() {
            let ctx = ByteCtx {
                data: &data,
                pos,
                st: &st,
                vis: &crate::matcher::Sequential(pos),
            };
            f.begin_byte(&ctx);
            let mut c0 = 1u32;
            for i in (5..8).rev() {
                f.predict_bit(c0, i, &mut out);
                let bit = u32::from(byte >> i) & 1;
                assert!(
                    if bit == 1 {
                        out[0] > 256
                    } else {
                        out[0] < -256
                    },
                    "byte {pos} bit {i}: {}",
                    out[0]
                );
                c0 = c0 << 1 | bit;
            }
        }
    }

    #[test]
    fn bit_inputs_follow_the_prediction() {
        // A 16-bit mono stream whose next sample is predicted at 1000:
        // the first bits of its low byte (232 = 0b1110_1000) and of its
        // high byte (3) are favoured.
        let info = AudioInfo {
            start: 0,
            channels: 1,
            bytes: 2,
        };
        let mut f = Audio4Contexts::new(info);
        f.pred = [1000; P];
        f.mad[0] = [16 * 4; P];
        assert_bits_follow_1000(&mut f, P);
    }
}
