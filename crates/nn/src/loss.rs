//! Softmax cross-entropy on logits, mean over the batch, exposing the probabilities.
//!
//! Start with [`CrossEntropy::new`]. Logits `[rows x classes]`, targets `[rows]` (`u8`,
//! `u16` or `usize`: any type with `Into<usize>`, e.g. the coded bytes).
//!
//! The compressor needs the probabilities *before* it knows the targets (the decoder
//! decodes each byte from them), so the pass is split:
//!
//! 1. [`CrossEntropy::predict`] computes, from the same logits, the per-row softmax
//!    ([`CrossEntropy::probs`], what the coder quantises) and log-softmax
//!    ([`CrossEntropy::log_probs`]), with the kernels' row functions;
//! 2. [`CrossEntropy::loss`] takes the targets and returns
//!    `-(1/rows) sum_r log_probs[r, target_r]`, summed in row order in `f64` and
//!    rounded to `f32` (the loss is reported, never trained through directly);
//! 3. [`CrossEntropy::backward`] returns `dlogits = (probs - onehot(target)) / rows`.
//!
//! [`CrossEntropy::forward`] does 1 and 2 at once, for training without coding.
//! A trainer that never reads the loss can use [`CrossEntropy::predict_probs`] (no
//! log-softmax) and [`CrossEntropy::set_targets`] instead of 1 and 2.
//!
//! ```
//! use sep_nn::CrossEntropy;
//! let mut ce = CrossEntropy::new(4, 2);
//! let p = ce.predict(&[0.0; 8]);
//! assert_eq!(p[0], 0.25);
//! let loss = ce.loss(&[1u8, 3]);
//! assert!((loss - 4f32.ln()).abs() < 1e-6);
//! ```

use crate::prim;

/// Cross-entropy with its buffers.
#[derive(Clone, Debug)]
pub struct CrossEntropy {
    classes: usize,
    probs: Vec<f32>,
    logp: Vec<f32>,
    targets: Vec<usize>,
    dlogits: Vec<f32>,
    rows: usize,
    have_targets: bool,
    /// Whether `logp` belongs to the last prediction ([`CrossEntropy::predict_probs`]
    /// skips it).
    have_logp: bool,
}

impl CrossEntropy {
    /// Over `classes` classes, for up to `max_rows` rows.
    pub fn new(classes: usize, max_rows: usize) -> Self {
        assert!(classes > 0, "CrossEntropy: no classes");
        CrossEntropy {
            classes,
            probs: vec![0.0; max_rows * classes],
            logp: vec![0.0; max_rows * classes],
            targets: vec![0; max_rows],
            dlogits: vec![0.0; max_rows * classes],
            rows: 0,
            have_targets: false,
            have_logp: false,
        }
    }

    /// Softmax and log-softmax of `logits = [rows x classes]`; returns the probabilities.
    pub fn predict(&mut self, logits: &[f32]) -> &[f32] {
        let c = self.classes;
        let rows = crate::rows_of(logits.len(), c, self.targets.len(), "CrossEntropy::predict");
        self.rows = rows;
        self.have_targets = false;
        self.have_logp = true;
        prim::softmax_rows(logits, &mut self.probs[..rows * c], c);
        prim::log_softmax_rows(logits, &mut self.logp[..rows * c], c);
        &self.probs[..rows * c]
    }

    /// [`CrossEntropy::predict`] without the log-softmax (the same probabilities, half
    /// the exponentials): for training that never reads the loss. Follow it with
    /// [`CrossEntropy::set_targets`] and [`CrossEntropy::backward`]; [`CrossEntropy::loss`]
    /// and [`CrossEntropy::log_probs`] then panic.
    pub fn predict_probs(&mut self, logits: &[f32]) -> &[f32] {
        let c = self.classes;
        let rows = crate::rows_of(
            logits.len(),
            c,
            self.targets.len(),
            "CrossEntropy::predict_probs",
        );
        self.rows = rows;
        self.have_targets = false;
        self.have_logp = false;
        prim::softmax_rows(logits, &mut self.probs[..rows * c], c);
        &self.probs[..rows * c]
    }

    /// Records `targets = [rows]` for [`CrossEntropy::backward`] without computing the
    /// loss.
    pub fn set_targets<I: Copy + Into<usize>>(&mut self, targets: &[I]) {
        let (c, rows) = (self.classes, self.rows);
        assert_eq!(
            targets.len(),
            rows,
            "CrossEntropy::set_targets: one target per row"
        );
        for (r, &t) in targets.iter().enumerate() {
            let t: usize = t.into();
            assert!(t < c, "CrossEntropy::set_targets: target {t} out of range");
            self.targets[r] = t;
        }
        self.have_targets = true;
    }

    /// The mean negative log-likelihood of `targets = [rows]` under the last prediction.
    pub fn loss<I: Copy + Into<usize>>(&mut self, targets: &[I]) -> f32 {
        assert!(
            self.have_logp,
            "CrossEntropy::loss: the last prediction was predict_probs"
        );
        let (c, rows) = (self.classes, self.rows);
        assert_eq!(
            targets.len(),
            rows,
            "CrossEntropy::loss: one target per row"
        );
        let mut sum = 0.0f64;
        for (r, &t) in targets.iter().enumerate() {
            let t: usize = t.into();
            assert!(t < c, "CrossEntropy::loss: target {t} out of range");
            self.targets[r] = t;
            sum += self.logp[r * c + t] as f64;
        }
        self.have_targets = true;
        (-sum / rows as f64) as f32
    }

    /// [`CrossEntropy::predict`] then [`CrossEntropy::loss`].
    pub fn forward<I: Copy + Into<usize>>(&mut self, logits: &[f32], targets: &[I]) -> f32 {
        self.predict(logits);
        self.loss(targets)
    }

    /// `dlogits = (probs - onehot(target)) / rows`, `[rows x classes]`.
    pub fn backward(&mut self) -> &[f32] {
        assert!(self.have_targets, "CrossEntropy::backward: call loss first");
        let (c, rows) = (self.classes, self.rows);
        let n = rows as f32;
        for (r, (d, p)) in self.dlogits[..rows * c]
            .chunks_exact_mut(c)
            .zip(self.probs[..rows * c].chunks_exact(c))
            .enumerate()
        {
            for (dj, &pj) in d.iter_mut().zip(p) {
                *dj = pj / n;
            }
            d[self.targets[r]] = (p[self.targets[r]] - 1.0) / n;
        }
        &self.dlogits[..rows * c]
    }

    /// Probabilities of the last prediction, `[rows x classes]`.
    pub fn probs(&self) -> &[f32] {
        &self.probs[..self.rows * self.classes]
    }

    /// Log-probabilities of the last prediction, `[rows x classes]`.
    ///
    /// # Panics
    /// If the last prediction was [`CrossEntropy::predict_probs`].
    pub fn log_probs(&self) -> &[f32] {
        assert!(
            self.have_logp,
            "CrossEntropy::log_probs: the last prediction was predict_probs"
        );
        &self.logp[..self.rows * self.classes]
    }
}
