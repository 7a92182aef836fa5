//! The 24/32-bit image family of CM revision 34 (doc/FORMAT.md 4.45.4: the
//! `max` line's sixteenth round), installed beside revision 32's family on
//! images of 3 or 4 bytes per pixel. After the public descriptions of
//! strong 24-bit image context-mixing models (several least-squares
//! predictors per channel over different neighbourhoods and forgetting
//! factors, each feeding a learnt map keyed by the predictor's distance to
//! the partial byte; no code taken):
//!
//! - [`SYSTEMS`] integer OLS systems per channel (`ols.rs`), each over its
//!   own causal neighbourhood (this channel's neighbours, the channels
//!   already coded at this pixel and their neighbours), decay and solving
//!   period; every order of a system (a leading block of its taps) is one
//!   prediction of `16 (v - 128)`;
//! - per prediction and bit, one adaptive probability keyed by channel,
//!   `(P - b) mod 256` and the bit position (`P` the prediction rounded to
//!   a byte, `b` the partial byte with zeros below), as revision 32's maps;
//! - the maps' stretched probabilities mixed by the family's own mixer
//!   whose weight sets are chosen by (channel, bit), (channel, the first
//!   prediction's recent error, bit) and (channel, the spread of the
//!   predictions, bit); its output is the family's one input to the
//!   model's mixer.
//!
//! Every system, prediction and input is declared in this file:
//! `SYSTEMS` lists the neighbourhoods, `now` computes the predictions,
//! `predict_bit` turns them into inputs.

use super::image::ImageInfo;
use super::ols::Ols;
use super::pixel::sample;
use super::{ByteCtx, ContextModel};
use crate::mixer2::Mixer2;
use crate::prim::AdaptiveProbs;

/// Channels with their own systems and maps (more share the last).
const CHANNELS: usize = 4;

/// A tap `(dy, dx, dc)`: `dy` rows up, `dx` pixels left (negative:
/// right), `dc` bytes back from this channel (as `pixel::sample`).
type Tap = (usize, isize, usize);

/// One OLS system: its taps (most useful first: every order is a leading
/// block), orders (largest first, the first is all taps), decay shift and
/// solving period.
struct System {
    taps: &'static [Tap],
    orders: &'static [usize],
    decay: u32,
    every: u32,
}

/// A wide neighbourhood: the channels already coded at this pixel and
/// their neighbours, then this channel's.
const WIDE: [Tap; 32] = [
    (0, 0, 1),
    (0, 0, 2),
    (0, 1, 0),
    (1, 0, 0),
    (1, 1, 0),
    (1, -1, 0),
    (0, 1, 1),
    (1, 0, 1),
    (1, 1, 1),
    (1, -1, 1),
    (0, 2, 0),
    (2, 0, 0),
    (0, 1, 2),
    (1, 0, 2),
    (2, 1, 0),
    (2, -1, 0),
    (1, 2, 0),
    (1, -2, 0),
    (0, 3, 0),
    (3, 0, 0),
    (2, 2, 0),
    (2, -2, 0),
    (0, 2, 1),
    (2, 0, 1),
    (1, 1, 2),
    (1, -1, 2),
    (1, -3, 0),
    (1, 3, 0),
    (3, 1, 0),
    (3, -1, 0),
    (0, 4, 0),
    (1, -2, 1),
];

/// A small neighbourhood for the fast-forgetting system.
const NEAR: [Tap; 12] = [
    (0, 0, 1),
    (0, 1, 0),
    (1, 0, 0),
    (1, 1, 0),
    (1, -1, 0),
    (0, 1, 1),
    (1, 0, 1),
    (0, 0, 2),
    (0, 2, 0),
    (2, 0, 0),
    (1, 1, 1),
    (1, -1, 1),
];

/// This channel's neighbours only (no colour correlation).
const OWN: [Tap; 16] = [
    (0, 1, 0),
    (1, 0, 0),
    (1, 1, 0),
    (1, -1, 0),
    (0, 2, 0),
    (2, 0, 0),
    (2, 1, 0),
    (2, -1, 0),
    (1, 2, 0),
    (1, -2, 0),
    (0, 3, 0),
    (3, 0, 0),
    (2, 2, 0),
    (2, -2, 0),
    (1, -3, 0),
    (0, 4, 0),
];

