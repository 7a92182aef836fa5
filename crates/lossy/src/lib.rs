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
pub mod model;
pub mod npy;

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
}

impl Predictor {
    fn id(self) -> u8 {
        match self {
            Predictor::Lorenzo => 1,
            Predictor::Interpolation => 2,
        }
    }
    /// Its name in listings.
    pub fn name(self) -> &'static str {
        match self {
            Predictor::Lorenzo => "lorenzo",
            Predictor::Interpolation => "interpolation",
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Rel(1e-3),
            fill: None,
            predictor: None,
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
/// `-1e34` or `-1e10` beside temperatures).
pub fn detect_fills(values: &[f64]) -> Vec<f64> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let mut fills = Vec::new();
    if finite.len() < 4 {
        return fills;
    }
    let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
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

struct Coded {
    predictor: Predictor,
    payload: Vec<u8>,
    out: Vec<u64>,
}

fn code_with(
    values: &[f64],
    dtype: Dtype,
    grid: &Grid,
    bound: f64,
    fills: &[u64],
    predictor: Predictor,
) -> Coded {
    let mut st = State::new(dtype, bound, fills, values.len());
    let mut enc = sep_coder::Encoder::with_capacity(values.len() / 2 + 64);
    traverse::<_, true>(&mut st, &mut enc, grid, values, predictor);
    Coded {
        predictor,
        payload: enc.finish(),
        out: st.out,
    }
}

fn code_best(
    values: &[f64],
    dtype: Dtype,
    grid: &Grid,
    bound: f64,
    fills: &[u64],
    forced: Option<Predictor>,
) -> Coded {
    match forced {
        Some(p) => code_with(values, dtype, grid, bound, fills, p),
        None => {
            let p = choose_predictor(values, dtype, grid, bound, fills);
            code_with(values, dtype, grid, bound, fills, p)
        }
    }
}

/// The predictor whose codes have the smaller zeroth-order entropy, by a dry
/// run of each (prediction and quantization only, no coding).
fn choose_predictor(
    values: &[f64],
    dtype: Dtype,
    grid: &Grid,
    bound: f64,
    fills: &[u64],
) -> Predictor {
    let cost = |p: Predictor| {
        let mut st = State::dry(dtype, bound, fills, values.len());
        let mut enc = sep_coder::Encoder::new();
        traverse::<_, true>(&mut st, &mut enc, grid, values, p);
        st.estimated_bits()
    };
    if cost(Predictor::Lorenzo) < cost(Predictor::Interpolation) {
        Predictor::Lorenzo
    } else {
        Predictor::Interpolation
    }
}

/// Max absolute error and PSNR over valid values of two arrays of equal
/// length (PSNR from the valid values' range; infinite when identical).
fn stats_of(orig: &[f64], got: &[f64], fills: &[f64]) -> Stats {
    let mut max_error = 0.0f64;
    let mut sse = 0.0f64;
    let mut n = 0u64;
    let mut exact_specials = true;
    for (&a, &b) in orig.iter().zip(got) {
        if !a.is_finite() || fills.contains(&a) {
            if a.to_bits() != b.to_bits() && !(a.is_nan() && b.is_nan()) {
                exact_specials = false;
            }
            continue;
        }
        let e = (a - b).abs();
        max_error = max_error.max(if e.is_nan() { f64::INFINITY } else { e });
        sse += e * e;
        n += 1;
    }
    let range = valid_range(orig, fills);
    let mse = if n > 0 { sse / n as f64 } else { 0.0 };
    let psnr = if mse > 0.0 {
        20.0 * range.log10() - 10.0 * mse.log10()
    } else {
        f64::INFINITY
    };
    Stats {
        max_error,
        psnr,
        valid: n,
        specials_exact: exact_specials,
    }
}

fn compress_inner(
    raw: &[u8],
    dtype: Dtype,
    shape: &[usize],
    opts: &Options,
    container: &[u8],
) -> Result<Vec<u8>, Error> {
    opts.mode.check()?;
    if let Some(f) = opts.fill
        && f.is_nan()
    {
        return Err(Error::Invalid(
            "--fill NaN: NaN is always kept exactly".into(),
        ));
    }
    let values = dtype.decode(raw);
    let mut fill_values = detect_fills(&values);
    if let Some(f) = opts.fill {
        let f = dtype.round(f);
        if !fill_values.contains(&f) {
            fill_values.insert(0, f);
        }
    }
    fill_values.truncate(MAX_FILLS);
    let fills: Vec<u64> = fill_values.iter().map(|&f| dtype.to_bits(f)).collect();
    let grid = Grid::new(shape);
    let range = valid_range(&values, &fill_values);
    let out_bytes = (raw.len() + container.len()) as f64;
    let coded = match opts.mode {
        Mode::Abs(e) => (
            e,
            code_best(&values, dtype, &grid, e, &fills, opts.predictor),
        ),
        Mode::Rel(r) => {
            let e = if range > 0.0 { r * range } else { r };
            (
                e,
                code_best(&values, dtype, &grid, e, &fills, opts.predictor),
            )
        }
        Mode::Psnr(db) => {
            let base = if range > 0.0 { range } else { 1.0 };
            let mut e = base * 10f64.powf(-db / 20.0) * 3f64.sqrt();
            let mut tries = 0;
            loop {
                let c = code_best(&values, dtype, &grid, e, &fills, opts.predictor);
                let got: Vec<f64> = c.out.iter().map(|&b| dtype.from_bits(b)).collect();
                let s = stats_of(&values, &got, &fill_values);
                tries += 1;
                if s.psnr >= db || tries >= 40 {
                    break (e, c);
                }
                e *= 0.85;
            }
        }
        Mode::Ratio(target) => {
            let base = if range > 0.0 { range } else { 1.0 };
            let pred = opts.predictor.unwrap_or_else(|| {
                code_best(&values, dtype, &grid, base * 1e-3, &fills, None).predictor
            });
            let size_of = |c: &Coded| c.payload.len() as f64 + 64.0 + container.len() as f64;
            // Bisection on log(e): the ratio grows with e.
            let (mut lo, mut hi) = ((base * 1e-12).ln(), (base * 0.5).ln());
            let mut best: Option<(f64, Coded)> = None;
            for _ in 0..24 {
                let mid = 0.5 * (lo + hi);
                let e = mid.exp();
                let c = code_with(&values, dtype, &grid, e, &fills, pred);
                let ratio = out_bytes / size_of(&c);
                if ratio >= target {
                    hi = mid;
                    let done = ratio <= target * 1.02;
                    best = Some((e, c));
                    if done {
                        break;
                    }
                } else {
                    lo = mid;
                }
            }
            match best {
                Some(b) => b,
                None => {
                    let e = (base * 0.5).max(f64::MIN_POSITIVE);
                    (e, code_with(&values, dtype, &grid, e, &fills, pred))
                }
            }
        }
    };
    let (bound, c) = coded;
    let mut output = Vec::with_capacity(raw.len() + container.len());
    output.extend_from_slice(container);
    for &b in &c.out {
        match dtype {
            Dtype::F32 => output.extend_from_slice(&(b as u32).to_le_bytes()),
            Dtype::F64 => output.extend_from_slice(&b.to_le_bytes()),
        }
    }
    let info = Info {
        dtype,
        shape: shape.to_vec(),
        mode: opts.mode,
        bound,
        predictor: c.predictor,
        fills,
        container: container.to_vec(),
        payload_len: c.payload.len() as u64,
        output_len: output.len() as u64,
    };
    let mut a = write_header(&info);
    a.extend_from_slice(&c.payload);
    a.extend_from_slice(&xxh3_64(&output).to_le_bytes());
    Ok(a)
}

fn write_header(info: &Info) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend_from_slice(&MAGIC);
    h.extend_from_slice(&[FORMAT_VERSION, 0, 0, 0]);
    let (mode_id, mode_value) = info.mode.id();
    h.push(match info.dtype {
        Dtype::F32 => 1,
        Dtype::F64 => 2,
    });
    h.push(info.shape.len() as u8);
    h.push(info.predictor.id());
    h.push(mode_id);
    h.extend_from_slice(&mode_value.to_bits().to_le_bytes());
    h.extend_from_slice(&info.bound.to_bits().to_le_bytes());
    h.extend_from_slice(&[info.fills.len() as u8, 0, 0, 0]);
    for &d in &info.shape {
        h.extend_from_slice(&(d as u64).to_le_bytes());
    }
    for &f in &info.fills {
        h.extend_from_slice(&f.to_le_bytes());
    }
    h.extend_from_slice(&(info.container.len() as u32).to_le_bytes());
    h.extend_from_slice(&info.container);
    h.extend_from_slice(&(info.payload_len).to_le_bytes());
    let check = xxh3_64(&h) as u32;
    h.extend_from_slice(&check.to_le_bytes());
    h
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], Error> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| Error::Corrupt(format!("truncated in {what}")))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, Error> {
        Ok(self.take(1, what)?[0])
    }
    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        let s = self.take(4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let s = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }
}

