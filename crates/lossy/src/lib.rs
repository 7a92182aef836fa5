//! Error-bounded lossy compression of float arrays for sep.
//!
//! An array of `f32` or `f64` values (1 to 4 dimensions) is predicted point
//! by point (Lorenzo or SZ3-style multilevel interpolation, the smaller
//! result kept), the prediction error is quantized with step `2e`, and the
//! codes are coded by a context-mixing model of quantization codes
//! ([`model`]). Every reconstructed value is within `e` of the original: the
//! encoder reconstructs each value exactly as the decoder will and stores a
//! value that would miss exactly. NaN, infinities and fill values are kept
//! exactly. The archive layout is doc/FORMAT.md section 9 (format version 2).
//!
//! ```
//! use sep_lossy::{Dtype, Mode, Options};
//! let values: Vec<f32> = (0..4096).map(|i| (i as f32 * 0.01).sin()).collect();
//! let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
//! let opts = Options { mode: Mode::Abs(1e-3), ..Options::default() };
//! let archive = sep_lossy::compress_raw(&raw, Dtype::F32, &[64, 64], &opts)?;
//! assert!(archive.len() < raw.len() / 4);
//! let back = sep_lossy::decompress(&archive, u64::MAX)?;
//! let stats = sep_lossy::compare(Dtype::F32, &raw, &back, &[])?;
//! assert!(stats.max_error <= 1e-3);
//! # Ok::<(), sep_lossy::Error>(())
//! ```

#![forbid(unsafe_code)]

pub mod codec;
mod compress;
pub mod fast;
mod header;
pub mod model;
pub mod npy;

use compress::{compress_inner, stats_of};
pub use header::inspect;
use header::{corrupt, read_header, write_header};

use codec::{Grid, State, traverse};
use xxhash_rust::xxh3::xxh3_64;

/// Magic bytes shared with sep's lossless archives.
pub const MAGIC: [u8; 4] = [0x8F, 0x53, 0x45, 0x50];
/// The format version of lossy archives.
pub const FORMAT_VERSION: u8 = 2;
/// The most dimensions an array may have.
pub const MAX_DIMS: usize = 4;
/// The most fill values an archive records.
pub const MAX_FILLS: usize = 4;

/// What can go wrong: one line each.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The options are invalid (bound, shape, dtype).
    #[error("{0}")]
    Invalid(String),
    /// The `.npy` input does not describe its data.
    #[error("bad .npy file: {0}")]
    BadNpy(String),
    /// The archive is damaged or not a lossy archive.
    #[error("corrupt lossy archive: {0}")]
    Corrupt(String),
    /// The archive would decode to more bytes than allowed.
    #[error("lossy archive exceeds a decoder limit: output is {value} bytes, the limit is {limit}")]
    LimitExceeded {
        /// Bytes the archive declares.
        value: u64,
        /// The limit.
        limit: u64,
    },
}

/// Element type of the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    /// IEEE binary32, little-endian.
    F32,
    /// IEEE binary64, little-endian.
    F64,
}

impl Dtype {
    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F64 => 8,
        }
    }
    /// Bits per value.
    pub fn bits(self) -> u32 {
        8 * self.size() as u32
    }
    /// The name used on the command line (`f32`, `f64`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }
    /// Parses `f32`/`float32`/`f64`/`float64`.
    pub fn parse(s: &str) -> Result<Dtype, Error> {
        match s {
            "f32" | "float32" => Ok(Dtype::F32),
            "f64" | "float64" => Ok(Dtype::F64),
            _ => Err(Error::Invalid(format!(
                "unknown dtype '{s}' (use f32 or f64)"
            ))),
        }
    }
    /// `v` rounded to this type (exact for `f64`).
    #[inline]
    pub fn round(self, v: f64) -> f64 {
        match self {
            Dtype::F32 => f64::from(v as f32),
            Dtype::F64 => v,
        }
    }
    /// The bit pattern of `v` in this type.
    #[inline]
    pub fn to_bits(self, v: f64) -> u64 {
        match self {
            Dtype::F32 => u64::from((v as f32).to_bits()),
            Dtype::F64 => v.to_bits(),
        }
    }
    /// The value of a bit pattern of this type.
    #[inline]
    pub fn from_bits(self, b: u64) -> f64 {
        match self {
            Dtype::F32 => f64::from(f32::from_bits(b as u32)),
            Dtype::F64 => f64::from_bits(b),
        }
    }
    fn decode(self, raw: &[u8]) -> Vec<f64> {
        match self {
            Dtype::F32 => raw
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
            Dtype::F64 => raw
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect(),
        }
    }
}

