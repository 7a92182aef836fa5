//! Unit tests of `cm`.

use super::*;
use crate::matcher::Sequential;
use sep_coder::{Decoder, Encoder, quantize};

fn config() -> CmConfig {
    CmConfig {
        orders: 0b0011_1111,
        word: true,
        sparse: true,
        record: true,
        long: 0b0101,
        match_min: 6,
        match2_min: 16,
        table_bits: 18,
        match_bits: 14,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision: 0,
    }
}

fn round_trip(data: &[u8], cfg: &CmConfig) -> usize {
    let mut enc = Encoder::new();
    let mut m = Cm::new(cfg, false, data.len());
    let mut st = CmStream::new(0);
    let mut buf = data.to_vec();
    for pos in 0..buf.len() {
        m.code_byte(&mut enc, &mut st, &mut buf, pos, &Sequential(pos), None);
    }
    let bytes = enc.finish();
    let mut out = vec![0u8; data.len()];
    let mut dec = Decoder::new(&bytes);
    let mut m = Cm::new(cfg, false, data.len());
    let mut st = CmStream::new(0);
    for pos in 0..out.len() {
        m.code_byte(&mut dec, &mut st, &mut out, pos, &Sequential(pos), None);
    }
    assert_eq!(out, data);
    bytes.len()
}

#[test]
fn round_trips_and_beats_order2_on_repeats() {
    let text: Vec<u8> = b"the quick brown fox jumps over the lazy dog; "
        .iter()
        .cycle()
        .take(30_000)
        .copied()
        .collect();
    let n = round_trip(&text, &config());
    assert!(n < 400, "{n}");
    round_trip(b"", &config());
    round_trip(&[0], &config());
}

#[test]
fn image_model_round_trips_and_helps_an_image() {
    let mut img = b"P6\n40 30\n255\n".to_vec();
    for y in 0..30u32 {
        for x in 0..40u32 {
            img.extend_from_slice(&[(x * 6) as u8, (y * 8) as u8, ((x + y) * 3) as u8]);
        }
    }
    let with = round_trip(&img, &config());
    let without = round_trip(
        &img,
        &CmConfig {
            image: false,
            ..config()
        },
    );
    assert!(
        with < without,
        "image contexts did not help: {with} vs {without}"
    );
}

#[test]
fn neural_input_follows_the_distribution() {
    let mut p = [1e-6f32; 256];
    p[b'A' as usize] = 1.0;
    let mut t = FreqTable::default();
    quantize(&p, &mut t);
    // 'A' = 0b0100_0001: first bit 0, second 1.
    assert!(neural_input(&t, 1, 7) < -1500);
    assert!(neural_input(&t, 0b10, 6) > 1500);
    // A uniform distribution says nothing.
    assert_eq!(neural_input(&FreqTable::default(), 1, 7), 0);
}

#[test]
fn confidence_inputs_per_revision() {
    // Revisions 0-4 and detected kinds: none; 5: order 1 and the text
    // family's first context; 6: orders 1-2 and every text context.
    for r in 0..=4 {
        assert!(confidence_contexts(r, true, 26, Some(7), 34).is_empty());
    }
    assert!(confidence_contexts(6, false, 26, Some(7), 34).is_empty());
    assert_eq!(confidence_contexts(5, true, 26, Some(7), 34), vec![0, 7]);
    assert_eq!(
        confidence_contexts(6, true, 26, Some(7), 34),
        vec![0, 1, 7, 8, 9, 10, 11, 12, 13, 14]
    );
    assert_eq!(confidence_contexts(6, true, 9, None, 34), vec![0, 1]);
    assert_eq!(confidence_contexts(6, true, 26, Some(7), 3), vec![0, 1, 7]);
    // The default set: 26 contexts, 4 direct inputs; the mixer grows by
    // the confidence inputs.
    let mut cfg = config();
    cfg.long = 0b0001;
    for (revision, inputs) in [(4, 30), (5, 32), (6, 40)] {
        cfg.revision = revision;
        let m = Cm::new(&cfg, false, 1000);
        assert_eq!(m.mixer.inputs(), inputs, "revision {revision}");
    }
}

#[test]
fn confidence_input_is_the_deterministic_states_prediction() {
    let map = StateMap::default();
    assert_eq!(confidence_input(&map, 0), 0);
    let ones = STATES.next(STATES.next(0, 1), 1);
    assert_eq!(confidence_input(&map, ones), map.stretched(ones));
    assert!(confidence_input(&map, ones) > 0);
    let mixed = STATES.next(ones, 0);
    assert_eq!(confidence_input(&map, mixed), 0);
}
