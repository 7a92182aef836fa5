//! Damaged archives must fail with a clean error, never a panic, a hang or
//! wrong output: every truncation point and every single-bit flip of small
//! archives of each model.

mod common;
use common::{all_models, noise};
use sep::{Model, Options};

fn sample() -> Vec<u8> {
    let text = b"It was the best of times, it was the worst of times; ".repeat(30);
    [text, noise(300, 3)].concat()
}

/// `(model, original, archive)` for every model kind; the neural archive is
/// of a shorter sample, each of its thousands of decodes trains a network.
fn archives() -> Vec<(Model, Vec<u8>, Vec<u8>)> {
    all_models()
        .into_iter()
        .map(|m| {
            let mut data = sample();
            if matches!(m, Model::Neural(_) | Model::Mix(_)) {
                data.drain(400..1700);
            }
            let o = Options {
                model: m.clone(),
                block_size: Some(700),
                ..Options::default()
            };
            let archive = sep::compress(&data, &o).unwrap();
            (m, data, archive)
        })
        .collect()
}

#[test]
fn every_truncation_fails_cleanly() {
    for (model, _, archive) in archives() {
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

/// A flip must give an error, or (when it lands in the slack of a stream's
/// last byte, inside the final coding interval) exactly the original content:
/// never a panic, a hang or a wrong output.
#[test]
fn every_single_bit_flip_fails_cleanly_or_decodes_exactly() {
    for (model, data, archive) in archives() {
        let mut damaged = archive.clone();
        let (mut errors, mut harmless) = (0, 0);
        for bit in 0..archive.len() * 8 {
            damaged[bit / 8] ^= 1 << (bit % 8);
            match sep::decompress(&damaged) {
                Err(e) => {
                    assert!(
                        e.is_corrupt(),
                        "{} bit {bit}: not reported as corruption: {e}",
                        model.name()
                    );
                    errors += 1;
                }
                Ok(out) => {
                    assert!(
                        out == data,
                        "{}: flip of bit {bit} decoded to wrong content",
                        model.name()
                    );
                    harmless += 1;
                }
            }
            damaged[bit / 8] ^= 1 << (bit % 8);
        }
        eprintln!(
            "{}: {errors} flips rejected, {harmless} harmless",
            model.name()
        );
        assert!(
            harmless * 100 <= errors,
            "{}: too many flips without effect ({harmless})",
            model.name()
        );
    }
}

#[test]
fn errors_name_what_is_wrong() {
    let archive = sep::compress(
        &sample(),
        &Options {
            model: Model::Order2,
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
