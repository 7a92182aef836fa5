//! Memory of segmented blocks (issue 17), measured with the counting
//! allocator (`sep_kernels::CountingAllocator`, as `memory_estimate.rs`):
//! every estimate that counts transforms is an upper bound of the real peak.
//!
//! - `sep_transform::analyse_memory_bound` over the peak of `analyse` (the
//!   detector, preflate or lepton forward, the verifying inverse);
//! - `sep_transform::inverse_memory_bound` over each segment's inverse;
//! - `ArchiveInfo::decoder_memory` (`sep -l`, `--memory`) over a whole
//!   decode of archives with JPEG, deflate, x86 and PDF segments, with one
//!   and two threads, and `ArchiveInfo::segmented_memory` is counted;
//! - `Options::encoder_memory` over a whole compression;
//! - a decoder whose memory limit is below a segmented block's need refuses
//!   it before decoding, with the memory limit's error.
//!
//! This binary holds one test only: the count is process-wide.

mod common;

use sep::segment::transform as t;
use sep_kernels::CountingAllocator;
use std::io::Read;
use std::path::PathBuf;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// Peak heap bytes above what was live before, while `f` runs.
fn peak<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = CountingAllocator::live_bytes();
    CountingAllocator::reset_peak();
    let r = f();
    (r, CountingAllocator::peak_bytes().saturating_sub(before))
}

fn input(path: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn transform_memory_estimates_are_upper_bounds_of_the_measured_peaks() {
    // A PDF-like file: text around a zlib stream of 155 KB of text and
    // markup (paper1 and html), which inflates to about 3x its block.
    let text: Vec<u8> = [
        input("tests/corpus/files/calgary.paper1"),
        input("tests/corpus/files/snappy.html"),
    ]
    .concat();
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut z, &text).unwrap();
    let pdf = [
        b"%PDF-1.4\n1 0 obj << /Filter /FlateDecode >> stream\n".to_vec(),
        z.finish().unwrap(),
        b"\nendstream endobj\n%%EOF\n".to_vec(),
    ]
    .concat();
    let files = [
        (
            "jpeg crop",
            input("tests/golden/inputs/fireworks.crop128x96.jpg"),
        ),
        ("gzip", input("tests/golden/inputs/grammar.lsp.gz")),
        ("x86", input("tests/golden/inputs/x86.text16k")),
        // A whole PNG: transform 6 (png-pixels) for `analyse`.
        ("png", input("tests/golden/inputs/kodim23.crop32x24.png")),
        // A 24-bit image: transform 7 (colour) for `analyse`.
        ("ppm", input("tests/golden/inputs/kodim23.crop32x24.ppm")),
        ("pdf", pdf),
        ("jpeg", input("tests/corpus/files/snappy.fireworks.jpeg")),
    ];
    let model = common::tiny_mix();
    for (name, data) in &files {
        // The transforms alone.
        let (plan, p) = peak(|| t::analyse(data));
        let plan = plan.unwrap_or_else(|| panic!("{name}: no transform"));
        let bound = t::analyse_memory_bound(data.len());
        eprintln!("{name}: analyse peak {p}, bound {bound}");
        assert!(p <= bound, "{name}: analyse peak {p} > bound {bound}");
        let mut at = 0usize;
        for s in &plan.segments {
            let inner = &plan.inner[at..at + s.inner_len as usize];
            at += s.inner_len as usize;
            let (back, p) =
                peak(|| t::inverse(s.kind, inner, &s.extra, s.raw_len as usize).expect("inverse"));
            drop(back);
            let bound = t::inverse_memory_bound(s.kind, s.raw_len as usize, inner.len(), &s.extra);
            eprintln!(
                "{name}: {} segment inverse peak {p}, bound {bound}",
                s.kind.name()
            );
            assert!(
                p <= bound,
                "{name}: {:?} inverse peak {p} > bound {bound}",
                s.kind
            );
        }

        // A whole compression and decompression.
        // Transform 7 is tried from CM revision 46 on.
        let model = match (&model, *name) {
            (sep::Model::Mix(m), "ppm") => {
                let mut m = m.clone();
                m.cm.revision = 46;
                sep::Model::Mix(m)
            }
            _ => model.clone(),
        };
        let options = sep::Options {
            model,
            // Two blocks where that cuts no segment.
            block_size: Some(if *name == "pdf" || *name == "jpeg" {
                data.len() as u32
            } else {
                data.len().div_ceil(2).max(sep::MIN_BLOCK_SIZE as usize) as u32
            }),
            content_length: Some(data.len() as u64),
            ..sep::Options::default()
        };
        let (archive, p) = peak(|| sep::compress(data, &options).expect("compress"));
        let bound = options.encoder_memory().expect("estimate");
        eprintln!("{name}: encoder peak {p}, estimate {bound}");
        assert!(p <= bound, "{name}: encoder peak {p} > estimate {bound}");
        let info = &sep::inspect(&archive[..]).expect("inspect")[0];
        let blocks = sep::segment::list_blocks(&archive[..]).expect("list");
        assert!(
            blocks
                .iter()
                .any(|b| b.block_type == sep::format::BlockType::Segmented),
            "{name}: no segmented block"
        );
        assert!(info.segmented_memory > 0, "{name}");
        for threads in [1, 2] {
            let mut buf = vec![0u8; 1 << 16];
            let (n, p) = peak(|| {
                let mut dec = sep::Decoder::new(&archive[..])
                    .unwrap()
                    .with_threads(threads);
                let mut n = 0;
                loop {
                    match dec.read(&mut buf).expect("decodes") {
                        0 => break n,
                        k => n += k,
                    }
                }
            });
            assert_eq!(n, data.len());
            let estimate = info.decoder_memory(threads);
            eprintln!("{name}, -T{threads}: decoder peak {p}, estimate {estimate}");
            assert!(
                p <= estimate,
                "{name} -T{threads}: decoder peak {p} > estimate {estimate}"
            );
        }
        // Without its segmented blocks the estimate would be lower for the
        // PDF, whose inflated content needs a larger model than its blocks.
        if *name == "pdf" {
            let plain = sep::ArchiveInfo {
                segmented_memory: 0,
                ..info.clone()
            };
            assert!(plain.decoder_memory(1) < info.decoder_memory(1));
            // A limit between the two: the header's bound passes, the
            // segmented block is refused before it is decoded.
            let limit = plain.decoder_memory(1) + 1;
            let err = sep::Decoder::new(&archive[..])
                .unwrap()
                .with_threads(1)
                .with_memory_limit(Some(limit))
                .read_to_end(&mut Vec::new())
                .expect_err("over the memory limit");
            assert!(err.to_string().contains("segmented block"), "{err}");
        }
    }
}
