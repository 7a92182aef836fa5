//! Neural byte predictors for sep, behind one trait.
//!
//! A [`Backbone`] maps, for each of `rows` streams, the last `context()` bytes to
//! 256 logits for the next byte, and learns from the gradient of those logits.
//! Everything it computes goes through `sep-nn` and `sep-kernels`, so the
//! decoder, rebuilding it from the same [`BackboneConfig`] and seed and feeding
//! it the same bytes, gets bit-identical logits.
//!
//! Backbones are split in two so that a front end can be swapped: a byte front
//! end (an embedding, or the semantics enhancement) produces features, and a
//! [`Body`] maps features to logits. The backbones of doc/SEP-DESIGN.md sections 3 and 4:
//!
//! | backbone | front end | body | format id |
//! |---|---|---|---|
//! | [`Pac`] | sigmoid byte embedding | [`PacBody`] (MLP, per-stream layers) | 1 |
//! | [`Trace`] | embedding + positions, `G` bytes per token | [`TraceBody`] (linear attention, last token) | 2 |
//! | [`PatchTst`] | embedding + positions, `G` bytes per token | [`PatchTstBody`] (softmax attention, BatchNorm) | 3 |
//! | [`Se`] | semantics enhancement ([`se`]) | any of the three bodies | 4 |
//!
//! ```
//! use sep_model::{Backbone, BackboneConfig, PacConfig};
//! let config = BackboneConfig::Pac(PacConfig { context: 4, embed: 4, ffn: 32, pairs: 2, cache: true });
//! let mut model = config.build(3, 7);
//! assert_eq!(model.context(), 4);
//! let logits = model.forward(&[1, 2, 3, 4, 5, 6, 7, 8], 2).to_vec();
//! assert_eq!(logits.len(), 2 * 256);
//! ```

#![forbid(unsafe_code)]

mod front;
mod pac;
mod patchtst;
pub mod se;
mod trace;
mod trainer;

pub use pac::{Pac, PacBody, PacConfig};
pub use patchtst::{PatchTst, PatchTstBody, PatchTstConfig};
pub use se::{Adaptive, Se, SeBody, SeConfig};
pub use sep_nn::{Module, Param};
pub use trace::{Trace, TraceBody, TraceConfig};
pub use trainer::Trainer;

/// A byte predictor trained online: context bytes in, next-byte logits out.
///
/// Rows are streams: row `s` of every call belongs to stream `s`, and a call with
/// `rows` rows uses streams `0..rows`. Models with per-stream state (weights or
/// caches) rely on that.
pub trait Backbone: Send {
    /// Bytes of context each prediction sees.
    fn context(&self) -> usize;

    /// Logits `[rows x 256]` for the contexts `ctx = [rows x context()]`, oldest
    /// byte first. Bytes before the start of a stream are given as 0.
    fn forward(&mut self, ctx: &[u8], rows: usize) -> &[f32];

    /// Accumulates parameter gradients from `dlogits = [rows x 256]` (the
    /// gradient of the loss with respect to the last forward's logits).
    fn backward(&mut self, dlogits: &[f32]);

    /// Visits every parameter in a fixed order (the optimiser's order).
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param));

    /// Clears per-stream state carried from step to step (PAC's cache), as at
    /// the start of a block.
    fn reset(&mut self);

    /// Multiply-adds per predicted byte in the forward pass (for presets and
    /// listings).
    fn forward_macs(&self) -> u64;
}

/// A backbone without its byte front end: features in, logits out.
pub trait Body: Send {
    /// Features per row that [`Body::forward`] expects.
    fn input_width(&self) -> usize;

    /// Logits `[rows x 256]` for features `x = [rows x input_width()]`.
    fn forward(&mut self, x: &[f32]) -> &[f32];

    /// Accumulates parameter gradients and returns the gradient of the input
    /// features, `[rows x input_width()]`.
    fn backward(&mut self, dlogits: &[f32]) -> &[f32];

    /// Visits every parameter in a fixed order.
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param));

    /// Clears per-stream state carried from step to step.
    fn reset(&mut self);

    /// Multiply-adds per row in the forward pass.
    fn forward_macs(&self) -> u64;
}

/// Which backbone, with all its hyperparameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackboneConfig {
    /// PAC (doc/SEP-DESIGN.md section 3).
    Pac(PacConfig),
    /// TRACE (doc/SEP-DESIGN.md section 3).
    Trace(TraceConfig),
    /// PatchTST (doc/SEP-DESIGN.md section 3).
    PatchTst(PatchTstConfig),
    /// The semantics enhancement in front of a body (doc/SEP-DESIGN.md section 4).
    Se(SeConfig),
}

impl BackboneConfig {
    /// Builds the backbone for blocks of up to `streams` streams, its weights
    /// drawn from `seed`.
    pub fn build(&self, streams: usize, seed: u64) -> Box<dyn Backbone> {
        match self {
            BackboneConfig::Pac(c) => Box::new(Pac::new(c, streams, seed)),
            BackboneConfig::Trace(c) => Box::new(Trace::new(c, streams, seed)),
            BackboneConfig::PatchTst(c) => Box::new(PatchTst::new(c, streams, seed)),
            BackboneConfig::Se(c) => Box::new(Se::new(c, streams, seed)),
        }
    }

    /// Bytes of context.
    pub fn context(&self) -> usize {
        match self {
            BackboneConfig::Pac(c) => c.context.into(),
            BackboneConfig::Trace(c) => c.context.into(),
            BackboneConfig::PatchTst(c) => c.context.into(),
            BackboneConfig::Se(c) => c.context.into(),
        }
    }

    /// Format identifier of the backbone (see doc/FORMAT.md).
    pub fn id(&self) -> u8 {
        match self {
            BackboneConfig::Pac(_) => 1,
            BackboneConfig::Trace(_) => 2,
            BackboneConfig::PatchTst(_) => 3,
            BackboneConfig::Se(_) => 4,
        }
    }

    /// Checks every limit of doc/FORMAT.md.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            BackboneConfig::Pac(c) => c.validate(),
            BackboneConfig::Trace(c) => c.validate(),
            BackboneConfig::PatchTst(c) => c.validate(),
            BackboneConfig::Se(c) => c.validate(),
        }
    }

    /// Parameters and activation memory, in bytes, for `streams` streams.
    pub fn memory_bytes(&self, streams: usize) -> u64 {
        match self {
            BackboneConfig::Pac(c) => c.memory_bytes(streams),
            BackboneConfig::Trace(c) => c.memory_bytes(streams),
            BackboneConfig::PatchTst(c) => c.memory_bytes(streams),
            BackboneConfig::Se(c) => c.memory_bytes(streams),
        }
    }

    /// Forward multiply-adds per predicted byte.
    pub fn forward_macs(&self) -> u64 {
        match self {
            BackboneConfig::Pac(c) => c.forward_macs(),
            BackboneConfig::Trace(c) => c.forward_macs(),
            BackboneConfig::PatchTst(c) => c.forward_macs(),
            BackboneConfig::Se(c) => c.forward_macs(),
        }
    }

    /// A one-line description for listings.
    pub fn describe(&self) -> String {
        match self {
            BackboneConfig::Pac(c) => c.describe(),
            BackboneConfig::Trace(c) => c.describe(),
            BackboneConfig::PatchTst(c) => c.describe(),
            BackboneConfig::Se(c) => c.describe(),
        }
    }
}