/// How the error bound is given.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// Absolute: `|x - x'| <= e` for every value.
    Abs(f64),
    /// Relative to the value range (SZ's REL): `e` times (max - min) of the
    /// valid values.
    Rel(f64),
    /// At least this PSNR in dB over the valid values.
    Psnr(f64),
    /// The best fidelity whose compression ratio reaches this (within 5%).
    Ratio(f64),
}

impl Mode {
    /// Parses `abs=E`, `rel=E`, `psnr=DB` or `ratio=R`.
    pub fn parse(s: &str) -> Result<Mode, Error> {
        let (k, v) = s.split_once('=').ok_or_else(|| {
            Error::Invalid(format!(
                "--lossy '{s}': expected abs=E, rel=E, psnr=DB or ratio=R"
            ))
        })?;
        let x: f64 = v
            .trim()
            .parse()
            .map_err(|_| Error::Invalid(format!("--lossy '{s}': '{v}' is not a number")))?;
        let m = match k.trim() {
            "abs" => Mode::Abs(x),
            "rel" => Mode::Rel(x),
            "psnr" => Mode::Psnr(x),
            "ratio" => Mode::Ratio(x),
            _ => {
                return Err(Error::Invalid(format!(
                    "--lossy '{s}': unknown mode '{k}' (use abs, rel, psnr or ratio)"
                )));
            }
        };
        m.check()?;
        Ok(m)
    }
    fn check(self) -> Result<(), Error> {
        let (name, v, ok) = match self {
            Mode::Abs(v) => ("abs", v, v > 0.0 && v.is_finite()),
            Mode::Rel(v) => ("rel", v, v > 0.0 && v.is_finite()),
            Mode::Psnr(v) => ("psnr", v, v > 0.0 && v.is_finite() && v < 1000.0),
            Mode::Ratio(v) => ("ratio", v, v > 1.0 && v.is_finite()),
        };
        if ok {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "--lossy {name}={v}: the bound must be a finite number above {}",
                if name == "ratio" { "1" } else { "0" }
            )))
        }
    }
    fn id(self) -> (u8, f64) {
        match self {
            Mode::Abs(v) => (1, v),
            Mode::Rel(v) => (2, v),
            Mode::Psnr(v) => (3, v),
            Mode::Ratio(v) => (4, v),
        }
    }
    /// The mode as `abs=E` etc.
    pub fn describe(self) -> String {
        match self {
            Mode::Abs(v) => format!("abs={v}"),
            Mode::Rel(v) => format!("rel={v}"),
            Mode::Psnr(v) => format!("psnr={v}"),
            Mode::Ratio(v) => format!("ratio={v}"),
        }
    }
}

/// The prediction scheme of an archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Predictor {
    /// Lorenzo in row-major order.
    Lorenzo,
    /// Multilevel cubic interpolation.
    Interpolation,
    /// Multilevel cubic interpolation with finer steps at coarse levels
    /// (header id 5; doc/FORMAT.md section 10).
    InterpolationByLevel,
}

impl Predictor {
    fn id(self) -> u8 {
        match self {
            Predictor::Lorenzo => 1,
            Predictor::Interpolation => 2,
            Predictor::InterpolationByLevel => 5,
        }
    }
    /// Its name in listings.
    pub fn name(self) -> &'static str {
        match self {
            Predictor::Lorenzo => "lorenzo",
            Predictor::Interpolation => "interpolation",
            Predictor::InterpolationByLevel => "interp-levels",
        }
    }
}