/// The systems of each channel.
const SYSTEMS: [System; 4] = [
    System {
        taps: &WIDE,
        orders: &[32, 12],
        decay: 10,
        every: 16,
    },
    System {
        taps: &WIDE,
        orders: &[24],
        decay: 13,
        every: 32,
    },
    System {
        taps: &NEAR,
        orders: &[12, 6],
        decay: 7,
        every: 8,
    },
    System {
        taps: &OWN,
        orders: &[16],
        decay: 11,
        every: 16,
    },
];
/// Most taps of one system.
const MAX_TAPS: usize = 32;
/// Predictions: one per order of every system.
const PREDICTIONS: usize = {
    let mut n = 0;
    let mut s = 0;
    while s < SYSTEMS.len() {
        n += SYSTEMS[s].orders.len();
        s += 1;
    }
    n
};
/// Maps: one per prediction.
const MAPS: usize = PREDICTIONS + PAIRS.len();
/// Pairs (a, b): maps keyed by prediction a's distance to the partial byte and the bucket of b - a.
const PAIRS: [(usize, usize); 3] = [(0, 5), (0, 3), (0, 4)];
/// Per-bit inputs to the model's mixer: the family's mix.
const BIT_INPUTS: usize = 1;
/// Inputs of the family's mixer: the maps and a bias.
const INNER: usize = MAPS + 1;
/// The family's mixer's weight sets per selector: (channel, bit),
/// (channel, error level, bit), (channel, spread, bit).
const SETS: [usize; 3] = [CHANNELS * 8, CHANNELS * 16 * 8, CHANNELS * 16 * 8];
/// The family's mixer's learning rates and per-set boost (as revision
/// 32's).
const RATES: (i32, i32) = (3, 2);
const BOOST: (i32, i32) = (48, 32);
/// The first-layer weight the family's mixer starts with (16384 = 1.0).
const INNER_INITIAL_WEIGHT: i16 = 1600;
/// Count at which a map's rate stops slowing.
const MAP_LIMIT: u32 = 1023;
/// Cells of one map: channel, `(P - b) mod 256`, bit.
const MAP_CELLS: usize = CHANNELS * 16 * 2048;

/// Bytes the family allocates: the OLS systems, its maps and its mixer's
/// weight sets.
pub(crate) const MEMORY: u64 = (CHANNELS * SYSTEMS.len() * (MAX_TAPS * MAX_TAPS + 3 * MAX_TAPS) * 8)
    as u64
    + (MAPS * MAP_CELLS * 4) as u64
    + ((CHANNELS * 8 + 2 * CHANNELS * 16 * 8) * INNER.next_multiple_of(32) * 2) as u64;

fn xflags() -> u32 {
    static F: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *F.get_or_init(|| std::env::var("I34X").ok().and_then(|v| v.parse().ok()).unwrap_or(0))
}

fn nctx() -> usize {
    static F: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *F.get_or_init(|| std::env::var("I34C").ok().and_then(|v| v.parse().ok()).unwrap_or(0))
}

fn frac() -> u32 {
    static F: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *F.get_or_init(|| std::env::var("I34FRAC").ok().and_then(|v| v.parse().ok()).unwrap_or(0))
}

/// Bucket of a non-negative value: its bit length, at most 15.
fn bucket(e: u32) -> usize {
    (32 - e.leading_zeros()).min(15) as usize
}

/// What the family computes for one byte.
#[derive(Debug, Clone, Copy)]
struct Now {
    /// The byte's channel (at most 3).
    ch: usize,
    /// Bucket of the recent error of the first prediction (0..=15).
    err: usize,
    /// Bucket of the spread of the predictions (0..=15).
    spread: usize,
    /// The predictions of `16 (v - 128)`.
    fine: [i32; PREDICTIONS],
    /// Bucket of each pair's difference (0..=15).
    pair: [u32; PAIRS.len()],
    /// First cell of each map for this byte's channel, plus the predicted
    /// byte times 8.
    base: [u32; MAPS],
}

/// One image of 3 or 4 bytes per pixel: the OLS systems, maps and mixer.
#[derive(Debug, Clone)]
pub(crate) struct Image34Contexts {
    img: ImageInfo,
    /// `SYSTEMS.len()` systems per channel.
    ols: Vec<Ols>,
    /// The features of each system for this byte.
    x: Vec<[i32; MAX_TAPS]>,
    maps: AdaptiveProbs,
    mixer: Mixer2,
    cur: Option<Now>,
    /// The cells used for this bit.
    index: [u32; MAPS],
    /// Recent absolute error of the first prediction per channel (4
    /// fraction bits).
    err: [u32; CHANNELS],
    dbg_p: i32,
    apm: crate::apm::AveragedApm,
}

