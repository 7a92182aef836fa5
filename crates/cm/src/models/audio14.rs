//! Audio contexts of CM revision 14 (doc/FORMAT.md 4.25.5) for PCM samples
//! after a WAV header: revision 4's family (`audio4.rs`, FORMAT 4.15.5)
//! with more predictors and contexts. Revisions 4 to 13 keep `audio4.rs`.
//!
//! Samples are kept as one interleaved history (for stereo the other
//! channel's samples sit between this channel's; for the second channel the
//! first channel's current sample is the newest). Per channel the family
//! predicts the next sample with revision 4's eight predictors (OLS of
//! orders 32, 16 and 8 over one covariance, a sign-sign LMS, the last
//! sample, the linear extrapolation, the other channel's step or the
//! quadratic extrapolation, OLS 32 with a sign-sign cascade) and
//!
//! - an OLS of order 64 over a slowly decaying covariance, alone and
//!   corrected by its own two-stage sign-sign cascade,
//! - an OLS of order 16 over a quickly decaying covariance.
//!
//! Two APMs refine the model's final probability, in contexts of the best
//! predictor's input and of whether the bits coded so far agree with the
//! byte the best prediction implies.
//!
//! Every predictor keeps the mean magnitude of its recent errors and gives
//! the mixer the probability of the next bit under a logistic error
//! distribution around its prediction (as revision 4). Hashed contexts
//! combine the bytes that the predictions imply with error magnitudes.
//!
//! Revision 38 (`Audio14Contexts::with_nlms`, FORMAT 4.49.4) adds the NLMS
//! stages of `audio38.rs`: three more predictors, a context and an APM.
//!
//! All arithmetic is integer.

use super::audio::AudioInfo;
use super::audio4::{CLASSES, Cascade, LONG, Lms, MU, MU2, SHORT, magnitude};
use super::audio38::{Stages, X};
use super::ols::Ols;
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::Apm;
use crate::logistic::{squash, stretch};

/// Interleaved past samples kept (the features of the largest OLS).
const N: usize = 64;
/// Number of predictors: 3 OLS, LMS, s1, 2 s1 - s2, other channel / 3rd
/// order, OLS 32 with the cascade.
/// Revision 14 adds OLS 64 (slow), OLS 64 with its cascade, OLS 16 (fast).
const P: usize = 11;
/// Predictors with revision 38's NLMS stages (the arrays' size).
const PMAX: usize = P + X;

/// Hashed contexts.
const CONTEXTS: usize = 6;

/// Covariance decay (`2^-d` per sample) of OLS 64 and of the fast OLS 16.
const BIG_DECAY: u32 = 10;
const FAST_DECAY: u32 = 7;

/// The revision-14 audio family, and with its NLMS stages revision 38's.
#[derive(Debug, Clone)]
pub(crate) struct Audio14Contexts {
    /// The final-probability APMs and their contexts for this bit.
    sse: Vec<Apm>,
    sse_ctx: [usize; 3],
    info: AudioInfo,
    /// Interleaved past samples, the last one first.
    hist: [i32; N],
    /// Samples seen.
    count: usize,
    ols: Vec<Ols>,
    /// OLS 64 (slow decay) and OLS 16 (fast decay) per channel.
    big: Vec<Ols>,
    fast: Vec<Ols>,
    lms: Vec<Lms>,
    /// The cascade's two stages.
    cascade: Vec<Cascade>,
    cascade2: Vec<Cascade>,
    /// OLS 64's cascade.
    big_cascade: Vec<Cascade>,
    big_cascade2: Vec<Cascade>,
    big_pred: i32,
    big_cascade_pred: i32,
    big_cascade2_pred: i32,
    /// The OLS 32 prediction and the cascade stages' residual predictions.
    ols_pred: i32,
    cascade_pred: i32,
    cascade2_pred: i32,
    /// Mean error magnitude per channel and predictor (4 fraction bits).
    mad: Vec<[i64; PMAX]>,
    /// The predictions of the next sample (the first `np`).
    pred: [i32; PMAX],
    /// Predictors: [`P`], or [`PMAX`] with the NLMS stages.
    np: usize,
    /// Revision 38's NLMS stages (none before).
    nlms: Option<Box<Stages>>,
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
    /// The final APMs' byte context and the byte the best prediction implies.
    base: usize,
    expect: u32,
    /// The best predictor's last error as a signed magnitude (0..40;
    /// revision 38's third APM).
    resid: usize,
    /// Per predictor: the prediction and `2^16 * 256 * 1.386 / mad`.
    p: [i32; PMAX],
    inv: [i64; PMAX],
    /// For a low byte: the high bytes worth summing over, per predictor
    /// (empty: no input).
    h: [(i32, i32); PMAX],
}

