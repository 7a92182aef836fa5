//! Elementwise functions: accuracy against `f64` references, special values, and
//! bit-identity of every vector path with the scalar definition.

use super::{REF, Rng, assert_bits, execs};
use crate::elementwise::{
    Erf, Erfc, Exp, Gelu, GeluGrad, Ln, Sigmoid, Tanh, gelu_backward_exec,
    gelu_backward_saved_exec, gelu_saving_exec, map_exec,
};
use crate::reduce::Map;
use crate::*;

/// `erf` in `f64` from the all-positive series `2/sqrt(pi) e^{-x^2} sum 2^n x^{2n+1} /
/// (2n+1)!!` (no cancellation), for `|x| <= 6`.
fn erf64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let ax = x.abs();
    if ax > 6.0 {
        return x.signum();
    }
    let mut term = ax;
    let mut sum = 0.0;
    let mut n = 0.0;
    while term > sum * 1e-18 || n < 5.0 {
        sum += term;
        n += 1.0;
        term *= 2.0 * ax * ax / (2.0 * n + 1.0);
    }
    (2.0 / std::f64::consts::PI.sqrt() * (-ax * ax).exp() * sum).copysign(x)
}

/// `erfc` in `f64`: `1 - erf` below 2, the continued fraction above.
fn erfc64(x: f64) -> f64 {
    if x < 2.0 {
        return 1.0 - erf64(x);
    }
    let mut t = x;
    for n in (1..=400).rev() {
        t = x + f64::from(n) / 2.0 / t;
    }
    (-x * x).exp() / (std::f64::consts::PI.sqrt() * t)
}

fn gelu64(x: f64) -> f64 {
    0.5 * x * erfc64(-x / std::f64::consts::SQRT_2)
}

