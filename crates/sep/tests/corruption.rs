//! Damaged archives must fail with a clean error, never a panic, a hang or
//! wrong output: every truncation point and every single-bit flip of small
//! archives of each model.

mod common;
use common::noise;
use sep::{Model, Options};

fn sample() -> Vec<u8> {
    let text = b"It was the best of times, it was the worst of times; ".repeat(30);
    [text, noise(300, 3)].concat()
}

fn archives() -> Vec<(Model, Vec<u8>)> {
    let data = sample();
    Model::ALL
        .into_iter()
        .map(|m| {
            (
                m,
                sep::compress(
                    &data,
                    &Options {
                        model: m,
                        block_size: Some(700),
                        ..Options::default()
                    },
                )
                .unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_truncation_fails_cleanly() {
    for (model, archive) in archives() {
        for len in 0..archive.len() {
            let r = sep::decompress(&archive[..len]);
            assert!(
                r.is_err(),
                "{model:?}: truncation to {len} of {} decoded",
                archive.len()
            );
            let e = r.unwrap_err();
            assert!(e.is_corrupt(), "{model:?} at {len}: {e}");
            // The structure check agrees.
            assert!(sep::inspect(&archive[..len]).is_err());
        }
    }
}

#[test]
fn every_single_bit_flip_fails_cleanly() {
    let data = sample();
    for (model, archive) in archives() {
        let mut damaged = archive.clone();
        let mut failures = 0;
        for bit in 0..archive.len() * 8 {
            damaged[bit / 8] ^= 1 << (bit % 8);
            match sep::decompress(&damaged) {
                Err(e) => {
                    assert!(
                        e.is_corrupt(),
                        "{model:?} bit {bit}: not reported as corruption: {e}"
                    );
                    failures += 1;
                }
                Ok(out) => panic!(
                    "{model:?}: flip of bit {bit} decoded ({} bytes, equal to the original: {})",
                    out.len(),
                    out == data
                ),
            }
            damaged[bit / 8] ^= 1 << (bit % 8);
        }
        assert_eq!(failures, archive.len() * 8);
    }
}

#[test]
fn errors_name_what_is_wrong() {
    let archive = sep::compress(&sample(), &Options::default()).unwrap();
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
