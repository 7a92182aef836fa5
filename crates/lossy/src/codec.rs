//! Prediction, quantization and the traversal of the array, shared by the
//! encoder and the decoder.
//!
//! Arrays of 1 to 4 dimensions are padded to 4 (leading sizes of 1) and
//! visited in one of two orders:
//!
//! * [`Predictor::Lorenzo`]: row-major order; each value is predicted by the
//!   Lorenzo predictor over the dimensions in which the point has a
//!   predecessor (the inclusion-exclusion sum over the corner of the unit
//!   cube behind it).
//! * [`Predictor::Interpolation`]: SZ3-style multilevel interpolation; at
//!   stride `s = 2^(L-1) .. 1` and for each dimension `d`, every point whose
//!   coordinate in `d` is an odd multiple of `s`, whose earlier coordinates
//!   are multiples of `s` and whose later ones are multiples of `2s`, is
//!   predicted from the already reconstructed points at `-3s, -s, +s, +3s`
//!   along `d` (cubic, linear when the outer two are missing, the left one
//!   alone at the far edge). The point at the origin is predicted as 0.
//! * [`Predictor::InterpolationByLevel`]: the same, but the points of level
//!   `l` (stride `2^l`) are quantized with the step `2e / d_l`, `d_l` from
//!   [`LEVEL_DIVISORS`] (`1.25^l`, at most 2; the origin keeps `2e`): coarse
//!   points, from which the fine ones are interpolated, come back closer to
//!   their values, which raises the PSNR at low rates.
//!
//! A value `x` with prediction `p` gets the code `q = round((x - p) / 2e)`;
//! its reconstruction is `p + 2e q` rounded to the array's type, and the
//! encoder keeps `q` only when that reconstruction is finite and within `e`
//! of `x` (and `|q| < 2^24`); otherwise the value is escaped and stored
//! exactly. Special values (NaN, infinities, the archive's fill values) are
//! always escaped and, for the prediction of later points, replaced by their
//! own prediction. All of this is IEEE `f64` arithmetic (`+ - * /`, a cast to
//! `f32` for `f32` arrays) in a fixed order, so the decoder's values are the
//! encoder's to the bit.
//!
//! On a value grid `(o, g)` (header predictor ids 3 and 4, [`State::grid`])
//! the same traversal runs on grid indices: the prediction `p` is rounded to
//! `k0 = round(p)`, the code is `q = round((x - o) / g - k0)`, the index
//! `k0 + q` goes into `recon` and the value is `o + (k0 + q) g` rounded to the
//! array's type, kept under the same check against `e`.

use crate::fast::{self, CdfCoder};
use crate::model::{
    CodeModel, ESCAPED, FAST2, MAX_BITS, Symbol, UNKNOWN, bucket, bucket3, bucket3_of,
};
use crate::{Dtype, Predictor};

/// The array's geometry, padded to four dimensions.
#[derive(Debug, Clone)]
pub(crate) struct Grid {
    pub dims: [usize; 4],
    pub stride: [usize; 4],
    /// The dimensions of size above 1, slowest first (at least one).
    pub real: Vec<usize>,
}

impl Grid {
    pub fn new(shape: &[usize]) -> Grid {
        let mut dims = [1usize; 4];
        dims[4 - shape.len()..].copy_from_slice(shape);
        let mut stride = [1usize; 4];
        for d in (0..3).rev() {
            stride[d] = stride[d + 1] * dims[d + 1];
        }
        let mut real: Vec<usize> = (0..4).filter(|&d| dims[d] > 1).collect();
        if real.is_empty() {
            real.push(3);
        }
        Grid { dims, stride, real }
    }

    pub fn len(&self) -> usize {
        self.dims.iter().product()
    }
}

