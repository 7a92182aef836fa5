//! Trains a small model that uses every `sep-nn` layer kind for a fixed number of steps
//! and prints one hash (hex) of every step's loss bits, the final probabilities and the
//! final parameters. `.ci/determinism-probe.sh` runs it under different builds, thread
//! counts and instruction sets: every run must print the same hash.
//!
//! Usage: `determinism_probe [--threads N] [--isa scalar|sse2|avx2|avx512] [--steps N]`
//! (the instruction set can also come from `SEP_KERNELS_ISA`).

#[path = "../tests/common/models.rs"]
mod models;

use models::{Fnv, Probe, synthetic_bytes};
use sep_nn::{Adam, AdamConfig, Module, Rng};

const BATCH: usize = 32;

fn main() {
    let mut threads = 1usize;
    let mut steps = 150usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")))
        };
        match a.as_str() {
            "--threads" => threads = value().parse().unwrap_or_else(|_| usage("bad --threads")),
            "--steps" => steps = value().parse().unwrap_or_else(|_| usage("bad --steps")),
            "--isa" => {
                let name = value();
                let isa = sep_kernels::Isa::from_name(&name)
                    .unwrap_or_else(|| usage(&format!("unknown ISA {name}")));
                if let Err(e) = sep_kernels::force_isa(Some(isa)) {
                    eprintln!("determinism_probe: {e}");
                    std::process::exit(3);
                }
            }
            _ => usage(&format!("unknown argument {a}")),
        }
    }
    sep_kernels::set_num_threads(threads);

    let mut rng = Rng::new(0x5E9_0001);
    let mut model = Probe::new(BATCH, &mut rng.fork());
    let mut adam = Adam::new(AdamConfig {
        lr: 2e-3,
        weight_decay: 1e-4,
        ..AdamConfig::default()
    });
    // One contiguous slice of the data per stream, as the compressor cuts its input.
    let per_stream = Probe::L + steps;
    let data = synthetic_bytes(BATCH * per_stream, &mut rng.fork());
    let mut contexts = vec![0u8; BATCH * Probe::L];
    let mut targets = vec![0u8; BATCH];
    let mut hash = Fnv::new();
    let mut total = 0.0f64;
    for step in 0..steps {
        for s in 0..BATCH {
            let base = s * per_stream + step;
            contexts[s * Probe::L..(s + 1) * Probe::L]
                .copy_from_slice(&data[base..base + Probe::L]);
            targets[s] = data[base + Probe::L];
        }
        let probs = model.forward(&contexts);
        hash.floats(probs);
        let loss = model.train(&targets, &mut adam);
        hash.word(loss.to_bits());
        total += loss as f64;
    }
    model.visit_params(&mut |p| hash.floats(&p.value));
    println!("{:016x}", hash.0);
    eprintln!(
        "determinism_probe: {steps} steps, batch {BATCH}, {threads} thread(s), ISA {}, mean loss {:.4} nats",
        sep_kernels::active_isa().name(),
        total / steps as f64
    );
}

fn usage(msg: &str) -> ! {
    eprintln!(
        "determinism_probe: {msg}\nusage: determinism_probe [--threads N] [--isa NAME] [--steps N]"
    );
    std::process::exit(2);
}
