//! Matrix products in the three layouts that training needs.
//!
//! All matrices are dense, row-major `f32` slices. Contract for every output
//! element: `acc = if accumulate { c[i,j] } else { 0.0 }`, then for `p` in
//! `0..k`, in order, `acc = a(i,p).mul_add(b(p,j), acc)`; finally `c[i,j] = acc`.

use crate::pool::run_parts;
use crate::{Exec, SendPtr};

/// Which operand is stored transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `A[m x k] * B[k x n]`.
    Nn,
    /// `A^T * B`, `A` stored `[k x m]`.
    Tn,
    /// `A * B^T`, `B` stored `[n x k]`.
    Nt,
}

/// `C[m x n] (+)= A[m x k] * B[k x n]`.
///
/// # Panics
/// If a slice is shorter than its shape.
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize, accumulate: bool) {
    check("matmul", a.len(), b.len(), c.len(), m, k, n);
    matmul_exec(Exec::current(), Layout::Nn, a, b, c, m, k, n, accumulate);
}

/// `C[m x n] (+)= A^T * B` where `A` is stored `[k x m]` and `B` is `[k x n]`.
///
/// # Panics
/// If a slice is shorter than its shape.
pub fn matmul_tn(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    check("matmul_tn", a.len(), b.len(), c.len(), m, k, n);
    matmul_exec(Exec::current(), Layout::Tn, a, b, c, m, k, n, accumulate);
}

/// `C[m x n] (+)= A * B^T` where `A` is `[m x k]` and `B` is stored `[n x k]`.
///
/// # Panics
/// If a slice is shorter than its shape.
pub fn matmul_nt(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    check("matmul_nt", a.len(), b.len(), c.len(), m, k, n);
    matmul_exec(Exec::current(), Layout::Nt, a, b, c, m, k, n, accumulate);
}

fn check(name: &str, la: usize, lb: usize, lc: usize, m: usize, k: usize, n: usize) {
    let fits = |len: usize, r: usize, c: usize| r.checked_mul(c).is_some_and(|rc| len >= rc);
    assert!(
        fits(la, m, k) && fits(lb, k, n) && fits(lc, m, n),
        "{name}: slice too short for m={m} k={k} n={n} (a: {la}, b: {lb}, c: {lc})"
    );
}

/// Runs a product on `exec` (lengths already checked).
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul_exec(
    exec: Exec,
    layout: Layout,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    let cp = SendPtr(c.as_mut_ptr());
    let parts = if m * n * k >= 1 << 20 {
        m.min(exec.threads)
    } else {
        1
    };
    let per = m.div_ceil(parts.max(1));
    run_parts(parts, exec.threads, &|part| {
        for i in part * per..m.min(part * per + per) {
            for j in 0..n {
                // SAFETY: i < m, j < n, rows are disjoint per part and c holds m * n.
                let cij = unsafe { &mut *cp.get().add(i * n + j) };
                let mut acc = if accumulate { *cij } else { 0.0 };
                for p in 0..k {
                    let (aip, bpj) = match layout {
                        Layout::Nn => (a[i * k + p], b[p * n + j]),
                        Layout::Tn => (a[p * m + i], b[p * n + j]),
                        Layout::Nt => (a[i * k + p], b[j * k + p]),
                    };
                    acc = aip.mul_add(bpj, acc);
                }
                *cij = acc;
            }
        }
    });
}
