//! Count-based context models for sep, in integer arithmetic only.
//!
//! These models predict one bit at a time (a byte is eight binary decisions,
//! most significant bit first) and learn in a single pass, so they are fast
//! and useful from the first kilobyte. Because every operation is on
//! integers and tables fixed by the format, the encoder and the decoder
//! compute identical probabilities on every machine.
//!
//! The context-mixing model of `--model mix` is [`Cm`] (`cm/`): it mixes
//! the predictions of context families that each live in one file of
//! `models/` (order-N, word, sparse, record, image; and for CM revision 1
//! the data-type detector with the audio, pixel, x86, BIFF and bi-level
//! families; for revision 2 the text family and the APMs of `sse.rs`)
//! behind one trait, so adding a family is one new file plus a
//! registration line. Revision 0 of it is frozen: see `cm/mod.rs`.
//! Revision 3 is a separate, lean model for the `fast` preset: [`FastCm`]
//! (`fast.rs`), a fixed set of contexts with one mixer and one APM.
//!
//! One part is not integer: [`Lstm`] (`lstm.rs`), the serial network that
//! [`Cm::with_lstm`] adds as mixer inputs (preset `ultra`). It computes in
//! `f32` under the fixed-order rules of doc/DETERMINISM.md, with the
//! `sep_kernels` functions, so it too gives the same bits everywhere.
//!
//! Start with [`Order2`], the fast model selected by `--model order2`. The
//! building blocks it is made of ([`AdaptiveProbs`], [`Mixer`], [`Apm`],
//! [`squash`]/[`stretch`]) are public so that richer models can reuse them.
//!
//! ```
//! use sep_cm::{Order2, Order2Params};
//! use sep_coder::{Decoder, Encoder};
//!
//! let text = b"abracadabra abracadabra abracadabra".to_vec();
//! let mut enc = Encoder::new();
//! let mut model = Order2::new(&Order2Params::default());
//! let mut data = text.clone();
//! model.code(&mut enc, &mut data);
//! let bytes = enc.finish();
//! assert!(bytes.len() < text.len());
//!
//! let mut out = vec![0u8; text.len()];
//! let mut model = Order2::new(&Order2Params::default());
//! model.code(&mut Decoder::new(&bytes), &mut out);
//! assert_eq!(out, text);
//! ```

#![forbid(unsafe_code)]

mod apm;
mod cm;
mod fast;
mod hashtable;
mod logistic;
mod logistic_tables;
mod lstm;
mod matcher;
mod mixer2;
mod models;
mod order2;
mod prim;
mod runs;
mod skip;
mod snapshot;
pub use snapshot::MAX_WALK;
mod sse;
mod state;

pub use apm::Apm;
pub use cm::{Cm, CmConfig, CmStream, revision_has};
pub use fast::FastCm;
pub use hashtable::NibbleTable;
pub use logistic::{squash, stretch};
pub use lstm::{Lstm, LstmConfig};
pub use matcher::{MatchModel, MatchState, Sequential, Visibility};
pub use mixer2::Mixer2;
pub use order2::{Order2, Order2Params};
pub use prim::{AdaptiveProbs, Mixer, StateMap};
pub use state::{NUM_STATES, STATES, StateTable};

/// The instruction part of each byte of x86 code as the CM's decoder reads
/// it (for cost dumps such as `sep`'s `cost_dump` example; not a stable API).
#[doc(hidden)]
pub use models::x86_4::x86_roles;