/// Everything the traversal needs besides the coder.
pub(crate) struct State<'a> {
    pub dtype: Dtype,
    pub e: f64,
    pub two_e: f64,
    /// `1 / two_e` (the fast setting's encoder).
    pub inv_two_e: f64,
    /// A model revision with symbol tables ([`crate::model::tables`]).
    pub fast: bool,
    /// Model revision [`FAST2`] (its buckets are [`bucket3`]).
    pub v3: bool,
    pub fills: &'a [u64],
    /// Values used for prediction (specials replaced by their prediction).
    pub recon: Vec<f64>,
    /// The decoded values (specials exact), as bit patterns of the dtype.
    pub out: Vec<u64>,
    pub buckets: Vec<u8>,
    pub model: CodeModel,
    /// Dry run: no coding, only the histogram of the codes (for choosing a
    /// predictor, encoder only).
    pub dry: bool,
    /// Histogram of the dry run: codes `-255..=255` at `q + 255`, larger ones
    /// at 511 (with their bit lengths summed in `big_bits`), escapes of
    /// non-special values at 512 (special values are not counted).
    pub hist: Vec<u64>,
    /// Sum of the bit lengths of codes beyond the histogram's range.
    pub big_bits: u64,
    /// The value grid `(offset, step)` of predictors 3 and 4: predictions,
    /// codes and `recon` are in units of `step` from `offset`.
    pub grid: Option<(f64, f64)>,
}

impl<'a> State<'a> {
    pub fn new(dtype: Dtype, e: f64, fills: &'a [u64], n: usize, revision: u8) -> Self {
        State {
            dtype,
            e,
            two_e: 2.0 * e,
            inv_two_e: 1.0 / (2.0 * e),
            fast: crate::model::tables(revision),
            v3: revision == FAST2,
            fills,
            recon: vec![0.0; n],
            out: vec![0; n],
            buckets: vec![UNKNOWN; n],
            model: CodeModel::with_revision(dtype.bits(), revision),
            dry: false,
            hist: vec![0; 513],
            big_bits: 0,
            grid: None,
        }
    }

    /// A dry-run state: the traversal computes codes and reconstructions but
    /// codes nothing (and keeps neither buckets nor output).
    pub fn dry(dtype: Dtype, e: f64, fills: &'a [u64], n: usize) -> Self {
        State {
            dtype,
            e,
            two_e: 2.0 * e,
            inv_two_e: 1.0 / (2.0 * e),
            fast: false,
            v3: false,
            fills,
            recon: vec![0.0; n],
            out: Vec::new(),
            buckets: Vec::new(),
            model: CodeModel::new(8),
            dry: true,
            hist: vec![0; 513],
            big_bits: 0,
            grid: None,
        }
    }

    /// Estimated bits of a dry run: the zeroth-order entropy of its codes
    /// plus the value bits of escapes and the extra bits of large codes.
    pub fn estimated_bits(&self) -> f64 {
        let n: u64 = self.hist.iter().sum();
        let mut bits = 0.0;
        for &c in &self.hist {
            if c > 0 {
                bits += c as f64 * (n as f64 / c as f64).log2();
            }
        }
        bits + self.hist[512] as f64 * f64::from(self.dtype.bits()) + self.big_bits as f64
    }

    #[inline]
    fn special(&self, bits: u64) -> bool {
        let v = self.dtype.from_bits(bits);
        !v.is_finite() || self.fills.contains(&bits)
    }

