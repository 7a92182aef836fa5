//! Issue 20: priors for the `fast` preset (CM revision 3, `sep_cm::FastCm`;
//! doc/FORMAT.md section 11). Train one on generated records, code held-out
//! records with and without it, refuse the wrong prior, none, and damaged
//! prior files, code the same bits with one thread or two, and keep the
//! golden fast priors of tests/golden/prior-v1 (MANIFEST-r3.tsv) decoding.

mod common;
use common::{assert_prior_archives_agree_across_threads, decode_with_prior, prior_options};
use sep::{Error, Model, Options, Preset, Prior};

/// URL-and-JSON-like records: the samples and the files share their
/// structure, not their values.
fn record(i: u32) -> Vec<u8> {
    let mut x = i.wrapping_mul(2_654_435_761) | 1;
    let mut out = String::new();
    let hosts = [
        "example.org",
        "news.example.com",
        "cdn.example.net",
        "sep.dev",
    ];
    for k in 0..10 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        out.push_str(&format!(
            "{{\"id\": {}, \"url\": \"https://{}/item/{}?ref={}\", \"score\": {}, \"ok\": {}}}\n",
            i * 100 + k,
            hosts[(x % 4) as usize],
            x % 10_000,
            x % 97,
            x % 1000,
            x.is_multiple_of(2)
        ));
    }
    out.into_bytes()
}

fn train(first: u32, n: u32) -> Vec<u8> {
    let samples: Vec<Vec<u8>> = (first..first + n).map(record).collect();
    let refs: Vec<&[u8]> = samples.iter().map(Vec::as_slice).collect();
    Prior::train(&Model::mix_preset(Preset::Fast), &refs).unwrap()
}

fn prior(first: u32) -> Prior {
    Prior::from_bytes(&train(first, 40)).unwrap()
}

#[test]
fn a_fast_prior_round_trips_and_pays() {
    let p = prior(0);
    assert_eq!(p.model(), Model::mix_preset(Preset::Fast));
    let mut total = (0, 0);
    for i in 1000..1005 {
        let file = record(i);
        let with = sep::compress(&file, &prior_options(&p)).unwrap();
        let header = sep::read_header(&mut &with[..]).unwrap();
        assert_eq!(header.prior_id, Some(p.id()));
        assert_eq!(decode_with_prior(&with, Some(&p), 1).unwrap(), file);
        let without = sep::compress(
            &file,
            &Options {
                model: p.model(),
                ..Options::default()
            },
        )
        .unwrap();
        assert_eq!(sep::decompress(&without).unwrap(), file);
        total.0 += with.len();
        total.1 += without.len();
    }
    // About 0.6 of the size here; 0.8 leaves room.
    assert!(
        total.0 * 10 < total.1 * 8,
        "{} with the prior, {} without",
        total.0,
        total.1
    );
}

#[test]
fn training_is_deterministic_and_the_file_is_a_revision_3_prior() {
    let a = train(0, 10);
    assert_eq!(a, train(0, 10));
    let p = Prior::from_bytes(&a).unwrap();
    // params: revision 3 is byte 1 of the mix params (section 4.9).
    let params_len = usize::from(u16::from_le_bytes([a[10], a[11]]));
    assert_eq!(a[12 + 1], 3, "cm_revision");
    let m = 12 + params_len;
    assert_eq!(a[m + 2], 0, "walk 0");
    assert_eq!(p.history_len(), (0..10).map(record).map(|r| r.len()).sum());
    // A packed fast prior is the same prior.
    let packed = Prior::pack(&a).unwrap();
    let q = Prior::from_bytes(&packed).unwrap();
    assert_eq!(q.id(), p.id());
    let archive = sep::compress(&record(77), &prior_options(&p)).unwrap();
    assert_eq!(
        decode_with_prior(&archive, Some(&q), 1).unwrap(),
        record(77)
    );
}

#[test]
fn the_wrong_fast_prior_or_none_fails_with_its_id() {
    let p = prior(0);
    let q = prior(500);
    let archive = sep::compress(&record(7), &prior_options(&p)).unwrap();
    match decode_with_prior(&archive, None, 1) {
        Err(Error::PriorNeeded { id }) => assert_eq!(id, p.id_hex()),
        other => panic!("{other:?}"),
    }
    let e = decode_with_prior(&archive, Some(&q), 1).unwrap_err();
    assert!(matches!(e, Error::PriorMismatch { .. }), "{e}");
    let line = e.to_string();
    assert!(line.contains(&p.id_hex()) && !line.contains('\n'), "{line}");
    let e = sep::decompress(&archive).unwrap_err().to_string();
    assert!(e.contains(&p.id_hex()) && !e.contains('\n'), "{e}");
    // A default-preset prior is another model's: refused both ways.
    let samples: Vec<Vec<u8>> = (0..10).map(record).collect();
    let refs: Vec<&[u8]> = samples.iter().map(Vec::as_slice).collect();
    let d = Prior::from_bytes(&Prior::train(&Model::mix_preset(Preset::Default), &refs).unwrap())
        .unwrap();
    let e = sep::compress(
        &record(3),
        &Options {
            model: Model::mix_preset(Preset::Fast),
            prior: Some(d.clone()),
            ..Options::default()
        },
    )
    .unwrap_err();
    assert!(e.to_string().contains("trained for"), "{e}");
    assert!(decode_with_prior(&archive, Some(&d), 1).is_err());
}

