//! Audio of CM revision 38 (doc/FORMAT.md 4.49.4): revision 14's family
//! (`audio14.rs`, FORMAT 4.25.5, which revisions 14 to 37 keep) with a
//! cascade of three normalised LMS (NLMS) stages after its OLS 32
//! predictor with the sign-sign cascade (predictor 7). This file holds the
//! stages ([`Stages`]); `Audio14Contexts::with_nlms` adds them to the
//! family.
//!
//! The stages predict that predictor's residual: stage 1 from the last
//! [`TAPS1`] interleaved residuals of predictor 7 (both channels: for the
//! second channel of a stereo pair the first channel's current residual is
//! the newest, which makes it a stereo stage too), stage 2 from the last
//! [`TAPS2`] interleaved residuals left after stage 1, stage 3 from the last
//! [`TAPS3`] left after stage 2. The shared residual rings keep the sum of
//! their squares; each channel has its own weights, learnt by the
//! normalised rule `w += 2^-mu e x / (|x|^2 + eps)` in fixed point.
//! Predictor 7 plus the stage-1, stage-1+2 and stage-1+2+3 residual
//! predictions are three further predictors (14 in all); one more hashed
//! context holds the byte the two-stage prediction implies, and a third APM
//! is keyed by the best predictor's last error.
//!
//! Everything else (predictors, per-bit inputs, contexts, APMs) is revision
//! 14's. All arithmetic is integer.

/// Predictors added by revision 38: predictor 7 corrected by NLMS stage 1,
/// by stages 1 and 2, and by stages 1, 2 and 3.
pub(crate) const X: usize = 3;

/// Taps (interleaved residuals) and step exponent of the three NLMS stages.
pub(crate) const TAPS1: usize = 2048;
const MU1: u32 = 4;
const TAPS2: usize = 32;
const MU2N: u32 = 6;
const TAPS3: usize = 16;
const MU3: u32 = 6;

/// Revision 38's NLMS stages: shared interleaved residual rings and
/// per-channel weights, with the base prediction and the stages' predicted
/// residuals of the next sample.
#[derive(Debug, Clone)]
pub(crate) struct Stages {
    ring1: Ring,
    ring2: Ring,
    ring3: Ring,
    nl1: Vec<Nlms>,
    nl2: Vec<Nlms>,
    nl3: Vec<Nlms>,
    base_pred: i32,
    n1_pred: i32,
    n2_pred: i32,
    n3_pred: i32,
}

impl Stages {
    /// The stages for `channels` channels.
    pub(crate) fn new(channels: usize) -> Self {
        Stages {
            ring1: Ring::new(TAPS1),
            ring2: Ring::new(TAPS2),
            ring3: Ring::new(TAPS3),
            nl1: (0..channels).map(|_| Nlms::new(TAPS1, MU1)).collect(),
            nl2: (0..channels).map(|_| Nlms::new(TAPS2, MU2N)).collect(),
            nl3: (0..channels).map(|_| Nlms::new(TAPS3, MU3)).collect(),
            base_pred: 0,
            n1_pred: 0,
            n2_pred: 0,
            n3_pred: 0,
        }
    }

    /// Learns channel `ch`'s sample `s` and shifts its residuals in.
    pub(crate) fn learn(&mut self, ch: usize, s: i32) {
        let r0 = s - self.base_pred;
        let r1 = r0 - self.n1_pred;
        self.nl1[ch].update(self.ring1.window(), self.ring1.energy, r1);
        self.nl2[ch].update(self.ring2.window(), self.ring2.energy, r1 - self.n2_pred);
        self.ring1.push(r0);
        self.ring2.push(r1);
        let r2 = r1 - self.n2_pred;
        self.nl3[ch].update(self.ring3.window(), self.ring3.energy, r2 - self.n3_pred);
        self.ring3.push(r2);
    }

    /// The three predictions of channel `ch`'s next sample from `base`
    /// (predictor 7's): corrected by stage 1, by stages 1-2, by stages 1-3.
    pub(crate) fn predict(&mut self, ch: usize, base: i32) -> [i32; X] {
        self.base_pred = base;
        self.n1_pred = self.nl1[ch].predict(self.ring1.window());
        self.n2_pred = self.nl2[ch].predict(self.ring2.window());
        self.n3_pred = self.nl3[ch].predict(self.ring3.window());
        let b1 = base + self.n1_pred;
        let b2 = b1 + self.n2_pred;
        [b1, b2, b2 + self.n3_pred]
    }
}

/// A ring of the last `taps` interleaved residuals (stored twice so the
/// newest `taps` are contiguous) with the sum of their squares.
#[derive(Debug, Clone)]
struct Ring {
    taps: usize,
    u: Vec<i32>,
    at: usize,
    energy: i64,
}

/// Residuals entering a ring are clamped to this magnitude.
const RMAX: i32 = 1 << 15;

impl Ring {
    fn new(taps: usize) -> Self {
        Ring {
            taps,
            u: vec![0; 2 * taps],
            at: 0,
            energy: 0,
        }
    }

    /// The newest `taps` residuals, the newest first.
    fn window(&self) -> &[i32] {
        &self.u[self.at..self.at + self.taps]
    }

    /// Shifts residual `r` in.
    fn push(&mut self, r: i32) {
        let old = i64::from(self.u[self.at + self.taps - 1]);
        self.energy -= old * old;
        self.at = if self.at == 0 {
            self.taps - 1
        } else {
            self.at - 1
        };
        let r = r.clamp(-RMAX, RMAX);
        self.u[self.at] = r;
        self.u[self.at + self.taps] = r;
        self.energy += i64::from(r) * i64::from(r);
    }
}

/// One channel's normalised LMS weights (16 fraction bits) over a ring.
#[derive(Debug, Clone)]
struct Nlms {
    w: Vec<i32>,
    mu: u32,
}

impl Nlms {
    fn new(taps: usize, mu: u32) -> Self {
        Nlms {
            w: vec![0; taps],
            mu,
        }
    }

    /// The predicted next residual.
    fn predict(&self, x: &[i32]) -> i32 {
        let dot: i64 = self
            .w
            .iter()
            .zip(x)
            .map(|(&w, &x)| i64::from(w) * i64::from(x))
            .sum();
        (dot >> 16).clamp(-(1 << 18), 1 << 18) as i32
    }

    /// Learns that window `x` (energy `energy`) was followed by a residual
    /// `err` away from the prediction.
    fn update(&mut self, x: &[i32], energy: i64, err: i32) {
        let err = i64::from(err.clamp(-(1 << 17), 1 << 17));
        let eps = self.w.len() as i64 * 64 + 1;
        let g = ((err << (32 - self.mu)) / (energy + eps)).clamp(-(1 << 31), 1 << 31);
        for (w, &x) in self.w.iter_mut().zip(x) {
            let d = (g * i64::from(x) + (1 << 15)) >> 16;
            *w = (i64::from(*w) + d).clamp(-(1 << 20), 1 << 20) as i32;
        }
    }
}
