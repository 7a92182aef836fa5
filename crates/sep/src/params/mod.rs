//! The model-parameter wire format: how every model's configuration is
//! written into an archive header's `params` and read back (doc/FORMAT.md
//! sections 4.4-4.10), in one place.
//!
//! The model crates (`sep-model`, `sep-cm`) receive typed configurations and
//! know nothing of header bytes; they keep only the limits of their own
//! values (`validate`), which reading applies after parsing. Errors are typed
//! ([`ParamError`]) and name the fields as doc/FORMAT.md does.
//!
//! ```
//! use sep::params::{read_backbone, write_backbone};
//! use sep::neural::{BackboneConfig, PacConfig};
//! let pac = BackboneConfig::Pac(PacConfig::PAPER);
//! let bytes = write_backbone(&pac);
//! assert_eq!(bytes.len(), 8);
//! assert_eq!(read_backbone(pac.id(), &bytes), Ok(pac));
//! assert!(read_backbone(1, &bytes[..7]).is_err());
//! ```

mod backbone;
mod cm;
mod mix;
mod neural;

pub use backbone::{read_backbone, write_backbone};
pub use cm::{read_cm, read_serial, write_cm, write_serial};
pub use mix::{read_mix, write_mix};
pub use neural::{read_neural, write_neural};

/// What is wrong with a model's parameters in a header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// A parameter block is shorter or longer than its format allows.
    #[error("{what} are {found} bytes, {} {expected}", if *.at_least { "at least" } else { "expected" })]
    Length {
        /// Which parameters (`"PAC parameters"`, `"neural params"`, ...).
        what: &'static str,
        /// Their length in the archive.
        found: usize,
        /// The length the format gives (or its minimum).
        expected: usize,
        /// Whether `expected` is a minimum.
        at_least: bool,
    },
    /// A length field disagrees with the bytes that follow it.
    #[error("{field} says {declared} bytes, {found} follow")]
    LengthField {
        /// The length field (`"backbone_len"`, `"body_len"`).
        field: &'static str,
        /// What it says.
        declared: usize,
        /// What the parameters hold.
        found: usize,
    },
    /// A reserved byte or bit is not 0.
    #[error("reserved {field} is {value:#x}, expected 0")]
    Reserved {
        /// Which reserved field.
        field: &'static str,
        /// Its value.
        value: u64,
    },
    /// A flag byte is neither 0 nor 1.
    #[error("{field} is {value}, must be 0 or 1")]
    Flag {
        /// The flag field.
        field: &'static str,
        /// Its value.
        value: u8,
    },
    /// An id or mode this version does not know.
    #[error("unknown {field} {value}: must be {known}")]
    Unknown {
        /// The field.
        field: &'static str,
        /// Its value.
        value: u64,
        /// The values it may take.
        known: &'static str,
    },
    /// A field that must be 0 in the mode chosen is not.
    #[error("SE {field} must be 0 for adaptive mode {mode}, found {value:#x}")]
    Unused {
        /// The field.
        field: &'static str,
        /// The SE's `adaptive` mode.
        mode: u8,
        /// The field's value (raw bits for floats).
        value: u64,
    },
    /// An Adam hyperparameter (an f64, stored as its bits) outside `0..=1`.
    #[error("Adam {field} {} outside 0..=1", f64::from_bits(*bits))]
    Adam {
        /// `lr`, `beta1`, `beta2`, `eps` or `weight_decay`.
        field: &'static str,
        /// The value's bits.
        bits: u64,
    },
    /// A field that must be at least 1 is 0.
    #[error("{field} is 0")]
    Zero {
        /// The field.
        field: &'static str,
    },
    /// Two fields that must agree do not.
    #[error("{field} is {found}, {why}")]
    Mismatch {
        /// The field.
        field: &'static str,
        /// Its value.
        found: u64,
        /// What it must agree with.
        why: String,
    },
    /// The values parse but break a limit of the model they configure (the
    /// model's own `validate` message, which names the field).
    #[error("{0}")]
    Limit(String),
}

impl From<String> for ParamError {
    fn from(why: String) -> Self {
        ParamError::Limit(why)
    }
}

/// A fixed-length parameter block as an array, or the [`ParamError::Length`]
/// naming `what`.
pub(crate) fn fixed<'a, const N: usize>(
    what: &'static str,
    b: &'a [u8],
) -> Result<&'a [u8; N], ParamError> {
    b.try_into().map_err(|_| ParamError::Length {
        what,
        found: b.len(),
        expected: N,
        at_least: false,
    })
}

/// The [`ParamError::Length`] of a block shorter than its minimum `min`.
pub(crate) fn at_least(what: &'static str, b: &[u8], min: usize) -> Result<(), ParamError> {
    if b.len() < min {
        return Err(ParamError::Length {
            what,
            found: b.len(),
            expected: min,
            at_least: true,
        });
    }
    Ok(())
}

/// A flag byte: 0 or 1.
pub(crate) fn flag(field: &'static str, value: u8) -> Result<bool, ParamError> {
    match value {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(ParamError::Flag { field, value }),
    }
}

/// A reserved field, which must be 0.
pub(crate) fn reserved(field: &'static str, value: u64) -> Result<(), ParamError> {
    if value != 0 {
        return Err(ParamError::Reserved { field, value });
    }
    Ok(())
}

/// A little-endian `u16` at `i`.
pub(crate) fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

/// A little-endian `u32` at `i`.
pub(crate) fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"))
}
