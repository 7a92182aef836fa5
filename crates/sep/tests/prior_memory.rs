//! Issue 20: the memory a decoder holds for an archive coded with a prior,
//! measured as in `memory_estimate.rs` (the high-water mark of live heap bytes,
//! `sep_kernels::CountingAllocator`) against
//! `ArchiveInfo::decoder_memory_with`. This binary holds this one test only:
//! the count is process-wide.

mod common;

use sep::{Model, Options};
use sep_kernels::CountingAllocator;
use std::io::Read;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// Issue 20: a prior's blocks restore its model and continue its samples, and
/// the loaded prior holds its snapshot (and, until the first block takes it,
/// the model restored when it was loaded). The estimate with the prior is an
/// upper bound of the measured peak, the prior's held bytes included, and a
/// decoder whose memory limit fits the archive without the prior but not with
/// it refuses before any output.
#[test]
fn a_prior_is_counted_in_the_decoders_memory() {
    let text: Vec<u8> = common::corpus_set("quick")
        .into_iter()
        .flat_map(|(_, d)| d)
        .take(60_000)
        .collect();
    let model = Model::mix_preset(sep::Preset::Default);
    let trained = sep::Prior::train(&model, &[&text[..20_000]]).expect("train");
    let content = &text[20_000..];
    let archive = {
        let prior = sep::Prior::from_bytes(&trained).expect("load");
        sep::compress(
            content,
            &Options {
                model: prior.model(),
                prior: Some(prior.clone()),
                block_size: Some(16_384),
                small_blocks: true,
                ..Options::default()
            },
        )
        .expect("compress")
    };
    let info = &sep::inspect(&archive[..]).expect("inspect")[0];
    assert!(info.blocks >= 2, "{} blocks", info.blocks);
    for threads in [1, 2] {
        // Loaded inside the measurement: its held bytes count.
        let mut buf = vec![0u8; 1 << 16];
        let before = CountingAllocator::live_bytes();
        CountingAllocator::reset_peak();
        let prior = sep::Prior::from_bytes(&trained).expect("load");
        let estimate = info.decoder_memory_with(threads, Some(&prior));
        let mut dec = sep::Decoder::new(&archive[..])
            .unwrap()
            .with_prior(Some(prior.clone()))
            .with_threads(threads);
        while dec.read(&mut buf).expect("decodes") > 0 {}
        drop(dec);
        drop(prior);
        let measured = CountingAllocator::peak_bytes() - before;
        eprintln!(
            "prior, -T{threads}: estimate {estimate}, measured {measured} ({:.2})",
            estimate as f64 / measured as f64
        );
        assert!(estimate >= measured, "-T{threads}: {estimate} < {measured}");
    }
    // A limit that fits the archive's own bound but not the prior's.
    let prior = sep::Prior::from_bytes(&trained).expect("load");
    let (without, with) = (
        info.decoder_memory(1),
        info.decoder_memory_with(1, Some(&prior)),
    );
    assert!(
        with >= without + prior.held_bytes(),
        "{with} < {without} + {}",
        prior.held_bytes()
    );
    let mut out = Vec::new();
    let e = sep::Decoder::new(&archive[..])
        .unwrap()
        .with_prior(Some(prior.clone()))
        .with_threads(1)
        .with_memory_limit(Some(with - 1))
        .read_to_end(&mut out)
        .unwrap_err();
    assert!(e.to_string().contains("memory"), "{e}");
    assert!(out.is_empty(), "output before the refusal");
    let mut out = Vec::new();
    sep::Decoder::new(&archive[..])
        .unwrap()
        .with_prior(Some(prior.clone()))
        .with_threads(1)
        .with_memory_limit(Some(with))
        .read_to_end(&mut out)
        .expect("decodes within the limit");
    assert_eq!(out, content);
    // The encoder's estimate counts the prior too.
    let opts = |prior: Option<sep::Prior>| Options {
        model: model.clone(),
        prior,
        block_size: Some(16_384),
        content_length: Some(content.len() as u64),
        ..Options::default()
    };
    let (enc_without, enc_with) = (
        opts(None).encoder_memory().unwrap(),
        opts(Some(prior.clone())).encoder_memory().unwrap(),
    );
    assert!(
        enc_with >= enc_without + prior.held_bytes(),
        "{enc_with} {enc_without}"
    );
}
