//! Every input the fuzzers ever crashed on (`fuzz/artifacts/TARGET/`), and every seed
//! they start from (`fuzz/seeds/TARGET/`), replayed through the targets' own checks
//! (`fuzz/src/lib.rs`, included here), so that a crash found once stays fixed without
//! nightly Rust or libFuzzer.
//!
//! A new crasher: copy it to `fuzz/artifacts/TARGET/`, fix the bug, commit both.

#[allow(dead_code, unreachable_pub)]
#[path = "../../../fuzz/src/lib.rs"]
mod targets;

use std::path::{Path, PathBuf};

const TARGETS: [&str; 9] = [
    "header",
    "decode_order2",
    "decode_neural",
    "decode_mix",
    "decode_mix2",
    "decode_hybrid",
    "roundtrip",
    "transforms",
    "decode_lossy", // issue 21
];

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn run(target: &str, data: &[u8]) {
    match target {
        "header" => targets::header(data),
        "roundtrip" => targets::roundtrip(data),
        "transforms" => targets::transforms(data),
        "decode_lossy" => targets::decode_lossy(data),
        decode => targets::decode_blocks(&targets::decode_model(decode), data),
    }
}

/// The files of `dir/TARGET/` for every target, sorted.
fn inputs(dir: &str) -> Vec<(&'static str, PathBuf)> {
    let mut all = Vec::new();
    for target in TARGETS {
        let Ok(entries) = std::fs::read_dir(fuzz_dir().join(dir).join(target)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.is_file() && !is_note(p))
            .collect();
        files.sort();
        all.extend(files.into_iter().map(|p| (target, p)));
    }
    all
}

fn is_note(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "md")
}

fn replay(dir: &str) -> usize {
    let all = inputs(dir);
    for (target, path) in &all {
        let data = std::fs::read(path).expect("read input");
        eprintln!("{target}: {}", path.display());
        run(target, &data);
    }
    all.len()
}

#[test]
fn committed_crashers_no_longer_crash() {
    let n = replay("artifacts");
    eprintln!("{n} crashers replayed");
}

#[test]
fn seeds_pass_every_check() {
    let n = replay("seeds");
    assert!(n >= TARGETS.len(), "only {n} seeds: run write_fuzz_seeds");
}

#[test]
fn targets_accept_trivial_inputs() {
    for target in TARGETS {
        for data in [
            &[][..],
            &[0],
            &[1],
            &[0xFF; 3],
            &[1, 0, 4, 0, 1, 2, 3, 4, 5],
        ] {
            run(target, data);
        }
    }
}

/// Writes the seed corpora `fuzz/seeds/TARGET/`: small valid inputs from which the
/// fuzzers start (`cargo test -p sep --test fuzz_regressions -- --ignored`). Rerun when
/// a model changes; stale seeds remain valid inputs, only less useful ones.
#[test]
#[ignore = "writes fuzz/seeds; run by hand"]
fn write_fuzz_seeds() {
    let texts: [&[u8]; 4] = [
        b"",
        b"a",
        b"It was the best of times, it was the worst of times, it was the age of wisdom",
        &[
            0, 1, 2, 3, 250, 251, 252, 253, 0, 1, 2, 3, 250, 251, 252, 253, 9, 9, 9, 9,
        ],
    ];
    let write = |target: &str, name: String, bytes: &[u8]| {
        let dir = fuzz_dir().join("seeds").join(target);
        std::fs::create_dir_all(&dir).expect("create seeds folder");
        std::fs::write(dir.join(name), bytes).expect("write seed");
    };
    for target in &TARGETS[1..6] {
        let model = targets::decode_model(target);
        for (i, text) in texts.iter().enumerate() {
            let options = sep::Options {
                model: model.clone(),
                block_size: Some(targets::BLOCK_SIZE),
                small_blocks: true,
                ..sep::Options::default()
            };
            let mut enc = sep::Encoder::new(Vec::new(), &options).expect("encoder");
            std::io::Write::write_all(&mut enc, text).expect("write");
            let archive = enc.finish().expect("finish");
            // Mode 0: the blocks after the fixed header; mode 1: one framed block.
            // (An empty input's archive has the store header, not the model's.)
            let header_len = sep::read_header(&mut &archive[..])
                .expect("header")
                .to_bytes()
                .len();
            let blocks = [&[0u8][..], &archive[header_len..]].concat();
            write(target, format!("blocks-{i}"), &blocks);
            let framed = [&[1u8, text.len() as u8, 0, 3][..], text].concat();
            write(target, format!("framed-{i}"), &framed);
        }
    }
    for (i, model) in targets::roundtrip_models().into_iter().enumerate() {
        let archive = sep::compress(
            texts[2],
            &sep::Options {
                model,
                block_size: Some(32),
                small_blocks: true,
                ..sep::Options::default()
            },
        )
        .expect("compress");
        write(
            "header",
            format!("archive-{i}"),
            &[&[0u8][..], &archive].concat(),
        );
        write(
            "roundtrip",
            format!("model-{i}"),
            &[&[i as u8, 4][..], texts[2]].concat(),
        );
    }
    // Issue 22: an archive of three blocks followed by its seek table.
    let archive = sep::compress(
        texts[2],
        &sep::Options {
            model: sep::Model::Order2,
            block_size: Some(32),
            small_blocks: true,
            seek_table: true,
            ..sep::Options::default()
        },
    )
    .expect("compress");
    write(
        "header",
        "seek-table-0".into(),
        &[&[0u8][..], &archive].concat(),
    );
}
