//! Row operations: the scalar path against an independent transcription of the
//! documented reduction structure, and every vector path / thread count against it.

use super::{REF, Rng, SIZES, assert_bits, execs};
use crate::rows::{
    layernorm_backward_exec, layernorm_exec, softmax_exec, sum_cols_exec, sum_rows_exec,
};
use crate::{exp, ln};

/// The documented 16-lane structure, written out plainly.
fn lanes16(
    n: usize,
    init: f32,
    op: impl Fn(f32, usize) -> f32,
    combine: fn(f32, f32) -> f32,
) -> f32 {
    let mut acc = [init; 16];
    for i in 0..n {
        acc[i % 16] = op(acc[i % 16], i);
    }
    for w in [8, 4, 2, 1] {
        for q in 0..w {
            acc[q] = combine(acc[q], acc[q + w]);
        }
    }
    acc[0]
}

fn max_x86(a: f32, b: f32) -> f32 {
    if a > b { a } else { b }
}

fn naive_softmax(x: &[f32], rows: usize, n: usize, log: bool) -> Vec<f32> {
    let mut y = vec![0.0; rows * n];
    for r in 0..rows {
        let row = &x[r * n..r * n + n];
        let max = lanes16(n, f32::NEG_INFINITY, |a, i| max_x86(a, row[i]), max_x86);
        if log {
            let sum = lanes16(n, 0.0, |a, i| a + exp(row[i] - max), |a, b| a + b);
            let lse = ln(sum);
            for j in 0..n {
                y[r * n + j] = (row[j] - max) - lse;
            }
        } else {
            let e: Vec<f32> = row.iter().map(|&v| exp(v - max)).collect();
            let sum = lanes16(n, 0.0, |a, i| a + e[i], |a, b| a + b);
            for j in 0..n {
                y[r * n + j] = e[j] / sum;
            }
        }
    }
    y
}

fn shapes() -> Vec<(usize, usize)> {
    let mut v = Vec::new();
    for rows in [0, 1, 3, 17] {
        for n in SIZES {
            v.push((rows, n));
        }
    }
    v.push((64, 1024));
    v.push((40, 4096));
    v
}

#[test]
fn softmax_matches_reference() {
    let mut rng = Rng::new(1);
    for (rows, n) in shapes() {
        let x = rng.vec(rows * n, -30.0, 30.0);
        for log in [false, true] {
            let want = naive_softmax(&x, rows, n, log);
            let mut y = vec![0.0; rows * n];
            softmax_exec(REF, x.as_ptr(), y.as_mut_ptr(), rows, n, log);
            assert_bits(&y, &want, &format!("scalar softmax log={log} {rows}x{n}"));
            for exec in execs() {
                let mut y = vec![0.0; rows * n];
                softmax_exec(exec, x.as_ptr(), y.as_mut_ptr(), rows, n, log);
                assert_bits(&y, &want, &format!("softmax log={log} {exec:?} {rows}x{n}"));
                let mut inplace = x.clone();
                let p = inplace.as_mut_ptr();
                softmax_exec(exec, p, p, rows, n, log);
                assert_bits(&inplace, &want, &format!("softmax in place {exec:?}"));
            }
        }
    }
}

#[test]
fn softmax_values() {
    let x = [1.0f32, 2.0, 3.0];
    let mut y = [0.0; 3];
    softmax_exec(REF, x.as_ptr(), y.as_mut_ptr(), 1, 3, false);
    let e: Vec<f64> = x.iter().map(|&v| (f64::from(v) - 3.0).exp()).collect();
    let s: f64 = e.iter().sum();
    for j in 0..3 {
        assert!((f64::from(y[j]) - e[j] / s).abs() < 1e-7);
    }
    softmax_exec(REF, x.as_ptr(), y.as_mut_ptr(), 1, 3, true);
    for j in 0..3 {
        assert!((f64::from(y[j]) - (e[j] / s).ln()).abs() < 1e-6);
    }
}

struct Ln {
    y: Vec<f32>,
    mean: Vec<f32>,
    rstd: Vec<f32>,
}

