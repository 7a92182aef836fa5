//! Compression: both predictors tried on the array, the smaller coding kept,
//! and the error-bound modes (abs, rel, psnr, ratio) resolved to a step.

use crate::model::{FAST2, tables};
use crate::*;

/// The model revision the encoder writes.
const NEWEST: u8 = 1;

struct Coded {
    predictor: Predictor,
    grid: Option<(f64, f64)>,
    revision: u8,
    payload: Vec<u8>,
    out: Vec<u64>,
}

#[allow(clippy::too_many_arguments)]
fn code_with(
    values: &[f64],
    dtype: Dtype,
    grid: &Grid,
    bound: f64,
    fills: &[u64],
    predictor: Predictor,
    revision: u8,
    on: Option<(f64, f64)>,
) -> Coded {
    // Level steps and grids do not combine (no header id for both).
    let on = on.filter(|_| predictor != Predictor::InterpolationByLevel);
    let mut st = State::new(dtype, bound, fills, values.len(), revision);
    st.grid = on;
    let mut enc = sep_coder::Encoder::with_capacity(values.len() / 2 + 64);
    traverse::<_, true>(&mut st, &mut enc, grid, values, predictor);
    Coded {
        predictor,
        grid: on,
        revision,
        payload: enc.finish(),
        out: st.out,
    }
}

#[allow(clippy::too_many_arguments)]
fn code_best(
    values: &[f64],
    dtype: Dtype,
    grid: &Grid,
    bound: f64,
    fills: &[u64],
    opts: &Options,
    revision: u8,
    steps: Option<f64>,
) -> Coded {
    let on = value_grid(values, dtype, bound, fills, steps);
    match opts.predictor {
        Some(p) => code_with(values, dtype, grid, bound, fills, p, revision, on),
        None => {
            let sampled = tables(revision);
            let by_level = opts.by_level && on.is_none();
            let (p, rate) =
                choose_predictor(values, dtype, grid, bound, fills, sampled, on, by_level);
            // The fast setting's tables cannot code a value in much less
            // than 0.1 bit (every symbol keeps about 2^-9 of a table): at low
            // rates on f64 arrays the context-mixing model of the default
            // setting codes them, still above 50 MB/s (8 bytes per value).
            let revision = if opts.fast
                && opts.revision.is_none()
                && dtype == Dtype::F64
                && rate < FAST_LOW_RATE
            {
                NEWEST
            } else {
                revision
            };
            code_with(values, dtype, grid, bound, fills, p, revision, on)
        }
    }
}

/// Below this many estimated bits per value the fast setting codes an `f64`
/// array with the default setting's model ([`NEWEST`]), which is still well
/// above 50 MB/s there (8 bytes per value, at most about two binary
/// decisions per value at these rates). Estimates of the fast dry run on the
/// float set's `f64` files: Air-pressure 0.26 at rel 1e-2 (3,015 bytes with
/// the fast tables, 2,457 with the model at 92 MB/s; SZ3 3,325 at a higher
/// PSNR) and 1.63 at rel 1e-3 (18,671 bytes with revision 3's tables, 18,058
/// with the model, 66 MB/s at load 16; SZ3 19,461 at 0.48 dB more, which put
/// the tables' curve 0.04 dB below SZ3's there), Basel-temp 2.11 at rel 1e-2.
const FAST_LOW_RATE: f64 = 2.0;

/// The smallest distance between distinct values among the first 4096
/// valid ones, when the data may lie on a grid (see [`value_grid`]).
fn grid_step(values: &[f64], fills: &[u64], dtype: Dtype) -> Option<f64> {
    let mut head: Vec<f64> = values
        .iter()
        .copied()
        .filter(|&v| v.is_finite() && !fills.contains(&dtype.to_bits(v)))
        .take(4096)
        .collect();
    if head.len() < 64 {
        return None;
    }
    head.sort_by(f64::total_cmp);
    head.dedup();
    head.windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0.0)
        .min_by(f64::total_cmp)
}

/// The grid `(offset, step)` to code on at bound `e`, if any: `step` (the
/// smallest distance from [`grid_step`] rounded to one significant decimal
/// digit, 0.009997 becoming 0.01, or else that distance itself) must exceed
/// `2e`, and every valid
/// value of a sample (every 16th, at most 2^16) must lie within `e` of its
/// grid point `round_dtype(offset + k step)`; the offset puts the first valid
/// value on the grid. Values that miss later are escaped as usual.
fn value_grid(
    values: &[f64],
    dtype: Dtype,
    e: f64,
    fills: &[u64],
    step: Option<f64>,
) -> Option<(f64, f64)> {
    let d = step?;
    let valid = |v: f64| v.is_finite() && !fills.contains(&dtype.to_bits(v));
    let first = values.iter().copied().find(|&v| valid(v))?;
    let p = 10f64.powi(d.log10().floor() as i32);
    let nice = (d / p).round() * p;
    [nice, d].into_iter().find_map(|g| {
        if !(g > 2.0 * e && g.is_finite()) {
            return None;
        }
        let o = first - (first / g).round() * g;
        let fits = values
            .iter()
            .step_by(16)
            .take(1 << 16)
            .filter(|&&v| valid(v))
            .all(|&v| {
                let r = dtype.round(o + ((v - o) / g).round() * g);
                (v - r).abs() <= e
            });
        fits.then_some((o, g))
    })
}

