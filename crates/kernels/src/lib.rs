//! Deterministic f32 kernels for online-trained compression models.
//!
//! Every function here returns the same bits on every x86-64 or aarch64 CPU, for
//! every thread count and every SIMD level, because the order of floating-point
//! operations is part of each function's contract (see `doc/DETERMINISM.md`):
//!
//! * a matrix product computes each output element as one chain
//!   `acc = fma(a[i,p], b[p,j], acc)` for `p = 0..k` in order, starting from `0.0`
//!   (or from the old `c[i,j]` when accumulating); SIMD lanes and threads split
//!   output elements, never a sum;
//! * elementwise code uses only IEEE `+ - * / sqrt` and `mul_add`; transcendental
//!   functions are this crate's own polynomials, never libm.
//!
//! Start with [`matmul`], [`matmul_tn`] and [`matmul_nt`].
//!
//! ```
//! // C (2x2) = A (2x3) * B (3x2)
//! let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
//! let b = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0];
//! let mut c = [0.0f32; 4];
//! sep_kernels::matmul(&a, &b, &mut c, 2, 3, 2, false);
//! assert_eq!(c, [4.0, 5.0, 10.0, 11.0]);
//! ```

mod matmul;

pub use matmul::{matmul, matmul_nt, matmul_tn};