/// Compression options.
#[derive(Debug, Clone)]
pub struct Options {
    /// The error bound.
    pub mode: Mode,
    /// A fill value kept exactly and left out of the value range (besides
    /// the ones detected: see [`detect_fills`]).
    pub fill: Option<f64>,
    /// Force a predictor instead of trying both.
    pub predictor: Option<Predictor>,
    /// Force the model revision of the codes ([`model::REVISIONS`]) instead
    /// of the one of the setting (golden files of older revisions).
    pub revision: Option<u8>,
    /// The fast setting: model revision [`model::FAST2`] and the predictor
    /// chosen by a dry run on a sample of the array.
    pub fast: bool,
    /// Look for a grid of values (data stored with a fixed number of
    /// decimals, such as temperatures in steps of 0.01) and, where its step
    /// is above `2e`, code the values in grid steps (predictors 3 and 4 of
    /// doc/FORMAT.md section 10: within the bound and lossless up to the
    /// rounding of the grid). Off: only predictors 1 and 2 (the archives
    /// written before grids existed).
    pub grid: bool,
    /// Let the encoder choose interpolation by level
    /// ([`Predictor::InterpolationByLevel`]) at low rates. Off: it chooses
    /// between predictors 1 and 2 only (the archives written before).
    pub by_level: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Rel(1e-3),
            fill: None,
            predictor: None,
            revision: None,
            fast: false,
            grid: true,
            by_level: true,
        }
    }
}

/// What the header of a lossy archive says.
#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    /// Element type.
    pub dtype: Dtype,
    /// Shape, slowest axis first.
    pub shape: Vec<usize>,
    /// The mode and value requested.
    pub mode: Mode,
    /// The absolute bound every valid value keeps.
    pub bound: f64,
    /// The predictor used.
    pub predictor: Predictor,
    /// The value grid `(offset, step)` the codes count in (predictor ids 3
    /// and 4), or `None` (codes in steps of `2 bound`).
    pub grid: Option<(f64, f64)>,
    /// The revision of the model of the codes (header byte `coder`,
    /// [`model::REVISIONS`]).
    pub revision: u8,
    /// Fill values (bit patterns of the dtype) kept exactly.
    pub fills: Vec<u64>,
    /// The `.npy` header restored before the data (empty for raw input).
    pub container: Vec<u8>,
    /// Bytes of coded payload.
    pub payload_len: u64,
    /// Bytes of the restored output.
    pub output_len: u64,
}

/// Whether `bytes` start like a lossy sep archive.
pub fn is_lossy(bytes: &[u8]) -> bool {
    bytes.len() >= 5 && bytes[..4] == MAGIC && bytes[4] == FORMAT_VERSION
}