impl Image34Contexts {
    /// The family for the image laid out as `img` (3 or 4 bytes per
    /// pixel).
    pub fn new(img: ImageInfo) -> Self {
        let mut mixer = Mixer2::new(INNER, &SETS, 1, RATES.0, RATES.1);
        mixer.set_rounded(true);
        mixer.set_set_rates(BOOST.0, BOOST.1, 1);
        mixer.set_initial_weights(INNER_INITIAL_WEIGHT);
        let ols = (0..CHANNELS)
            .flat_map(|_| {
                SYSTEMS
                    .iter()
                    .map(|s| Ols::new(s.taps.len(), s.orders, s.decay, s.every, 0))
            })
            .collect();
        Image34Contexts {
            img,
            ols,
            x: vec![[0; MAX_TAPS]; SYSTEMS.len()],
            maps: AdaptiveProbs::new(MAPS * MAP_CELLS, MAP_LIMIT),
            mixer,
            cur: None,
            index: [0; MAPS],
            err: [0; CHANNELS],
            dbg_p: 0,
            apm: crate::apm::AveragedApm::new(if xflags() & 1 != 0 { CHANNELS * 512 * 256 } else { 1 }, 7),
        }
    }

    /// The predictions of `16 (v - 128)` for the byte at `ctx.pos`.
    fn predictions(&self, ctx: &ByteCtx<'_>) -> (usize, [i32; PREDICTIONS]) {
        let img = &self.img;
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let mut fine = [0i32; PREDICTIONS];
        let mut k = 0;
        let mut x = [0i32; MAX_TAPS];
        for (s, sys) in SYSTEMS.iter().enumerate() {
            for (v, &(dy, dx, dc)) in x.iter_mut().zip(sys.taps) {
                *v = 16 * (sample(img, ctx, dy, dx, dc) - 128);
            }
            let ols = &self.ols[ch * SYSTEMS.len() + s];
            for o in 0..sys.orders.len() {
                fine[k] = ols.predict(o, &x[..]);
                k += 1;
            }
        }
        (ch, fine)
    }