    /// Codes point `i` (original value `x` when encoding) with prediction
    /// `pred` and neighbour buckets `ctx`.
    #[inline]
    fn point<C: CdfCoder, const ENC: bool>(
        &mut self,
        c: &mut C,
        i: usize,
        pred: f64,
        x: f64,
        ctx: [u8; 4],
        level: usize,
    ) {
        let sym = if ENC {
            let bits = self.dtype.to_bits(x);
            let mut s = Symbol::Escape(bits);
            if !self.special(bits)
                && let Some((o, g)) = self.grid
            {
                // On a grid: the prediction rounded to a grid point, the
                // code in grid steps.
                let pk = round_half_away(pred);
                let q = round_half_away((x - o) / g - pk);
                if q.is_finite() && q.abs() < f64::from(1u32 << MAX_BITS) {
                    let r = self.dtype.round(o + (pk + q) * g);
                    if r.is_finite() && (x - r).abs() <= self.e {
                        s = Symbol::Code(q as i64);
                    }
                }
            } else if !self.special(bits) {
                // The fast setting multiplies by 1/2e (the decoder never
                // computes q; the reconstruction below is checked either way).
                let q = if self.fast {
                    round_half_away((x - pred) * self.inv_two_e)
                } else {
                    round_half_away((x - pred) / self.two_e)
                };
                if q.is_finite() && q.abs() < f64::from(1u32 << MAX_BITS) {
                    let r = self.dtype.round(pred + q * self.two_e);
                    if r.is_finite() && (x - r).abs() <= self.e {
                        s = Symbol::Code(q as i64);
                    }
                }
            }
            s
        } else {
            Symbol::Code(0)
        };
        if ENC && self.dry {
            match sym {
                Symbol::Code(q) if q.abs() <= 255 => self.hist[(q + 255) as usize] += 1,
                Symbol::Code(q) => {
                    self.hist[511] += 1;
                    self.big_bits += u64::from(2 * (64 - q.unsigned_abs().leading_zeros()));
                }
                // Special values are escaped whatever the predictor: left
                // out of the estimate.
                Symbol::Escape(bits) if self.special(bits) => {}
                Symbol::Escape(_) => self.hist[512] += 1,
            }
            self.recon[i] = self.reconstruction(pred, sym).0;
            return;
        }
        self.model.set_context(ctx, level);
        let sym = self.model.code(c, sym);
        self.apply(i, pred, sym);
    }

    /// The value of `sym` for prediction (`recon`) and its decoded value.
    #[inline]
    fn reconstruction(&self, pred: f64, sym: Symbol) -> (f64, u64) {
        match sym {
            Symbol::Code(q) => match self.grid {
                Some((o, g)) => {
                    let k = round_half_away(pred) + q as f64;
                    (k, self.dtype.to_bits(self.dtype.round(o + k * g)))
                }
                None => {
                    let r = self.dtype.round(pred + q as f64 * self.two_e);
                    (r, self.dtype.to_bits(r))
                }
            },
            Symbol::Escape(bits) => {
                let recon = if self.special(bits) {
                    if pred.is_finite() { pred } else { 0.0 }
                } else {
                    match self.grid {
                        Some((o, g)) => (self.dtype.from_bits(bits) - o) / g,
                        None => self.dtype.from_bits(bits),
                    }
                };
                (recon, bits)
            }
        }
    }

    /// Keeps the coded symbol of point `i`: its bucket, its value for
    /// prediction and its decoded value.
    #[inline]
    fn apply(&mut self, i: usize, pred: f64, sym: Symbol) {
        self.buckets[i] = if self.v3 { bucket3(sym) } else { bucket(sym) };
        let (recon, out) = self.reconstruction(pred, sym);
        self.recon[i] = recon;
        self.out[i] = out;
    }

    /// [`point`](Self::point) of a dry run off a value grid, for arrays of
    /// `f64` (`WIDE`) or `f32`: the same histogram and reconstruction.
    #[inline(always)]
    fn point_dry<const WIDE: bool>(&mut self, i: usize, pred: f64, x: f64) {
        debug_assert!(self.dry && self.grid.is_none() && !self.fast);
        if !x.is_finite() || self.fills.contains(&to_bits_w::<WIDE>(x)) {
            self.recon[i] = if pred.is_finite() { pred } else { 0.0 };
            return;
        }
        let q = round_half_away((x - pred) / self.two_e);
        if q.abs() < f64::from(1u32 << MAX_BITS) {
            let r = round_w::<WIDE>(pred + q * self.two_e);
            if r.is_finite() && (x - r).abs() <= self.e {
                let q = q as i64;
                if q.abs() <= 255 {
                    self.hist[(q + 255) as usize] += 1;
                } else {
                    self.hist[511] += 1;
                    self.big_bits += u64::from(2 * (64 - q.unsigned_abs().leading_zeros()));
                }
                self.recon[i] = r;
                return;
            }
        }
        self.hist[512] += 1;
        self.recon[i] = x;
    }

