//! No heap allocation inside the step loops (the network's, the context-mixing
//! model's, and both mixed), proved with a counting global allocator
//! (`sep_kernels::CountingAllocator`, feature `alloc-counter`).
//!
//! Setup (the model, the optimiser state, every buffer) allocates, once per block; the
//! loop must not. So the test codes two inputs that differ only in length, with the same
//! number of streams, hence the same model and buffers but 256 more steps for the longer
//! one, and requires both to make exactly the same number of allocation calls, in
//! compression and in decompression (into a buffer allocated beforehand). One allocation
//! per step, or even per 256 steps, anywhere in the loop (engine, model, layers,
//! kernels, coder, on the calling thread or the kernels' pool threads) fails the test.
//!
//! The same holds with the pipeline's threads (`threads: 2`: a block worker, and the
//! kernels' pool given the spare thread). This binary holds this one test only: the
//! allocator count is process-wide.

mod common;

use std::io::Read;

use sep_kernels::CountingAllocator;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

fn network(streams: u32) -> sep::neural::NeuralConfig {
    sep::neural::NeuralConfig {
        backbone: sep::neural::BackboneConfig::Pac(sep::neural::PacConfig {
            context: 8,
            embed: 16,
            ffn: 128,
            pairs: 2,
            cache: true,
        }),
        streams,
        min_stream_len: 16,
        adam: sep::neural::AdamConfig::default(),
    }
}

fn options(model: sep::Model, threads: usize) -> sep::Options {
    sep::Options {
        model,
        block_size: Some(1 << 20),
        threads,
        ..Default::default()
    }
}

/// Compressible text (so the coders' outputs stay within their initial capacity).
fn text(len: usize) -> Vec<u8> {
    let words = [
        "the ", "quick ", "brown ", "fox ", "jumps ", "over ", "a ", "lazy ", "dog, ", "and ",
        "then ", "it ", "sleeps. ",
    ];
    let mut s = 7u32;
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        out.extend_from_slice(words[(s >> 24) as usize % words.len()].as_bytes());
    }
    out.truncate(len);
    out
}

/// (allocation calls while compressing, while decompressing) of `data`.
fn count(data: &[u8], opts: &sep::Options) -> (u64, u64) {
    let before = CountingAllocator::allocations();
    let archive = sep::compress(data, opts).expect("compress");
    let compress = CountingAllocator::allocations() - before;
    let mut out = vec![0u8; data.len()];
    let before = CountingAllocator::allocations();
    let mut dec = sep::Decoder::new(&archive[..]).expect("header");
    dec.read_exact(&mut out).expect("decompress");
    drop(dec);
    let decompress = CountingAllocator::allocations() - before;
    assert_eq!(out, data, "round trip");
    (compress, decompress)
}

#[test]
fn the_step_loops_do_not_allocate() {
    // 16 streams, hidden and FFN width 128: with 2 threads, Adam on the FFN weights is
    // split between pool threads.
    let streams = 16;
    let models = [
        ("neural", sep::Model::Neural(network(streams))),
        (
            "mix",
            sep::Model::Mix(sep::MixConfig {
                cm: common::small_cm(),
                neural: None,
                serial: None,
            }),
        ),
        (
            "mix + network",
            sep::Model::Mix(sep::MixConfig {
                cm: common::small_cm(),
                neural: Some(network(streams)),
                serial: None,
            }),
        ),
        (
            "mix + serial LSTM",
            sep::Model::Mix(sep::MixConfig {
                cm: common::small_cm(),
                neural: None,
                serial: Some(sep::LstmConfig {
                    kind: 1,
                    cells: 16,
                    horizon: 8,
                    lr: 200,
                    delay: 0,
                }),
            }),
        ),
    ];
    let (short, long) = (text(256 * streams as usize), text(512 * streams as usize));
    for (name, model) in models {
        for threads in [1, 2] {
            let opts = options(model.clone(), threads);
            // Warm up: the kernels' pool threads and per-thread buffers are created on
            // first use.
            count(&short, &opts);
            let a = count(&short, &opts);
            let b = count(&long, &opts);
            println!(
                "{name}, {threads} thread(s): allocation calls compress {} / {}, \
                 decompress {} / {} ({} / {} bytes)",
                a.0,
                b.0,
                a.1,
                b.1,
                short.len(),
                long.len()
            );
            assert_eq!(
                a, b,
                "{name}, {threads} thread(s): twice the input made more allocation calls \
                 (compress, decompress): {a:?} vs {b:?}"
            );
        }
    }
}
