//! sep: lossless compression with models that learn while they code.
//!
//! Every byte is predicted by a model trained online on the bytes before it,
//! and coded with a range coder; the decoder replays the same model, so the
//! archive holds no model, only the coded data and the header that rebuilds
//! the model. The archive format is specified in [the format
//! specification](crate::spec::format) (doc/FORMAT.md), what must be
//! bit-identical on every machine in [the determinism rules](crate::spec::determinism)
//! (doc/DETERMINISM.md); both are included in these docs.
//!
//! Start with the one-shot functions [`compress`] and [`decompress`], or the
//! streaming adapters [`Encoder`] (a [`Write`]) and
//! [`Decoder`] (a [`Read`]). [`inspect`] lists an archive
//! without decoding it.
//!
//! ```
//! let data = b"to be or not to be, that is the question".repeat(50);
//! let archive = sep::compress(&data, &sep::Options::default())?;
//! assert!(archive.len() < data.len() / 4);
//! assert_eq!(sep::decompress(&archive)?, data);
//! # Ok::<(), sep::Error>(())
//! ```
//!
//! # Choosing a model, a preset and threads
//!
//! [`Options::default`] is the command line's `sep FILE`: context mixing
//! ([`Model::Mix`]) with the `default` [`Preset`], on one thread (see
//! [`Options::threads`] for the rule; `threads: 0` is one per core, as `sep`
//! does). The archive is the same whatever the thread count.
//!
//! ```
//! let options = sep::Options {
//!     model: sep::Model::mix_preset(sep::Preset::Fast), // sep -p fast
//!     threads: 0,                                       // sep -T 0: one per core
//!     ..sep::Options::default()
//! };
//! let data = b"fast and on every core ".repeat(200);
//! assert_eq!(sep::decompress(&sep::compress(&data, &options)?)?, data);
//! # Ok::<(), sep::Error>(())
//! ```
//!
//! # Streaming a file
//!
//! [`Encoder`] and [`Decoder`] stream with [`std::io::copy`]; memory does not
//! grow with the input.
//!
//! ```no_run
//! use std::fs::File;
//! use std::io::{self, BufReader, BufWriter};
//!
//! fn compress_file(from: &str, to: &str) -> sep::Result<()> {
//!     let mut input = BufReader::new(File::open(from)?);
//!     let options = sep::Options {
//!         content_length: Some(std::fs::metadata(from)?.len()),
//!         ..sep::Options::default()
//!     };
//!     let mut enc = sep::Encoder::new(BufWriter::new(File::create(to)?), &options)?;
//!     io::copy(&mut input, &mut enc)?;
//!     enc.finish()?; // writes the end record and flushes
//!     Ok(())
//! }
//!
//! fn decompress_file(from: &str, to: &str) -> sep::Result<u64> {
//!     let mut dec = sep::Decoder::new(BufReader::new(File::open(from)?))?;
//!     let mut out = BufWriter::new(File::create(to)?);
//!     let n = io::copy(&mut dec, &mut out)?;
//!     io::Write::flush(&mut out)?;
//!     Ok(n)
//! }
//! # compress_file("in", "in.sep").unwrap();
//! # decompress_file("in.sep", "out").unwrap();
//! ```
//!
//! The same in memory, checked:
//!
//! ```
//! use std::io::{self, Write};
//! let data = b"streamed through io::copy ".repeat(100);
//! let mut enc = sep::Encoder::new(Vec::new(), &sep::Options::default())?;
//! io::copy(&mut &data[..], &mut enc)?;
//! let archive = enc.finish()?;
//! let mut restored = Vec::new();
//! io::copy(&mut sep::Decoder::new(&archive[..])?, &mut restored)?;
//! assert_eq!(restored, data);
//! # Ok::<(), sep::Error>(())
//! ```
//!
//! # Handling a corrupt archive
//!
//! Errors read through `Read` or written through `Write` keep their variant
//! when `?` turns them back into an [`Error`] (`From<io::Error>` is
//! [`Error::from_io`]), so a damaged archive can be told from a failing disk
//! with [`Error::is_corrupt`] or by matching the variant. Bytes before the
//! damaged block are returned first; the damaged block's are never.
//!
//! ```
//! use std::io::Read;
//! let data = b"important data, kept safe ".repeat(40);
//! let mut archive = sep::compress(&data, &sep::Options::default())?;
//! let middle = archive.len() / 2;
//! archive[middle] ^= 0x01; // one bit flipped in the coded data
//!
//! let mut restored = Vec::new();
//! let result: sep::Result<usize> = (|| {
//!     Ok(sep::Decoder::new(&archive[..])?.read_to_end(&mut restored)?)
//! })();
//! match result {
//!     Ok(_) => unreachable!("a flipped bit is always detected here"),
//!     Err(e) if e.is_corrupt() => {
//!         // BlockChecksum, ContentChecksum, Truncated, InvalidField, ...
//!         assert!(e.to_string().contains("corrupt"), "{e}");
//!     }
//!     Err(e) => panic!("an I/O error, not damage: {e}"),
//! }
//! # Ok::<(), sep::Error>(())
//! ```
//!
//! # What is where
//!
//! The crate root holds what every caller needs: the functions, [`Encoder`],
//! [`Decoder`], [`Options`], [`Error`], the model choice ([`Model`],
//! [`Preset`], which names configurations of both the context-mixing and the
//! neural model) and the context-mixing configuration ([`MixConfig`],
//! [`CmConfig`]), because context mixing is the default model. The network
//! types (backbones, semantics enhancement, the optimiser, experiment knobs)
//! matter only to callers who build a neural model by hand, so they live in
//! [`neural`]; the container's structures are in [`format`](mod@format).

#![forbid(unsafe_code)]

mod codec;
mod decoder;
mod encoder;
mod engine;
mod error;
pub mod format;
pub mod limits;
mod mix;
pub mod neural;
pub mod params;
mod pipeline;
mod preset;
pub mod prior; // issue 20: priors (doc/FORMAT.md section 11)
pub mod segment; // issue 17: transforms inside a block
mod stats; // issue 17: detection and transform time
/// Issue 21: error-bounded lossy compression of float arrays (format version 2,
/// doc/FORMAT.md section 9).
pub use sep_lossy as lossy;

pub use codec::{Model, ModelConfig};
pub use decoder::model_memory_bound;
pub use decoder::{ArchiveInfo, Decoder, content_length, inspect, read_header};
pub use encoder::{Encoder, MIN_BLOCK_SIZE, Options};
pub use error::{Error, Result};
pub use mix::{MixConfig, SERIAL_MIN_BLOCK};
pub use pipeline::MAX_THREADS;
pub use pipeline::Progress;
pub use preset::Preset;
pub use prior::Prior;
pub use prior::builtin::Builtin;
pub use sep_cm::CmConfig;
/// The serial network of the mixed model (preset `ultra`, doc/FORMAT.md section 4.12).
pub use sep_cm::LstmConfig;
pub use stats::EncodeStats;

use std::io::{Read, Write};

/// The specifications, included from the repository's `doc/` folder so that
/// these docs link to them.
pub mod spec {
    /// The archive format, normative and versioned (doc/FORMAT.md).
    #[doc = include_str!("../../../doc/FORMAT.md")]
    pub mod format {}

    /// What must be bit-identical on every machine, and the test for each
    /// rule (doc/DETERMINISM.md).
    #[doc = include_str!("../../../doc/DETERMINISM.md")]
    pub mod determinism {}
}

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