    /// Keeps a code of the straight path of [`point_fast`](Self::point_fast):
    /// point `i`'s bucket `b` and reconstruction `r` (for an array of `f64`,
    /// `WIDE`, or `f32`).
    #[inline(always)]
    fn keep<const WIDE: bool>(&mut self, i: usize, b: u8, r: f64) {
        self.buckets[i] = b;
        self.recon[i] = r;
        self.out[i] = to_bits_w::<WIDE>(r);
    }

    /// [`point`](Self::point) of the fast revisions off a value grid, with
    /// the buckets `n0`, `n1` of the first two neighbours (the only ones
    /// their model reads), for arrays of `f64` (`WIDE`) or `f32`, revision
    /// [`FAST2`] (`V3`) or [`FAST`](crate::model::FAST): a code with a table
    /// symbol of its own (`-15..=15`, or `|q| <` [`fast::CLASS_LIMIT`] in
    /// revision 3) takes a straight path (its bucket from a table or a few
    /// operations); anything else goes the general way. The same bits and
    /// values as [`point`](Self::point).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn point_fast<C: CdfCoder, const ENC: bool, const WIDE: bool, const V3: bool>(
        &mut self,
        c: &mut C,
        i: usize,
        pred: f64,
        x: f64,
        n0: u8,
        n1: u8,
    ) {
        debug_assert!(self.fast && self.grid.is_none() && !self.dry && self.v3 == V3);
        if ENC {
            if x.is_finite() && !self.fills.contains(&to_bits_w::<WIDE>(x)) {
                let q = round_half_away((x - pred) * self.inv_two_e);
                let limit = if V3 {
                    (fast::CLASS_LIMIT - 1) as f64
                } else {
                    15.0
                };
                if q.abs() <= limit {
                    let r = round_w::<WIDE>(pred + q * self.two_e);
                    if r.is_finite() && (x - r).abs() <= self.e {
                        let q = q as i64;
                        if V3 {
                            self.model.code_small3(c, n0, n1, q);
                            self.keep::<WIDE>(i, bucket3_of(q), r);
                        } else {
                            let s = fast::symbol_of(q);
                            self.model.code_small(c, n0, n1, s);
                            self.keep::<WIDE>(i, SMALL_BUCKET[s], r);
                        }
                        return;
                    }
                }
            }
            // A larger code or an escape: the table's OTHER and the rest.
            self.point::<C, true>(c, i, pred, x, [n0, n1, UNKNOWN, UNKNOWN], 0);
        } else {
            let small = if V3 {
                self.model
                    .code_small3(c, n0, n1, 0)
                    .map(|q| (q, bucket3_of(q)))
            } else {
                let s = self.model.code_small(c, n0, n1, fast::OTHER);
                (s != fast::OTHER).then(|| (fast::code_of(s), SMALL_BUCKET[s]))
            };
            if let Some((q, b)) = small {
                let r = round_w::<WIDE>(pred + q as f64 * self.two_e);
                self.keep::<WIDE>(i, b, r);
            } else {
                let sym = self.model.code_after_other(c, n0, n1, Symbol::Code(0));
                self.apply(i, pred, sym);
            }
        }
    }
}

/// `Dtype::round` of `f64` (`WIDE`) or `f32`.
#[inline(always)]
fn round_w<const WIDE: bool>(v: f64) -> f64 {
    if WIDE { v } else { f64::from(v as f32) }
}

