//! The online training step every backbone shares (doc/SEP-DESIGN.md section 2):
//! slide each stream's context window by the byte just coded, forward, softmax;
//! then, once the bytes are known, cross-entropy, backward and one Adam step.
//!
//! The engine of the `sep` library and the measuring examples run this one
//! loop, so that what an example measures is what an archive gets. Nothing in
//! [`Trainer::predict`] or [`Trainer::learn`] allocates.

use crate::{Backbone, BackboneConfig, Param};
use sep_nn::{Adam, AdamConfig, CrossEntropy, Module};

/// Lets [`Adam`] walk a backbone's parameters.
struct AsModule<'a, B: ?Sized>(&'a mut B);

impl<B: Backbone + ?Sized> Module for AsModule<'_, B> {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        self.0.visit_params(f);
    }
}

/// A backbone with its optimiser, loss and the context windows of `streams`
/// streams: one object per block, driven step by step.
///
/// ```
/// use sep_model::{BackboneConfig, PacConfig, Trainer};
/// let config = BackboneConfig::Pac(PacConfig { context: 4, embed: 4, ffn: 32, pairs: 2, cache: true });
/// let mut trainer = Trainer::new(config.build(2, 7), Default::default(), 2);
/// let probs = trainer.predict(0, 2, &[0, 0]).to_vec();
/// assert_eq!(probs.len(), 2 * 256);
/// trainer.learn(&[b'a', b'b']);
/// // After one step on those bytes, they are likelier at step 1.
/// let after = trainer.predict(1, 2, &[b'a', b'b']);
/// assert!(after[usize::from(b'a')] > probs[usize::from(b'a')]);
/// ```
pub struct Trainer<B: Backbone + ?Sized = dyn Backbone> {
    model: Box<B>,
    adam: Adam,
    ce: CrossEntropy,
    ctx: Vec<u8>,
    l: usize,
}

impl Trainer {
    /// The backbone of `config` for `streams` streams, weights drawn from
    /// `seed`, trained with `adam`.
    pub fn from_config(
        config: &BackboneConfig,
        adam: AdamConfig,
        streams: usize,
        seed: u64,
    ) -> Self {
        Trainer::new(config.build(streams, seed), adam, streams)
    }
}

impl<B: Backbone + ?Sized> Trainer<B> {
    /// Trains `model` (built for at least `streams` streams) with `adam`.
    pub fn new(model: Box<B>, adam: AdamConfig, streams: usize) -> Self {
        let l = model.context();
        Trainer {
            model,
            adam: Adam::new(adam),
            ce: CrossEntropy::new(256, streams),
            ctx: vec![0; streams * l],
            l,
        }
    }

    /// Probabilities `[k x 256]` of step `t` for streams `0..k`, given the
    /// bytes coded at the last step (`last[s]` for stream `s`; ignored at step
    /// 0, where every context is zeros).
    pub fn predict(&mut self, t: usize, k: usize, last: &[u8]) -> &[f32] {
        let l = self.l;
        if t > 0 && l > 0 {
            // Slide each context window by the byte coded at the last step.
            for (row, &b) in self.ctx.chunks_exact_mut(l).take(k).zip(last) {
                row.copy_within(1.., 0);
                row[l - 1] = b;
            }
        }
        let logits = self.model.forward(&self.ctx[..k * l], k);
        // Probabilities only: the loss value is never used (no log-softmax).
        self.ce.predict_probs(logits)
    }

    /// One training step on the bytes just coded (`targets[s]` for stream
    /// `s`, as many as the last [`Trainer::predict`] had rows).
    pub fn learn(&mut self, targets: &[u8]) {
        self.ce.set_targets(targets);
        let dlogits = self.ce.backward();
        self.model.backward(dlogits);
        self.adam.step(&mut AsModule(self.model.as_mut()));
    }

    /// The backbone being trained (for statistics such as SE's kept patches).
    pub fn model(&self) -> &B {
        &self.model
    }
}
