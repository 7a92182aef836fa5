//! `forward_no_save` + `backward_with_input` give exactly the bits of `forward` +
//! `backward` (outputs, input gradients, parameter gradients) for every layer that has
//! them, and misuse is caught.

use sep_nn::{BatchEnsembleLinear, Gelu, LayerNorm, Linear, Module, Param, Rng};

fn data(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.next_normal() as f32).collect()
}

fn bits(x: &[f32]) -> Vec<u32> {
    x.iter().map(|v| v.to_bits()).collect()
}

fn grads(m: &mut impl Module) -> Vec<u32> {
    let mut out = Vec::new();
    m.visit_params(&mut |p: &mut Param| out.extend(bits(&p.grad)));
    out
}

/// Runs two steps each way (so stale state from the first step would show) and compares.
fn same<L: Clone + Module>(
    layer: L,
    len_in: usize,
    len_out: usize,
    fwd: fn(&mut L, &[f32]) -> Vec<f32>,
    bwd: fn(&mut L, &[f32]) -> Vec<f32>,
    fwd_ns: fn(&mut L, &[f32]) -> Vec<f32>,
    bwd_wi: fn(&mut L, &[f32], &[f32]) -> Vec<f32>,
) {
    let mut rng = Rng::new(42);
    let (mut a, mut b) = (layer.clone(), layer);
    for _ in 0..2 {
        let x = data(&mut rng, len_in);
        let dy = data(&mut rng, len_out);
        let (ya, yb) = (fwd(&mut a, &x), fwd_ns(&mut b, &x));
        assert_eq!(bits(&ya), bits(&yb), "outputs");
        let (da, db) = (bwd(&mut a, &dy), bwd_wi(&mut b, &x, &dy));
        assert_eq!(bits(&da), bits(&db), "input gradients");
        assert_eq!(grads(&mut a), grads(&mut b), "parameter gradients");
    }
}

#[test]
fn linear() {
    let lin = Linear::new(37, 19, true, 8, &mut Rng::new(1));
    same(
        lin,
        5 * 37,
        5 * 19,
        |l, x| l.forward(x).to_vec(),
        |l, dy| l.backward(dy).to_vec(),
        |l, x| l.forward_no_save(x).to_vec(),
        |l, x, dy| l.backward_with_input(x, dy).to_vec(),
    );
}

#[test]
fn layernorm() {
    for affine in [false, true] {
        same(
            LayerNorm::new(33, affine, 6),
            6 * 33,
            6 * 33,
            |l, x| l.forward(x).to_vec(),
            |l, dy| l.backward(dy).to_vec(),
            |l, x| l.forward_no_save(x).to_vec(),
            |l, x, dy| l.backward_with_input(x, dy).to_vec(),
        );
    }
}

#[derive(Clone)]
struct G(Gelu);
impl Module for G {
    fn visit_params(&mut self, _: &mut dyn FnMut(&mut Param)) {}
}

#[test]
fn gelu() {
    same(
        G(Gelu::new(100)),
        77,
        77,
        |l, x| l.0.forward(x).to_vec(),
        |l, dy| l.0.backward(dy).to_vec(),
        |l, x| l.0.forward_no_save(x).to_vec(),
        |l, x, dy| l.0.backward_with_input(x, dy).to_vec(),
    );
}

#[test]
fn batch_ensemble() {
    same(
        BatchEnsembleLinear::new(4, 3, 8, 5, &mut Rng::new(2)),
        3 * 3 * 8,
        3 * 3 * 5,
        |l, x| l.forward(x).to_vec(),
        |l, dy| l.backward(dy).to_vec(),
        |l, x| l.forward_no_save(x).to_vec(),
        |l, x, dy| l.backward_with_input(x, dy).to_vec(),
    );
}

#[test]
#[should_panic(expected = "forward_no_save")]
fn backward_after_no_save_panics() {
    let mut lin = Linear::new(4, 4, true, 2, &mut Rng::new(3));
    let x = [1.0f32; 8];
    lin.forward_no_save(&x);
    lin.backward(&[0.0; 8]);
}

#[test]
#[should_panic(expected = "very slice")]
fn backward_with_another_input_panics() {
    let mut g = Gelu::new(8);
    let x = [1.0f32; 8];
    let other = x;
    g.forward_no_save(&x);
    g.backward_with_input(&other, &[0.0; 8]);
}

/// `predict_probs` + `set_targets` give the probabilities and gradient of `predict` +
/// `loss`, bit for bit.
#[test]
fn cross_entropy_without_log_softmax() {
    use sep_nn::CrossEntropy;
    let mut rng = Rng::new(9);
    let (mut a, mut b) = (CrossEntropy::new(256, 4), CrossEntropy::new(256, 4));
    for _ in 0..2 {
        let logits = data(&mut rng, 3 * 256);
        let targets = [7u8, 200, 0];
        let pa = bits(a.predict(&logits));
        let pb = bits(b.predict_probs(&logits));
        assert_eq!(pa, pb, "probabilities");
        a.loss(&targets);
        b.set_targets(&targets);
        assert_eq!(bits(a.backward()), bits(b.backward()), "dlogits");
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = b.log_probs();
    }));
    assert!(r.is_err(), "log_probs after predict_probs panics");
}