/// Rewrites the checksum of a version-1 prior file, so that the field
/// changed is what fails.
fn resealed(mut v: Vec<u8>) -> Vec<u8> {
    let n = v.len() - 8;
    v.truncate(n);
    let c = xxhash_rust::xxh3::xxh3_64(&v);
    v.extend_from_slice(&c.to_le_bytes());
    v
}

#[test]
fn a_damaged_fast_prior_is_refused() {
    let good = train(0, 10);
    Prior::from_bytes(&good).unwrap();
    let load = |b: &[u8]| Prior::from_bytes(b).unwrap_err().to_string();
    // Truncations: every short head, and one byte off the end.
    for n in (0..good.len()).step_by(97).chain([good.len() - 1]) {
        assert!(Prior::from_bytes(&good[..n]).is_err(), "{n} bytes");
    }
    // A flipped byte in the snapshot: the checksum.
    let mut v = good.clone();
    let at = v.len() - 30;
    v[at] ^= 0x40;
    assert!(load(&v).contains("checksum"));
    let params_len = usize::from(u16::from_le_bytes([good[10], good[11]]));
    let m = 12 + params_len;
    // Walk 1 is not a revision-3 walk.
    let mut v = good.clone();
    v[m + 2] = 1;
    let e = load(&resealed(v));
    assert!(e.contains("walk 1"), "{e}");
    // state_len one off.
    let mut v = good.clone();
    v[m + 8] ^= 1;
    let e = load(&resealed(v));
    assert!(e.contains("state"), "{e}");
    // table_bits changed: the snapshot no longer fits the model.
    let mut v = good.clone();
    v[m] -= 1;
    assert!(Prior::from_bytes(&resealed(v)).is_err());
    // A snapshot whose last run passes the model's state.
    let snapshot_len = u32::from_le_bytes(good[m + 16..m + 20].try_into().unwrap()) as usize;
    let snap_at = good.len() - 8 - snapshot_len;
    let mut v = good[..snap_at].to_vec();
    let state_len = u64::from_le_bytes(good[m + 8..m + 16].try_into().unwrap());
    let mut run = Vec::new();
    let mut z = state_len; // zeros up to the end, then one literal byte
    while z >= 0x80 {
        run.push(z as u8 | 0x80);
        z >>= 7;
    }
    run.push(z as u8);
    run.extend_from_slice(&[1, 0xAA]);
    v[m + 16..m + 20].copy_from_slice(&(run.len() as u32).to_le_bytes());
    v.extend_from_slice(&run);
    v.extend_from_slice(&[0; 8]);
    let e = load(&resealed(v));
    assert!(e.contains("snapshot"), "{e}");
    // A match-table position past the history: the table is the walk's
    // second part after the nibble table, order 1 and the maps.
    let history_len = u32::from_le_bytes(good[m + 4..m + 8].try_into().unwrap()) as usize;
    let table_bits = good[m];
    let at = (1u64 << table_bits) + 65536 + 6 * 1024 + 256 * 4;
    let mut v = good[..snap_at].to_vec();
    let mut run = Vec::new();
    let mut z = at;
    while z >= 0x80 {
        run.push(z as u8 | 0x80);
        z >>= 7;
    }
    run.push(z as u8);
    // XOR 0x7F000000 into the first slot: far past the history.
    run.extend_from_slice(&[4, 0, 0, 0, 0x7F]);
    v[m + 16..m + 20].copy_from_slice(&(run.len() as u32).to_le_bytes());
    v.extend_from_slice(&run);
    v.extend_from_slice(&[0; 8]);
    let e = load(&resealed(v));
    assert!(
        e.contains(&format!("{history_len} bytes of history")),
        "{e}"
    );
}

#[test]
fn fast_prior_archives_are_the_same_for_every_thread_count() {
    let p = prior(0);
    let data: Vec<u8> = (2000..2012).flat_map(record).collect();
    assert_prior_archives_agree_across_threads(&p, &data);
    // The empty input and one byte.
    for x in [&b""[..], b"x"] {
        let a = sep::compress(x, &prior_options(&p)).unwrap();
        assert_eq!(decode_with_prior(&a, Some(&p), 1).unwrap(), x);
    }
}

/// The fast priors of tests/golden/prior-v1 (MANIFEST-r3.tsv, written by
/// crates/sep/examples/make_golden) load with their ids, and their archives
/// decode to their inputs, forever.
#[test]
fn golden_fast_priors_load_and_their_archives_decode() {
    let checked = common::check_golden_priors("MANIFEST-r3.tsv", |file, p| {
        assert_eq!(p.model(), Model::mix_preset(Preset::Fast), "{file}");
    });
    assert_eq!(checked, (1, 2));
}
