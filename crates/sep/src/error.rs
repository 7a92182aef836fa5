//! The library's error type: what went wrong, with the format's field names.
//!
//! Corrupt or foreign archives ([`Error::is_corrupt`]) are kept apart from
//! I/O failures and from invalid options, so that callers can report each
//! clearly. The binary alone turns errors into exit codes.

use std::io;

/// Everything that can go wrong while compressing, decompressing or
/// inspecting an archive.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing failed. (`From<io::Error>` never builds this
    /// variant around an error of this library: see [`Error::from_io`].)
    #[error("{0}")]
    Io(#[source] io::Error),
    /// The input does not start with the sep magic.
    #[error("not a sep archive (starts with {}, expected 8f 53 45 50)", hex(found))]
    BadMagic {
        /// The first bytes found.
        found: Vec<u8>,
    },
    /// The archive's format version is not one this library reads.
    #[error("unsupported format version {found} (this sep reads versions 1 and {supported})")]
    UnsupportedVersion {
        /// The version in the header.
        found: u8,
        /// The newest version this library reads (it reads 1 as well).
        supported: u8,
    },
    /// A reserved field or bit is not zero.
    #[error("corrupt archive: reserved field {field} is {value:#x}, must be 0")]
    Reserved {
        /// The field's name in doc/FORMAT.md.
        field: &'static str,
        /// The value found.
        value: u64,
    },
    /// The archive ends in the middle of a structure.
    #[error("truncated archive: unexpected end of input in {what}")]
    Truncated {
        /// Which structure was being read.
        what: &'static str,
    },
    /// A field holds a value the format does not allow.
    #[error("corrupt archive: {field} is {value}, {why}")]
    InvalidField {
        /// The field's name in doc/FORMAT.md.
        field: &'static str,
        /// The value found.
        value: u64,
        /// What the format requires.
        why: &'static str,
    },
    /// The header's checksum does not match.
    #[error("corrupt archive: header checksum mismatch")]
    HeaderChecksum,
    /// A block decoded to bytes whose checksum does not match.
    #[error(
        "corrupt archive: block {index} fails its checksum (stored {expected:08x}, decoded {found:08x})"
    )]
    BlockChecksum {
        /// Zero-based block number.
        index: u64,
        /// The `raw_check` stored in the archive.
        expected: u32,
        /// The checksum of the decoded bytes.
        found: u32,
    },
    /// The whole content's checksum does not match.
    #[error(
        "corrupt archive: content checksum mismatch (stored {expected:016x}, decoded {found:016x})"
    )]
    ContentChecksum {
        /// The `content_check` stored in the end record.
        expected: u64,
        /// The checksum of the decoded content.
        found: u64,
    },
    /// Lengths recorded in different places disagree.
    #[error("corrupt archive: {what} is {found} bytes, but {expected} were recorded")]
    LengthMismatch {
        /// Which length.
        what: &'static str,
        /// The length recorded.
        expected: u64,
        /// The length found.
        found: u64,
    },
    /// The archive names a model this library does not know.
    #[error("unsupported model id {0} (this sep knows store=0, order2=1, neural=2, mix=3)")]
    UnknownModel(u16),
    /// The model parameters in the header are invalid.
    #[error("corrupt archive: invalid model parameters: {why}")]
    InvalidModel {
        /// What is wrong.
        why: crate::params::ParamError,
    },
    /// The archive asks for more than a decoder allows (doc/FORMAT.md section 7),
    /// checked before anything is allocated.
    #[error("archive exceeds a decoder limit: {what} is {value}, the limit is {limit}")]
    LimitExceeded {
        /// What is limited.
        what: &'static str,
        /// What the archive asks for.
        value: u64,
        /// The limit.
        limit: u64,
    },
    /// A coded stream is not what an encoder writes: bytes its range decoder
    /// never reads, a trailing zero byte, or a last byte past the shortest end
    /// (doc/FORMAT.md section 6). Such a stream may decode to the right bytes,
    /// but no encoder wrote it.
    #[error("corrupt archive: block {block}, stream {stream}: {why}")]
    StreamJunk {
        /// Zero-based block number in its archive.
        block: u64,
        /// Zero-based stream number in the block.
        stream: usize,
        /// What is wrong.
        why: String,
    },
    /// Decoding would exceed a limit the caller set (or its default): the
    /// archive may be valid, but it asks for more than is allowed. Checked
    /// before the work or the output it refers to.
    #[error("{}", over_limit(what, *value, *limit, note, &format!("it with {}", raise.setter())))]
    OverLimit {
        /// What is limited.
        what: &'static str,
        /// What the archive asks for (so far).
        value: u64,
        /// The limit.
        limit: u64,
        /// Which of the decoder's limits to raise to allow it.
        raise: crate::limits::Limit,
        /// Why the limit is there, when that is not plain (ends in `"; "`), or
        /// `""`.
        note: &'static str,
    },
    /// Bytes follow the end of the archive that are not another archive.
    #[error("corrupt archive: trailing data after the end record")]
    TrailingData,
    /// A seek table (doc/FORMAT.md section 12) is damaged or does not match
    /// the archive before it.
    #[error("corrupt archive: seek table: {why}")]
    SeekTable {
        /// What is wrong.
        why: &'static str,
    },
    /// A byte range asked of [`Decoder::range`](crate::Decoder::range) is not
    /// inside the content.
    #[error("range {start}..{end} is past the end of the content ({length} bytes)")]
    RangePastEnd {
        /// First byte asked for.
        start: u64,
        /// One past the last byte asked for.
        end: u64,
        /// Content bytes of the input.
        length: u64,
    },
    /// The encoder was given input of a different length than declared.
    #[error("input was {found} bytes but {declared} were declared")]
    InputLength {
        /// The length declared in the options.
        declared: u64,
        /// The length actually written.
        found: u64,
    },
    /// [`Options::block_size`](crate::Options::block_size) is outside the
    /// sizes the encoder accepts: `MIN_BLOCK_SIZE..=2^30`
    /// ([`MIN_BLOCK_SIZE`](crate::MIN_BLOCK_SIZE)), or `1..=2^30` with
    /// [`Options::small_blocks`](crate::Options::small_blocks).
    #[error("invalid option: block size {value} is outside {min}..={max}{}", too_small_why(*value, *min))]
    BlockSize {
        /// The block size asked for.
        value: u32,
        /// The smallest accepted.
        min: u32,
        /// The largest accepted.
        max: u32,
    },
    /// An option is out of range.
    #[error("invalid option: {0}")]
    InvalidOption(String),
    /// The archive was compressed with a prior (doc/FORMAT.md section 11)
    /// and none was given to the decoder.
    #[error("this archive needs prior {id}: give the prior file it was compressed with (--prior)")]
    PriorNeeded {
        /// The prior's id, 32 hex digits.
        id: String,
    },
    /// The archive was compressed with another prior than the one given.
    #[error("this archive needs prior {need}, but prior {have} was given")]
    PriorMismatch {
        /// The id the archive names.
        need: String,
        /// The id of the prior given.
        have: String,
    },
    /// A prior file is truncated, corrupt, foreign, or for another model.
    #[error("invalid prior: {0}")]
    BadPrior(String),
}

