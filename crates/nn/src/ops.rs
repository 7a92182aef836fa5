//! Glue between layers: residual adds, scaling, column blocks, transposes.
//!
//! All buffers are flat row-major `f32` slices, so a reshape that keeps the element
//! order (`[batch x tokens x d]` seen as `[batch*tokens x d]`, or `[batch x 16 x 16]` as
//! `[batch x 256]`) is free: pass the same slice with a different width. The functions
//! here cover what is not free. Each one is elementwise or a fixed-order sum, so its bits
//! do not depend on the CPU or thread count. None allocates.
//!
//! Backward rules, for composing by hand:
//!
//! | forward | backward |
//! |---|---|
//! | [`add`]: `y = a + b` | `da = dy`, `db = dy` |
//! | [`average`]: `y = (a + b) * 0.5` | `da = db = dy * 0.5` ([`scale`]) |
//! | [`scale`]: `y = s * x` | `dx = s * dy` |
//! | [`mul`]: `y = a * b` | `da = dy * b`, `db = dy * a` ([`mul`] again) |
//! | [`copy_columns`] (gather a column block) | [`add_columns`] the gradient back |
//! | [`transpose`] `[r x c] -> [c x r]` | [`transpose`] `[c x r] -> [r x c]` |
//!
//! ```
//! use sep_nn::ops;
//! let a = [1.0f32, 2.0];
//! let b = [3.0f32, 4.0];
//! let mut y = [0.0f32; 2];
//! ops::average(&a, &b, &mut y);
//! assert_eq!(y, [2.0, 3.0]);
//! ```

/// `out = a + b`, elementwise.
pub fn add(a: &[f32], b: &[f32], out: &mut [f32]) {
    assert!(
        a.len() == b.len() && a.len() == out.len(),
        "ops::add: lengths differ"
    );
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = x + y;
    }
}

/// `acc += x`, elementwise (a residual gradient joining the main path).
pub fn add_assign(acc: &mut [f32], x: &[f32]) {
    assert_eq!(acc.len(), x.len(), "ops::add_assign: lengths differ");
    for (a, &v) in acc.iter_mut().zip(x) {
        *a += v;
    }
}

/// `out = (a + b) * 0.5`, elementwise: PAC's `(skip + y) / 2` residual (halving is exact,
/// so this equals `(a + b) / 2` bit for bit).
pub fn average(a: &[f32], b: &[f32], out: &mut [f32]) {
    assert!(
        a.len() == b.len() && a.len() == out.len(),
        "ops::average: lengths differ"
    );
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = (x + y) * 0.5;
    }
}

/// `out = a * b`, elementwise (a gate, e.g. a sigmoid mask over patches).
pub fn mul(a: &[f32], b: &[f32], out: &mut [f32]) {
    assert!(
        a.len() == b.len() && a.len() == out.len(),
        "ops::mul: lengths differ"
    );
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = x * y;
    }
}

/// `out = s * x`, elementwise.
pub fn scale(x: &[f32], s: f32, out: &mut [f32]) {
    assert_eq!(x.len(), out.len(), "ops::scale: lengths differ");
    for (o, &v) in out.iter_mut().zip(x) {
        *o = s * v;
    }
}

/// `x *= s`, elementwise.
pub fn scale_in_place(x: &mut [f32], s: f32) {
    for v in x {
        *v *= s;
    }
}

/// Adds the column sums of `x = [rows x cols]` into `acc = [cols]`:
/// `acc[j] = ((acc[j] + x[0,j]) + x[1,j]) + ...`, rows in order (a bias gradient;
/// [`sep_kernels::sum_cols`] accumulating).
pub fn accumulate_column_sums(x: &[f32], cols: usize, acc: &mut [f32]) {
    assert!(
        acc.len() == cols && x.len().is_multiple_of(cols),
        "ops::accumulate_column_sums: shape mismatch"
    );
    sep_kernels::sum_cols(x, acc, x.len() / cols, cols, true);
}

/// Copies a block of `width` columns from each of `rows` rows:
/// `dst[r, dst_col + i] = src[r, src_col + i]` for `i < width`, where `src` rows are
/// `src_stride` wide and `dst` rows `dst_stride` wide. Splitting a `[batch x 256]`
/// vector into PAC's chunks, or concatenating features, are both this.
#[allow(clippy::too_many_arguments)]
pub fn copy_columns(
    src: &[f32],
    src_stride: usize,
    src_col: usize,
    dst: &mut [f32],
    dst_stride: usize,
    dst_col: usize,
    width: usize,
    rows: usize,
) {
    check_block(src.len(), src_stride, src_col, width, rows, "src");
    check_block(dst.len(), dst_stride, dst_col, width, rows, "dst");
    for r in 0..rows {
        let s = r * src_stride + src_col;
        let d = r * dst_stride + dst_col;
        dst[d..d + width].copy_from_slice(&src[s..s + width]);
    }
}

/// Like [`copy_columns`] but adds: `dst[r, dst_col + i] += src[r, src_col + i]` (the
/// backward of a column gather).
#[allow(clippy::too_many_arguments)]
pub fn add_columns(
    src: &[f32],
    src_stride: usize,
    src_col: usize,
    dst: &mut [f32],
    dst_stride: usize,
    dst_col: usize,
    width: usize,
    rows: usize,
) {
    check_block(src.len(), src_stride, src_col, width, rows, "src");
    check_block(dst.len(), dst_stride, dst_col, width, rows, "dst");
    for r in 0..rows {
        let s = r * src_stride + src_col;
        let d = r * dst_stride + dst_col;
        add_assign(&mut dst[d..d + width], &src[s..s + width]);
    }
}

fn check_block(len: usize, stride: usize, col: usize, width: usize, rows: usize, what: &str) {
    assert!(
        col + width <= stride && (rows == 0 || (rows - 1) * stride + col + width <= len),
        "ops: {what} block out of range"
    );
}

/// Batched transpose: `x = [batch x rows x cols]` into `out = [batch x cols x rows]`.
/// With `batch = 1` it is a plain matrix transpose. A linear map over the token (patch)
/// axis is `transpose`, [`crate::Linear`], `transpose`.
pub fn transpose(x: &[f32], batch: usize, rows: usize, cols: usize, out: &mut [f32]) {
    let n = rows * cols;
    assert!(
        x.len() == batch * n && out.len() == batch * n,
        "ops::transpose: shape mismatch"
    );
    for (xb, ob) in x.chunks_exact(n.max(1)).zip(out.chunks_exact_mut(n.max(1))) {
        for r in 0..rows {
            for c in 0..cols {
                ob[c * rows + r] = xb[r * cols + c];
            }
        }
    }
}
