//! Adam (Kingma and Ba) with PyTorch's `torch.optim.Adam` semantics, deterministic.
//!
//! Start with [`Adam::new`] and call [`Adam::step`] once per training step, after the
//! backward pass. Per step `t = 1, 2, ...` and per element, in `f32` unless noted:
//!
//! ```text
//! g  = grad + weight_decay * p          (only when weight_decay != 0: L2 added to the gradient)
//! m  = beta1 * m + (1 - beta1) * g
//! v  = beta2 * v + ((1 - beta2) * g) * g
//! p  = p - step_size * (m / (sqrt(v) / bc2_sqrt + eps))
//! grad = 0                              (the gradient is consumed)
//! ```
//!
//! The scalars are computed once per step in `f64` and rounded to `f32`: `beta1^t` and
//! `beta2^t` by repeated multiplication (`pow_t = pow_{t-1} * beta`, never `powi`),
//! `bc1 = 1 - beta1^t`, `bc2 = 1 - beta2^t`, `step_size = lr / bc1`,
//! `bc2_sqrt = sqrt(bc2)`; likewise `1 - beta1`, `1 - beta2`, `eps`, `weight_decay`.
//!
//! Every elementwise operation is a separately rounded IEEE `+ - * / sqrt`; no `mul_add`
//! here, so that a baseline x86-64 build (no FMA) runs it at full speed with identical
//! bits. The update of each [`Param`] is one call of the fused kernel
//! [`sep_kernels::adam_update`] (vectorised for the best instruction set, split over
//! the kernels' threads in fixed chunks), whose documented operation order is the one
//! above.
//!
//! ```
//! use sep_nn::{Adam, AdamConfig, Module, Param};
//! struct One(Param);
//! impl Module for One {
//!     fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) { f(&mut self.0) }
//! }
//! let mut model = One(Param::zeros("w", 1));
//! model.0.grad[0] = 0.5;
//! let mut adam = Adam::new(AdamConfig::default());
//! adam.step(&mut model);
//! // The first Adam step moves each parameter by about lr against the gradient's sign.
//! assert!((model.0.value[0] + 1e-3).abs() < 1e-6);
//! assert_eq!(model.0.grad[0], 0.0);
//! ```

use crate::param::{Module, Param};
use sep_kernels::AdamScalars;

/// Adam hyper-parameters (PyTorch defaults except `weight_decay`, which PyTorch also
/// defaults to 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamConfig {
    /// Learning rate (default 1e-3).
    pub lr: f64,
    /// Decay of the first moment (default 0.9).
    pub beta1: f64,
    /// Decay of the second moment (default 0.999).
    pub beta2: f64,
    /// Added to the bias-corrected root of the second moment (default 1e-8).
    pub eps: f64,
    /// L2 penalty added to the gradient, as PyTorch's `weight_decay` (default 0).
    pub weight_decay: f64,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
        }
    }
}

/// The optimiser: its configuration and the step counter. The moments live in each
/// [`Param`] (`adam_m`, `adam_v`), allocated with the parameter.
#[derive(Clone, Debug)]
pub struct Adam {
    config: AdamConfig,
    t: u64,
    beta1_pow: f64,
    beta2_pow: f64,
}

impl Adam {
    /// An optimiser at step 0.
    pub fn new(config: AdamConfig) -> Self {
        Adam {
            config,
            t: 0,
            beta1_pow: 1.0,
            beta2_pow: 1.0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &AdamConfig {
        &self.config
    }

    /// Number of steps taken so far.
    pub fn steps(&self) -> u64 {
        self.t
    }

    /// One Adam step over every parameter of `module`, in its visiting order; each
    /// gradient is set to zero once used.
    pub fn step(&mut self, module: &mut (impl Module + ?Sized)) {
        let s = self.advance();
        module.visit_params(&mut |p| update(p, &s));
    }

    /// One Adam step over an explicit list of parameters (for callers that keep their
    /// parameters outside a [`Module`]); each gradient is set to zero once used.
    pub fn step_params(&mut self, params: &mut [&mut Param]) {
        let s = self.advance();
        for p in params.iter_mut() {
            update(p, &s);
        }
    }

    fn advance(&mut self) -> AdamScalars {
        let c = &self.config;
        self.t += 1;
        self.beta1_pow *= c.beta1;
        self.beta2_pow *= c.beta2;
        let bc1 = 1.0 - self.beta1_pow;
        let bc2 = 1.0 - self.beta2_pow;
        AdamScalars {
            beta1: c.beta1 as f32,
            beta2: c.beta2 as f32,
            one_minus_beta1: (1.0 - c.beta1) as f32,
            one_minus_beta2: (1.0 - c.beta2) as f32,
            step_size: (c.lr / bc1) as f32,
            bc2_sqrt: bc2.sqrt() as f32,
            eps: c.eps as f32,
            weight_decay: c.weight_decay as f32,
        }
    }
}

fn update(p: &mut Param, s: &AdamScalars) {
    let n = p.value.len();
    assert!(
        p.grad.len() == n && p.adam_m.len() == n && p.adam_v.len() == n,
        "Adam: buffers of parameter {} differ in length",
        p.name
    );
    sep_kernels::adam_update(&mut p.value, &mut p.grad, &mut p.adam_m, &mut p.adam_v, s);
}