impl Audio14Contexts {
    /// The family for audio laid out as `info`.
    pub fn new(info: AudioInfo) -> Self {
        let last = info.channels - 1;
        let ch = 0..info.channels;
        Audio14Contexts {
            sse: vec![Apm::new(72 * 16, 7), Apm::new(72 * 8 * 3, 7)],
            sse_ctx: [0; 3],
            info,
            hist: [0; N],
            count: 0,
            ols: ch
                .clone()
                .map(|_| Ols::new(32, &[32, 16, 8], 9, 32, last))
                .collect(),
            big: ch
                .clone()
                .map(|_| Ols::new(N, &[N], BIG_DECAY, 32, last))
                .collect(),
            fast: ch
                .clone()
                .map(|_| Ols::new(16, &[16], FAST_DECAY, 8, last))
                .collect(),
            big_cascade: ch.clone().map(|_| Cascade::new(LONG, MU)).collect(),
            big_cascade2: ch.clone().map(|_| Cascade::new(SHORT, MU2)).collect(),
            big_pred: 0,
            big_cascade_pred: 0,
            big_cascade2_pred: 0,
            lms: (0..info.channels).map(|_| Lms::new(last)).collect(),
            cascade: (0..info.channels).map(|_| Cascade::new(LONG, MU)).collect(),
            cascade2: (0..info.channels)
                .map(|_| Cascade::new(SHORT, MU2))
                .collect(),
            cascade2_pred: 0,
            ols_pred: 0,
            cascade_pred: 0,
            mad: vec![[16 * 64; PMAX]; info.channels],
            pred: [0; PMAX],
            np: P,
            nlms: None,
            ch: 0,
            best: 0,
            last_err: vec![0; info.channels],
            bit: BitState::default(),
        }
    }

