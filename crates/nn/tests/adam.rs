//! Adam against a hand-computed first step and an independent `f64` reference.

use sep_nn::{Adam, AdamConfig, Module, Param};

struct Model(Vec<Param>);

impl Module for Model {
    fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
        for p in &mut self.0 {
            f(p);
        }
    }
}

/// First step by hand: p = 1, g = 0.5, lr = 0.1, default betas.
/// m = 0.1 * 0.5 = 0.05, v = 0.001 * 0.25 = 0.00025, m_hat = 0.5, v_hat = 0.25,
/// p = 1 - 0.1 * 0.5 / (0.5 + 1e-8) = 0.9 (to f32 precision).
#[test]
fn first_step_by_hand() {
    let mut m = Model(vec![Param::new_with("p", 1, |v| v[0] = 1.0)]);
    m.0[0].grad[0] = 0.5;
    let mut adam = Adam::new(AdamConfig {
        lr: 0.1,
        ..AdamConfig::default()
    });
    adam.step(&mut m);
    let p = &m.0[0];
    assert!((p.adam_m[0] - 0.05).abs() < 1e-9);
    assert!((p.adam_v[0] - 0.00025).abs() < 1e-11);
    assert!((p.value[0] - 0.9).abs() < 1e-7, "{}", p.value[0]);
    assert_eq!(p.grad[0], 0.0, "the gradient is consumed");
    assert_eq!(adam.steps(), 1);
}

/// Textbook Adam with L2 decay in f64.
struct Reference {
    p: Vec<f64>,
    m: Vec<f64>,
    v: Vec<f64>,
    t: i32,
}

impl Reference {
    fn step(&mut self, g: &[f64], c: &AdamConfig) {
        self.t += 1;
        for i in 0..self.p.len() {
            let g = g[i] + c.weight_decay * self.p[i];
            self.m[i] = c.beta1 * self.m[i] + (1.0 - c.beta1) * g;
            self.v[i] = c.beta2 * self.v[i] + (1.0 - c.beta2) * g * g;
            let mh = self.m[i] / (1.0 - c.beta1.powi(self.t));
            let vh = self.v[i] / (1.0 - c.beta2.powi(self.t));
            self.p[i] -= c.lr * mh / (vh.sqrt() + c.eps);
        }
    }
}

fn against_reference(config: AdamConfig) {
    let init = [0.3f32, -1.2, 2.5, 0.0, -0.01];
    let mut m = Model(vec![
        Param::new_with("a", 2, |v| v.copy_from_slice(&init[..2])),
        Param::new_with("b", 3, |v| v.copy_from_slice(&init[2..])),
    ]);
    let mut r = Reference {
        p: init.iter().map(|&x| x as f64).collect(),
        m: vec![0.0; 5],
        v: vec![0.0; 5],
        t: 0,
    };
    let mut adam = Adam::new(config);
    for step in 0..6 {
        // Gradients of varying sign and size, exactly representable in f32.
        let g: Vec<f32> = (0..5)
            .map(|i| {
                ((i as f32 - 2.0) * 0.25 + step as f32 * 0.125)
                    * if step % 2 == 0 { 1.0 } else { -0.5 }
            })
            .collect();
        m.0[0].grad.copy_from_slice(&g[..2]);
        m.0[1].grad.copy_from_slice(&g[2..]);
        adam.step(&mut m);
        r.step(&g.iter().map(|&x| x as f64).collect::<Vec<_>>(), &config);
        let got: Vec<f32> = m.0.iter().flat_map(|p| p.value.clone()).collect();
        for (i, (&a, &b)) in got.iter().zip(&r.p).enumerate() {
            assert!(
                (a as f64 - b).abs() <= 2e-6 * (1.0 + b.abs()),
                "step {step} element {i}: {a} vs reference {b}"
            );
        }
    }
}

#[test]
fn matches_reference_without_decay() {
    against_reference(AdamConfig {
        lr: 0.01,
        ..AdamConfig::default()
    });
}

#[test]
fn matches_reference_with_decay_and_custom_betas() {
    against_reference(AdamConfig {
        lr: 0.05,
        beta1: 0.8,
        beta2: 0.99,
        eps: 1e-6,
        weight_decay: 0.1,
    });
}

#[test]
fn step_params_equals_step() {
    let mk = || Param::new_with("p", 3, |v| v.copy_from_slice(&[0.5, -0.25, 1.0]));
    let (mut a, mut b) = (Model(vec![mk()]), mk());
    let mut adam_a = Adam::new(AdamConfig::default());
    let mut adam_b = Adam::new(AdamConfig::default());
    for _ in 0..3 {
        a.0[0].grad.copy_from_slice(&[0.1, -0.2, 0.3]);
        b.grad.copy_from_slice(&[0.1, -0.2, 0.3]);
        adam_a.step(&mut a);
        adam_b.step_params(&mut [&mut b]);
    }
    assert_eq!(a.0[0].value, b.value);
}
