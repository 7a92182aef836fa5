//! Online training must give the same bits for every kernel thread count and every SIMD
//! path this CPU has. One `#[test]` runs every configuration in turn, because the thread
//! count and the instruction set are process-wide settings of `sep-kernels`.
//!
//! The model is the MLP of `tests/common/models.rs` (batch 64, 256 -> 256 -> GELU ->
//! LayerNorm -> 256 logits, cross-entropy, Adam), trained online for 200 steps on inputs
//! drawn from the seeded generator. The compared value is an FNV-1a hash of every step's
//! loss bits and of the final logits' and probabilities' bits.
//!
//! The hash is also pinned ([`GOLDEN`]): online training is the archive format (the
//! decoder replays it), so any change to the arithmetic of `sep-nn` or `sep-kernels`
//! that moves this value breaks every archive written before it. Update the constant
//! only together with a format version bump.

mod common;

#[path = "common/models.rs"]
mod models;

use models::{Fnv, Mlp};
use sep_kernels::{Isa, force_isa, set_num_threads};
use sep_nn::{Adam, AdamConfig, Rng};

const BATCH: usize = 64;
const WIDTH: usize = 256;
const STEPS: usize = 200;

/// The hash every configuration must produce (measured on the first version of the
/// kernels, scalar matmul, and unchanged by every kernel revision since).
const GOLDEN: u64 = 0x06eb_3b9d_4b8b_9f45;

fn train(steps: usize) -> u64 {
    let mut rng = Rng::new(20_240_601);
    let mut model = Mlp::new(WIDTH, WIDTH, 256, BATCH, &mut rng.fork());
    let mut adam = Adam::new(AdamConfig {
        weight_decay: 1e-7,
        ..AdamConfig::default()
    });
    let mut data = rng.fork();
    let mut x = vec![0.0f32; BATCH * WIDTH];
    let mut targets = vec![0u8; BATCH];
    let mut hash = Fnv::new();
    for _ in 0..steps {
        for v in x.iter_mut() {
            *v = data.next_normal() as f32;
        }
        // Targets depend on the input so that there is something to learn.
        for (r, t) in targets.iter_mut().enumerate() {
            let row = &x[r * WIDTH..(r + 1) * WIDTH];
            let k = (0..8)
                .filter(|&i| row[i] > 0.0)
                .fold(0u8, |a, i| a | (1 << i));
            *t = k;
        }
        let loss = model.train_step(&x, &targets, &mut adam);
        hash.word(loss.to_bits());
    }
    hash.floats(model.out.output());
    hash.floats(model.ce.probs());
    hash.0
}

#[test]
fn training_bits_identical_across_threads_and_isas() {
    let mut results: Vec<(String, u64)> = Vec::new();
    for threads in [1, 2] {
        set_num_threads(threads);
        let t0 = std::time::Instant::now();
        results.push((format!("default ISA, {threads} thread(s)"), train(STEPS)));
        println!("{} took {:?}", results.last().unwrap().0, t0.elapsed());
    }
    set_num_threads(2);
    for isa in Isa::ALL {
        if force_isa(Some(isa)).is_err() {
            println!(
                "note: the {} kernels are not supported on this CPU; skipped",
                isa.name()
            );
            continue;
        }
        let t0 = std::time::Instant::now();
        results.push((format!("{} forced, 2 threads", isa.name()), train(STEPS)));
        println!("{} took {:?}", results.last().unwrap().0, t0.elapsed());
    }
    force_isa(None).unwrap();
    set_num_threads(1);
    for (name, h) in &results {
        println!("{name:<32} {h:016x}");
    }
    let first = results[0].1;
    assert!(
        results.iter().all(|(_, h)| *h == first),
        "training bits differ between configurations: {results:#?}"
    );
    assert_eq!(
        first, GOLDEN,
        "training bits changed: {first:016x}, pinned {GOLDEN:016x} (a format change)"
    );
}