fn gelu_grad64(x: f64) -> f64 {
    let phi = (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    0.5 * erfc64(-x / std::f64::consts::SQRT_2) + x * phi
}

/// The size of one f32 ulp at `v` (normal range; the subnormal ulp below it).
fn ulp(v: f64) -> f64 {
    let a = v.abs().max(f64::from(f32::MIN_POSITIVE));
    2f64.powi(a.log2().floor() as i32 - 23)
}

/// Max error of `f` against `reference` over `xs`, in ulps of the reference, ignoring
/// points where the reference is below `abs_floor` if the error there is below it.
fn max_ulps(f: fn(f32) -> f32, reference: fn(f64) -> f64, xs: &[f32], abs_floor: f64) -> f64 {
    let mut worst: f64 = 0.0;
    for &x in xs {
        let want = reference(f64::from(x));
        let got = f64::from(f(x));
        if want.is_nan() || !want.is_finite() {
            continue;
        }
        let err = (got - want).abs();
        if err <= abs_floor {
            continue;
        }
        let u = err / ulp(want);
        assert!(u.is_finite(), "x = {x:e}: got {got:e} want {want:e}");
        worst = worst.max(u);
    }
    worst
}

fn sweep(lo: f32, hi: f32, n: usize) -> Vec<f32> {
    (0..=n)
        .map(|i| lo + (hi - lo) * (i as f32 / n as f32))
        .collect()
}

#[test]
fn exp_accuracy() {
    let xs = sweep(-87.33, 88.72, 400_000);
    let e = max_ulps(exp, f64::exp, &xs, 0.0);
    assert!(e <= 1.0, "exp: {e} ulp");
    let small = sweep(-1e-3, 1e-3, 10_000);
    assert!(max_ulps(exp, f64::exp, &small, 0.0) <= 1.0);
}

#[test]
fn ln_accuracy() {
    let mut xs = sweep(1e-6, 4.0, 400_000);
    xs.extend(sweep(0.9, 1.1, 100_000));
    let mut rng = Rng::new(1);
    xs.extend((0..200_000).map(|_| f32::from_bits((rng.next_u64() as u32) & 0x7f7f_ffff)));
    let e = max_ulps(ln, f64::ln, &xs, 0.0);
    assert!(e <= 1.0, "ln: {e} ulp");
}

#[test]
fn tanh_sigmoid_accuracy() {
    let xs = sweep(-12.0, 12.0, 400_000);
    let e = max_ulps(tanh, f64::tanh, &xs, 0.0);
    assert!(e <= 1.5, "tanh: {e} ulp");
    let tiny = sweep(-1e-3, 1e-3, 10_000);
    assert!(max_ulps(tanh, f64::tanh, &tiny, 0.0) <= 1.5);
    let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
    let xs = sweep(-87.33, 30.0, 400_000);
    let e = max_ulps(sigmoid, sig, &xs, 0.0);
    assert!(e <= 2.0, "sigmoid: {e} ulp");
}

#[test]
fn erf_accuracy() {
    let xs = sweep(-5.0, 5.0, 400_000);
    let e = max_ulps(erf, erf64, &xs, 0.0);
    assert!(e <= 1.0, "erf: {e} ulp");
    let tiny = sweep(-1e-4, 1e-4, 10_000);
    assert!(max_ulps(erf, erf64, &tiny, 0.0) <= 1.0);
    let xs = sweep(-4.0, 9.19, 400_000);
    let e = max_ulps(erfc, erfc64, &xs, 0.0);
    assert!(e <= 4.5, "erfc: {e} ulp");
}

#[test]
fn gelu_accuracy() {
    let xs = sweep(-13.0, 13.0, 400_000);
    let e = max_ulps(gelu, gelu64, &xs, 1e-37);
    assert!(e <= 5.5, "gelu: {e} ulp");
    let mut worst: f64 = 0.0;
    for &x in &sweep(-20.0, 20.0, 400_000) {
        worst = worst.max((f64::from(gelu_grad(x)) - gelu_grad64(f64::from(x))).abs());
    }
    assert!(worst <= 2e-7, "gelu_grad: {worst:e} absolute");
}

#[test]
fn known_values() {
    assert_eq!(exp(0.0), 1.0);
    assert_eq!(exp(1.0), std::f32::consts::E);
    assert_eq!(ln(1.0), 0.0);
    assert_eq!(ln(std::f32::consts::E), 1.0);
    assert_eq!(ln(2.0), std::f32::consts::LN_2);
    assert_eq!(tanh(0.0), 0.0);
    assert_eq!(sigmoid(0.0), 0.5);
    assert_eq!(erf(0.0), 0.0);
    assert_eq!(erfc(0.0), 1.0);
    assert_eq!(gelu(0.0), 0.0);
    assert_eq!(gelu_grad(0.0), 0.5);
    assert!((gelu(1.0) - 0.841_344_7).abs() <= 1e-7);
    assert!((gelu(-1.0) + 0.158_655_26).abs() <= 1e-7);
    assert!((erf(0.5) - 0.520_499_9).abs() <= 1e-7);
}

#[test]
fn special_values() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    assert_eq!(exp(inf), inf);
    assert_eq!(exp(-inf), 0.0);
    assert_eq!(exp(89.0), inf);
    assert_eq!(exp(-87.34), 0.0);
    assert!(exp(-87.33) >= f32::MIN_POSITIVE);
    assert!(exp(88.72) < inf && exp(88.73) == inf);
    assert_eq!(ln(0.0), -inf);
    assert_eq!(ln(-0.0), -inf);
    assert!(ln(-1.0).is_nan());
    assert_eq!(ln(inf), inf);
    assert!((ln(f32::MIN_POSITIVE / 4.0) - (-88.722_84)).abs() < 1e-5);
    assert_eq!(ln(f32::from_bits(1)), -103.278_93);
    assert_eq!(ln(f32::MAX), 88.722_84);
    assert_eq!(tanh(inf), 1.0);
    assert_eq!(tanh(-inf), -1.0);
    assert_eq!(tanh(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(tanh(1e-30), 1e-30);
    assert_eq!(sigmoid(inf), 1.0);
    assert_eq!(sigmoid(-inf), 0.0);
    assert_eq!(sigmoid(-88.0), 0.0);
    assert_eq!(erf(inf), 1.0);
    assert_eq!(erf(-inf), -1.0);
    assert!((erf(1e-30) / 1e-30 - std::f32::consts::FRAC_2_SQRT_PI).abs() < 1e-6);
    assert_eq!(erfc(inf), 0.0);
    assert_eq!(erfc(-inf), 2.0);
    assert_eq!(gelu(inf), inf);
    assert_eq!(gelu(-inf).to_bits(), (-0.0f32).to_bits());
    assert_eq!(gelu_grad(inf), 1.0);
    assert_eq!(gelu_grad(-inf), 0.0);
    for f in [exp, ln, tanh, sigmoid, erf, erfc, gelu, gelu_grad] {
        assert!(f(nan).is_nan());
        assert!(f(-nan).is_nan());
    }
}

/// No function returns a subnormal for a normal (or zero, or infinite) input.
#[test]
fn no_subnormal_outputs() {
    let mut rng = Rng::new(7);
    let mut xs: Vec<f32> = (0..300_000)
        .map(|_| f32::from_bits(rng.next_u64() as u32))
        .collect();
    xs.extend(sweep(-100.0, 100.0, 200_000));
    for (name, f) in [
        ("exp", exp as fn(f32) -> f32),
        ("ln", ln),
        ("sigmoid", sigmoid),
        ("erfc", erfc),
        ("gelu", gelu),
        ("gelu_grad", gelu_grad),
    ] {
        for &x in &xs {
            if x.is_subnormal() {
                continue;
            }
            assert!(!f(x).is_subnormal(), "{name}({x:e}) = {:e}", f(x));
        }
    }
}

/// Inputs for bit-identity: random values at several scales, random bit patterns, and
/// every special or threshold value the functions branch on.
fn probe_inputs() -> Vec<f32> {
    let mut rng = Rng::new(42);
    let mut xs = Vec::new();
    for scale in [0.1f32, 1.0, 4.0, 20.0, 100.0] {
        xs.extend(rng.vec(2000, -scale, scale));
    }
    xs.extend((0..5000).map(|_| f32::from_bits(rng.next_u64() as u32)));
    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::MAX,
        f32::MIN,
        1e-30,
        -87.33,
        -87.34,
        88.72,
        88.73,
        88.8,
        0.625,
        -0.625,
        1.0,
        -1.0,
        9.19,
        9.2,
        -13.0,
        14.0,
        -14.0,
        20.0,
        -20.0,
    ];
    for s in specials {
        xs.push(s);
        xs.push(f32::from_bits(s.to_bits().wrapping_add(1)));
        xs.push(f32::from_bits(s.to_bits().wrapping_sub(1)));
    }
    xs
}

fn check_map<F: Map>(name: &str, f: &F, scalar: fn(f32) -> f32) {
    let xs = probe_inputs();
    // The generic code at `Scalar` is the public scalar function.
    let want: Vec<f32> = xs.iter().map(|&x| scalar(x)).collect();
    let mut reference = vec![0.0; xs.len()];
    map_exec(REF, f, xs.as_ptr(), reference.as_mut_ptr(), xs.len());
    assert_bits(&reference, &want, name);
    for exec in execs() {
        for len in super::SIZES.into_iter().chain([xs.len()]) {
            let mut got = vec![0.0; len];
            map_exec(exec, f, xs.as_ptr(), got.as_mut_ptr(), len);
            assert_bits(&got, &want[..len], &format!("{name} {exec:?} len {len}"));
            // In place.
            let mut buf = xs[..len].to_vec();
            let p = buf.as_mut_ptr();
            map_exec(exec, f, p, p, len);
            assert_bits(&buf, &want[..len], &format!("{name} in place {exec:?}"));
        }
    }
}

#[test]
fn vector_paths_match_scalar() {
    check_map("exp", &Exp, exp);
    check_map("ln", &Ln, ln);
    check_map("tanh", &Tanh, tanh);
    check_map("sigmoid", &Sigmoid, sigmoid);
    check_map("erf", &Erf, erf);
    check_map("erfc", &Erfc, erfc);
    check_map("gelu", &Gelu, gelu);
    check_map("gelu_grad", &GeluGrad, gelu_grad);
}

#[test]
fn long_slices_split_between_threads() {
    let mut rng = Rng::new(3);
    let xs = rng.vec(100_003, -10.0, 10.0);
    let want: Vec<f32> = xs.iter().map(|&x| gelu(x)).collect();
    for exec in execs() {
        let mut got = vec![0.0; xs.len()];
        map_exec(exec, &Gelu, xs.as_ptr(), got.as_mut_ptr(), xs.len());
        assert_bits(&got, &want, &format!("gelu {exec:?}"));
    }
}

#[test]
fn gelu_backward_matches_scalar() {
    let mut rng = Rng::new(5);
    for len in super::SIZES.into_iter().chain([40_000]) {
        let x = rng.vec(len, -6.0, 6.0);
        let dy = rng.vec(len, -1.0, 1.0);
        let old = rng.vec(len, -1.0, 1.0);
        for accumulate in [false, true] {
            let want: Vec<f32> = (0..len)
                .map(|i| {
                    let g = dy[i] * gelu_grad(x[i]);
                    if accumulate { old[i] + g } else { g }
                })
                .collect();
            for exec in execs() {
                let mut dx = old.clone();
                gelu_backward_exec(exec, &x, &dy, &mut dx, accumulate);
                assert_bits(&dx, &want, &format!("gelu_backward {exec:?} {len}"));
            }
        }
    }
}

/// The saving forward gives `gelu`'s bits, and the backward from the saved factor gives
/// `gelu_backward`'s bits, on every path, for special values and random bit patterns.
#[test]
fn gelu_saved_factor_matches_recomputation() {
    let mut rng = Rng::new(8);
    let mut xs = probe_inputs();
    xs.extend(rng.vec(40_000, -8.0, 8.0));
    let n = xs.len();
    let want_y: Vec<f32> = xs.iter().map(|&x| gelu(x)).collect();
    let dy = rng.vec(n, -1.0, 1.0);
    let old = rng.vec(n, -1.0, 1.0);
    for exec in execs() {
        for len in super::SIZES.into_iter().chain([n]) {
            let x = &xs[..len];
            let (mut y, mut h) = (vec![0.0; len], vec![0.0; len]);
            gelu_saving_exec(exec, x, &mut y, &mut h);
            assert_bits(&y, &want_y[..len], &format!("gelu saving {exec:?} {len}"));
            for accumulate in [false, true] {
                let mut want = old[..len].to_vec();
                gelu_backward_exec(REF, x, &dy[..len], &mut want, accumulate);
                let mut got = old[..len].to_vec();
                gelu_backward_saved_exec(exec, x, &h, &dy[..len], &mut got, accumulate);
                assert_bits(&got, &want, &format!("gelu backward saved {exec:?} {len}"));
            }
        }
    }
}

/// The SSE2 path emulates FMA with `f64` round-to-odd; check it against `mul_add` on
/// hard cases (ties after the `f64` sum, cancellation, huge and tiny exponents).
#[cfg(target_arch = "x86_64")]
#[test]
fn sse2_fma_emulation_is_exact() {
    use crate::simd::x86::run_sse2;
    use crate::simd::{Scalar, Simd};
    let mut rng = Rng::new(11);
    let mut triples = Vec::new();
    for _ in 0..200_000 {
        let r = |rng: &mut Rng| f32::from_bits(rng.next_u64() as u32);
        triples.push((r(&mut rng), r(&mut rng), r(&mut rng)));
        let (a, b) = (rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0));
        // c close to -a*b: heavy cancellation.
        let c = -(a * b) * (1.0 + rng.uniform(-1e-6, 1e-6));
        triples.push((a, b, c));
        // c tiny against a*b: the f64 sum rounds, often near an f32 tie.
        let t = f32::from_bits((rng.next_u64() as u32) & 0x807f_ffff | 0x3380_0000);
        triples.push((a, b, t));
        triples.push((a * 1e-20, b * 1e-20, t * 1e-38));
    }
    run_sse2(|s| {
        for &(a, b, c) in &triples {
            let want = a.mul_add(b, c);
            let mut out = [0.0f32; 4];
            // SAFETY: `out` holds 4 floats.
            unsafe { s.store(out.as_mut_ptr(), s.fma(s.splat(a), s.splat(b), s.splat(c))) };
            if want.is_nan() {
                assert!(out[0].is_nan());
            } else {
                assert_eq!(out[0].to_bits(), want.to_bits(), "fma({a:e}, {b:e}, {c:e})");
            }
            assert_eq!(out[0].to_bits(), out[3].to_bits());
        }
    });
    // Scalar is the plain `mul_add`.
    assert_eq!(Scalar.fma(2.0, 3.0, 1.0), 7.0);
}
