//! Finite-difference gradient checks for every layer (see `common` for the method).
//!
//! Tolerances: `h = 1e-2` (inputs and parameters are O(1)), pass when
//! `|num - ana| <= 1e-4 + 2e-3 * max(|num|, |ana|)` unless a test states otherwise.
//! Run with `--nocapture` to see each check's worst error.

mod common;

use common::{NoParams, TOL, gradcheck, random_vec};
use sep_nn::{
    BatchEnsembleLinear, BatchNorm, CausalLinearAttention, CrossEntropy, Embedding, Gelu,
    LayerNorm, LayerNormActs, Linear, LinearActs, Module, Param, Rng, Sigmoid, SoftmaxAttention,
    ops,
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
            atol: 2e-4,
            rtol: 5e-3,
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

/// The last-token mode runs through kernel calls, the all-tokens mode through loops:
/// the last-token output and every gradient (with a zero gradient on the other tokens)
/// must agree bit for bit (up to the sign of zero).
#[test]
fn linear_attention_modes_agree_bitwise() {
    let (tokens, heads, dh, batch) = (6, 3, 5, 4);
    let d = heads * dh;
    let mut rng = Rng::new(19);
    let x = random_vec(&mut rng, batch * tokens * 3 * d, 1.0);
    let g = random_vec(&mut rng, batch * d, 1.0);
    let mut all = CausalLinearAttention::new(tokens, heads, dh, batch);
    let mut last = CausalLinearAttention::new(tokens, heads, dh, batch).last_token_only();
    let y_all = all.forward(&x).to_vec();
    let y_last = last.forward(&x).to_vec();
    let mut g_all = vec![0.0f32; batch * tokens * d];
    for b in 0..batch {
        let row = (b * tokens + tokens - 1) * d;
        g_all[row..row + d].copy_from_slice(&g[b * d..(b + 1) * d]);
        for j in 0..d {
            assert_eq!(y_last[b * d + j].to_bits(), y_all[row + j].to_bits());
        }
    }
    let dx_all = all.backward(&g_all).to_vec();
    let dx_last = last.backward(&g).to_vec();
    for (i, (a, b)) in dx_all.iter().zip(&dx_last).enumerate() {
        assert!(a == b, "dqkv[{i}]: all-tokens {a:e} vs last-token {b:e}");
    }
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

#[test]
fn gelu() {
    let mut rng = Rng::new(11);
    let mut op = NoParams(Gelu::new(40));
    let mut x = random_vec(&mut rng, 40, 2.0);
    x[0] = 0.0;
    gradcheck(
        "Gelu",
        &mut op,
        &x,
        true,
        TOL,
        |a, x| a.0.forward(x).to_vec(),
        |a, dy| a.0.backward(dy).to_vec(),
    );
}

#[test]
fn sigmoid() {
    let mut rng = Rng::new(12);
    let mut op = NoParams(Sigmoid::new(40));
    let x = random_vec(&mut rng, 40, 2.0);
    gradcheck(
        "Sigmoid",
        &mut op,
        &x,
        true,
        TOL,
        |a, x| a.0.forward(x).to_vec(),
        |a, dy| a.0.backward(dy).to_vec(),
    );
}

fn layernorm_check(affine: bool) {
    let mut rng = Rng::new(13);
    let mut ln = LayerNorm::new(6, affine, 3);
    if affine {
        let (w, b) = (ln.weight.as_mut().unwrap(), ln.bias.as_mut().unwrap());
        sep_nn::init::normal(&mut w.value, &mut rng, 1.0, 0.5);
        sep_nn::init::normal(&mut b.value, &mut rng, 0.0, 0.5);
    }
    let x = random_vec(&mut rng, 3 * 6, 1.0);
    gradcheck(
        if affine {
            "LayerNorm affine"
        } else {
            "LayerNorm no affine"
        },
        &mut ln,
        &x,
        true,
        TOL,
        |l, x| l.forward(x).to_vec(),
        |l, dy| l.backward(dy).to_vec(),
    );
}

#[test]
fn layernorm_affine() {
    layernorm_check(true);
}

#[test]
fn layernorm_no_affine() {
    layernorm_check(false);
}

fn softmax_attention_check(causal: bool) {
    let (tokens, heads, dh, batch) = (4, 2, 3, 2);
    let mut rng = Rng::new(14);
    let mut op = NoParams(SoftmaxAttention::new(tokens, heads, dh, causal, batch));
    let x = random_vec(&mut rng, batch * tokens * 3 * heads * dh, 1.0);
    gradcheck(
        if causal {
            "SoftmaxAttention causal"
        } else {
            "SoftmaxAttention unmasked"
        },
        &mut op,
        &x,
        true,
        TOL,
        |a, x| a.0.forward(x).to_vec(),
        |a, dy| a.0.backward(dy).to_vec(),
    );
}

#[test]
fn softmax_attention_causal() {
    softmax_attention_check(true);
}

#[test]
fn softmax_attention_unmasked() {
    softmax_attention_check(false);
}

#[test]
fn softmax_attention_mask_and_rows() {
    let (tokens, heads, dh) = (3, 1, 2);
    let mut rng = Rng::new(15);
    let x = random_vec(&mut rng, tokens * 3 * heads * dh, 1.0);
    let mut att = SoftmaxAttention::new(tokens, heads, dh, true, 1);
    att.forward(&x);
    let p = att.probabilities();
    for t in 0..tokens {
        let row = &p[t * tokens..(t + 1) * tokens];
        assert!(
            row[t + 1..].iter().all(|&v| v == 0.0),
            "masked keys must get 0"
        );
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
}

/// Cross-entropy: the checked scalar is the loss itself (`dy` is ignored).
#[test]
fn cross_entropy() {
    let mut rng = Rng::new(16);
    let targets = [2usize, 0, 4];
    let mut op = NoParams(CrossEntropy::new(5, 3));
    let x = random_vec(&mut rng, 3 * 5, 2.0);
    let rep = gradcheck(
        "CrossEntropy (x dy[0])",
        &mut op,
        &x,
        true,
        TOL,
        |a, x| vec![a.0.forward(x, &targets)],
        |a, dy| a.0.backward().iter().map(|g| g * dy[0]).collect(),
    );
    assert!(rep.checked == 15);
    // Probabilities are the softmax of the same pass and sum to 1.
    let p = op.0.predict(&x).to_vec();
    for r in 0..3 {
        let s: f32 = p[r * 5..(r + 1) * 5].iter().sum();
        assert!((s - 1.0).abs() < 1e-6);
        for j in 0..5 {
            let lp = op.0.log_probs()[r * 5 + j];
            assert!((lp.exp() - p[r * 5 + j]).abs() < 1e-6);
        }
    }
}

/// A PAC-like block glued with the ops: LN -> per-stream matrix -> LN -> GELU, averaged
/// with its input, on a column chunk of a wider vector.
#[test]
fn pac_block_with_ops() {
    struct Block {
        ln1: LayerNorm,
        be: BatchEnsembleLinear,
        ln2: LayerNorm,
        act: Gelu,
        chunk: Vec<f32>,
        out: Vec<f32>,
        dchunk: Vec<f32>,
        dx: Vec<f32>,
    }
    impl Module for Block {
        fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
            self.ln1.visit_params(f);
            self.be.visit_params(f);
            self.ln2.visit_params(f);
        }
    }
    let (streams, width, d, off) = (3, 7, 4, 2);
    let mut rng = Rng::new(17);
    let mut be = BatchEnsembleLinear::new(streams, 1, d, d, &mut rng);
    sep_nn::init::normal(&mut be.weight.value, &mut rng, 0.0, 1.0);
    let mut m = Block {
        ln1: LayerNorm::new(d, false, streams),
        be,
        ln2: LayerNorm::new(d, true, streams),
        act: Gelu::new(streams * d),
        chunk: vec![0.0; streams * d],
        out: vec![0.0; streams * width],
        dchunk: vec![0.0; streams * d],
        dx: vec![0.0; streams * width],
    };
    let x = random_vec(&mut rng, streams * width, 1.0);
    gradcheck(
        "PAC block: chunk, LN, ensemble, LN, GELU, average",
        &mut m,
        &x,
        true,
        TOL,
        |m, x| {
            ops::copy_columns(x, width, off, &mut m.chunk, d, 0, d, streams);
            let skip = m.ln1.forward(&m.chunk).to_vec();
            let h = m.be.forward(&skip);
            let h = m.ln2.forward(h);
            let h = m.act.forward(h);
            let mut y = vec![0.0; streams * d];
            ops::average(&skip, h, &mut y);
            // The rest of the vector passes through unchanged.
            m.out.copy_from_slice(x);
            ops::copy_columns(&y, d, 0, &mut m.out, width, off, d, streams);
            m.out.clone()
        },
        |m, dy| {
            let mut dyc = vec![0.0; streams * d];
            ops::copy_columns(dy, width, off, &mut dyc, d, 0, d, streams);
            let mut half = vec![0.0; streams * d];
            ops::scale(&dyc, 0.5, &mut half);
            let g = m.act.backward(&half);
            let g = m.ln2.backward(g);
            let g = m.be.backward(g);
            m.dchunk.copy_from_slice(g);
            ops::add_assign(&mut m.dchunk, &half);
            let g = m.ln1.backward(&m.dchunk);
            m.dx.copy_from_slice(dy);
            for r in 0..streams {
                m.dx[r * width + off..r * width + off + d].fill(0.0);
            }
            ops::add_columns(g, d, 0, &mut m.dx, width, off, d, streams);
            m.dx.clone()
        },
    );
}

/// Shared LayerNorm weights through two activation sets.
#[test]
fn layernorm_shared_weights_twice() {
    struct Twice {
        ln: LayerNorm,
        a1: LayerNormActs,
        a2: LayerNormActs,
    }
    impl Module for Twice {
        fn visit_params(&mut self, f: &mut dyn FnMut(&mut Param)) {
            self.ln.visit_params(f);
        }
    }
    let mut rng = Rng::new(18);
    let mut ln = LayerNorm::new(5, true, 2);
    sep_nn::init::normal(&mut ln.weight.as_mut().unwrap().value, &mut rng, 1.0, 0.5);
    sep_nn::init::normal(&mut ln.bias.as_mut().unwrap().value, &mut rng, 0.0, 0.5);
    let (a1, a2) = (ln.new_acts(2), ln.new_acts(2));
    let mut m = Twice { ln, a1, a2 };
    let x = random_vec(&mut rng, 2 * 5, 1.0);
    gradcheck(
        "LayerNorm shared weights, two uses",
        &mut m,
        &x,
        true,
        TOL,
        |m, x| {
            let h: Vec<f32> =
                m.ln.forward_with(&mut m.a1, x)
                    .iter()
                    .map(|v| v * 1.5)
                    .collect();
            m.ln.forward_with(&mut m.a2, &h).to_vec()
        },
        |m, dy| {
            let d: Vec<f32> =
                m.ln.backward_with(&mut m.a2, dy)
                    .iter()
                    .map(|v| v * 1.5)
                    .collect();
            m.ln.backward_with(&mut m.a1, &d).to_vec()
        },
    );
}

#[test]
fn transpose_round_trip() {
    let x: Vec<f32> = (0..24).map(|v| v as f32).collect();
    let mut t = vec![0.0; 24];
    ops::transpose(&x, 2, 3, 4, &mut t);
    assert_eq!(t[1], 4.0); // [0][c=0][r=1] = x[0][1][0]
    let mut back = vec![0.0; 24];
    ops::transpose(&t, 2, 4, 3, &mut back);
    assert_eq!(back, x);
}
