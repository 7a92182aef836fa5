//! Finite-difference gradient checks for every layer (see `common` for the method).
//!
//! Tolerances: `h = 1e-2` (inputs and parameters are O(1)), pass when
//! `|num - ana| <= 5e-4 + 1e-2 * max(|num|, |ana|)` unless a test states otherwise.

mod common;

use common::{NoParams, TOL, gradcheck, random_vec};
use sep_nn::{
    BatchEnsembleLinear, BatchNorm, CausalLinearAttention, Embedding, Linear, LinearActs, Module,
    Param, Rng,
};

#[test]
fn linear_with_bias() {
    let mut rng = Rng::new(1);
    let mut lin = Linear::new(5, 4, true, 3, &mut rng);
    let x = random_vec(&mut rng, 3 * 5, 1.0);
    gradcheck(
        "Linear 5->4 bias",
        &mut lin,
        &x,
        true,
        TOL,
        |l, x| l.forward(x).to_vec(),
        |l, dy| l.backward(dy).to_vec(),
    );
}

#[test]
fn linear_without_bias() {
    let mut rng = Rng::new(2);
    let mut lin = Linear::new(3, 6, false, 4, &mut rng);
    let x = random_vec(&mut rng, 4 * 3, 1.0);
    gradcheck(
        "Linear 3->6 no bias",
        &mut lin,
        &x,
        true,
        TOL,
        |l, x| l.forward(x).to_vec(),
        |l, dy| l.backward(dy).to_vec(),
    );
}

/// The same weights applied twice, `y = W (W x + b) + b`, through two activation sets:
/// the gradients of both uses must accumulate.
#[test]
fn linear_shared_weights_twice() {
    struct Twice {
        lin: Linear,
        a1: LinearActs,
        a2: LinearActs,
    }
    impl Module for Twice {
        fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
            self.lin.visit_params(f);
        }
    }
    let mut rng = Rng::new(3);
    let lin = Linear::new(4, 4, true, 2, &mut rng);
    let (a1, a2) = (lin.new_acts(2), lin.new_acts(2));
    let mut m = Twice { lin, a1, a2 };
    let x = random_vec(&mut rng, 2 * 4, 1.0);
    gradcheck(
        "Linear shared weights, two uses",
        &mut m,
        &x,
        true,
        TOL,
        |m, x| {
            let h = m.lin.forward_with(&mut m.a1, x).to_vec();
            m.lin.forward_with(&mut m.a2, &h).to_vec()
        },
        |m, dy| {
            let d = m.lin.backward_with(&mut m.a2, dy).to_vec();
            m.lin.backward_with(&mut m.a1, &d).to_vec()
        },
    );
}

#[test]
fn embedding() {
    let mut rng = Rng::new(4);
    let mut emb = Embedding::new(6, 3, 8, &mut rng);
    // Repeated ids: their gradients must add.
    let ids: [u8; 5] = [1, 4, 1, 0, 5];
    gradcheck(
        "Embedding 6x3, repeated ids",
        &mut emb,
        &[],
        false,
        TOL,
        |e, _| e.forward(&ids).to_vec(),
        |e, dy| {
            e.backward(dy);
            Vec::new()
        },
    );
}

#[test]
fn batch_ensemble_one_token() {
    let mut rng = Rng::new(5);
    let mut be = BatchEnsembleLinear::new(4, 1, 3, 3, &mut rng);
    // Larger weights than the N(0, 0.01) init so the check is not dominated by the bias.
    sep_nn::init::normal(&mut be.weight.value, &mut rng, 0.0, 1.0);
    let x = random_vec(&mut rng, 3 * 3, 1.0); // 3 of the 4 streams
    gradcheck(
        "BatchEnsembleLinear 4 streams 3x3, 3 used",
        &mut be,
        &x,
        true,
        TOL,
        |l, x| l.forward(x).to_vec(),
        |l, dy| l.backward(dy).to_vec(),
    );
}

#[test]
fn batch_ensemble_two_tokens_rectangular() {
    let mut rng = Rng::new(6);
    let mut be = BatchEnsembleLinear::new(2, 2, 3, 5, &mut rng);
    sep_nn::init::normal(&mut be.weight.value, &mut rng, 0.0, 1.0);
    let x = random_vec(&mut rng, 2 * 2 * 3, 1.0);
    gradcheck(
        "BatchEnsembleLinear 2 streams x 2 tokens 3->5",
        &mut be,
        &x,
        true,
        TOL,
        |l, x| l.forward(x).to_vec(),
        |l, dy| l.backward(dy).to_vec(),
    );
}

