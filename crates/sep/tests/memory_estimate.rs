//! `ArchiveInfo::decoder_memory` (what `sep -l` prints and what `--memory` decides on)
//! is an upper bound of the heap a `Decoder` really holds: measured here as the
//! high-water mark of live heap bytes (`sep_kernels::CountingAllocator`) while each
//! archive is decoded, for every backbone with and without SE, context mixing with and
//! without a network, and order2, at a few block sizes and stream counts, with one and
//! two threads. This binary holds this one test only: the count is process-wide.

mod common;

use sep::neural::{BackboneKind, Knobs, NeuralConfig};
use sep::{Model, Options, Preset};
use sep_kernels::CountingAllocator;
use std::io::Read;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// A CPU-sized backbone (`BackboneKind::cpu`), with or without SE, at most `streams`
/// streams of at least `min_stream_len` bytes.
fn net(kind: BackboneKind, se: bool, streams: u32, min_stream_len: u32) -> Model {
    let preset = Preset::Fast;
    let c = NeuralConfig::preset(preset)
        .with_knobs(
            preset,
            &Knobs {
                backbone: Some(kind),
                se: Some(se),
                ..Knobs::default()
            },
        )
        .expect("valid knobs");
    Model::Neural(NeuralConfig {
        streams,
        min_stream_len,
        ..c
    })
}

/// Peak heap bytes above what was live before, while `archive` is decoded with
/// `threads` threads (the output read in 64 KiB pieces and dropped, as `sep -d` does).
fn decode_peak(archive: &[u8], threads: usize) -> u64 {
    let mut buf = vec![0u8; 1 << 16];
    let before = CountingAllocator::live_bytes();
    CountingAllocator::reset_peak();
    let mut dec = sep::Decoder::new(archive).unwrap().with_threads(threads);
    while dec.read(&mut buf).expect("decodes") > 0 {}
    drop(dec);
    CountingAllocator::peak_bytes() - before
}

#[test]
fn decoder_memory_is_an_upper_bound_of_the_measured_peak() {
    let text: Vec<u8> = common::corpus_set("quick")
        .into_iter()
        .flat_map(|(_, d)| d)
        .take(40_000)
        .collect();
    let mut cases: Vec<(String, Model, usize, u32)> = vec![
        ("order2".into(), Model::Order2, 40_000, 16_384),
        ("order2 one block".into(), Model::Order2, 40_000, 65_536),
        ("mix".into(), common::tiny_mix(), 40_000, 16_384),
        ("mix default".into(), Model::default(), 20_000, 8_192),
        (
            "mix fast (CM revision 3)".into(),
            Model::mix_preset(Preset::Fast),
            40_000,
            16_384,
        ),
        ("hybrid".into(), common::tiny_hybrid(), 6_000, 3_000),
        (
            "pac tiny, 8 streams".into(),
            common::tiny_neural(),
            6_000,
            3_000,
        ),
    ];
    // Many streams: every stream has its own layers in PAC.
    if let Model::Neural(c) = common::tiny_neural() {
        cases.push((
            "pac tiny, 4096 streams".into(),
            Model::Neural(NeuralConfig {
                streams: 4096,
                min_stream_len: 16,
                ..c
            }),
            65_536,
            65_536,
        ));
    }
    for kind in BackboneKind::ALL {
        for se in [false, true] {
            for (streams, min) in [(4, 512), (64, 16)] {
                cases.push((
                    format!("{} se {se}, {streams} streams", kind.name()),
                    net(kind, se, streams, min),
                    2_400,
                    1_200,
                ));
            }
        }
    }
    let mut worst = f64::MAX;
    let mut low = Vec::new();
    // Zeros for the 4096 streams: each stream codes to almost nothing, so the block is
    // modelled (text in 16-byte streams would be stored, and decode with no model).
    let zeros = vec![0u8; 65_536];
    for (name, model, len, block) in cases {
        let data = if name.contains("4096") { &zeros } else { &text };
        let archive = sep::compress(
            &data[..len],
            &Options {
                model,
                block_size: Some(block),
                small_blocks: true,
                ..Options::default()
            },
        )
        .expect("compress");
        let info = &sep::inspect(&archive[..]).expect("inspect")[0];
        assert_eq!(info.stored_blocks, 0, "{name}: a block was stored");
        for threads in [1, 2] {
            let measured = decode_peak(&archive, threads);
            let estimate = info.decoder_memory(threads);
            eprintln!(
                "{name}, -T{threads}: estimate {estimate}, measured {measured} ({:.2})",
                estimate as f64 / measured as f64
            );
            worst = worst.min(estimate as f64 / measured as f64);
            if estimate < measured {
                low.push(format!(
                    "{name}, -T{threads}: estimate {estimate} < measured {measured}"
                ));
            }
        }
    }
    eprintln!("smallest estimate / measured: {worst:.2}");
    assert!(
        low.is_empty(),
        "estimates below the measured peak:\n{}",
        low.join("\n")
    );
}
