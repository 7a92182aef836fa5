//! Entropy coding for sep: a range coder and the probability quantizer.
//!
//! This crate knows nothing about models. A model produces either a probability
//! for a binary decision ([`Coder::code_bit`]) or a 256-way distribution that
//! [`quantize`] turns into a [`FreqTable`] ([`Coder::code_symbol`]).
//!
//! Models are written once, generically over [`Coder`], and run unchanged in
//! both directions: with an [`Encoder`] the call codes the symbol it is given and
//! returns it; with a [`Decoder`] it ignores the argument and returns the
//! decoded symbol. Encoder and decoder therefore cannot drift apart.
//!
//! ```
//! use sep_coder::{quantize, Coder, Decoder, Encoder, FreqTable};
//!
//! let mut probs = [0.001f32; 256];
//! probs[b'a' as usize] = 0.745;
//! let mut table = FreqTable::default();
//! quantize(&probs, &mut table);
//!
//! let mut enc = Encoder::new();
//! for &b in b"banana" {
//!     enc.code_symbol(u32::from(b), &table);
//! }
//! enc.code_bit(1, 60_000);
//! let bytes = enc.finish();
//!
//! let mut dec = Decoder::new(&bytes);
//! let text: Vec<u8> = (0..6).map(|_| dec.code_symbol(0, &table) as u8).collect();
//! assert_eq!(text, b"banana");
//! assert_eq!(dec.code_bit(0, 60_000), 1);
//! ```

#![forbid(unsafe_code)]

mod quant;
mod range;

pub use quant::{FREQ_BITS, FREQ_TOTAL, FreqTable, quantize};
pub use range::{BIT_PROB_BITS, Decoder, Encoder, MAX_TOTAL_BITS};

/// One direction of coding, so that a model's code path is shared by the
/// encoder and the decoder.
///
/// Every method takes the true symbol (used by the encoder, ignored by the
/// decoder) and returns the symbol that was coded (the same value for the
/// encoder, the decoded one for the decoder).
pub trait Coder {
    /// Codes one binary decision where `P(bit = 1) = p1 / 65536`.
    ///
    /// `p1` must lie in `1..=65535`; callers clamp their predictions.
    fn code_bit(&mut self, bit: u32, p1: u32) -> u32;

    /// Codes a symbol of a 256-way [`FreqTable`] (total [`FREQ_TOTAL`]).
    fn code_symbol(&mut self, sym: u32, table: &FreqTable) -> u32;

    /// Codes `sym` (below `2^bits`) with a uniform distribution; `bits <= 24`.
    fn code_uniform(&mut self, sym: u32, bits: u32) -> u32;
}
