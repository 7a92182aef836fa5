//! The serial LSTM alone on files: bits per byte, speed, and a hash of every
//! probability's bits (to compare builds: baseline vs `-Ctarget-cpu=native`).
//!
//! `lstm_bench CELLS[:KIND] HORIZON LR_E4 LIMIT FILE...` (LIMIT: bytes read of
//! each file, 0 for all; KIND: the serial network's kind, 1 by default; kind
//! 2's match input is absent here).

use sep_cm::{Lstm, LstmConfig};
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    assert!(
        a.len() >= 5,
        "usage: lstm_bench CELLS HORIZON LR_E4 LIMIT FILE..."
    );
    let (cells, kind) = a[0].split_once(':').unwrap_or((&a[0], "1"));
    let config = LstmConfig {
        kind: kind.parse().expect("kind"),
        cells: cells.parse().expect("cells"),
        horizon: a[1].parse().expect("horizon"),
        lr: a[2].parse().expect("lr"),
        delay: 0,
    };
    let limit: usize = a[3].parse().expect("limit");
    for f in &a[4..] {
        let mut data = std::fs::read(f).expect("readable file");
        if limit > 0 {
            data.truncate(limit);
        }
        let mut net = Lstm::new(&config);
        let t = Instant::now();
        let mut bits = 0.0f64;
        let mut hash = 0u64;
        for &b in &data {
            let p = net.predict();
            for q in p {
                hash = (hash.rotate_left(7) ^ u64::from(q.to_bits()))
                    .wrapping_mul(0x9E37_79B9_7F4A_7C15);
            }
            bits -= f64::from(p[usize::from(b)].max(1e-7)).log2();
            net.update(b);
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "{f}: {} bytes, {:.0} bytes coded, {:.3} bpc, {:.1} KB/s, hash {hash:016x}",
            data.len(),
            bits / 8.0,
            bits / data.len() as f64,
            data.len() as f64 / s / 1000.0
        );
    }
}
