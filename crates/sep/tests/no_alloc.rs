//! No heap allocation inside the neural step loop, proved with a counting global
//! allocator (`sep_kernels::CountingAllocator`, feature `alloc-counter`).
//!
//! Setup (the model, the optimiser state, every buffer) allocates, once per block; the
//! loop must not. So the test codes two inputs that differ only in length, with the same
//! number of streams, hence the same model and buffers but 256 more steps for the longer
//! one, and requires both to make exactly the same number of allocation calls, in
//! compression and in decompression (into a buffer allocated beforehand). One allocation
//! per step, or even per 256 steps, anywhere in the loop (engine, model, layers,
//! kernels, coder, on the calling thread or the kernels' pool threads) fails the test.
//!
//! This binary holds this one test only: the allocator count is process-wide.

use std::io::Read;

use sep_kernels::CountingAllocator;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

fn options(streams: u32) -> sep::Options {
    sep::Options {
        model: sep::Model::Neural(sep::NeuralConfig {
            backbone: sep::BackboneConfig::Pac(sep::PacConfig {
                context: 8,
                embed: 16,
                ffn: 128,
                pairs: 2,
                cache: true,
            }),
            streams,
            min_stream_len: 16,
            adam: sep::AdamConfig::default(),
        }),
        block_size: Some(1 << 20),
        threads: 1,
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
fn the_neural_step_loop_does_not_allocate() {
    // 16 streams, hidden and FFN width 128: Adam on the FFN weights is split between
    // pool threads.
    let streams = 16;
    let opts = options(streams);
    let (short, long) = (text(256 * streams as usize), text(512 * streams as usize));
    for threads in [1, 2] {
        sep_kernels::set_num_threads(threads);
        // Warm up: the kernels' pool threads and per-thread buffers are created on
        // first use.
        count(&short, &opts);
        let a = count(&short, &opts);
        let b = count(&long, &opts);
        println!(
            "{threads} kernel thread(s): allocation calls compress {} / {}, decompress {} / {} \
             (256 / 512 steps)",
            a.0, b.0, a.1, b.1
        );
        assert_eq!(
            a, b,
            "{threads} kernel thread(s): 256 more steps made more allocation calls \
             (compress, decompress): {a:?} vs {b:?}"
        );
    }
}