/// `Dtype::to_bits` of `f64` (`WIDE`) or `f32`.
#[inline(always)]
fn to_bits_w<const WIDE: bool>(v: f64) -> u64 {
    if WIDE {
        v.to_bits()
    } else {
        u64::from((v as f32).to_bits())
    }
}

/// The bucket of each table symbol of the fast revision below
/// [`fast::OTHER`] (`bucket(Code(code_of(s)))`).
const SMALL_BUCKET: [u8; fast::SYMBOLS] = {
    let mut t = [0u8; fast::SYMBOLS];
    let mut s = 1;
    while s < fast::OTHER {
        let m = s.div_ceil(2);
        let b: u8 = match m {
            1 => 1,
            2 => 3,
            3..=4 => 5,
            5..=8 => 7,
            _ => 9,
        };
        t[s] = b + (s % 2 == 0) as u8;
        s += 1;
    }
    t[fast::OTHER] = ESCAPED;
    t
};

/// `v.round()` (half away from zero, the same result for every `v`) without
/// the library call that `f64::round` is on x86-64: below 2^52 the integer
/// part is `v as i64` and the fraction `v - trunc(v)` is exact. The sign of a
/// zero result may differ from `round`'s; callers use the code as an integer.
#[inline]
fn round_half_away(v: f64) -> f64 {
    if v.abs() < 4_503_599_627_370_496.0 {
        let t = v as i64 as f64;
        let f = v - t;
        if f >= 0.5 {
            t + 1.0
        } else if f <= -0.5 {
            t - 1.0
        } else {
            t
        }
    } else {
        v.round()
    }
}

/// A neighbour at a fixed displacement: its offset in the flat array and
/// the dimensions it moves along (at most 4; `moves[..n]`), the only ones
/// whose bounds need a check.
#[derive(Debug, Clone, Copy)]
struct Near {
    off: isize,
    moves: [(usize, isize); 4],
    n: usize,
}

impl Near {
    fn new(g: &Grid, delta: [isize; 4]) -> Near {
        let mut near = Near {
            off: 0,
            moves: [(0, 0); 4],
            n: 0,
        };
        for (d, &k) in delta.iter().enumerate() {
            if k != 0 {
                near.off += k * g.stride[d] as isize;
                near.moves[near.n] = (d, k);
                near.n += 1;
            }
        }
        near
    }

    /// Where this neighbour lies inside the grid along the row of points
    /// `(row[0], row[1], row[2], d)`: `(lo, hi, off)`, inside for `lo <= d <
    /// hi` (empty when the row's other coordinates put it outside), at flat
    /// offset `off` from the point.
    #[inline]
    fn row(&self, g: &Grid, row: [usize; 3]) -> (usize, usize, isize) {
        let (mut lo, mut hi) = (0usize, g.dims[3]);
        for &(d, k) in &self.moves[..self.n] {
            if d == 3 {
                if k < 0 {
                    lo = lo.max(k.unsigned_abs());
                } else {
                    hi = hi.saturating_sub(k as usize);
                }
            } else {
                let c = row[d] as isize + k;
                if c < 0 || c >= g.dims[d] as isize {
                    return (0, 0, self.off);
                }
            }
        }
        (lo, hi, self.off)
    }
}

fn unit(d: usize, k: isize) -> [isize; 4] {
    let mut v = [0isize; 4];
    v[d] = k;
    v
}

fn add(a: [isize; 4], b: [isize; 4]) -> [isize; 4] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

/// Runs the traversal: codes `x` (encoder) or decodes into `st` (decoder,
/// `x` empty).
pub(crate) fn traverse<C: CdfCoder, const ENC: bool>(
    st: &mut State,
    c: &mut C,
    g: &Grid,
    x: &[f64],
    predictor: Predictor,
) {
    match predictor {
        Predictor::Lorenzo => lorenzo::<C, ENC>(st, c, g, x),
        Predictor::Interpolation => interpolation::<C, ENC>(st, c, g, x, false),
        Predictor::InterpolationByLevel => interpolation::<C, ENC>(st, c, g, x, true),
    }
}

