//! Damaged archives must fail with a clean error, never a panic, a hang or
//! wrong output: every truncation point and every single-bit flip of a small
//! archive of each model (store, order2, a tiny network, context mixing without
//! and with the tiny network), each of three blocks, the last one stored, in
//! format version 3 (the default; issue 20, doc/FORMAT.md section 13), and
//! store and order2 in version 1 as well.
//!
//! A flip inside a stored block's payload must be that block's checksum error
//! (sampled: every 16th byte of those payloads);
//! a flip anywhere else an error, or (when it lands in the slack of a stream's
//! last byte, inside the final coding interval) exactly the original content.
//! The decoder's work is bounded by the lengths in the archive (doc/FORMAT.md
//! section 7), and `block_size` is protected by `header_check`, so no flip can
//! make a decode run long. The command line's exit codes for the same damage:
//! `crates/cli/tests/corruption.rs`.

mod common;
use common::{noise, tiny_hybrid, tiny_mix, tiny_neural};
use sep::format::{BlockType, Record};
use sep::{Error, Model, Options};
use std::ops::Range;

/// One damaged-archive case: a model, its original, its archive, and the byte
/// ranges of the archive that are stored payloads.
struct Case {
    model: Model,
    data: Vec<u8>,
    archive: Vec<u8>,
    stored: Vec<Range<usize>>,
}

/// Text, then noise: two modelled blocks and a stored one. Networks get blocks of
/// 300 bytes (each of the thousands of decodes trains one), the others 700.
fn case(model: Model, format_version: u8) -> Case {
    let block = if matches!(model, Model::Neural(_))
        || matches!(&model, Model::Mix(c) if c.neural.is_some())
    {
        300
    } else {
        700
    };
    let text = b"It was the best of times, it was the worst of times; ".repeat(30);
    let data = [&text[..2 * block], &noise(block, 3)].concat();
    let options = Options {
        model: model.clone(),
        block_size: Some(block as u32),
        small_blocks: true,
        format_version,
        ..Options::default()
    };
    let archive = sep::compress(&data, &options).unwrap();
    assert_eq!(archive[4], format_version);
    let stored = stored_payloads(&archive);
    let blocks = sep::inspect(&archive[..]).unwrap()[0].blocks;
    assert_eq!(blocks, 3, "{}: blocks", model.name());
    let expected_stored = if model == Model::Store { 3 } else { 1 };
    assert_eq!(stored.len(), expected_stored, "{}: stored", model.name());
    Case {
        model,
        data,
        archive,
        stored,
    }
}

/// Byte ranges of the stored payloads of a (single, valid) archive.
fn stored_payloads(archive: &[u8]) -> Vec<Range<usize>> {
    let mut r = archive;
    let header = sep::read_header(&mut r).unwrap();
    let mut ranges = Vec::new();
    while let Record::Block(b) = Record::read(&mut r, &header).unwrap() {
        let at = archive.len() - r.len();
        if b.block_type == BlockType::Stored {
            ranges.push(at..at + b.payload_len as usize);
        }
        r = &r[b.payload_len as usize..];
    }
    ranges
}

fn every_truncation_fails_cleanly(case: &Case) {
    let Case { model, archive, .. } = case;
    for len in 0..archive.len() {
        let r = sep::decompress(&archive[..len]);
        assert!(
            r.is_err(),
            "{}: truncation to {len} of {} decoded",
            model.name(),
            archive.len()
        );
        let e = r.unwrap_err();
        assert!(e.is_corrupt(), "{} at {len}: {e}", model.name());
        // The structure check agrees.
        assert!(sep::inspect(&archive[..len]).is_err());
    }
}

