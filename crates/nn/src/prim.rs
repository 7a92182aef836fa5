//! The `sep-kernels` primitives the layers use, in one place.
//!
//! Each wrapper names the kernel whose documented operation order the layers rely on;
//! keeping them together makes the set of kernels `sep-nn` depends on explicit.

/// `y[i] = gelu(x[i])` ([`sep_kernels::gelu_slice`], erf form).
pub(crate) fn gelu_slice(x: &[f32], y: &mut [f32]) {
    sep_kernels::gelu_slice(x, y);
}

/// `dx[i] = dy[i] * gelu_grad(x[i])` ([`sep_kernels::gelu_backward`]).
pub(crate) fn gelu_backward_slice(x: &[f32], dy: &[f32], dx: &mut [f32]) {
    sep_kernels::gelu_backward(x, dy, dx, false);
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