fn lorenzo<C: CdfCoder, const ENC: bool>(st: &mut State, c: &mut C, g: &Grid, x: &[f64]) {
    if st.dtype == Dtype::F64 {
        lorenzo_rows::<C, ENC, true>(st, c, g, x);
    } else {
        lorenzo_rows::<C, ENC, false>(st, c, g, x);
    }
}

/// The Lorenzo traversal row by row (the fastest dimension): the prediction's
/// terms and the neighbours' bounds are settled once per row.
fn lorenzo_rows<C: CdfCoder, const ENC: bool, const WIDE: bool>(
    st: &mut State,
    c: &mut C,
    g: &Grid,
    x: &[f64],
) {
    // Inclusion-exclusion terms per mask of dimensions with a predecessor,
    // in the order of `sub` (the order of the sum).
    let mut terms = [[(0usize, 0f64); 15]; 16];
    let mut nterms = [0usize; 16];
    for mask in 0..16usize {
        for sub in 1..16usize {
            if sub & !mask != 0 {
                continue;
            }
            let off: usize = (0..4)
                .filter(|&d| sub & (1 << d) != 0)
                .map(|d| g.stride[d])
                .sum();
            let sign = if sub.count_ones() % 2 == 1 { 1.0 } else { -1.0 };
            terms[mask][nterms[mask]] = (off, sign);
            nterms[mask] += 1;
        }
    }
    let r = &g.real;
    let last = r[r.len() - 1];
    let ctx_delta: [[isize; 4]; 4] = match r.len() {
        1 => [
            unit(last, -1),
            unit(last, -2),
            unit(last, -3),
            unit(last, -4),
        ],
        2 => {
            let n = r[0];
            [
                unit(last, -1),
                unit(n, -1),
                add(unit(n, -1), unit(last, -1)),
                add(unit(n, -1), unit(last, 1)),
            ]
        }
        k => {
            let n = r[k - 2];
            let u = r[k - 3];
            [
                unit(last, -1),
                unit(n, -1),
                unit(u, -1),
                add(unit(n, -1), unit(last, -1)),
            ]
        }
    };
    let near = ctx_delta.map(|dl| Near::new(g, dl));
    let dry = ENC && st.dry;
    let quick = st.fast && st.grid.is_none() && !dry;
    let v3 = st.v3;
    let dry_quick = dry && st.grid.is_none();
    let n3 = g.dims[3];
    for a in 0..g.dims[0] {
        for b in 0..g.dims[1] {
            for cc in 0..g.dims[2] {
                let i0 = a * g.stride[0] + b * g.stride[1] + cc * g.stride[2];
                let row_mask =
                    usize::from(a > 0) | usize::from(b > 0) << 1 | usize::from(cc > 0) << 2;
                let rows = near.map(|n| n.row(g, [a, b, cc]));
                for d in 0..n3 {
                    let i = i0 + d;
                    let mask = row_mask | usize::from(d > 0) << 3;
                    let pred = lorenzo_sum(&st.recon, i, &terms[mask], nterms[mask]);
                    let nb = |k: usize| {
                        let (lo, hi, off) = rows[k];
                        if d >= lo && d < hi {
                            st.buckets[(i as isize + off) as usize]
                        } else {
                            UNKNOWN
                        }
                    };
                    let xi = if ENC { x[i] } else { 0.0 };
                    if quick {
                        let (n0, n1) = (nb(0), nb(1));
                        if v3 {
                            st.point_fast::<C, ENC, WIDE, true>(c, i, pred, xi, n0, n1);
                        } else {
                            st.point_fast::<C, ENC, WIDE, false>(c, i, pred, xi, n0, n1);
                        }
                    } else if dry_quick {
                        st.point_dry::<WIDE>(i, pred, xi);
                    } else {
                        let ctx = if dry {
                            [UNKNOWN; 4]
                        } else if st.fast {
                            [nb(0), nb(1), UNKNOWN, UNKNOWN]
                        } else {
                            [nb(0), nb(1), nb(2), nb(3)]
                        };
                        st.point::<C, ENC>(c, i, pred, xi, ctx, 0);
                    }
                }
            }
        }
    }
}

