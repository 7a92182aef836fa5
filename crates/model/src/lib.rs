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
//! TRACE and PatchTST share their token shape ([`TokenShape`]) and their front end
//! ([`TokenBackbone`]); each configuration says what it costs and how to build it through
//! [`BackboneSpec`] (and [`BodySpec`] for a body behind the SE), implemented in the
//! backbone's own file.
//!
//! **Adding a backbone**: one new file (the network, its configuration and the two spec
//! implementations), then registration: a variant of [`BackboneConfig`] with its arm in
//! [`BackboneConfig::spec`] (and of [`SeBody`] with its arm in [`SeBody::spec`] if the
//! SE can feed it); outside this crate, its format id and parameters in
//! `sep::params::backbone` and doc/FORMAT.md section 4, and its name in
//! `sep::neural::BackboneKind` for the command line.
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
mod spec;
mod tokens;
mod trace;
mod trainer;

pub use pac::{Pac, PacBody, PacConfig};
pub use patchtst::{PatchTst, PatchTstBody, PatchTstConfig};
pub use se::{Adaptive, Se, SeBody, SeConfig};
pub use sep_nn::{Module, Param};
pub use spec::{BackboneSpec, BodySpec};
pub use tokens::{TokenBackbone, TokenShape};
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
    /// The configuration behind its [`BackboneSpec`]: the one place a backbone is
    /// registered.
    pub fn spec(&self) -> &dyn BackboneSpec {
        match self {
            BackboneConfig::Pac(c) => c,
            BackboneConfig::Trace(c) => c,
            BackboneConfig::PatchTst(c) => c,
            BackboneConfig::Se(c) => c,
        }
    }

    /// Builds the backbone for blocks of up to `streams` streams, its weights
    /// drawn from `seed`.
    pub fn build(&self, streams: usize, seed: u64) -> Box<dyn Backbone> {
        self.spec().build(streams, seed)
    }

    /// Bytes of context.
    pub fn context(&self) -> usize {
        self.spec().context()
    }

    /// Format identifier of the backbone (see doc/FORMAT.md).
    pub fn id(&self) -> u8 {
        self.spec().id()
    }

    /// Checks every limit of doc/FORMAT.md.
    pub fn validate(&self) -> Result<(), String> {
        self.spec().validate()
    }

    /// Parameters and activation memory, in bytes, for `streams` streams.
    pub fn memory_bytes(&self, streams: usize) -> u64 {
        self.spec().memory_bytes(streams)
    }

    /// Forward multiply-adds per predicted byte.
    pub fn forward_macs(&self) -> u64 {
        self.spec().forward_macs()
    }

    /// A one-line description for listings.
    pub fn describe(&self) -> String {
        self.spec().describe()
    }
}