/// The predictor whose codes have the smaller zeroth-order entropy and that
/// estimate in bits per value, by a dry run of each (prediction and quantization only, no coding; off a grid,
/// interpolation is done by level when its estimate is below [`LOW_RATE`]
/// bits per value), on the whole
/// array or, when `sampled`, on a box in its middle whose sides are the
/// array's times `(1/8)^(1/r)` (`r` dimensions above 1): an eighth of the
/// values with every dimension's structure, for arrays above `4 SAMPLE`
/// values. The default setting runs on the whole array: the box chose wrongly
/// on levitus-temp at rel 1e-3 (28% larger).
#[allow(clippy::too_many_arguments)]
fn choose_predictor(
    values: &[f64],
    dtype: Dtype,
    grid: &Grid,
    bound: f64,
    fills: &[u64],
    sampled: bool,
    on: Option<(f64, f64)>,
    by_level: bool,
) -> (Predictor, f64) {
    let boxed;
    let (sample, sgrid) = if !sampled || values.len() <= 4 * SAMPLE {
        (values, grid.clone())
    } else {
        let f = 0.125f64.powf(1.0 / grid.real.len() as f64);
        let mut lo = [0usize; 4];
        let mut len = grid.dims;
        for &d in &grid.real {
            len[d] = ((grid.dims[d] as f64 * f).ceil() as usize).clamp(1, grid.dims[d]);
            lo[d] = (grid.dims[d] - len[d]) / 2;
        }
        let mut v = Vec::with_capacity(len.iter().product());
        for a in lo[0]..lo[0] + len[0] {
            for b in lo[1]..lo[1] + len[1] {
                for c in lo[2]..lo[2] + len[2] {
                    let row = a * grid.stride[0] + b * grid.stride[1] + c * grid.stride[2];
                    v.extend_from_slice(&values[row + lo[3]..row + lo[3] + len[3]]);
                }
            }
        }
        boxed = v;
        (&boxed[..], Grid::new(&len))
    };
    let cost = |p: Predictor| {
        let mut st = State::dry(dtype, bound, fills, sample.len());
        st.grid = on;
        let mut enc = sep_coder::Encoder::new();
        traverse::<_, true>(&mut st, &mut enc, &sgrid, sample, p);
        st.estimated_bits()
    };
    let interp = cost(Predictor::Interpolation);
    let lorenzo = cost(Predictor::Lorenzo);
    let per_value = |bits: f64| bits / sample.len().max(1) as f64;
    if lorenzo < interp {
        (Predictor::Lorenzo, per_value(lorenzo))
    } else if by_level && interp < LOW_RATE * sample.len() as f64 {
        // At low rates finer coarse levels buy more PSNR than their bits
        // would elsewhere on the curve (Air-pressure at rel 1e-2: +4.8 dB
        // with 3% fewer bytes; etopo20 +1.3 dB for 2% more).
        (Predictor::InterpolationByLevel, per_value(interp))
    } else {
        (Predictor::Interpolation, per_value(interp))
    }
}

/// Below this many estimated bits per value, interpolation is done by level
/// ([`Predictor::InterpolationByLevel`]). Estimates at rel 1e-2 on the float
/// set: levitus 0.31, Air-pressure 0.26, coads 0.95 (fast, on its box:
/// 1.23), etopo20 1.13 (fast 1.49), navy-uwnd 1.69 (fast 1.72).
const LOW_RATE: f64 = 1.6;

/// The fast setting dry-runs arrays up to `4 SAMPLE` values whole.
const SAMPLE: usize = 1 << 15;

/// Max absolute error and PSNR over valid values of two arrays of equal
/// length (PSNR from the valid values' range; infinite when identical).
pub(crate) fn stats_of(orig: &[f64], got: &[f64], fills: &[f64]) -> Stats {
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

pub(crate) fn compress_inner(
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
    let rev = opts
        .revision
        .unwrap_or(if opts.fast { FAST2 } else { NEWEST });
    if rev >= crate::model::REVISIONS {
        return Err(Error::Invalid(format!(
            "model revision {rev} is not known (below {})",
            crate::model::REVISIONS
        )));
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
    let steps = if opts.grid {
        grid_step(&values, &fills, dtype)
    } else {
        None
    };
    let coded = match opts.mode {
        Mode::Abs(e) => (
            e,
            code_best(&values, dtype, &grid, e, &fills, opts, rev, steps),
        ),
        Mode::Rel(r) => {
            let e = if range > 0.0 { r * range } else { r };
            (
                e,
                code_best(&values, dtype, &grid, e, &fills, opts, rev, steps),
            )
        }
        Mode::Psnr(db) => {
            let base = if range > 0.0 { range } else { 1.0 };
            let mut e = base * 10f64.powf(-db / 20.0) * 3f64.sqrt();
            let mut tries = 0;
            loop {
                let c = code_best(&values, dtype, &grid, e, &fills, opts, rev, steps);
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
            // No value grids: the bisection needs the ratio to grow with e,
            // and a grid's ratio jumps where its step passes 2e (levitus-temp
            // in the fast setting landed at 11.7 for a target of 8).
            let steps = None;
            let base = if range > 0.0 { range } else { 1.0 };
            let pred = opts.predictor.unwrap_or_else(|| {
                code_best(&values, dtype, &grid, base * 1e-3, &fills, opts, rev, steps).predictor
            });
            let size_of = |c: &Coded| c.payload.len() as f64 + 64.0 + container.len() as f64;
            // Bisection on log(e): the ratio grows with e.
            let (mut lo, mut hi) = ((base * 1e-12).ln(), (base * 0.5).ln());
            let mut best: Option<(f64, Coded)> = None;
            for _ in 0..24 {
                let mid = 0.5 * (lo + hi);
                let e = mid.exp();
                let on = value_grid(&values, dtype, e, &fills, steps);
                let c = code_with(&values, dtype, &grid, e, &fills, pred, rev, on);
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
                    let on = value_grid(&values, dtype, e, &fills, steps);
                    (
                        e,
                        code_with(&values, dtype, &grid, e, &fills, pred, rev, on),
                    )
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
        grid: c.grid,
        revision: c.revision,
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
