//! Prints the order-2 model's compressed size and speed for each file given.
//! `cargo run --release -p sep-cm --example cm_size -- FILE...`
use sep_cm::{Order2, Order2Params};
use sep_coder::{Decoder, Encoder};
use std::time::Instant;

fn main() {
    let mut total = (0usize, 0usize);
    for path in std::env::args().skip(1) {
        let data = std::fs::read(&path).expect("read");
        let t = Instant::now();
        let mut enc = Encoder::with_capacity(data.len() / 2);
        let mut buf = data.clone();
        Order2::new(&Order2Params::default()).code(&mut enc, &mut buf);
        let bytes = enc.finish();
        let ct = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut out = vec![0u8; data.len()];
        Order2::new(&Order2Params::default()).code(&mut Decoder::new(&bytes), &mut out);
        let dt = t.elapsed().as_secs_f64();
        assert_eq!(out, data);
        total.0 += data.len();
        total.1 += bytes.len();
        println!(
            "{:40} {:>10} {:>10} {:6.3} bpc  {:6.2} MB/s  {:6.2} MB/s",
            path.rsplit('/').next().unwrap(),
            data.len(),
            bytes.len(),
            bytes.len() as f64 * 8.0 / data.len() as f64,
            data.len() as f64 / ct / 1e6,
            data.len() as f64 / dt / 1e6
        );
    }
    println!("total {} -> {}", total.0, total.1);
}
