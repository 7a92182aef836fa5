//! The serial network's kind 3 (doc/FORMAT.md 4.13.2, issue 19 item 3):
//! kind 2's LSTM whose trained weights are installed `delay` bytes after
//! each window, so the training may run on a second thread. The bits must
//! not depend on where the training ran (thread or inline, any thread
//! count), delay 0 must be kind 2 exactly, and a delay must change the code.
use crate::common;

use common::{config, recurring_sentences, serial_inputs};
use sep_cm::{Cm, CmStream, Lstm, LstmConfig, Sequential};
use sep_coder::{Decoder, Encoder};

fn lstm(kind: u8, horizon: u8, delay: u8) -> LstmConfig {
    LstmConfig {
        kind,
        cells: 16,
        horizon,
        lr: 100,
        delay,
    }
}

/// Text with sentences that recur at varying distances.
fn recurring_text(len: usize) -> Vec<u8> {
    let words = [
        "the",
        "trainer",
        "runs",
        "on",
        "a",
        "second",
        "thread",
        "and",
        "the",
        "predictor",
        "waits",
        "for",
        "its",
        "weights",
        "at",
        "one",
        "fixed",
        "byte",
    ];
    let mut out = recurring_sentences(&words, 11, 5, 7, len);
    out.truncate(len);
    out
}

/// A hash of every probability's bits the network gives over `data`, and
/// its mean code length in bits per byte.
fn run(data: &[u8], net: &mut Lstm) -> (u64, f64) {
    let mut h = 0u64;
    let mut total = 0.0f64;
    for &b in data {
        let p = net.predict();
        for &q in p.iter() {
            h = h.rotate_left(5) ^ u64::from(q.to_bits());
        }
        total -= f64::from(p[usize::from(b)].max(1e-9)).log2();
        net.update(b);
    }
    (h, total / data.len().max(1) as f64)
}

fn net_run(data: &[u8], c: &LstmConfig, threaded: bool) -> (u64, f64) {
    let mut net = Lstm::with_trainer_thread(c, threaded);
    assert_eq!(
        net.trains_on_thread(),
        threaded && c.kind >= 3,
        "the trainer thread did not start"
    );
    run(data, &mut net)
}

/// Encodes `data` at CM `revision` with the serial network `net`.
fn encode(data: &[u8], revision: u8, net: &LstmConfig) -> Vec<u8> {
    let mut enc = Encoder::new();
    let mut m = Cm::new(&config(revision), false, data.len()).with_lstm(net);
    let mut st = CmStream::new(0);
    let mut buf = data.to_vec();
    for pos in 0..buf.len() {
        m.code_byte(&mut enc, &mut st, &mut buf, pos, &Sequential(pos), None);
    }
    enc.finish()
}

/// Decodes `len` bytes of `bytes`.
fn decode(bytes: &[u8], len: usize, revision: u8, net: &LstmConfig) -> Vec<u8> {
    let mut dec = Decoder::new(bytes);
    let mut m = Cm::new(&config(revision), false, len).with_lstm(net);
    let mut st = CmStream::new(0);
    let mut out = vec![0u8; len];
    for pos in 0..out.len() {
        m.code_byte(&mut dec, &mut st, &mut out, pos, &Sequential(pos), None);
    }
    out
}

#[test]
fn threaded_and_inline_training_give_the_same_bits() {
    let data = recurring_text(6000);
    // Delays shorter than, equal to, between and far beyond the horizon.
    for (horizon, delay) in [(8, 0), (8, 1), (8, 8), (8, 13), (8, 24), (5, 255), (16, 64)] {
        let c = lstm(3, horizon, delay);
        let inline = net_run(&data, &c, false);
        for _ in 0..2 {
            assert_eq!(
                net_run(&data, &c, true),
                inline,
                "horizon {horizon} delay {delay}"
            );
        }
    }
}

#[test]
fn delay_0_is_kind_2_and_a_delay_changes_the_bits() {
    let data = recurring_text(4000);
    let k2 = net_run(&data, &lstm(2, 8, 0), false);
    assert_eq!(net_run(&data, &lstm(3, 8, 0), true), k2);
    assert_eq!(net_run(&data, &lstm(3, 8, 0), false), k2);
    let d16 = net_run(&data, &lstm(3, 8, 16), true);
    assert_ne!(d16.0, k2.0, "delay 16 coded as delay 0");
    // Stale weights (two windows late) cost a little, not the network.
    assert!(d16.1 < k2.1 * 1.10, "{d16:?} vs {k2:?}");
}

#[test]
fn kind3_round_trips_through_the_mixer_with_any_thread_count() {
    let mut inputs = serial_inputs();
    inputs.push(recurring_text(5000));
    let net = lstm(3, 16, 32);
    for data in &inputs {
        // Encoder and decoder each with a trainer thread, then without:
        // one archive, decodable either way.
        sep_kernels::set_num_threads(2);
        let threaded = encode(data, 12, &net);
        let back = decode(&threaded, data.len(), 12, &net);
        assert!(back == *data, "threaded round trip, {} bytes", data.len());
        sep_kernels::set_num_threads(1);
        let inline = encode(data, 12, &net);
        assert_eq!(threaded, inline, "-T2 and -T1 archives differ");
        let back = decode(&threaded, data.len(), 12, &net);
        assert!(back == *data, "inline decoder, {} bytes", data.len());
    }
    // And the delay reaches the archive.
    let text = recurring_text(5000);
    assert_ne!(encode(&text, 12, &net), encode(&text, 12, &lstm(2, 16, 0)));
}

#[test]
fn a_clone_goes_on_with_the_same_bits() {
    let data = recurring_text(3000);
    let c = lstm(3, 8, 20);
    for threaded in [false, true] {
        let mut net = Lstm::with_trainer_thread(&c, threaded);
        let (a, b) = data.split_at(1237);
        run(a, &mut net);
        let mut copy = net.clone();
        drop(net);
        // The reference: one inline network over the whole text.
        let mut whole = Lstm::with_trainer_thread(&c, false);
        run(a, &mut whole);
        assert_eq!(run(b, &mut copy), run(b, &mut whole), "threaded {threaded}");
    }
}

#[test]
fn kind3_is_validated_and_sized() {
    assert!(lstm(3, 16, 255).validate().is_ok());
    assert!(lstm(2, 16, 1).validate().unwrap_err().contains("delay"));
    assert!(lstm(4, 16, 255).validate().is_ok());
    assert!(lstm(5, 16, 0).validate().is_err());
    let (k2, k3) = (lstm(2, 16, 0), lstm(3, 16, 32));
    assert_eq!(k3.parameters(), k2.parameters());
    // Kind 4 is kind 3's network (doc/FORMAT.md 4.13.3).
    assert_eq!(lstm(4, 16, 32).memory_bytes(), k3.memory_bytes());
    // Three trainings in flight: the predictor's weights, three copies and
    // three windows more than kind 2.
    let window = 16 * (9 * 16 + 256);
    assert_eq!(
        k3.memory_bytes() - k2.memory_bytes(),
        4 * (4 * k2.parameters() + 3 * window) as u64
    );
}
