//! sep: lossless compression with models that learn while they code.
//!
//! Every byte is predicted by a model trained online on the bytes before it,
//! and coded with a range coder; the decoder replays the same model, so the
//! archive holds no model, only the coded data and the header that rebuilds
//! the model. The archive format is specified in doc/FORMAT.md.
//!
//! Start with the one-shot functions [`compress`] and [`decompress`], or the
//! streaming adapters [`Encoder`] (a [`Write`](std::io::Write)) and
//! [`Decoder`] (a [`Read`](std::io::Read)). [`inspect`] lists an archive
//! without decoding it.
//!
//! ```
//! let data = b"to be or not to be, that is the question".repeat(50);
//! let archive = sep::compress(&data, &sep::Options::default())?;
//! assert!(archive.len() < data.len() / 4);
//! assert_eq!(sep::decompress(&archive)?, data);
//! # Ok::<(), sep::Error>(())
//! ```

mod codec;
mod decoder;
mod encoder;
mod engine;
mod error;
pub mod format;
mod mix;
mod neural;
mod pipeline;
pub mod segment; // issue 17: transforms inside a block

pub use codec::{Model, ModelConfig};
pub use decoder::{ArchiveInfo, Decoder, inspect, read_header};
pub use encoder::{Encoder, Options};
pub use error::{Error, Result};
pub use mix::MixConfig;
pub use neural::{AdaptiveKind, BackboneKind, Knobs, NeuralConfig, Preset};
pub use sep_cm::CmConfig;
pub use sep_model::{
    Adaptive, BackboneConfig, PacConfig, PatchTstConfig, SeBody, SeConfig, TraceConfig,
};
pub use sep_nn::AdamConfig;

use std::io::{Read, Write};

/// Compresses `data` into a complete archive. The content length is
/// recorded in the header whatever `options.content_length` says.
pub fn compress(data: &[u8], options: &Options) -> Result<Vec<u8>> {
    let options = Options {
        content_length: Some(data.len() as u64),
        ..options.clone()
    };
    let mut enc = Encoder::new(Vec::with_capacity(data.len() / 2 + 64), &options)?;
    enc.write_all(data).map_err(Error::from_io)?;
    enc.finish()
}

/// Decompresses a complete archive (or several concatenated ones).
pub fn decompress(archive: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    Decoder::new(archive)?
        .read_to_end(&mut out)
        .map_err(Error::from_io)?;
    Ok(out)
}
