//! Helpers shared by the backbone tests: a finite-difference gradient check for any
//! backbone, and bit-level logits.

#![allow(dead_code)]

use sep_model::{Backbone, BackboneConfig, Param};
use sep_nn::CrossEntropy;

/// Targets of the checked rows (one per row).
pub const TARGETS: [u8; 3] = [7, 200, 65];

/// A deterministic context for `rows` rows of `l` bytes.
pub fn context(rows: usize, l: usize) -> Vec<u8> {
    (0..rows * l).map(|i| (i * 37 % 251) as u8).collect()
}

fn loss(model: &mut dyn Backbone, ctx: &[u8], ce: &mut CrossEntropy) -> f64 {
    model.reset();
    let logits = model.forward(ctx, TARGETS.len()).to_vec();
    f64::from(ce.forward(&logits, &TARGETS))
}

fn set(model: &mut dyn Backbone, tensor: usize, f: &mut dyn FnMut(&mut Param)) {
    let mut k = 0;
    model.visit_params(&mut |p| {
        if k == tensor {
            f(p);
        }
        k += 1;
    });
}

/// Checks the analytic gradient of a sample of every tensor's elements against central
/// differences, on `TARGETS.len()` rows of a model built for one more stream (so that
/// per-stream state of an unused stream is exercised too).
///
/// Every parameter is redrawn `N(0, 0.5^2)` first (well-conditioned LayerNorms), then
/// `prepare` may adjust them (e.g. keep hard-gate scores away from the threshold).
/// Returns the number of elements checked.
pub fn gradient_check(
    config: &BackboneConfig,
    prepare: &mut dyn FnMut(&mut dyn Backbone),
) -> usize {
    let rows = TARGETS.len();
    let mut model = config.build(rows + 1, 11);
    let mut rng = sep_nn::Rng::new(3);
    model.visit_params(&mut |p| sep_nn::init::normal(&mut p.value, &mut rng, 0.0, 0.5));
    prepare(model.as_mut());
    let ctx = context(rows, model.context());
    let mut ce = CrossEntropy::new(256, rows);
    loss(model.as_mut(), &ctx, &mut ce);
    let d = ce.backward().to_vec();
    model.backward(&d);
    let mut grads: Vec<Vec<f32>> = Vec::new();
    model.visit_params(&mut |p| grads.push(p.grad.clone()));
    let mut checked = 0;
    for (t, g) in grads.iter().enumerate() {
        let picks: Vec<usize> = (0..g.len()).step_by((g.len() / 7).max(1)).collect();
        for &i in &picks {
            let eps = 2e-3f32;
            let mut value = 0.0;
            set(model.as_mut(), t, &mut |p| {
                value = p.value[i];
                p.value[i] = value + eps;
            });
            let up = loss(model.as_mut(), &ctx, &mut ce);
            set(model.as_mut(), t, &mut |p| p.value[i] = value - eps);
            let down = loss(model.as_mut(), &ctx, &mut ce);
            set(model.as_mut(), t, &mut |p| p.value[i] = value);
            let numeric = (up - down) / (2.0 * f64::from(eps));
            let analytic = f64::from(g[i]);
            let tol = 2e-3 + 5e-2 * numeric.abs().max(analytic.abs());
            assert!(
                (numeric - analytic).abs() <= tol,
                "{}: tensor {t} element {i}: analytic {analytic:e}, numeric {numeric:e}",
                config.describe()
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} elements checked");
    checked
}

/// The bits of a forward pass's logits.
pub fn logit_bits(model: &mut dyn Backbone, ctx: &[u8], rows: usize) -> Vec<u32> {
    model
        .forward(ctx, rows)
        .iter()
        .map(|x| x.to_bits())
        .collect()
}

/// Runs `steps` online training steps (forward, cross-entropy, backward, Adam) on a
/// byte sequence cut into `rows` streams, returning the bits of every step's logits.
pub fn train(model: &mut dyn Backbone, rows: usize, steps: usize, seed: u64) -> Vec<Vec<u32>> {
    struct AsModule<'a>(&'a mut dyn Backbone);
    impl sep_nn::Module for AsModule<'_> {
        fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
            self.0.visit_params(f);
        }
    }
    let l = model.context();
    let data: Vec<u8> = (0..rows * (steps + l + 1))
        .map(|i| ((i as u64 * 2_654_435_761 + seed) >> 7) as u8 % 17 + b'a')
        .collect();
    let mut adam = sep_nn::Adam::new(sep_nn::AdamConfig::default());
    let mut ce = CrossEntropy::new(256, rows);
    let mut out = Vec::new();
    let len = steps + l + 1;
    for t in 0..steps {
        let mut ctx = Vec::with_capacity(rows * l);
        let mut targets = Vec::with_capacity(rows);
        for r in 0..rows {
            let s = &data[r * len + t..];
            ctx.extend_from_slice(&s[..l]);
            targets.push(s[l]);
        }
        let logits = model.forward(&ctx, rows);
        out.push(logits.iter().map(|x| x.to_bits()).collect());
        ce.forward(logits, &targets);
        let d = ce.backward().to_vec();
        model.backward(&d);
        adam.step(&mut AsModule(model));
    }
    out
}