#[test]
fn batch_ensemble_streams_are_separate() {
    let mut rng = Rng::new(7);
    let mut be = BatchEnsembleLinear::new(2, 1, 2, 2, &mut rng);
    let y = be.forward(&[1.0, 2.0, 1.0, 2.0]).to_vec();
    assert_ne!(
        y[..2],
        y[2..],
        "two streams with the same input must differ"
    );
    be.backward(&[1.0, 1.0, 0.0, 0.0]);
    assert!(be.weight.grad[4..].iter().all(|&g| g == 0.0));
    assert!(be.bias.grad[2..].iter().all(|&g| g == 0.0));
}

fn linear_attention_check(last_only: bool) {
    let (tokens, heads, dh, batch) = (4, 2, 3, 2);
    let mut rng = Rng::new(8);
    let att = CausalLinearAttention::new(tokens, heads, dh, batch);
    let att = if last_only {
        att.last_token_only()
    } else {
        att
    };
    let mut op = NoParams(att);
    let x = random_vec(&mut rng, batch * tokens * 3 * heads * dh, 1.0);
    gradcheck(
        if last_only {
            "CausalLinearAttention last token"
        } else {
            "CausalLinearAttention all tokens"
        },
        &mut op,
        &x,
        true,
        // The squared feature map makes the output a ratio of quartics: use a smaller h.
        common::Tol {
            h: 3e-3,
            atol: 1e-3,
            rtol: 2e-2,
        },
        |a, x| a.0.forward(x).to_vec(),
        |a, dy| a.0.backward(dy).to_vec(),
    );
}

#[test]
fn linear_attention_all_tokens() {
    linear_attention_check(false);
}

#[test]
fn linear_attention_last_token() {
    linear_attention_check(true);
}

/// The formula of the docs, computed directly in f64 from the definition.
#[test]
fn linear_attention_matches_definition() {
    let (tokens, heads, dh, batch) = (5, 2, 4, 3);
    let d = heads * dh;
    let mut rng = Rng::new(9);
    let x = random_vec(&mut rng, batch * tokens * 3 * d, 1.0);
    let mut att = CausalLinearAttention::new(tokens, heads, dh, batch);
    let y = att.forward(&x).to_vec();
    let mut last = CausalLinearAttention::new(tokens, heads, dh, batch).last_token_only();
    let y_last = last.forward(&x).to_vec();
    for b in 0..batch {
        for h in 0..heads {
            for t in 0..tokens {
                let q = |t: usize, i: usize| x[(b * tokens + t) * 3 * d + h * dh + i] as f64;
                let k = |u: usize, i: usize| x[(b * tokens + u) * 3 * d + d + h * dh + i] as f64;
                let v =
                    |u: usize, j: usize| x[(b * tokens + u) * 3 * d + 2 * d + h * dh + j] as f64;
                let mut den = 1e-16;
                let mut num = vec![0.0f64; dh];
                for u in 0..=t {
                    let w: f64 = (0..dh).map(|i| q(t, i).powi(2) * k(u, i).powi(2)).sum();
                    den += w;
                    for (j, n) in num.iter_mut().enumerate() {
                        *n += w * v(u, j);
                    }
                }
                for (j, n) in num.iter().enumerate() {
                    let want = n / den;
                    let got = y[(b * tokens + t) * d + h * dh + j] as f64;
                    assert!(
                        (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                        "{got} vs {want}"
                    );
                    if t + 1 == tokens {
                        let got_last = y_last[b * d + h * dh + j];
                        assert_eq!(got_last.to_bits(), (got as f32).to_bits());
                    }
                }
            }
        }
    }
}

#[test]
fn batchnorm_train_mode() {
    let mut rng = Rng::new(10);
    let mut bn = BatchNorm::new(3, 6);
    sep_nn::init::normal(&mut bn.weight.value, &mut rng, 1.0, 0.5);
    sep_nn::init::normal(&mut bn.bias.value, &mut rng, 0.0, 0.5);
    let x = random_vec(&mut rng, 6 * 3, 1.0);
    gradcheck(
        "BatchNorm 3 channels, 6 rows",
        &mut bn,
        &x,
        true,
        TOL,
        |l, x| l.forward(x).to_vec(),
        |l, dy| l.backward(dy).to_vec(),
    );
}

#[test]
fn batchnorm_statistics_and_running_stats() {
    let mut bn = BatchNorm::new(2, 4);
    let x = [1.0f32, 10.0, 2.0, 20.0, 3.0, 30.0, 4.0, 40.0];
    let y = bn.forward(&x).to_vec();
    // Channel 0: mean 2.5, biased var 1.25.
    let want0 = (1.0 - 2.5) / (1.25f64 + 1e-5).sqrt();
    assert!((y[0] as f64 - want0).abs() < 1e-6);
    assert!((bn.running_mean[0] - 0.25).abs() < 1e-7);
    // Unbiased var 5/3 for channel 0: 0.9 * 1 + 0.1 * 5/3.
    assert!((bn.running_var[0] - (0.9 + 0.1 * 5.0 / 3.0)).abs() < 1e-6);
}
