//! Helpers shared by the integration tests: corpus access and a round-trip
//! driver used for every model and size.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::PathBuf;

/// The test corpus kept in the repository (`tests/corpus`: the quick set of
/// the development corpus, with its provenance in `tests/corpus/README.md`).
/// Tests never read `../shared` or `$SEP_CORPUS`, so a fresh clone passes
/// them.
pub fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus")
}

/// `(name, bytes)` of every file of a named set.
pub fn corpus_set(set: &str) -> Vec<(String, Vec<u8>)> {
    let dir = corpus_dir();
    let list =
        std::fs::read_to_string(dir.join("sets").join(format!("{set}.txt"))).expect("set list");
    list.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|name| {
            (
                name.to_string(),
                std::fs::read(dir.join("files").join(name)).expect("corpus file"),
            )
        })
        .collect()
}

/// Deterministic pseudo-random bytes.
pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// Compresses with the one-shot function and with the streaming encoder
/// (length unknown, odd write sizes), checks both decode to `data` through
/// the one-shot and the streaming decoder, and returns the one-shot archive.
pub fn round_trip(data: &[u8], options: &sep::Options) -> Vec<u8> {
    let archive = sep::compress(data, options).expect("compress");
    assert_eq!(
        sep::decompress(&archive).expect("decompress"),
        data,
        "one-shot round trip"
    );

    let streamed_opts = sep::Options {
        content_length: None,
        ..options.clone()
    };
    let mut enc = sep::Encoder::new(Vec::new(), &streamed_opts).expect("encoder");
    for chunk in data.chunks(7919) {
        enc.write_all(chunk).expect("write");
    }
    let streamed = enc.finish().expect("finish");
    let mut dec = sep::Decoder::new(&streamed[..])
        .expect("decoder")
        .with_threads(options.threads);
    let mut out = Vec::new();
    let mut buf = [0u8; 1000];
    loop {
        let n = dec.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    assert_eq!(out, data, "streaming round trip");
    // With the block size fixed, the model is the same, so only the header's
    // length field and flag differ (and, in format version 3, the header's
    // length: `content_length` is a varint present only with the flag).
    // (Without, the one-shot encoder sizes blocks and tables to the known
    // length.)
    if options.block_size.is_some() {
        let header_len = |a: &[u8]| {
            sep::read_header(&mut &a[..])
                .expect("header")
                .to_bytes()
                .len()
        };
        let (a, s) = (header_len(&archive), header_len(&streamed));
        if archive[4] == 1 {
            assert_eq!(a, s, "streamed archive differs in size");
        }
        assert!(
            archive[a..] == streamed[s..],
            "streamed archive differs after the header"
        );
    }
    archive
}

/// A neural configuration small enough for exhaustive tests: PAC with every
/// layer kind (two pairs, the cache on), a few streams.
pub fn tiny_neural() -> sep::Model {
    sep::Model::Neural(sep::neural::NeuralConfig {
        backbone: sep::neural::BackboneConfig::Pac(sep::neural::PacConfig {
            context: 4,
            embed: 8,
            ffn: 32,
            pairs: 2,
            cache: true,
        }),
        streams: 8,
        min_stream_len: 64,
        adam: sep::neural::AdamConfig::default(),
    })
}

/// A small context-mixing configuration with every kind of context and both
/// match models.
pub fn small_cm() -> sep::CmConfig {
    sep::CmConfig {
        orders: 0b0011_1111,
        word: true,
        sparse: true,
        record: true,
        long: 0b0011,
        match_min: 5,
        match2_min: 12,
        table_bits: 18,
        match_bits: 14,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision: 0,
    }
}

/// The mixed model without a network (one stream).
pub fn tiny_mix() -> sep::Model {
    sep::Model::Mix(sep::MixConfig {
        cm: small_cm(),
        neural: None,
        serial: None,
    })
}

/// The mixed model with the tiny network (several streams coded side by side).
pub fn tiny_hybrid() -> sep::Model {
    let sep::Model::Neural(net) = tiny_neural() else {
        unreachable!()
    };
    sep::Model::Mix(sep::MixConfig {
        cm: small_cm(),
        neural: Some(net),
        serial: None,
    })
}

/// Every model kind, the networks tiny.
pub fn all_models() -> Vec<sep::Model> {
    vec![
        sep::Model::Store,
        sep::Model::Order2,
        tiny_neural(),
        tiny_mix(),
        tiny_hybrid(),
    ]
}

/// Options that code with prior `p` (its model, the prior).
pub fn prior_options(p: &sep::Prior) -> sep::Options {
    sep::Options {
        model: p.model(),
        prior: Some(p.clone()),
        ..sep::Options::default()
    }
}

/// Decodes `archive` with prior `p` (or none) on `threads` threads.
pub fn decode_with_prior(
    archive: &[u8],
    p: Option<&sep::Prior>,
    threads: usize,
) -> sep::Result<Vec<u8>> {
    let mut out = Vec::new();
    sep::Decoder::new(archive)?
        .with_prior(p.cloned())
        .with_threads(threads)
        .read_to_end(&mut out)
        .map_err(sep::Error::from_io)?;
    Ok(out)
}

/// Codes `data` with prior `p` in 4 KiB blocks on one thread and on two:
/// the archives must be identical and decode on one thread and on two.
pub fn assert_prior_archives_agree_across_threads(p: &sep::Prior, data: &[u8]) {
    let base = sep::Options {
        block_size: Some(4096),
        ..prior_options(p)
    };
    let with = |threads| {
        sep::compress(
            data,
            &sep::Options {
                threads,
                ..base.clone()
            },
        )
        .unwrap()
    };
    let (one, two) = (with(1), with(2));
    assert_eq!(one, two);
    assert_eq!(decode_with_prior(&one, Some(p), 2).unwrap(), data);
    assert_eq!(decode_with_prior(&one, Some(p), 1).unwrap(), data);
}

/// Checks the golden prior files listed in `tests/golden/prior-v1/MANIFEST`
/// (written by crates/sep/examples/make_golden): each prior loads with its
/// id and size (and passes `check_prior`), each archive's input is
/// unchanged, its header names its prior, it decodes with that prior to the
/// input and the encoder still writes its bytes; without a prior it decodes
/// only when the prior is built in. Returns (priors, archives) checked.
pub fn check_golden_priors(manifest: &str, check_prior: impl Fn(&str, &sep::Prior)) -> (u32, u32) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/prior-v1");
    let manifest = std::fs::read_to_string(dir.join(manifest)).expect("manifest");
    let (mut priors, mut archives) = (0, 0);
    for line in manifest.lines().filter(|l| !l.starts_with('#')) {
        let [file, prior_or_samples, input, bytes, hash] = line.split('\t').collect::<Vec<_>>()[..]
        else {
            panic!("bad row {line}");
        };
        let data = std::fs::read(dir.join(file)).expect("file");
        if file.ends_with(".sepp") {
            let p = sep::Prior::from_bytes(&data).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(p.id_hex(), hash, "{file}: id changed");
            assert_eq!(data.len().to_string(), bytes, "{file}");
            check_prior(file, &p);
            priors += 1;
            continue;
        }
        // A built-in prior (crates/sep/priors) is found by its id alone.
        let builtin = sep::Builtin::from_name(prior_or_samples)
            .filter(|_| prior_or_samples.starts_with("builtin:"));
        let p = match builtin {
            Some(b) => sep::Prior::builtin(b),
            None => sep::Prior::from_file(dir.join(prior_or_samples)).expect("prior"),
        };
        let original = std::fs::read(dir.join("../inputs").join(input)).expect("input");
        assert_eq!(original.len().to_string(), bytes, "{input}: size changed");
        assert_eq!(
            format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&original)),
            hash,
            "{input} changed"
        );
        let header = sep::read_header(&mut &data[..]).expect("header");
        assert_eq!(header.prior_id, Some(p.id()), "{file}");
        let out = decode_with_prior(&data, Some(&p), 1).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(out == original, "{file}: decodes to different bytes");
        assert!(
            sep::compress(
                &original,
                &sep::Options {
                    format_version: header.version,
                    ..prior_options(&p)
                }
            )
            .unwrap()
                == data,
            "{file}: the encoder writes other bytes"
        );
        if builtin.is_some() {
            assert!(sep::decompress(&data).unwrap() == original, "{file}");
        } else {
            assert!(matches!(
                sep::decompress(&data),
                Err(sep::Error::PriorNeeded { .. })
            ));
        }
        archives += 1;
    }
    (priors, archives)
}
