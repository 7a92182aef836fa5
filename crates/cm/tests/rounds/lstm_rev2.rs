//! The serial network's kind 2 (doc/FORMAT.md 4.13.1, issue 19): kind 1's
//! LSTM with a decaying learning rate. Round trips (text, noise, a lying WAV
//! header), determinism, and checks that fail if kind 2 codes as kind 1.
use crate::common;

use common::{config, mixed_text, noise, recurring_sentences, wav_header};
use sep_cm::{Cm, CmStream, Lstm, LstmConfig, Sequential};
use sep_coder::{Decoder, Encoder};

fn lstm(kind: u8) -> LstmConfig {
    LstmConfig {
        kind,
        cells: 16,
        horizon: 8,
        lr: 100,
        delay: 0,
    }
}

/// Codes `data` at CM `revision` with the serial network `net`, decodes it,
/// checks the result and returns the coded bytes.
fn round_trip(data: &[u8], revision: u8, net: &LstmConfig) -> Vec<u8> {
    let cfg = config(revision);
    let mut enc = Encoder::new();
    let mut m = Cm::new(&cfg, false, data.len()).with_lstm(net);
    let mut st = CmStream::new(0);
    let mut buf = data.to_vec();
    for pos in 0..buf.len() {
        m.code_byte(&mut enc, &mut st, &mut buf, pos, &Sequential(pos), None);
    }
    let bytes = enc.finish();
    let mut dec = Decoder::new(&bytes);
    let mut m = Cm::new(&cfg, false, data.len()).with_lstm(net);
    let mut st = CmStream::new(0);
    let mut out = vec![0u8; data.len()];
    for pos in 0..out.len() {
        m.code_byte(&mut dec, &mut st, &mut out, pos, &Sequential(pos), None);
    }
    assert!(out == data, "kind {} at revision {revision}", net.kind);
    bytes
}

/// Text with sentences that recur at varying distances: the match model's
/// expected byte is often right, and the network learns when.
fn recurring_text() -> Vec<u8> {
    let words = [
        "the", "network", "reads", "one", "stream", "and", "predicts", "every", "byte", "from",
        "bytes", "before", "it", "while", "context", "models", "count",
    ];
    recurring_sentences(&words, 7, 6, 6, 6000)
}

#[test]
fn kind2_round_trips_and_is_deterministic() {
    let mut lying = wav_header(2, 16, 44100, 1 << 20);
    lying.extend(mixed_text());
    let inputs = [mixed_text(), noise(1500, 3), lying, recurring_text()];
    for data in &inputs {
        let a = round_trip(data, 10, &lstm(2));
        let b = round_trip(data, 10, &lstm(2));
        assert_eq!(a, b, "kind 2 is not deterministic");
    }
}

/// Mean code length in bits per byte of `data` under the network alone.
fn lstm_bits(data: &[u8], c: &LstmConfig) -> f64 {
    let mut net = Lstm::new(c);
    let mut total = 0.0f64;
    for &b in data {
        total -= f64::from(net.predict()[usize::from(b)].max(1e-9)).log2();
        net.update(b);
    }
    total / data.len() as f64
}

#[test]
fn kind2_learns_faster_and_changes_the_code() {
    // Twice the rate at first: the network alone learns a recurring text
    // faster.
    let data = recurring_text();
    let (k1, k2) = (lstm_bits(&data, &lstm(1)), lstm_bits(&data, &lstm(2)));
    assert!(k2 < k1, "kind 2 {k2:.3} bits per byte, kind 1 {k1:.3}");
    // And the mixed model's code is not kind 1's.
    assert_ne!(
        round_trip(&data, 10, &lstm(1)),
        round_trip(&data, 10, &lstm(2))
    );
}

#[test]
fn kind_is_validated() {
    assert!(lstm(2).validate().is_ok());
    assert!(lstm(0).validate().is_err());
    // Kinds 3 and 4 (doc/FORMAT.md 4.13.2, 4.13.3) are valid; 5 is not.
    assert!(lstm(4).validate().is_ok());
    assert!(lstm(5).validate().is_err());
    assert_eq!(lstm(2).parameters(), lstm(1).parameters());
    assert_eq!(lstm(2).memory_bytes(), lstm(1).memory_bytes());
}
