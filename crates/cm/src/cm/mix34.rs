//! CM revision 34 (doc/FORMAT.md 4.45.1): a second final mixer layer and a
//! learned mix of the refinement stages, for the configured families only
//! (a block of a detected kind codes as at revision 32).
//!
//! Both are [`Small`] integer mixers: 16.16 weights, inputs are stretched
//! probabilities (12-bit, ±2047) plus a bias input of 256. A mix is
//! `d = clamp(sum(w * x) >> 16, -2047, 2047)` (the sum in `i64`) and
//! `p = squash(d)` (16-bit); training on `bit` takes
//! `err = (((bit << 16) - p) * lr) >> 4` and sets each weight of the used
//! set to `clamp(w + ((x * err) >> 14), -2^22, 2^22)`.
//!
//! - **Second final layer** ([`L2_LR`], [`L2_SETS`]): its inputs are the
//!   main `Mixer2`'s first-layer outputs, one per selector (`k` of them,
//!   at most 12), and the bias; weights start at `65536 / k`, the bias's at
//!   0; its weight set is `c1 * 8 + i` (previous byte `c1`; `i` the
//!   index of the bit being coded, 7 for a byte's first bit down to 0). The main mixer's stretched output `d` becomes
//!   `(d + d2) >> 1` (arithmetic shift) and its probability `squash` of
//!   that; the APM chain refines these in place of the main mixer's.
//! - **Stage mix** ([`STAGE_LR`], [`STAGE_SETS`]): its inputs are that
//!   averaged `d`, the stretched outputs of the v1 APM pair, of revision
//!   2's stage and of the last stage (revision 8's final stage, or the
//!   kind's), and the bias; weights start at [`STAGE_W0`], the bias's at 0;
//!   its weight set is `m * 256 + c0` for the partial byte `c0` (leading 1)
//!   and the match state `m`: 0 with no expected byte (the match model's,
//!   `e` = 256 + byte) or one that disagrees with the bits seen
//!   (`e >> (i + 1) != c0`), else 1 + the expected byte's bit `i`.
//!   The coded probability is `clamp((p + q + 1) >> 1, 1, 65535)` for the
//!   last stage's `p` and the stage mix's `q`.
//!
//! Both are trained on every bit after the coder codes it and are made
//! fresh at each `install` of configured families. The model calls these
//! helpers from `install`, `predict_bit` and `update_bit` (one line each).

use super::Cm;
use crate::logistic::{squash, stretch};
use crate::prim::expected_bit;

/// Most inputs of a small mixer (12 set outputs and a bias fit).
pub(super) const MAXN: usize = 16;

/// The stage mix's inputs: four stages and a bias.
const STAGE_INPUTS: usize = 5;
/// The stage mix's weight sets: the partial byte (256) times 3 match
/// states.
const STAGE_SETS: usize = 256 * 3;
/// The stage mix's learning rate.
const STAGE_LR: i32 = 2;
/// The stage mix's starting weight of each stage (a quarter).
const STAGE_W0: i32 = 65536 / 4;

/// The second final layer's weight sets: the previous byte times the bit
/// position.
const L2_SETS: usize = 256 * 8;
/// The second final layer's learning rate.
const L2_LR: i32 = 1;

/// The bias input.
const BIAS: i32 = 256;

/// Bytes [`Final34`] allocates (counted in `CmConfig::memory_bytes`).
pub(crate) const MEMORY: u64 = ((STAGE_SETS + L2_SETS) * MAXN * 4) as u64;

/// A small gated mixer of at most [`MAXN`] inputs, 16.16 weights.
#[derive(Debug, Clone)]
pub(super) struct Small {
    weights: Vec<[i32; MAXN]>,
    x: [i32; MAXN],
    n: usize,
    set: usize,
    /// The last mix's probability (16-bit).
    pub(super) pr: u32,
    lr: i32,
}

impl Small {
    /// `n` inputs (the last the bias, starting at weight 0, the others at
    /// `w`), `sets` weight sets, learning rate `lr`.
    pub(super) fn new(n: usize, sets: usize, lr: i32, w: i32) -> Self {
        assert!((2..=MAXN).contains(&n), "mix34: {n} inputs");
        let mut start = [0; MAXN];
        start[..n - 1].fill(w);
        Small {
            weights: vec![start; sets],
            x: [0; MAXN],
            n,
            set: 0,
            pr: 32768,
            lr,
        }
    }

    /// Mixes `x` with weight set `set`; returns the stretched mix.
    #[inline]
    pub(super) fn mix(&mut self, x: &[i32], set: usize) -> i32 {
        self.x[..self.n].copy_from_slice(&x[..self.n]);
        self.set = set;
        let dot: i64 = self.weights[set][..self.n]
            .iter()
            .zip(&x[..self.n])
            .map(|(&w, &x)| i64::from(w) * i64::from(x))
            .sum();
        let d = (dot >> 16).clamp(-2047, 2047) as i32;
        self.pr = squash(d);
        d
    }

