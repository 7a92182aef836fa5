//! The serial LSTM's kernels: every instruction set gives the scalar path's
//! bits, and the scalar path is the naive formula.

use super::{GLOBAL, Rng, assert_bits, isas};
use crate::{force_isa, serial_adam, serial_dot_cols, serial_matvec_cols, serial_outer_add};

/// Runs all four kernels on fixed random data (sizes that leave SIMD
/// tails): the concatenated outputs.
fn run_all() -> Vec<f32> {
    let mut rng = Rng::new(19);
    let (m, cols) = (4 * 24 + 8, 37);
    let w = rng.vec(m * cols, -1.0, 1.0);
    let x = rng.vec(cols, -1.0, 1.0);
    let mut y = rng.vec(m, -1.0, 1.0);
    serial_matvec_cols(&w, &x, &mut y);
    let mut g = rng.vec(m * cols, -1.0, 1.0);
    serial_outer_add(&mut g, &y, &x);
    let base = rng.vec(cols, -1.0, 1.0);
    let mut d1 = vec![0.0; cols];
    serial_dot_cols(&w, &y, Some(&base), &mut d1);
    let mut d0 = vec![0.0; cols];
    serial_dot_cols(&w, &y, None, &mut d0);
    let n = 1003;
    let mut aw = rng.vec(n, -1.0, 1.0);
    let mut ag = rng.vec(n, -8.0, 8.0);
    let mut am = rng.vec(n, -0.1, 0.1);
    let mut av = rng.vec(n, 0.0, 0.1);
    serial_adam(&mut aw, &mut ag, &mut am, &mut av, 0.003, 4.0);
    [y, g, d1, d0, aw, ag, am, av].concat()
}

#[test]
fn serial_kernels_agree_on_every_isa() {
    let _guard = GLOBAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut results = Vec::new();
    for isa in isas() {
        force_isa(Some(isa)).unwrap();
        results.push(run_all());
    }
    force_isa(None).unwrap();
    for r in &results[1..] {
        assert_bits(r, &results[0], "serial kernels under force_isa");
    }
}

#[test]
fn serial_kernels_match_naive_code() {
    let mut rng = Rng::new(5);
    let (m, cols) = (16, 5);
    let w = rng.vec(m * cols, -1.0, 1.0);
    let x = rng.vec(cols, -1.0, 1.0);
    let mut y = vec![0.5f32; m];
    serial_matvec_cols(&w, &x, &mut y);
    for k in 0..m {
        let mut want = 0.5f32;
        for j in 0..cols {
            want += w[j * m + k] * x[j];
        }
        assert_eq!(y[k].to_bits(), want.to_bits());
    }
    let mut out = vec![0.0; cols];
    serial_dot_cols(&w, &y, None, &mut out);
    for j in 0..cols {
        let want: f64 = (0..m).map(|k| f64::from(w[j * m + k] * y[k])).sum();
        assert!((f64::from(out[j]) - want).abs() < 1e-5);
    }
    let (mut aw, mut ag, mut am, mut av) =
        (vec![1.0f32], vec![10.0f32], vec![0.0f32], vec![0.0f32]);
    serial_adam(&mut aw, &mut ag, &mut am, &mut av, 0.01, 4.0);
    // The gradient clipped to 4: m = 0.4, v = 0.016, w -= 0.01 * 0.4 / (0.1265 + eps).
    assert!((aw[0] - (1.0 - 0.01 * 0.4 / (0.016f32.sqrt() + 1e-6))).abs() < 1e-6);
    assert_eq!(ag[0], 0.0);
}
