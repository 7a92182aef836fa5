//! Trainable parameters and the fixed-order registry that the optimiser walks.
//!
//! A [`Param`] owns four equally long `f32` buffers, allocated once: the value, its
//! gradient, and Adam's first and second moments. Layers own their `Param`s; a model
//! implements [`Module::visit_params`] by visiting its layers in a fixed order, and
//! [`crate::Adam`] updates them in that order. The order does not change any value (each
//! element's update is independent) but it is the order a checkpoint would use, so keep
//! it stable.
//!
//! Gradients **accumulate**: every `backward` adds into `grad`. Call [`zero_grads`] (or
//! let [`crate::Adam::step`] do it, which it does as it consumes them) before the next
//! backward pass. Accumulation is what lets one weight be used twice in a step.
//!
//! ```
//! use sep_nn::{Module, Param, zero_grads, num_params};
//! struct Tiny { a: Param, b: Param }
//! impl Module for Tiny {
//!     fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
//!         f(&mut self.a);
//!         f(&mut self.b);
//!     }
//! }
//! let mut t = Tiny { a: Param::zeros("a", 3), b: Param::zeros("b", 2) };
//! t.a.grad[0] = 1.0;
//! zero_grads(&mut t);
//! assert_eq!(t.a.grad[0], 0.0);
//! assert_eq!(num_params(&mut t), 5);
//! ```

/// One trainable tensor (flat, row-major) with its gradient and Adam state.
#[derive(Clone, Debug)]
pub struct Param {
    /// A short name for diagnostics, such as `"linear.weight"`.
    pub name: &'static str,
    /// The values the layer computes with.
    pub value: Vec<f32>,
    /// The accumulated gradient of the loss with respect to `value`.
    pub grad: Vec<f32>,
    /// Adam's first moment (zero until the first step).
    pub adam_m: Vec<f32>,
    /// Adam's second moment (zero until the first step).
    pub adam_v: Vec<f32>,
}

impl Param {
    /// A parameter of `len` zeros (value, gradient and optimiser state).
    pub fn zeros(name: &'static str, len: usize) -> Self {
        Param {
            name,
            value: vec![0.0; len],
            grad: vec![0.0; len],
            adam_m: vec![0.0; len],
            adam_v: vec![0.0; len],
        }
    }

    /// A parameter whose value is filled by `init` (gradient and optimiser state zero).
    pub fn new_with(name: &'static str, len: usize, init: impl FnOnce(&mut [f32])) -> Self {
        let mut p = Param::zeros(name, len);
        init(&mut p.value);
        p
    }

    /// Number of scalar elements.
    pub fn len(&self) -> usize {
        self.value.len()
    }

    /// True when the parameter has no elements.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// Sets the gradient to zero.
    pub fn zero_grad(&mut self) {
        self.grad.fill(0.0);
    }
}

/// Anything that owns parameters: a layer or a whole model.
pub trait Module {
    /// Calls `f` once on every parameter, always in the same order.
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param));
}

/// Sets every gradient of `module` to zero.
pub fn zero_grads(module: &mut (impl Module + ?Sized)) {
    module.visit_params(&mut |p| p.zero_grad());
}

/// Total number of scalar parameters in `module`.
pub fn num_params(module: &mut (impl Module + ?Sized)) -> usize {
    let mut n = 0;
    module.visit_params(&mut |p| n += p.len());
    n
}
