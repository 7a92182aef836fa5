//! Golden bits: a hash of every kernel's output on fixed inputs, compared with a
//! constant. It catches what comparing two paths in one binary cannot: a different
//! build (`-Ctarget-cpu=native` vs the baseline), another machine or OS, a compiler
//! upgrade, or a refactoring that changed an operation order. Encoder and decoder must
//! agree on these bits, so a change here is a change of the archive format: update the
//! constant only together with the format version.

use super::{Rng, execs};
use crate::Exec;
use crate::elementwise::{
    Erf, Erfc, Exp, Gelu, GeluGrad, Ln, Sigmoid, Tanh, gelu_backward_exec, map_exec,
};
use crate::matmul::{Layout, matmul_exec};
use crate::reduce::Map;
use crate::rows::{
    layernorm_backward_exec, layernorm_exec, softmax_exec, sum_cols_exec, sum_rows_exec,
};

/// FNV-1a over the bit patterns.
#[derive(Clone, Copy)]
struct Hash(u64);

impl Hash {
    fn add(&mut self, xs: &[f32]) {
        for x in xs {
            for byte in x.to_bits().to_le_bytes() {
                self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
}

fn all_outputs(exec: Exec) -> u64 {
    let mut h = Hash(0xcbf2_9ce4_8422_2325);
    let mut rng = Rng::new(2024);
    // Products: every layout, both modes, awkward and blocked shapes.
    for (m, k, n) in [(1, 16, 16), (7, 33, 70), (37, 300, 129), (64, 512, 64)] {
        let a = rng.vec(m * k, -1.0, 1.0);
        let b = rng.vec(k * n, -1.0, 1.0);
        let c0 = rng.vec(m * n, -1.0, 1.0);
        for layout in [Layout::Nn, Layout::Tn, Layout::Nt] {
            for accumulate in [false, true] {
                let mut c = c0.clone();
                matmul_exec(exec, layout, &a, &b, &mut c, m, k, n, accumulate);
                h.add(&c);
            }
        }
    }
    // Elementwise functions over a wide range.
    let mut x = rng.vec(3000, -20.0, 20.0);
    x.extend(rng.vec(1000, -1.0, 1.0));
    x.extend(rng.vec(1000, 0.0, 100.0));
    fn map<F: Map>(exec: Exec, f: &F, x: &[f32], h: &mut Hash) {
        let mut y = vec![0.0; x.len()];
        map_exec(exec, f, x.as_ptr(), y.as_mut_ptr(), x.len());
        h.add(&y);
    }
    map(exec, &Exp, &x, &mut h);
    map(exec, &Ln, &x, &mut h);
    map(exec, &Tanh, &x, &mut h);
    map(exec, &Sigmoid, &x, &mut h);
    map(exec, &Erf, &x, &mut h);
    map(exec, &Erfc, &x, &mut h);
    map(exec, &Gelu, &x, &mut h);
    map(exec, &GeluGrad, &x, &mut h);
    let dy = rng.vec(x.len(), -1.0, 1.0);
    let mut dx = rng.vec(x.len(), -1.0, 1.0);
    gelu_backward_exec(exec, &x, &dy, &mut dx, true);
    h.add(&dx);
    // Row operations.
    let (rows, n) = (9, 300);
    let x = rng.vec(rows * n, -5.0, 5.0);
    let mut y = vec![0.0; rows * n];
    for log in [false, true] {
        softmax_exec(exec, x.as_ptr(), y.as_mut_ptr(), rows, n, log);
        h.add(&y);
    }
    let g = rng.vec(n, 0.5, 1.5);
    let b = rng.vec(n, -0.5, 0.5);
    let (mut mean, mut rstd) = (vec![0.0; rows], vec![0.0; rows]);
    layernorm_exec(
        exec, &x, &g, &b, &mut y, &mut mean, &mut rstd, rows, n, 1e-5,
    );
    h.add(&y);
    h.add(&mean);
    h.add(&rstd);
    let dy = rng.vec(rows * n, -1.0, 1.0);
    let (mut dx, mut dg, mut db) = (vec![0.0; rows * n], vec![0.0; n], vec![0.0; n]);
    layernorm_backward_exec(
        exec, &dy, &x, &g, &mean, &rstd, &mut dx, &mut dg, &mut db, rows, n, false,
    );
    h.add(&dx);
    h.add(&dg);
    h.add(&db);
    let mut s = vec![0.0; rows];
    sum_rows_exec(exec, &x, &mut s, rows, n);
    h.add(&s);
    let mut s = vec![0.0; n];
    sum_cols_exec(exec, &x, &mut s, rows, n, false);
    h.add(&s);
    h.0
}

/// The hash every machine, build and path must reproduce.
const GOLDEN: u64 = 0xffb2_d8d0_f6da_c6c5;

#[test]
fn golden_bits() {
    let want = all_outputs(super::REF);
    for exec in execs() {
        assert_eq!(
            all_outputs(exec),
            want,
            "{exec:?} differs from the scalar path"
        );
    }
    assert_eq!(
        want, GOLDEN,
        "kernel outputs changed: got {want:#018x}; see the module doc before updating"
    );
}
