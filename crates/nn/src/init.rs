//! Parameter initialisers with PyTorch's default distributions, drawn from [`Rng`].
//!
//! Every function fills its slice in index order, one draw per element (a normal may use
//! the spare deviate of the previous pair, see [`Rng::next_normal`]). Distribution
//! parameters are computed in `f64`, each value is computed in `f64` and rounded to `f32`
//! once. Like the generator, the values are part of the archive format; `tests/pinned.rs`
//! pins the first outputs of each initialiser.
//!
//! | PyTorch default | here |
//! |---|---|
//! | `nn.Linear` weight: `kaiming_uniform_(a = sqrt(5))` = `U(-1/sqrt(fan_in), 1/sqrt(fan_in))` | [`linear_weight`] |
//! | `nn.Linear` bias: `U(-1/sqrt(fan_in), 1/sqrt(fan_in))` | [`linear_bias`] |
//! | `nn.Embedding`: `N(0, 1)` | [`normal`] with `(0, 1)` |
//! | `nn.LayerNorm`, `nn.BatchNorm1d`: weight ones, bias zeros | [`constant`] |
//! | `xavier_normal_`, `xavier_uniform_`, `kaiming_uniform_`, `normal_`, `uniform_` | same names |
//!
//! ```
//! use sep_nn::{init, Rng};
//! let mut rng = Rng::new(1);
//! let mut w = vec![0.0f32; 6];
//! init::linear_weight(&mut w, &mut rng, 3);
//! assert!(w.iter().all(|v| v.abs() <= 1.0 / 3f32.sqrt()));
//! ```

use crate::rng::Rng;

/// `U(lo, hi)`: `lo + (hi - lo) * u` in `f64` with `u = rng.next_f64()`, rounded to `f32`.
pub fn uniform(buf: &mut [f32], rng: &mut Rng, lo: f64, hi: f64) {
    let width = hi - lo;
    for v in buf {
        *v = (lo + width * rng.next_f64()) as f32;
    }
}

/// `N(mean, std^2)`: `mean + std * z` in `f64` with `z = rng.next_normal()`, rounded to `f32`.
pub fn normal(buf: &mut [f32], rng: &mut Rng, mean: f64, std: f64) {
    for v in buf {
        *v = (mean + std * rng.next_normal()) as f32;
    }
}

/// Every element set to `value` (LayerNorm/BatchNorm weight 1, bias 0). Draws nothing.
pub fn constant(buf: &mut [f32], value: f32) {
    buf.fill(value);
}

/// `kaiming_uniform_(a, mode = fan_in, nonlinearity = leaky_relu)`:
/// `U(-b, b)` with `b = sqrt(6 / ((1 + a^2) fan_in))`.
pub fn kaiming_uniform(buf: &mut [f32], rng: &mut Rng, fan_in: usize, a: f64) {
    let bound = (6.0 / ((1.0 + a * a) * fan_in as f64)).sqrt();
    uniform(buf, rng, -bound, bound);
}

/// PyTorch's `nn.Linear` weight default, `kaiming_uniform_(a = sqrt(5))`, which is exactly
/// `U(-1/sqrt(fan_in), 1/sqrt(fan_in))`; the bound is computed as `1 / sqrt(fan_in)` (not
/// through `a`, whose square is not exactly 5 in floating point).
pub fn linear_weight(buf: &mut [f32], rng: &mut Rng, fan_in: usize) {
    let bound = 1.0 / (fan_in as f64).sqrt();
    uniform(buf, rng, -bound, bound);
}

/// PyTorch's `nn.Linear` bias default, `U(-1/sqrt(fan_in), 1/sqrt(fan_in))`.
pub fn linear_bias(buf: &mut [f32], rng: &mut Rng, fan_in: usize) {
    linear_weight(buf, rng, fan_in);
}

/// `xavier_normal_(gain)`: `N(0, std^2)` with `std = gain * sqrt(2 / (fan_in + fan_out))`.
pub fn xavier_normal(buf: &mut [f32], rng: &mut Rng, fan_in: usize, fan_out: usize, gain: f64) {
    let std = gain * (2.0 / (fan_in + fan_out) as f64).sqrt();
    normal(buf, rng, 0.0, std);
}

/// `xavier_uniform_(gain)`: `U(-b, b)` with `b = gain * sqrt(6 / (fan_in + fan_out))`.
pub fn xavier_uniform(buf: &mut [f32], rng: &mut Rng, fan_in: usize, fan_out: usize, gain: f64) {
    let bound = gain * (6.0 / (fan_in + fan_out) as f64).sqrt();
    uniform(buf, rng, -bound, bound);
}
