//! Matrix products in the three layouts that training needs.
//!
//! All matrices are dense, row-major `f32` slices. Contract for every output
//! element: `acc = if accumulate { c[i,j] } else { 0.0 }`, then for `p` in
//! `0..k`, in order, `acc = a(i,p).mul_add(b(p,j), acc)`; finally `c[i,j] = acc`.

/// `C[m x n] (+)= A[m x k] * B[k x n]`.
pub fn matmul(a: &[f32], b: &[f32], c: &mut [f32], m: usize, k: usize, n: usize, accumulate: bool) {
    assert!(
        a.len() >= m * k && b.len() >= k * n && c.len() >= m * n,
        "matmul: slice too short"
    );
    for i in 0..m {
        for j in 0..n {
            let mut acc = if accumulate { c[i * n + j] } else { 0.0 };
            for p in 0..k {
                acc = a[i * k + p].mul_add(b[p * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
}

/// `C[m x n] (+)= A^T * B` where `A` is stored `[k x m]` and `B` is `[k x n]`.
pub fn matmul_tn(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    assert!(
        a.len() >= k * m && b.len() >= k * n && c.len() >= m * n,
        "matmul_tn: slice too short"
    );
    for i in 0..m {
        for j in 0..n {
            let mut acc = if accumulate { c[i * n + j] } else { 0.0 };
            for p in 0..k {
                acc = a[p * m + i].mul_add(b[p * n + j], acc);
            }
            c[i * n + j] = acc;
        }
    }
}

/// `C[m x n] (+)= A * B^T` where `A` is `[m x k]` and `B` is stored `[n x k]`.
pub fn matmul_nt(
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
    m: usize,
    k: usize,
    n: usize,
    accumulate: bool,
) {
    assert!(
        a.len() >= m * k && b.len() >= n * k && c.len() >= m * n,
        "matmul_nt: slice too short"
    );
    for i in 0..m {
        for j in 0..n {
            let mut acc = if accumulate { c[i * n + j] } else { 0.0 };
            for p in 0..k {
                acc = a[i * k + p].mul_add(b[j * k + p], acc);
            }
            c[i * n + j] = acc;
        }
    }
}