fn corrupt(s: impl Into<String>) -> Error {
    Error::Corrupt(s.into())
}

/// Reads and checks the header; returns it and the offset of the payload.
fn read_header(a: &[u8]) -> Result<(Info, usize), Error> {
    if a.len() < 4 || a[..4] != MAGIC {
        return Err(corrupt("not a sep archive (bad magic)"));
    }
    let mut r = Reader { b: a, pos: 4 };
    let version = r.u8("format_version")?;
    if version != FORMAT_VERSION {
        return Err(corrupt(format!("format_version is {version}, expected 2")));
    }
    if r.take(3, "reserved")? != [0, 0, 0] {
        return Err(corrupt("reserved bytes are not 0"));
    }
    let dtype = match r.u8("dtype")? {
        1 => Dtype::F32,
        2 => Dtype::F64,
        v => return Err(corrupt(format!("dtype is {v}, must be 1 or 2"))),
    };
    let ndim = usize::from(r.u8("ndim")?);
    if !(1..=MAX_DIMS).contains(&ndim) {
        return Err(corrupt(format!("ndim is {ndim}, must be 1..=4")));
    }
    let predictor = match r.u8("predictor")? {
        1 => Predictor::Lorenzo,
        2 => Predictor::Interpolation,
        v => return Err(corrupt(format!("predictor is {v}, must be 1 or 2"))),
    };
    let mode_id = r.u8("mode")?;
    let mode_value = f64::from_bits(r.u64("mode_value")?);
    let mode = match mode_id {
        1 => Mode::Abs(mode_value),
        2 => Mode::Rel(mode_value),
        3 => Mode::Psnr(mode_value),
        4 => Mode::Ratio(mode_value),
        v => return Err(corrupt(format!("mode is {v}, must be 1..=4"))),
    };
    let bound = f64::from_bits(r.u64("bound")?);
    if !(bound > 0.0 && bound.is_finite()) {
        return Err(corrupt(format!(
            "bound is {bound}, must be finite and above 0"
        )));
    }
    let nfill = usize::from(r.u8("fill_count")?);
    if r.take(3, "reserved")? != [0, 0, 0] {
        return Err(corrupt("reserved bytes are not 0"));
    }
    if nfill > MAX_FILLS {
        return Err(corrupt(format!("fill_count is {nfill}, at most 4")));
    }
    let mut shape = Vec::with_capacity(ndim);
    for _ in 0..ndim {
        let d = r.u64("dims")?;
        if d == 0 || d > 1 << 40 {
            return Err(corrupt(format!("a dimension is {d}")));
        }
        shape.push(d as usize);
    }
    let mut fills = Vec::with_capacity(nfill);
    for _ in 0..nfill {
        let f = r.u64("fills")?;
        if dtype == Dtype::F32 && f >> 32 != 0 {
            return Err(corrupt("an f32 fill value has bits above 32"));
        }
        fills.push(f);
    }
    let clen = r.u32("container_len")? as usize;
    let container = r.take(clen, "container")?.to_vec();
    if clen > 0 {
        let n = npy::parse_header_only(&container)?;
        if n.dtype != dtype || n.shape != shape {
            return Err(corrupt("the .npy header does not match dtype and shape"));
        }
    }
    let payload_len = r.u64("payload_len")?;
    let check = r.u32("header_check")?;
    if xxh3_64(&a[..r.pos - 4]) as u32 != check {
        return Err(corrupt("header checksum mismatch"));
    }
    let values = shape
        .iter()
        .try_fold(1u64, |a: u64, &d| a.checked_mul(d as u64))
        .filter(|&n| n < 1 << 40)
        .ok_or_else(|| corrupt("shape too large"))?;
    let output_len = values * dtype.size() as u64 + clen as u64;
    let info = Info {
        dtype,
        shape,
        mode,
        bound,
        predictor,
        fills,
        container,
        payload_len,
        output_len,
    };
    Ok((info, r.pos))
}

/// Reads the header of a lossy archive without decoding it.
pub fn inspect(archive: &[u8]) -> Result<Info, Error> {
    let (info, pos) = read_header(archive)?;
    let expect = (pos as u64)
        .checked_add(info.payload_len)
        .and_then(|v| v.checked_add(8));
    if expect != Some(archive.len() as u64) {
        return Err(corrupt(format!(
            "archive is {} bytes, the header says {}",
            archive.len(),
            expect.map_or("more".into(), |v| v.to_string())
        )));
    }
    Ok(info)
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
    let mut st = State::new(info.dtype, info.bound, &info.fills, n);
    let mut dec = sep_coder::Decoder::new(payload);
    traverse::<_, false>(&mut st, &mut dec, &grid, &[], info.predictor);
    if dec.overrun() > 8 {
        return Err(corrupt("payload ends early"));
    }
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