/// Fill values found in the data: the smallest or the largest finite value
/// when it occurs at least `max(2, n/1000)` times and lies more than 100
/// value ranges of the other values away from them (land masks such as
/// `-1e34` or `-1e10` beside temperatures). `-0.0` counts as smaller than
/// `0.0` when choosing the smallest and largest (any other value equal to
/// them, by `==`, counts as an occurrence).
pub fn detect_fills(values: &[f64]) -> Vec<f64> {
    // Two passes over the values, no copy, written so that they vectorise:
    // the min and max (NaN never compares below or above); then how often
    // each occurs and the range of the others (without the min, without the
    // max, without both), as the definition reads. Infinities are rare: with
    // one, the values are copied without them first.
    // Four independent lanes (the order does not change a min or a max).
    let (mut lo4, mut hi4) = ([f64::INFINITY; 4], [f64::NEG_INFINITY; 4]);
    let chunks = values.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for k in 0..4 {
            lo4[k] = if c[k] < lo4[k] { c[k] } else { lo4[k] };
            hi4[k] = if c[k] > hi4[k] { c[k] } else { hi4[k] };
        }
    }
    for &v in tail {
        lo4[0] = if v < lo4[0] { v } else { lo4[0] };
        hi4[0] = if v > hi4[0] { v } else { hi4[0] };
    }
    let mut min = lo4
        .into_iter()
        .fold(f64::INFINITY, |m, v| if v < m { v } else { m });
    let mut max = hi4
        .into_iter()
        .fold(f64::NEG_INFINITY, |m, v| if v > m { v } else { m });
    if min == f64::NEG_INFINITY || max == f64::INFINITY {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        return detect_fills(&finite);
    }
    let n = values.iter().filter(|v| !v.is_nan()).count();
    let mut fills = Vec::new();
    if n < 4 {
        return fills;
    }
    // `-0.0` counts below `0.0` (`<` does not tell them apart, and which
    // zero is a fill's bit pattern).
    let zero = |neg: bool| {
        let bits = (0.0f64).to_bits() | (u64::from(neg) << 63);
        values.iter().any(|v| v.to_bits() == bits)
    };
    if min == 0.0 {
        min = if zero(true) { -0.0 } else { 0.0 };
    }
    if max == 0.0 {
        max = if zero(false) { 0.0 } else { -0.0 };
    }
    // How often the min and the max occur, and the second smallest and
    // second largest distinct values (`min2`, `max2`): the others' range is
    // `(min2, max)` without the min, `(min, max2)` without the max and
    // `(min2, max2)` without both. NaN fails every comparison: it counts
    // nowhere. Four lanes again.
    let (mut cmin, mut cmax) = ([0usize; 4], [0usize; 4]);
    let (mut min2, mut max2) = ([f64::INFINITY; 4], [f64::NEG_INFINITY; 4]);
    let mut lane = |k: usize, v: f64| {
        cmin[k] += usize::from(v == min);
        cmax[k] += usize::from(v == max);
        min2[k] = if v > min && v < min2[k] { v } else { min2[k] };
        max2[k] = if v < max && v > max2[k] { v } else { max2[k] };
    };
    let chunks = values.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        for (k, &v) in c.iter().enumerate() {
            lane(k, v);
        }
    }
    for &v in tail {
        lane(0, v);
    }
    let (count_min, count_max): (usize, usize) = (cmin.iter().sum(), cmax.iter().sum());
    let min2 = min2.into_iter().fold(f64::INFINITY, f64::min);
    let max2 = max2.into_iter().fold(f64::NEG_INFINITY, f64::max);
    let empty = (f64::INFINITY, f64::NEG_INFINITY);
    let no_min = if count_min == n { empty } else { (min2, max) };
    let no_max = if count_max == n { empty } else { (min, max2) };
    let neither = if min2 < max { (min2, max2) } else { empty };
    for (cand, count) in [(min, count_min), (max, count_max)] {
        if fills.contains(&cand) {
            continue;
        }
        if count < 2.max(n / 1000) || count == n {
            continue;
        }
        // The other values: without the candidate, and without the min when
        // that is a fill already.
        let (lo, hi) = if cand == min {
            no_min
        } else if fills.is_empty() {
            no_max
        } else {
            neither
        };
        let range = (hi - lo).max(f64::MIN_POSITIVE);
        let dist = if cand < lo { lo - cand } else { cand - hi };
        if dist > 100.0 * range {
            fills.push(cand);
        }
    }
    fills
}

fn valid_range(values: &[f64], fills: &[f64]) -> f64 {
    let (lo, hi) = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && !fills.contains(v))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if hi >= lo { hi - lo } else { 0.0 }
}

fn check_shape(raw_len: usize, dtype: Dtype, shape: &[usize]) -> Result<(), Error> {
    if shape.is_empty() || shape.len() > MAX_DIMS {
        return Err(Error::Invalid(format!(
            "shape has {} dimensions (1 to {MAX_DIMS} allowed)",
            shape.len()
        )));
    }
    if shape.contains(&0) {
        return Err(Error::Invalid("shape has a dimension of size 0".into()));
    }
    let n = shape
        .iter()
        .try_fold(dtype.size(), |a: usize, &d| a.checked_mul(d))
        .ok_or_else(|| Error::Invalid("shape overflows".into()))?;
    if n != raw_len {
        let s: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        return Err(Error::Invalid(format!(
            "shape {} of {} needs {n} bytes, the input has {raw_len}",
            s.join("x"),
            dtype.name()
        )));
    }
    Ok(())
}