fn every_single_bit_flip_fails_cleanly_or_decodes_exactly(case: &Case) {
    let Case {
        model,
        data,
        archive,
        stored,
    } = case;
    let name = model.name();
    let mut damaged = archive.clone();
    let (mut errors, mut harmless, mut in_stored) = (0, 0, 0);
    for bit in 0..archive.len() * 8 {
        let byte = bit / 8;
        let stored_at = stored.iter().position(|r| r.contains(&byte));
        // Stored payloads are sampled (their first and last bytes, every 16th byte
        // between): a flip there is caught by the block's checksum by construction,
        // and decoding the blocks before it is most of the sweep's time.
        if stored_at.is_some_and(|i| {
            let r = &stored[i];
            byte != r.start && byte != r.end - 1 && byte % 16 != 0
        }) {
            continue;
        }
        damaged[byte] ^= 1 << (bit % 8);
        let result = sep::decompress(&damaged);
        damaged[byte] ^= 1 << (bit % 8);
        if let Some(i) = stored_at {
            let block = if *model == Model::Store { i } else { 2 };
            match result {
                Err(Error::BlockChecksum { index, .. }) if index == block as u64 => {}
                other => panic!(
                    "{name}: flip of bit {bit} in stored block {block}: {:?}",
                    other.map(|_| "decoded")
                ),
            }
            in_stored += 1;
            continue;
        }
        match result {
            Err(e) => {
                assert!(
                    e.is_corrupt(),
                    "{name} bit {bit}: not reported as corruption: {e}"
                );
                errors += 1;
            }
            Ok(out) => {
                assert!(
                    out == *data,
                    "{name}: flip of bit {bit} decoded to wrong content"
                );
                harmless += 1;
            }
        }
    }
    eprintln!(
        "{name}: {} bits: {in_stored} flips in stored payloads (block checksum), {errors} \
         other flips rejected, {harmless} harmless",
        archive.len() * 8
    );
    assert!(
        harmless * 100 <= errors,
        "{name}: too many flips without effect ({harmless})"
    );
}

/// One test per model, so that the harness runs them side by side.
macro_rules! sweeps {
    ($($name:ident: $model:expr, $version:expr;)*) => {$(
        mod $name {
            use super::*;

            #[test]
            fn every_truncation_fails_cleanly() {
                super::every_truncation_fails_cleanly(&case($model, $version));
            }

            #[test]
            fn every_single_bit_flip_fails_cleanly_or_decodes_exactly() {
                super::every_single_bit_flip_fails_cleanly_or_decodes_exactly(&case($model, $version));
            }
        }
    )*};
}

sweeps! {
    store: Model::Store, 3;
    order2: Model::Order2, 3;
    neural: tiny_neural(), 3;
    mix: tiny_mix(), 3;
    mix_with_network: tiny_hybrid(), 3;
    store_v1: Model::Store, 1;
    order2_v1: Model::Order2, 1;
}

#[test]
fn errors_name_what_is_wrong() {
    let text = b"It was the best of times, it was the worst of times; ".repeat(30);
    let sample = [text, noise(300, 3)].concat();
    let archive = sep::compress(
        &sample,
        &Options {
            model: Model::Order2,
            // The offsets below are version 1's (compact.rs checks version 3).
            format_version: 1,
            ..Options::default()
        },
    )
    .unwrap();
    let msg = |a: &[u8]| sep::decompress(a).unwrap_err().to_string();
    assert!(msg(b"hello world").contains("not a sep archive"));
    assert!(msg(b"").contains("empty"));
    let mut v = archive.clone();
    v[4] = 9;
    assert!(msg(&v).contains("unsupported format version 9"));
    let mut v = archive.clone();
    v[6] = 1;
    assert!(msg(&v).contains("reserved"));
    let n = archive.len();
    let mut v = archive.clone();
    v[n - 1] ^= 0x80;
    assert!(msg(&v).contains("content checksum mismatch"));
    let mut v = archive.clone();
    v[n - 16] ^= 1;
    assert!(msg(&v).contains("content"), "{}", msg(&v));
    // A payload byte: the block's checksum fails.
    let mut v = archive.clone();
    v[70] ^= 0x10;
    assert!(msg(&v).contains("block 0"), "{}", msg(&v));
    assert!(msg(&archive[..n - 3]).contains("truncated"));
}
