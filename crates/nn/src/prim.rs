//! The `sep-kernels` primitives the layers use, in one place.
//!
//! Each wrapper names the kernel whose documented operation order the layers rely on;
//! keeping them together makes the set of kernels `sep-nn` depends on explicit.

/// `y[i] = gelu(x[i])` (erf form), keeping `h[i] = 2 Phi(x[i])` for the backward pass
/// ([`sep_kernels::gelu_forward_saving`], the same bits as [`sep_kernels::gelu_slice`]).
pub(crate) fn gelu_slice_saving(x: &[f32], y: &mut [f32], h: &mut [f32]) {
    sep_kernels::gelu_forward_saving(x, y, h);
}

/// `dx[i] = dy[i] * gelu_grad(x[i])` from the factor kept by [`gelu_slice_saving`]
/// ([`sep_kernels::gelu_backward_saved`], the same bits as
/// [`sep_kernels::gelu_backward`]).
pub(crate) fn gelu_backward_slice_saved(x: &[f32], h: &[f32], dy: &[f32], dx: &mut [f32]) {
    sep_kernels::gelu_backward_saved(x, h, dy, dx, false);
}

/// `y[i] = sigmoid(x[i])` ([`sep_kernels::sigmoid_slice`]).
pub(crate) fn sigmoid_slice(x: &[f32], y: &mut [f32]) {
    sep_kernels::sigmoid_slice(x, y);
}

/// Softmax of each row of `x = [rows x cols]` ([`sep_kernels::softmax_rows`]).
pub(crate) fn softmax_rows(x: &[f32], y: &mut [f32], cols: usize) {
    sep_kernels::softmax_rows(x, y, x.len() / cols, cols);
}

/// Log-softmax of each row of `x = [rows x cols]` ([`sep_kernels::log_softmax_rows`]).
pub(crate) fn log_softmax_rows(x: &[f32], y: &mut [f32], cols: usize) {
    sep_kernels::log_softmax_rows(x, y, x.len() / cols, cols);
}