/// The message of [`Error::OverLimit`], with `raise` saying what to raise.
fn over_limit(what: &str, value: u64, limit: u64, note: &str, raise: &str) -> String {
    format!("{what} would be {value}, over the limit of {limit}; {note}raise {raise} to decode it")
}

fn too_small_why(value: u32, min: u32) -> &'static str {
    if value < min && min > 1 {
        " (smaller blocks cannot pay for their headers)"
    } else {
        ""
    }
}

impl Error {
    /// The message [`Display`](std::fmt::Display) writes, except that an
    /// [`Error::OverLimit`] names the way to raise its limit with `name`
    /// (a caller's own flag or setting) instead of the library's setter.
    pub fn message_naming_limit(&self, name: impl Fn(crate::limits::Limit) -> String) -> String {
        match self {
            Error::OverLimit {
                what,
                value,
                limit,
                raise,
                note,
            } => over_limit(what, *value, *limit, note, &name(*raise)),
            other => other.to_string(),
        }
    }

    /// Whether the error means the archive is damaged, foreign or
    /// unsupported (as opposed to an I/O failure or a bad option).
    pub fn is_corrupt(&self) -> bool {
        !matches!(
            self,
            Error::Io(_)
                | Error::InputLength { .. }
                | Error::InvalidOption(_)
                | Error::BlockSize { .. }
                | Error::OverLimit { .. }
                | Error::RangePastEnd { .. }
                | Error::PriorNeeded { .. }
                | Error::PriorMismatch { .. }
                | Error::BadPrior(_)
        )
    }

    /// Recovers a library error carried inside an [`io::Error`] (as returned
    /// by the [`Read`](std::io::Read) and [`Write`](std::io::Write)
    /// adapters); other I/O errors become [`Error::Io`].
    pub fn from_io(e: io::Error) -> Error {
        if e.get_ref().is_some_and(|inner| inner.is::<Error>()) {
            let inner = e.into_inner().expect("checked: has an inner error");
            *inner
                .downcast::<Error>()
                .expect("checked: inner error is ours")
        } else {
            Error::Io(e)
        }
    }

    /// Wraps the error for the `Read`/`Write` adapters; I/O errors pass
    /// through unchanged.
    pub fn into_io(self) -> io::Error {
        match self {
            Error::Io(e) => e,
            e => io::Error::new(io::ErrorKind::InvalidData, e),
        }
    }
}

/// The same as [`Error::from_io`], so that `?` on an [`Encoder`](crate::Encoder)
/// write or a [`Decoder`](crate::Decoder) read keeps the error's variant:
/// a block checksum mismatch read through `Read` is still
/// [`Error::BlockChecksum`], and [`Error::is_corrupt`] still says so.
impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::from_io(e)
    }
}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}