/// The Lorenzo prediction of point `i` from its first `n` terms `t`
/// (`(offset back, sign)`), summed in order from `0.0`.
#[inline(always)]
fn lorenzo_sum(recon: &[f64], i: usize, t: &[(usize, f64); 15], n: usize) -> f64 {
    #[inline(always)]
    fn sum<const N: usize>(recon: &[f64], i: usize, t: &[(usize, f64); 15]) -> f64 {
        let mut pred = 0.0;
        for &(off, sign) in &t[..N] {
            pred += sign * recon[i - off];
        }
        pred
    }
    match n {
        0 => 0.0,
        1 => sum::<1>(recon, i, t),
        3 => sum::<3>(recon, i, t),
        7 => sum::<7>(recon, i, t),
        _ => {
            let mut pred = 0.0;
            for &(off, sign) in &t[..n] {
                pred += sign * recon[i - off];
            }
            pred
        }
    }
}

/// The divisors of the step `2e` per interpolation level (stride `2^l`, `l`
/// capped at 4) of [`Predictor::InterpolationByLevel`]: `1.25^l` up to 2,
/// exact binary fractions.
pub(crate) const LEVEL_DIVISORS: [f64; 5] = [1.0, 1.25, 1.5625, 1.953125, 2.0];

fn interpolation<C: CdfCoder, const ENC: bool>(
    st: &mut State,
    c: &mut C,
    g: &Grid,
    x: &[f64],
    by_level: bool,
) {
    if st.dtype == Dtype::F64 {
        interpolation_rows::<C, ENC, true>(st, c, g, x, by_level);
    } else {
        interpolation_rows::<C, ENC, false>(st, c, g, x, by_level);
    }
}