    /// Revision 38's family: with the NLMS stages (`audio38.rs`), their
    /// three predictors, one more context and a third final APM.
    pub fn with_nlms(info: AudioInfo) -> Self {
        let mut f = Self::new(info);
        f.sse.push(Apm::new(40 * 2 * 8 * 3, 7));
        f.np = PMAX;
        f.nlms = Some(Box::new(Stages::new(info.channels)));
        f
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
        for k in 0..self.np {
            let e = i64::from(s - self.pred[k]).abs();
            let m = &mut self.mad[ch][k];
            *m += (e * 16 - *m) >> 4;
            if *m < best.0 {
                best = (*m, k);
            }
        }
        self.last_err[ch] = s - self.pred[self.best];
        if let Some(st) = &mut self.nlms {
            st.learn(ch, s);
        }
        self.cascade[ch].update(s - self.ols_pred, self.cascade_pred);
        self.cascade2[ch].update(s - self.ols_pred - self.cascade_pred, self.cascade2_pred);
        self.big_cascade[ch].update(s - self.big_pred, self.big_cascade_pred);
        self.big_cascade2[ch].update(
            s - self.big_pred - self.big_cascade_pred,
            self.big_cascade2_pred,
        );
        self.ols[ch].update(&self.hist, s);
        self.big[ch].update(&self.hist, s);
        self.fast[ch].update(&self.hist, s);
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
        self.big_pred = self.big[ch].predict(0, x);
        self.big_cascade_pred = self.big_cascade[ch].predict();
        self.big_cascade2_pred = self.big_cascade2[ch].predict();
        let pred = [
            self.ols_pred,
            ols.predict(1, x),
            ols.predict(2, x),
            self.lms[ch].predict(x),
            s1,
            2 * s1 - s2,
            third,
            self.ols_pred + self.cascade_pred + self.cascade2_pred,
            self.big_pred,
            self.big_pred + self.big_cascade_pred + self.big_cascade2_pred,
            self.fast[ch].predict(0, x),
        ];
        self.pred[..P].copy_from_slice(&pred);
        if let Some(st) = &mut self.nlms {
            self.pred[P..].copy_from_slice(&st.predict(ch, pred[7]));
        }
        self.best = (0..self.np)
            .min_by_key(|&k| (self.mad[ch][k], k))
            .unwrap_or(0);
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

impl ContextModel for Audio14Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS + usize::from(self.nlms.is_some())
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
            hash2(e[8], class(8)),
            hash2(e[9], class(9) << 4 | class(7)),
            hash2(e[10], class(10) << 9 | e[0]),
            // Revision 38: the byte the two-stage NLMS prediction implies.
            hash2(e[12], class(12) << 4 | class(9)),
        ];
        let n = self.contexts();
        for (j, (o, h)) in out[..n].iter_mut().zip(hs).enumerate() {
            *o = hash2(h, tag | (j as u32) << 8 | 0x4000);
        }
    }

    fn bit_inputs(&self) -> usize {
        self.np
    }

    /// The byte the best prediction implies.
    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        Some(self.implied(self.low(ctx), self.pred[self.best]) & 0xFF)
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let low = self.low(ctx);
        let mut b = BitState {
            base: self.situation(self.bis(ctx.pos)),
            expect: self.implied(low, self.pred[self.best]) & 0xFF,
            resid: {
                let le = self.last_err[self.ch];
                magnitude(le.unsigned_abs()).min(19) as usize * 2 + usize::from(le < 0)
            },
            p: self.pred,
            ..BitState::default()
        };
        for k in 0..self.np {
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
                for k in 0..self.np {
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
        for (k, o) in out[..self.np].iter_mut().enumerate() {
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
        let st = out[self.best].clamp(-2047, 2047);
        let b = &self.bit;
        let agree = c0 == (1 << (7 - i)) | (b.expect >> (i + 1));
        let e = if agree {
            (b.expect >> i & 1) as usize
        } else {
            2
        };
        self.sse_ctx = [
            b.base * 16 + ((st + 2048) >> 8) as usize,
            (b.base * 8 + i as usize) * 3 + e,
            ((b.resid * 2 + self.ch) * 8 + i as usize) * 3 + e,
        ];
    }

    fn update_bit(&mut self, bit: u32) {
        for a in &mut self.sse {
            a.update(bit);
        }
    }

    fn refine_final(&mut self, p: u32, _c0: u32) -> u32 {
        let p = p.clamp(1, 65535);
        let r1 = self.sse[0].refine(p, self.sse_ctx[0]);
        let r2 = self.sse[1].refine(p, self.sse_ctx[1]);
        if self.nlms.is_some() {
            // Revision 38: the third APM instead of the second weight on `p`.
            let r3 = self.sse[2].refine(p, self.sse_ctx[2]);
            ((p + r1 + r2 + r3) / 4).clamp(1, 65535)
        } else {
            ((2 * p + r1 + r2) / 4).clamp(1, 65535)
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
mod tests {
    use super::*;

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
        for mut f in [Audio14Contexts::new(info), Audio14Contexts::with_nlms(info)] {
            f.pred = [1000; PMAX];
            f.mad[0] = [16 * 4; PMAX];
            crate::models::audio4::tests::assert_bits_follow_1000(&mut f, PMAX);
        }
    }
}
