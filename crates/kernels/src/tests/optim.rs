//! The Adam kernel against a naive transcription of its documented order (the loop
//! `sep-nn` used before the kernel existed), on every instruction set and thread
//! count, with and without weight decay, plus a pinned hash; and the public
//! parallel-for.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{REF, Rng, assert_bits, execs};
use crate::optim::adam_exec;
use crate::*;

/// The scalar loop of `sep-nn`'s Adam before the kernel (zipped iterators, plain IEEE
/// operations): the definition the kernel must reproduce bit for bit.
fn naive_adam(p: &mut [f32], g: &mut [f32], m: &mut [f32], v: &mut [f32], s: &AdamScalars) {
    let iter = p
        .iter_mut()
        .zip(g.iter_mut())
        .zip(m.iter_mut())
        .zip(v.iter_mut());
    for (((p, g), m), v) in iter {
        let gd = if s.weight_decay != 0.0 {
            *g + s.weight_decay * *p
        } else {
            *g
        };
        *m = s.beta1 * *m + s.one_minus_beta1 * gd;
        *v = s.beta2 * *v + s.one_minus_beta2 * gd * gd;
        *p -= s.step_size * (*m / (v.sqrt() / s.bc2_sqrt + s.eps));
        *g = 0.0;
    }
}

/// The scalars of step `t` for `lr`, betas `b1`, `b2`, `eps`, `wd`, as `sep-nn` computes
/// them (in `f64`, rounded once).
fn scalars(t: i32, lr: f64, b1: f64, b2: f64, eps: f64, wd: f64) -> AdamScalars {
    let bc1 = 1.0 - b1.powi(t);
    let bc2 = 1.0 - b2.powi(t);
    AdamScalars {
        beta1: b1 as f32,
        beta2: b2 as f32,
        one_minus_beta1: (1.0 - b1) as f32,
        one_minus_beta2: (1.0 - b2) as f32,
        step_size: (lr / bc1) as f32,
        bc2_sqrt: bc2.sqrt() as f32,
        eps: eps as f32,
        weight_decay: wd as f32,
    }
}

/// Parameters, gradients and moments with awkward values: tiny and huge gradients,
/// zeros of both signs, values that make `v` underflow to subnormals.
fn state(rng: &mut Rng, n: usize) -> [Vec<f32>; 4] {
    let p = rng.vec(n, -2.0, 2.0);
    let mut g = rng.vec(n, -1.0, 1.0);
    for (i, x) in g.iter_mut().enumerate() {
        match i % 11 {
            3 => *x *= 1e-20,
            5 => *x = -0.0,
            7 => *x = 0.0,
            9 => *x *= 1e6,
            _ => {}
        }
    }
    let m = rng.vec(n, -0.1, 0.1);
    let v = rng.vec(n, 0.0, 0.01);
    [p, g, m, v]
}

/// Runs `steps` updates of `n` elements on `exec`, with fresh gradients each step.
fn run(exec: Option<Exec>, n: usize, wd: f64, steps: i32) -> [Vec<f32>; 4] {
    let mut rng = Rng::new(77 + n as u64);
    let [mut p, mut g, mut m, mut v] = state(&mut rng, n);
    for t in 1..=steps {
        let s = scalars(t, 1e-3, 0.9, 0.999, 1e-8, wd);
        match exec {
            Some(e) => adam_exec(e, &mut p, &mut g, &mut m, &mut v, &s),
            None => naive_adam(&mut p, &mut g, &mut m, &mut v, &s),
        }
        assert!(g.iter().all(|&x| x.to_bits() == 0), "gradient consumed");
        g = state(&mut rng, n)[1].clone();
    }
    [p, g, m, v]
}

const LENS: [usize; 8] = [0, 1, 15, 16, 17, 1000, (1 << 14) + 37, (1 << 17) + 37];

#[test]
fn adam_scalar_matches_naive_transcription() {
    for wd in [0.0, 1e-2] {
        for n in LENS {
            let want = run(None, n, wd, 3);
            let got = run(Some(REF), n, wd, 3);
            for (g, w) in got.iter().zip(&want) {
                assert_bits(g, w, &format!("adam scalar n={n} wd={wd}"));
            }
        }
    }
}

#[test]
fn adam_every_path_matches_scalar() {
    for wd in [0.0, 1e-2] {
        for n in LENS {
            let want = run(Some(REF), n, wd, 3);
            for exec in execs() {
                let got = run(Some(exec), n, wd, 3);
                for (g, w) in got.iter().zip(&want) {
                    assert_bits(g, w, &format!("adam {exec:?} n={n} wd={wd}"));
                }
            }
        }
    }
}

#[test]
fn adam_special_values() {
    // Infinite and NaN gradients give NaN-ness in the same places on every path.
    let n = 64;
    let mut rng = Rng::new(5);
    let [p0, mut g0, m0, v0] = state(&mut rng, n);
    g0[3] = f32::INFINITY;
    g0[20] = f32::NAN;
    g0[33] = f32::NEG_INFINITY;
    let s = scalars(1, 1e-3, 0.9, 0.999, 1e-8, 0.0);
    let mut results = Vec::new();
    for exec in execs() {
        let (mut p, mut g, mut m, mut v) = (p0.clone(), g0.clone(), m0.clone(), v0.clone());
        adam_exec(exec, &mut p, &mut g, &mut m, &mut v, &s);
        results.push(p);
    }
    for r in &results {
        for (a, b) in r.iter().zip(&results[0]) {
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
        }
    }
}

/// Pinned bits of the Adam kernel (a format constant, like `golden::GOLDEN`).
const ADAM_GOLDEN: u64 = 0x03f6_37f5_7603_1aaf;

#[test]
fn adam_golden_bits() {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for wd in [0.0, 1e-7] {
        for x in run(Some(Exec::current()), 5000, wd, 4) {
            for b in x.iter().flat_map(|x| x.to_bits().to_le_bytes()) {
                h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    assert_eq!(h, ADAM_GOLDEN, "Adam kernel bits changed: {h:#018x}");
}

#[test]
fn for_each_chunk_mut_covers_every_element_once() {
    for (len, chunk) in [
        (0, 4),
        (1, 4),
        (4, 4),
        (5, 4),
        (1000, 7),
        (100_000, 1 << 12),
    ] {
        let mut a = vec![0u32; len];
        let mut b = vec![0u32; len];
        let calls = AtomicUsize::new(0);
        for_each_chunk_mut([&mut a[..], &mut b[..]], chunk, |off, [a, b]| {
            calls.fetch_add(1, Ordering::Relaxed);
            assert!(a.len() == b.len() && a.len() <= chunk && off % chunk == 0);
            for (i, (x, y)) in a.iter_mut().zip(b.iter_mut()).enumerate() {
                *x += (off + i) as u32;
                *y += 1;
            }
        });
        assert_eq!(calls.into_inner(), len.div_ceil(chunk));
        assert!(a.iter().enumerate().all(|(i, &x)| x == i as u32));
        assert!(b.iter().all(|&y| y == 1));
    }
}

#[test]
fn for_each_chunk_mut_reports_a_panic() {
    let mut a = vec![0.0f32; 1 << 16];
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        for_each_chunk_mut([&mut a[..]], 1 << 12, |off, _| assert!(off != 1 << 14));
    }));
    assert!(r.is_err());
}