fn naive_layernorm(x: &[f32], g: &[f32], b: &[f32], rows: usize, n: usize, eps: f32) -> Ln {
    let mut out = Ln {
        y: vec![0.0; rows * n],
        mean: vec![0.0; rows],
        rstd: vec![0.0; rows],
    };
    for r in 0..rows {
        let row = &x[r * n..r * n + n];
        let mean = lanes16(n, 0.0, |a, i| a + row[i], |a, b| a + b) / n as f32;
        let var = lanes16(
            n,
            0.0,
            |a, i| (row[i] - mean).mul_add(row[i] - mean, a),
            |a, b| a + b,
        ) / n as f32;
        let rstd = 1.0 / (var + eps).sqrt();
        for j in 0..n {
            out.y[r * n + j] = ((row[j] - mean) * rstd).mul_add(g[j], b[j]);
        }
        out.mean[r] = mean;
        out.rstd[r] = rstd;
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn naive_layernorm_backward(
    dy: &[f32],
    x: &[f32],
    g: &[f32],
    mean: &[f32],
    rstd: &[f32],
    dx: &mut [f32],
    dg: &mut [f32],
    db: &mut [f32],
    rows: usize,
    n: usize,
    accumulate: bool,
) {
    for r in 0..rows {
        let o = r * n;
        let xh = |j: usize| (x[o + j] - mean[r]) * rstd[r];
        let a = lanes16(n, 0.0, |acc, j| acc + dy[o + j] * g[j], |a, b| a + b) / n as f32;
        let b = lanes16(
            n,
            0.0,
            |acc, j| (dy[o + j] * g[j]).mul_add(xh(j), acc),
            |a, b| a + b,
        ) / n as f32;
        for j in 0..n {
            let d = (-xh(j)).mul_add(b, dy[o + j] * g[j] - a) * rstd[r];
            dx[o + j] = if accumulate { dx[o + j] + d } else { d };
        }
        for j in 0..n {
            dg[j] = dy[o + j].mul_add(xh(j), dg[j]);
            db[j] += dy[o + j];
        }
    }
}

#[test]
fn layernorm_matches_reference() {
    let mut rng = Rng::new(2);
    for (rows, n) in shapes() {
        let x = rng.vec(rows * n, -3.0, 5.0);
        let g = rng.vec(n, 0.5, 1.5);
        let b = rng.vec(n, -0.5, 0.5);
        let want = naive_layernorm(&x, &g, &b, rows, n, 1e-5);
        let dy = rng.vec(rows * n, -1.0, 1.0);
        let dx0 = rng.vec(rows * n, -1.0, 1.0);
        let dg0 = rng.vec(n, -1.0, 1.0);
        let db0 = rng.vec(n, -1.0, 1.0);
        for exec in std::iter::once(REF).chain(execs()) {
            let (mut y, mut mean, mut rstd) =
                (vec![0.0; rows * n], vec![0.0; rows], vec![0.0; rows]);
            layernorm_exec(
                exec, &x, &g, &b, &mut y, &mut mean, &mut rstd, rows, n, 1e-5,
            );
            if n > 0 {
                assert_bits(&y, &want.y, &format!("layernorm y {exec:?} {rows}x{n}"));
                assert_bits(&mean, &want.mean, "layernorm mean");
                assert_bits(&rstd, &want.rstd, "layernorm rstd");
            }
            for accumulate in [false, true] {
                let (mut wdx, mut wdg, mut wdb) = (dx0.clone(), dg0.clone(), db0.clone());
                let (m, rs) = (&want.mean, &want.rstd);
                naive_layernorm_backward(
                    &dy, &x, &g, m, rs, &mut wdx, &mut wdg, &mut wdb, rows, n, accumulate,
                );
                let (mut dx, mut dg, mut db) = (dx0.clone(), dg0.clone(), db0.clone());
                layernorm_backward_exec(
                    exec, &dy, &x, &g, m, rs, &mut dx, &mut dg, &mut db, rows, n, accumulate,
                );
                let what = format!("layernorm backward acc={accumulate} {exec:?} {rows}x{n}");
                assert_bits(&dx, &wdx, &what);
                assert_bits(&dg, &wdg, &what);
                assert_bits(&db, &wdb, &what);
            }
        }
    }
}

#[test]
fn layernorm_values() {
    let x = [1.0f32, 2.0, 3.0, 4.0];
    let (g, b) = ([1.0f32; 4], [0.0f32; 4]);
    let (mut y, mut mean, mut rstd) = ([0.0; 4], [0.0], [0.0]);
    layernorm_exec(REF, &x, &g, &b, &mut y, &mut mean, &mut rstd, 1, 4, 0.0);
    assert_eq!(mean[0], 2.5);
    let sd = 1.25f64.sqrt();
    for j in 0..4 {
        assert!((f64::from(y[j]) - (f64::from(x[j]) - 2.5) / sd).abs() < 1e-6);
    }
}

#[test]
fn sums_match_reference() {
    let mut rng = Rng::new(3);
    for (rows, n) in shapes() {
        let x = rng.vec(rows * n, -10.0, 10.0);
        let want: Vec<f32> = (0..rows)
            .map(|r| lanes16(n, 0.0, |a, i| a + x[r * n + i], |a, b| a + b))
            .collect();
        let init = rng.vec(n, -1.0, 1.0);
        for exec in std::iter::once(REF).chain(execs()) {
            let mut got = vec![0.0; rows];
            sum_rows_exec(exec, &x, &mut got, rows, n);
            assert_bits(&got, &want, &format!("sum_rows {exec:?} {rows}x{n}"));
            for accumulate in [false, true] {
                let mut want_c = if accumulate {
                    init.clone()
                } else {
                    vec![0.0; n]
                };
                for r in 0..rows {
                    for j in 0..n {
                        want_c[j] += x[r * n + j];
                    }
                }
                let mut got = init.clone();
                sum_cols_exec(exec, &x, &mut got, rows, n, accumulate);
                assert_bits(&got, &want_c, &format!("sum_cols {exec:?} {rows}x{n}"));
            }
        }
    }
}

/// A row of `-0.0` sums to `+0.0` (accumulators start at `+0.0`) on every path.
#[test]
fn signed_zero_sums() {
    for exec in std::iter::once(REF).chain(execs()) {
        for n in [1, 5, 16, 40] {
            let x = vec![-0.0f32; n];
            let mut out = [1.0f32];
            sum_rows_exec(exec, &x, &mut out, 1, n);
            assert_eq!(out[0].to_bits(), 0, "{exec:?} {n}");
        }
    }
}
