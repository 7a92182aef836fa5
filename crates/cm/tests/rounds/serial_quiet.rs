//! The serial network's kind 4 (doc/FORMAT.md 4.13.3, issue 19): kind 3's
//! network with no weight-set selector in the mixer and the mixer's weights
//! of its two inputs starting at 0. It must round-trip with the same bits
//! whatever the thread count, code differently from kind 3, and on a small
//! real text cost no more than the context-mixing model alone (+0.1%),
//! where kind 3 costs more.
use crate::common;

use common::{config, mixed_text, serial_inputs};
use sep_cm::{Cm, CmConfig, CmStream, LstmConfig, Sequential};
use sep_coder::{Decoder, Encoder};

/// `ultra`'s network shape (64 cells, horizon 16, lr 0.01, delay 16) of
/// `kind`.
fn ultra_net(kind: u8) -> LstmConfig {
    LstmConfig {
        kind,
        cells: 64,
        horizon: 16,
        lr: 100,
        delay: 16,
    }
}

/// Encodes `data` with `cfg`, plus the serial network `net` if any.
fn encode(data: &[u8], cfg: &CmConfig, net: Option<&LstmConfig>) -> Vec<u8> {
    let mut enc = Encoder::new();
    let mut m = Cm::new(cfg, false, data.len());
    if let Some(n) = net {
        m = m.with_lstm(n);
    }
    let mut st = CmStream::new(0);
    let mut buf = data.to_vec();
    for pos in 0..buf.len() {
        m.code_byte(&mut enc, &mut st, &mut buf, pos, &Sequential(pos), None);
    }
    enc.finish()
}

/// Decodes `len` bytes of `bytes` coded with `cfg` and `net`.
fn decode(bytes: &[u8], len: usize, cfg: &CmConfig, net: &LstmConfig) -> Vec<u8> {
    let mut dec = Decoder::new(bytes);
    let mut m = Cm::new(cfg, false, len).with_lstm(net);
    let mut st = CmStream::new(0);
    let mut out = vec![0u8; len];
    for pos in 0..out.len() {
        m.code_byte(&mut dec, &mut st, &mut out, pos, &Sequential(pos), None);
    }
    out
}

/// cantrbry.grammar.lsp (3,721 bytes), the smallest text of the quick set.
fn grammar() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/golden/inputs/grammar.lsp"
    );
    std::fs::read(path).expect("tests/golden/inputs/grammar.lsp")
}

#[test]
fn kind4_round_trips_with_any_thread_count() {
    let inputs = serial_inputs();
    let net = LstmConfig {
        cells: 16,
        ..ultra_net(4)
    };
    for revision in [28] {
        let cfg = config(revision);
        for data in &inputs {
            sep_kernels::set_num_threads(2);
            let threaded = encode(data, &cfg, Some(&net));
            let back = decode(&threaded, data.len(), &cfg, &net);
            assert!(back == *data, "threaded round trip, {} bytes", data.len());
            sep_kernels::set_num_threads(1);
            let inline = encode(data, &cfg, Some(&net));
            assert_eq!(threaded, inline, "-T2 and -T1 differ, revision {revision}");
            let back = decode(&threaded, data.len(), &cfg, &net);
            assert!(back == *data, "inline decoder, {} bytes", data.len());
        }
    }
    // Kind 4 is not kind 3.
    let k3 = LstmConfig { kind: 3, ..net };
    let (cfg, text) = (config(28), mixed_text());
    assert_ne!(
        encode(&text, &cfg, Some(&net)),
        encode(&text, &cfg, Some(&k3))
    );
}

#[test]
fn kind4_costs_nothing_on_a_small_text_where_kind3_does() {
    let text = grammar();
    // `max`'s families at CM revision 28, with smaller tables.
    let cfg = config(28);
    let alone = encode(&text, &cfg, None).len();
    let bound = alone + alone / 1000;
    let k4 = encode(&text, &cfg, Some(&ultra_net(4))).len();
    let k3 = encode(&text, &cfg, Some(&ultra_net(3))).len();
    assert!(k4 <= bound, "kind 4 {k4} bytes, the CM alone {alone}");
    assert!(k3 > bound, "kind 3 {k3} bytes, the CM alone {alone}");
}