/// The interpolation traversal; the neighbours' bounds are settled once per
/// row of the fastest dimension.
fn interpolation_rows<C: CdfCoder, const ENC: bool, const WIDE: bool>(
    st: &mut State,
    c: &mut C,
    g: &Grid,
    x: &[f64],
    by_level: bool,
) {
    let maxdim = *g.dims.iter().max().unwrap_or(&1);
    let mut levels = 0u32;
    while (1usize << levels) < maxdim {
        levels += 1;
    }
    // The origin.
    let x0 = if ENC { x[0] } else { 0.0 };
    st.point::<C, ENC>(c, 0, 0.0, x0, [UNKNOWN; 4], 3);
    let r = g.real.clone();
    let base = st.two_e;
    let dry = ENC && st.dry;
    let quick = st.fast && st.grid.is_none() && !dry;
    let v3 = st.v3;
    let dry_quick = dry && st.grid.is_none();
    for lvl in (0..levels).rev() {
        let s = 1usize << lvl;
        if by_level {
            st.two_e = base / LEVEL_DIVISORS[(lvl as usize).min(4)];
            st.inv_two_e = 1.0 / st.two_e;
        }
        for &d in &r {
            let pos = r.iter().position(|&e| e == d).unwrap_or(0);
            let other = if r.len() > 1 {
                Some(r[(pos + r.len() - 1) % r.len()])
            } else {
                None
            };
            let third = if r.len() > 2 {
                Some(r[(pos + r.len() - 2) % r.len()])
            } else {
                None
            };
            let si = s as isize;
            let ctx_delta = [
                unit(d, -si),
                unit(d, si),
                other.map_or(unit(d, -3 * si), |o| unit(o, -si)),
                third.map_or(unit(d, 3 * si), |o| unit(o, -si)),
            ];
            let near = ctx_delta.map(|dl| Near::new(g, dl));
            let mut start = [0usize; 4];
            let mut step = [1usize; 4];
            for e in 0..4 {
                if e < d {
                    step[e] = s;
                } else if e == d {
                    start[e] = s;
                    step[e] = 2 * s;
                } else {
                    step[e] = 2 * s;
                }
            }
            let sd = g.stride[d];
            let n = g.dims[d];
            let level = (lvl as usize).min(3);
            let mut a = start[0];
            while a < g.dims[0] {
                let mut b = start[1];
                while b < g.dims[1] {
                    let mut cc = start[2];
                    while cc < g.dims[2] {
                        let rows = near.map(|nr| nr.row(g, [a, b, cc]));
                        let i0 = a * g.stride[0] + b * g.stride[1] + cc * g.stride[2];
                        // The coordinate along `d` when it is not the row's.
                        let pd = [a, b, cc, 0][d];
                        let mut dd = start[3];
                        while dd < g.dims[3] {
                            let i = i0 + dd;
                            let p = if d == 3 { dd } else { pd };
                            let left = st.recon[i - s * sd];
                            let pred = if p + s < n {
                                let right = st.recon[i + s * sd];
                                if p >= 3 * s && p + 3 * s < n {
                                    let l3 = st.recon[i - 3 * s * sd];
                                    let r3 = st.recon[i + 3 * s * sd];
                                    (9.0 * (left + right) - (l3 + r3)) * 0.0625
                                } else {
                                    (left + right) * 0.5
                                }
                            } else {
                                left
                            };
                            let nb = |k: usize| {
                                let (lo, hi, off) = rows[k];
                                if dd >= lo && dd < hi {
                                    st.buckets[(i as isize + off) as usize]
                                } else {
                                    UNKNOWN
                                }
                            };
                            let xi = if ENC { x[i] } else { 0.0 };
                            if quick {
                                let (n0, n1) = (nb(0), nb(1));
                                if v3 {
                                    st.point_fast::<C, ENC, WIDE, true>(c, i, pred, xi, n0, n1);
                                } else {
                                    st.point_fast::<C, ENC, WIDE, false>(c, i, pred, xi, n0, n1);
                                }
                            } else if dry_quick {
                                st.point_dry::<WIDE>(i, pred, xi);
                            } else {
                                let ctx = if dry {
                                    [UNKNOWN; 4]
                                } else if st.fast {
                                    [nb(0), nb(1), UNKNOWN, UNKNOWN]
                                } else {
                                    [nb(0), nb(1), nb(2), nb(3)]
                                };
                                st.point::<C, ENC>(c, i, pred, xi, ctx, level);
                            }
                            dd += step[3];
                        }
                        cc += step[2];
                    }
                    b += step[1];
                }
                a += step[0];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SMALL_BUCKET, round_half_away};
    use crate::fast;
    use crate::model::{ESCAPED, Symbol, bucket};

    #[test]
    fn small_buckets_are_the_buckets_of_their_codes() {
        for (s, &b) in SMALL_BUCKET[..fast::OTHER].iter().enumerate() {
            assert_eq!(b, bucket(Symbol::Code(fast::code_of(s))), "{s}");
        }
        assert_eq!(SMALL_BUCKET[fast::OTHER], ESCAPED);
    }

    #[test]
    fn round_half_away_is_round() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut values = vec![
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            -4_503_599_627_370_497.0,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.0,
            -0.0,
        ];
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Random magnitudes from 2^-20 to 2^60, both signs, and halves.
            let m = (x >> 11) as f64 / (1u64 << 53) as f64;
            let e = ((x & 0x7F) as i32 - 20).min(60);
            let v = m * 2f64.powi(e) * if x & 0x80 != 0 { -1.0 } else { 1.0 };
            values.push(v);
            values.push(v.trunc() + 0.5);
        }
        for v in values {
            let (a, b) = (round_half_away(v), v.round());
            assert!(a == b || (a.is_nan() && b.is_nan()), "{v}: {a} vs {b}");
        }
    }
}