/// Compresses a raw little-endian array.
pub fn compress_raw(
    raw: &[u8],
    dtype: Dtype,
    shape: &[usize],
    opts: &Options,
) -> Result<Vec<u8>, Error> {
    check_shape(raw.len(), dtype, shape)?;
    compress_inner(raw, dtype, shape, opts, &[])
}

/// Compresses an `.npy` file (its header gives dtype and shape; restored
/// byte for byte).
pub fn compress_npy(file: &[u8], opts: &Options) -> Result<Vec<u8>, Error> {
    let n = npy::parse(file)?;
    let data = &file[n.header.len()..];
    check_shape(data.len(), n.dtype, &n.shape)?;
    compress_inner(data, n.dtype, &n.shape, opts, &n.header)
}

/// Decodes a lossy archive to the bytes of the array (raw, or the `.npy`
/// file as it came), refusing one that would produce more than `max_output`
/// bytes before allocating anything.
pub fn decompress(archive: &[u8], max_output: u64) -> Result<Vec<u8>, Error> {
    let (info, pos) = read_header(archive)?;
    let inspected = inspect(archive)?;
    debug_assert_eq!(inspected, info);
    if info.output_len > max_output {
        return Err(Error::LimitExceeded {
            value: info.output_len,
            limit: max_output,
        });
    }
    let payload = &archive[pos..pos + info.payload_len as usize];
    let stored = u64::from_le_bytes(
        archive[archive.len() - 8..]
            .try_into()
            .map_err(|_| corrupt("truncated content_check"))?,
    );
    let grid = Grid::new(&info.shape);
    let n = grid.len();
    let mut st = State::new(info.dtype, info.bound, &info.fills, n, info.revision);
    st.grid = info.grid;
    let mut dec = sep_coder::Decoder::new(payload);
    traverse::<_, false>(&mut st, &mut dec, &grid, &[], info.predictor);
    // Reading past the payload's end is no sign of damage: the encoder drops
    // the stream's trailing zero bytes, however many (a fast-setting archive
    // of a grid in tests/bounds.rs was read more than 8 bytes past its end).
    // `check_finished` and the content checksum judge the stream.
    dec.check_finished()
        .map_err(|e| corrupt(format!("payload {e}")))?;
    let mut output = Vec::with_capacity(info.output_len as usize);
    output.extend_from_slice(&info.container);
    for &b in &st.out {
        match info.dtype {
            Dtype::F32 => output.extend_from_slice(&(b as u32).to_le_bytes()),
            Dtype::F64 => output.extend_from_slice(&b.to_le_bytes()),
        }
    }
    if xxh3_64(&output) != stored {
        return Err(corrupt("content checksum mismatch"));
    }
    Ok(output)
}

/// Error statistics of a restored array against its original.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Largest `|x - x'|` over valid values.
    pub max_error: f64,
    /// PSNR in dB over valid values (value range of the original's valid
    /// values; infinite when identical).
    pub psnr: f64,
    /// Number of valid values compared.
    pub valid: u64,
    /// Whether NaN, infinities and fill values came back with the same bits.
    pub specials_exact: bool,
}

/// Compares a restored array with its original (both raw, or both `.npy`
/// with the same header). `fills` are the fill values (bit patterns) to
/// leave out, as [`Info::fills`].
pub fn compare(
    dtype: Dtype,
    original: &[u8],
    restored: &[u8],
    fills: &[u64],
) -> Result<Stats, Error> {
    let (o, r) = if npy::is_npy(original) {
        let n = npy::parse(original)?;
        (
            &original[n.header.len()..],
            restored.get(n.header.len()..).unwrap_or(&[]),
        )
    } else {
        (original, restored)
    };
    if o.len() != r.len() || o.len() % dtype.size() != 0 {
        return Err(Error::Invalid(format!(
            "the original has {} bytes of data, the archive {}",
            o.len(),
            r.len()
        )));
    }
    let a = dtype.decode(o);
    let b = dtype.decode(r);
    let fills: Vec<f64> = fills.iter().map(|&f| dtype.from_bits(f)).collect();
    Ok(stats_of(&a, &b, &fills))
}