    /// The byte's features, predictions and context.
    fn now(&mut self, ctx: &ByteCtx<'_>) -> Now {
        let img = &self.img;
        let col = (ctx.pos - img.start) % img.pixel_bytes;
        let ch = col.min(CHANNELS - 1);
        let mut fine = [0i32; PREDICTIONS];
        let mut k = 0;
        for (s, sys) in SYSTEMS.iter().enumerate() {
            let x = &mut self.x[s];
            for (v, &(dy, dx, dc)) in x.iter_mut().zip(sys.taps) {
                *v = 16 * (sample(img, ctx, dy, dx, dc) - 128);
            }
            let ols = &self.ols[ch * SYSTEMS.len() + s];
            for o in 0..sys.orders.len() {
                fine[k] = ols.predict(o, &x[..]);
                k += 1;
            }
        }
        let (lo, hi) = fine
            .iter()
            .fold((i32::MAX, i32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        let mut base = [0u32; MAPS];
        let fr = frac();
        for (k, (b, &p)) in base.iter_mut().zip(&fine).enumerate() {
            let half = 8 >> fr;
            let byte = ((128 << fr) + ((p + half) >> (4 - fr))).clamp(0, (256 << fr) - 1) as u32;
            *b = byte << 3;
            let _ = k;
        }
        let pair = PAIRS.map(|(a, b)| {
            let d = fine[b] - fine[a];
            let m = (32 - ((d.unsigned_abs() >> 3).leading_zeros())).min(7);
            if d < 0 { 8 + m } else { m }
        });
        Now {
            pair,
            ch,
            err: bucket(self.err[ch] >> 2),
            spread: bucket(((hi - lo) >> 2) as u32),
            fine,
            base,
        }
    }
}

impl ContextModel for Image34Contexts {
    fn contexts(&self) -> usize {
        nctx()
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        if out.is_empty() {
            return;
        }
        let (ch, fine) = self.predictions(ctx);
        let byte = |p: i32, sh: u32| ((128 << 4) + p).clamp(0, 4095) as u32 >> sh;
        let s = |dy: usize, dx: isize| sample(&self.img, ctx, dy, dx, 0);
        let (w, n, nw) = (s(0, 1), s(1, 0), s(1, 1));
        let q = |d: i32| (d.clamp(-31, 31) >> 1) as u32 & 63;
        let v = [
            byte(fine[0], 4),
            byte(fine[0], 5) | byte(fine[4], 5) << 8,
            byte(fine[0], 2),
            byte(fine[3], 4) | (w as u32) << 8,
            byte(fine[1], 5) | q(w - nw) << 8 | q(n - nw) << 14,
            byte(fine[5], 4) | (n as u32) << 8,
        ];
        let tag = (ch as u32) << 12 | 0x3400_0000;
        for (j, h) in out.iter_mut().enumerate() {
            *h = super::hash2(v[j], tag | (j as u32) << 4);
        }
    }

    fn refine_final(&mut self, p: u32, c0: u32) -> u32 {
        let Some(f) = self.cur else {
            return p;
        };
        if xflags() & 1 == 0 {
            return p;
        }
        let key = (256 + ((f.fine[0] + 4) >> 3)).clamp(0, 511) as usize;
        self.apm.refine(p, (f.ch * 512 + key) * 256 + c0 as usize)
    }

    fn bit_inputs(&self) -> usize {
        if xflags() & 4 != 0 { BIT_INPUTS + MAPS } else { BIT_INPUTS }
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.cur = Some(self.now(ctx));
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let Some(f) = self.cur else {
            out.fill(0);
            return;
        };
        // The bits so far in their places, zeros below, times 8.
        let fr = frac();
        let b = ((c0 ^ (1 << (7 - i))) << (i + 1)) << (3 + fr);
        let mask = (0x7f8 << fr) as u32;
        for k in 0..PREDICTIONS {
            // (P - b) mod 256 in bits 3..11, the bit in bits 0..3.
            let off = ((k * CHANNELS + f.ch) * MAP_CELLS / CHANNELS) as u32;
            let cell = off | ((f.base[k].wrapping_sub(b)) & mask) | i;
            self.index[k] = cell;
            self.mixer.set(k, self.maps.stretched(cell as usize));
        }
        if xflags() & 2 != 0 {
            for (j, &(a, _)) in PAIRS.iter().enumerate() {
                let k = PREDICTIONS + j;
                let off = ((k * CHANNELS + f.ch) * MAP_CELLS / CHANNELS) as u32;
                let cell = off | (f.pair[j] << 11) | ((f.base[a].wrapping_sub(b)) & mask) | i;
                self.index[k] = cell;
                self.mixer.set(k, self.maps.stretched(cell as usize));
            }
        } else {
            for k in PREDICTIONS..MAPS {
                self.index[k] = 0;
                self.mixer.set(k, 0);
            }
        }
        self.mixer.set(INNER - 1, 256);
        let bit = i as usize;
        self.mixer.select(0, f.ch * 8 + bit);
        self.mixer.select(1, (f.ch * 16 + f.err) * 8 + bit);
        self.mixer.select(2, (f.ch * 16 + f.spread) * 8 + bit);
        self.mixer.select_final(0);
        out[0] = self.mixer.mix();
        self.dbg_p = out[0];
        if xflags() & 4 != 0 {
            for k in 0..MAPS {
                out[1 + k] = self.maps.stretched(self.index[k] as usize);
            }
        }
    }

    fn update_bit(&mut self, bit: u32) {
        if self.cur.is_none() {
            return;
        }
        self.mixer.update(bit);
        self.apm.update(bit);
        if std::env::var_os("I34DBG").is_some() {
            use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
            static COST: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];
            let p = crate::logistic::squash(self.dbg_p) as f64 / 65536.0;
            let p = p.clamp(1e-4, 1.0 - 1e-4);
            let c = if bit == 1 { -p.log2() } else { -(1.0 - p).log2() };
            COST[0].fetch_add((c * 1000.0) as u64, Relaxed);
            let n = COST[1].fetch_add(1, Relaxed) + 1;
            if n % 800000 == 0 {
                eprintln!("family cost bytes {}", COST[0].load(Relaxed) / 8000);
            }
        }
        for &cell in &self.index {
            self.maps.update(cell as usize, bit);
        }
    }

    /// Teaches the channel's systems the byte.
    fn observe(&mut self, _data: &[u8], _pos: usize, byte: u8) {
        let Some(f) = self.cur.take() else {
            return;
        };
        let s = 16 * (i32::from(byte) - 128);
        for (j, x) in self.x.iter().enumerate() {
            self.ols[f.ch * SYSTEMS.len() + j].update(x, s);
        }
        let e = (s - f.fine[0]).unsigned_abs();
        if std::env::var_os("I34DBG").is_some() {
            use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
            static SUM: [AtomicU64; 16] = [const { AtomicU64::new(0) }; 16];
            static CNT: AtomicU64 = AtomicU64::new(0);
            for k in 0..PREDICTIONS {
                SUM[k].fetch_add(u64::from((s - f.fine[k]).unsigned_abs()), Relaxed);
            }
            let c = CNT.fetch_add(1, Relaxed) + 1;
            if c % 100000 == 0 {
                let v: Vec<u64> = (0..PREDICTIONS).map(|k| SUM[k].load(Relaxed) * 100 / 16 / c).collect();
                eprintln!("mae*100 {v:?}");
            }
        }
        self.err[f.ch] = (self.err[f.ch] * 7 + e) / 8;
    }
}
