//! What a backbone's configuration says about it before it is built: one implementation
//! of [`BackboneSpec`] (and [`BodySpec`] for a body the semantics enhancement can feed)
//! beside each backbone, so that [`crate::BackboneConfig`] and [`crate::SeBody`] dispatch
//! through one `match` each (their `spec()`), the registration line of a new backbone.

use crate::{Backbone, Body};
use sep_nn::Rng;

/// A backbone configuration: its format id, limits, costs, and how to build it.
pub trait BackboneSpec {
    /// Format identifier (doc/FORMAT.md section 4.4).
    fn id(&self) -> u8;

    /// Lower-case name, as in listings and the CLI.
    fn name(&self) -> &'static str;

    /// Bytes of context the backbone reads.
    fn context(&self) -> usize;

    /// Checks every limit of doc/FORMAT.md.
    fn validate(&self) -> Result<(), String>;

    /// Parameters and activation memory, in bytes, for `streams` streams.
    fn memory_bytes(&self, streams: usize) -> u64;

    /// Forward multiply-adds per predicted byte.
    fn forward_macs(&self) -> u64;

    /// A one-line description for listings.
    fn describe(&self) -> String;

    /// Builds the backbone for up to `streams` streams, its weights drawn from `seed`.
    fn build(&self, streams: usize, seed: u64) -> Box<dyn Backbone>;
}

/// A backbone whose body can stand behind the semantics enhancement.
pub trait BodySpec: BackboneSpec {
    /// `(tokens, width)` the body reads; a body that reads one vector has 1 token.
    fn input_shape(&self) -> (usize, usize);

    /// Builds the body alone for up to `streams` streams, drawing from `rng`.
    fn build_body(&self, streams: usize, rng: &mut Rng) -> Box<dyn Body>;
}
