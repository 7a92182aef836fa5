//! Finite-difference gradient checking shared by the integration tests.
//!
//! The layer runs in `f32`; the checked scalar is `L = sum_i c_i y_i` accumulated in `f64`
//! over the `f32` outputs, with a fixed random `c` (so `dy = c`). Each checked element is
//! perturbed by `±h` and `(L+ - L-) / 2h` is compared with the analytic gradient:
//! `|num - ana| <= atol + rtol * max(|num|, |ana|)`.

#![allow(dead_code)]

use sep_nn::{Module, Param, Rng};

/// Step and tolerances of one check.
#[derive(Clone, Copy, Debug)]
pub struct Tol {
    pub h: f32,
    pub atol: f64,
    pub rtol: f64,
}

/// The default: `h = 1e-2`, `atol = 1e-4`, `rtol = 2e-3`.
pub const TOL: Tol = Tol {
    h: 1e-2,
    atol: 1e-4,
    rtol: 2e-3,
};

/// Worst-case figures of one check, printed for the record.
#[derive(Clone, Copy, Debug, Default)]
pub struct Report {
    pub checked: usize,
    pub max_abs_err: f64,
    pub max_ratio: f64,
}

pub fn random_vec(rng: &mut Rng, n: usize, scale: f32) -> Vec<f32> {
    (0..n).map(|_| (rng.next_normal() as f32) * scale).collect()
}

fn dot(c: &[f32], y: &[f32]) -> f64 {
    assert_eq!(c.len(), y.len());
    c.iter().zip(y).map(|(&a, &b)| a as f64 * b as f64).sum()
}

fn with_param<L: Module>(layer: &mut L, k: usize, f: &mut dyn FnMut(&mut Param)) {
    let mut idx = 0;
    layer.visit_params(&mut |p| {
        if idx == k {
            f(p);
        }
        idx += 1;
    });
}

fn param_count<L: Module>(layer: &mut L) -> usize {
    let mut n = 0;
    layer.visit_params(&mut |_| n += 1);
    n
}

/// Indices to check in a tensor of `n` elements: all when `n <= limit`, otherwise an
/// evenly spread subset.
fn sample(n: usize, limit: usize) -> Vec<usize> {
    if n <= limit {
        (0..n).collect()
    } else {
        (0..limit).map(|i| i * n / limit).collect()
    }
}

/// Checks `dL/dx` (when `check_input`) and `dL/dp` for every parameter of `layer`.
///
/// `fwd(layer, x)` runs the forward pass and returns a copy of the output; `bwd(layer, dy)`
/// runs the backward pass and returns a copy of the input gradient (empty when the layer
/// has none).
pub fn gradcheck<L: Module>(
    name: &str,
    layer: &mut L,
    x: &[f32],
    check_input: bool,
    tol: Tol,
    mut fwd: impl FnMut(&mut L, &[f32]) -> Vec<f32>,
    mut bwd: impl FnMut(&mut L, &[f32]) -> Vec<f32>,
) -> Report {
    let mut rng = Rng::new(0xC0FFEE);
    let y = fwd(layer, x);
    let c = random_vec(&mut rng, y.len(), 1.0);
    sep_nn::zero_grads(layer);
    let dx = bwd(layer, &c);
    let mut grads = Vec::new();
    layer.visit_params(&mut |p| grads.push(p.grad.clone()));

    let mut rep = Report::default();
    let h = tol.h;
    let mut compare = |what: String, num: f64, ana: f64| {
        let err = (num - ana).abs();
        let ratio = err / (tol.atol + tol.rtol * num.abs().max(ana.abs()));
        rep.checked += 1;
        rep.max_abs_err = rep.max_abs_err.max(err);
        rep.max_ratio = rep.max_ratio.max(ratio);
        assert!(
            ratio <= 1.0,
            "{name}: {what}: numeric {num:.6e} vs analytic {ana:.6e} (abs err {err:.2e})"
        );
    };

    if check_input {
        assert_eq!(dx.len(), x.len(), "{name}: input gradient length");
        let mut xp = x.to_vec();
        for i in sample(x.len(), 300) {
            let orig = xp[i];
            xp[i] = orig + h;
            let lp = dot(&c, &fwd(layer, &xp));
            xp[i] = orig - h;
            let lm = dot(&c, &fwd(layer, &xp));
            xp[i] = orig;
            let actual_h = ((orig + h) as f64 - (orig - h) as f64) / 2.0;
            compare(
                format!("dx[{i}]"),
                (lp - lm) / (2.0 * actual_h),
                dx[i] as f64,
            );
        }
    }
    for (k, g) in grads.iter().enumerate().take(param_count(layer)) {
        for i in sample(g.len(), 300) {
            let mut orig = 0.0;
            let mut pname = "";
            with_param(layer, k, &mut |p| {
                orig = p.value[i];
                pname = p.name;
                p.value[i] = orig + h;
            });
            let lp = dot(&c, &fwd(layer, x));
            with_param(layer, k, &mut |p| p.value[i] = orig - h);
            let lm = dot(&c, &fwd(layer, x));
            with_param(layer, k, &mut |p| p.value[i] = orig);
            let actual_h = ((orig + h) as f64 - (orig - h) as f64) / 2.0;
            compare(
                format!("{pname}[{i}]"),
                (lp - lm) / (2.0 * actual_h),
                g[i] as f64,
            );
        }
    }
    println!(
        "gradcheck {name:<40} checked {:>4}  max |num-ana| {:.2e}  max err/tol {:.3}",
        rep.checked, rep.max_abs_err, rep.max_ratio
    );
    rep
}

/// A parameterless wrapper so that `gradcheck` can run on operators without `Module`.
pub struct NoParams<T>(pub T);

impl<T> Module for NoParams<T> {
    fn visit_params(&mut self, _f: &mut dyn FnMut(&mut Param)) {}
}