#[cfg(test)]
mod fill_tests {
    use super::detect_fills;

    /// The definition, read literally (the code before it made no copy).
    fn reference(values: &[f64]) -> Vec<f64> {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let mut fills = Vec::new();
        if finite.len() < 4 {
            return fills;
        }
        let min = finite.iter().copied().min_by(f64::total_cmp).unwrap();
        let max = finite.iter().copied().max_by(f64::total_cmp).unwrap();
        for cand in [min, max] {
            if fills.contains(&cand) {
                continue;
            }
            let count = finite.iter().filter(|&&v| v == cand).count();
            if count < 2.max(finite.len() / 1000) || count == finite.len() {
                continue;
            }
            let (lo, hi) = finite
                .iter()
                .copied()
                .filter(|&v| v != cand && !fills.contains(&v))
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                    (a.min(v), b.max(v))
                });
            let range = (hi - lo).max(f64::MIN_POSITIVE);
            let dist = if cand < lo { lo - cand } else { cand - hi };
            if dist > 100.0 * range {
                fills.push(cand);
            }
        }
        fills
    }

    #[test]
    fn fills_as_defined() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for case in 0..400 {
            let n = 1 + (next() % 3000) as usize;
            let lo_fill = [-1e34, -9999.0, 0.0, -0.0][case % 4];
            let hi_fill = [1e10, 1e34, 255.0][case % 3];
            let v: Vec<f64> = (0..n)
                .map(|_| match next() % 40 {
                    0 if case % 5 != 0 => lo_fill,
                    1 if case % 7 != 0 => hi_fill,
                    2 if case % 11 == 0 => f64::NAN,
                    3 if case % 13 == 0 => f64::INFINITY,
                    4 if case % 3 == 0 => 0.0,
                    5 if case % 3 == 0 => -0.0,
                    r => 10.0 + (r as f64) * 0.25 * ((case % 9) as f64),
                })
                .collect();
            let (a, b) = (detect_fills(&v), reference(&v));
            assert_eq!(
                a.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                b.iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                "case {case}"
            );
        }
        // Few distinct values, zeros of both signs, NaN and infinities.
        let few: [&[f64]; 8] = [
            &[1.0, 1.0, 1.0, 5e9, 5e9],
            &[1.0; 9],
            &[-0.0, 0.0, 0.0, -0.0, 7.0, 7.5, 7.25],
            &[0.0, 0.0, 1e-3, 2e-3, 1.5e-3, -0.0],
            &[-1e34, -1e34, 3.0, 4.0, 1e34, 1e34, f64::NAN],
            &[f64::NAN, f64::INFINITY, 2.0, 2.0, 3.0, 1e30, 1e30],
            &[2.0, 2.0, 2.0, f64::NAN, f64::NAN],
            &[-5.0, -5.0, 9.0, 9.0, 9.0, 9.0],
        ];
        for v in few {
            assert_eq!(
                detect_fills(v)
                    .iter()
                    .map(|f| f.to_bits())
                    .collect::<Vec<_>>(),
                reference(v).iter().map(|f| f.to_bits()).collect::<Vec<_>>(),
                "{v:?}"
            );
        }
        // Real shapes: a land mask below temperatures, and no fill.
        let mut t: Vec<f64> = (0..5000).map(|i| 270.0 + (i % 37) as f64).collect();
        assert!(detect_fills(&t).is_empty());
        t.iter_mut().step_by(9).for_each(|v| *v = -1e34);
        assert_eq!(detect_fills(&t), vec![-1e34]);
    }
}