    /// Walks the learned weights in a prior's snapshot (set by set, the
    /// first `n` of each as `u32`); restored weights are clamped to the
    /// range training keeps them in.
    pub(super) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        let n = self.n;
        for set in &mut self.weights {
            let mut u = set.map(|w| w as u32);
            v.u32s(&mut u[..n]);
            for (w, &x) in set.iter_mut().zip(&u[..n]) {
                *w = (x as i32).clamp(-(1 << 22), 1 << 22);
            }
        }
    }

    /// Trains the last mix's weight set on `bit`.
    #[inline]
    pub(super) fn update(&mut self, bit: u32) {
        let err = ((((bit as i32) << 16) - self.pr as i32) * self.lr) >> 4;
        let n = self.n;
        for (w, &x) in self.weights[self.set][..n].iter_mut().zip(&self.x[..n]) {
            *w = (*w + ((x * err) >> 14)).clamp(-(1 << 22), 1 << 22);
        }
    }
}

/// Revision 34's two mixers.
#[derive(Debug, Clone)]
pub(crate) struct Final34 {
    /// The learned mix of the refinement stages.
    stages: Small,
    /// The second final layer over the main mixer's set outputs.
    layer2: Small,
}

impl Final34 {
    /// Fresh mixers for a main mixer of `sets` selectors.
    fn new(sets: usize) -> Self {
        Final34 {
            stages: Small::new(STAGE_INPUTS, STAGE_SETS, STAGE_LR, STAGE_W0),
            layer2: Small::new(sets + 1, L2_SETS, L2_LR, 65536 / sets as i32),
        }
    }
}

impl Final34 {
    /// Walks both mixers' weights (the stage mix first) in a prior's
    /// snapshot (doc/FORMAT.md section 11).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.stages.visit(v);
        self.layer2.visit(v);
    }
}

impl Cm {
    /// Revision 34: sets up the mixers for the configured families (fresh
    /// at each install; none for a detected kind or before revision 34).
    pub(super) fn mix34_install(&mut self, configured: bool) {
        let sets = self.mixer.set_outputs().len();
        self.final34 = (configured && self.config.since(34)).then(|| Box::new(Final34::new(sets)));
    }

    /// Revision 34: the stage mix of the stages' outputs `stages` (16-bit
    /// probabilities: the v1 pair's, revision 2's stage's and the last
    /// stage's) and the mixer's stretched `d`, for the partial byte `c0` at
    /// bit `i`, averaged with the last stage's; the last stage's output
    /// when revision 34's mixers are off.
    #[inline]
    pub(super) fn mix34_refine(&mut self, d: i32, stages: [u32; 3], c0: u32, i: u32) -> u32 {
        let p = stages[2];
        let Some(f) = self.final34.as_mut() else {
            return p;
        };
        stage_mix(&mut f.stages, self.sse_byte.expected, d, stages, c0, i)
    }

    /// Revision 34: the second final layer over the main mixer's set
    /// outputs for the previous byte `c1` at bit `i`, averaged with the
    /// main mixer's stretched `d`; returns the stretched and 16-bit mix the
    /// APMs refine (`d` and `pm` unchanged when revision 34's mixers are
    /// off).
    #[inline]
    pub(super) fn mix34_layer2(&mut self, d: i32, pm: u32, i: u32, c1: u32) -> (i32, u32) {
        let Some(f) = self.final34.as_mut() else {
            return (d, pm);
        };
        layer2_step(
            &mut f.layer2,
            self.mixer.set_outputs(),
            d,
            (c1 << 3 | i) as usize,
        )
    }

    /// Revision 34: trains both mixers on `bit`.
    #[inline]
    pub(super) fn mix34_update(&mut self, bit: u32) {
        if let Some(f) = self.final34.as_mut() {
            f.stages.update(bit);
            f.layer2.update(bit);
        }
    }
}

/// The stage mix's step (revision 34's for the configured families, 36's
/// for a detected kind): `mixer` mixes the main mixer's stretched `d`, the
/// stages' stretched outputs and the bias in weight set `m * 256 + c0`
/// (`m` the match state for the expected byte `expected`, 0 for none, with
/// its leading 1), and its output is averaged with the last stage's.
#[inline]
pub(super) fn stage_mix(
    mixer: &mut Small,
    expected: u32,
    d: i32,
    stages: [u32; 3],
    c0: u32,
    i: u32,
) -> u32 {
    let p = stages[2];
    let m = expected_bit(expected, c0, i).map_or(0, |bit| 1 + bit);
    let x = [d, stretch(stages[0]), stretch(stages[1]), stretch(p), BIAS];
    mixer.mix(&x, (m << 8 | c0) as usize);
    ((p + mixer.pr + 1) >> 1).clamp(1, 65535)
}

/// The second final layer's step (revision 34's for the configured
/// families, 36's for a detected kind and a detected image): `layer2` mixes
/// the main mixer's per-selector outputs `outs` and the bias in weight set
/// `set`, and its stretched output is averaged with the main mixer's `d`;
/// returns the stretched and 16-bit mix the APMs refine.
#[inline]
pub(super) fn layer2_step(layer2: &mut Small, outs: &[i16], d: i32, set: usize) -> (i32, u32) {
    let mut x = [0i32; MAXN];
    for (x, &o) in x.iter_mut().zip(outs) {
        *x = i32::from(o);
    }
    x[outs.len()] = BIAS;
    let d = (d + layer2.mix(&x, set)) >> 1;
    (d, squash(d))
}
