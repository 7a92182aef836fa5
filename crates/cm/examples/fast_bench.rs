//! Compresses files with CM revision 3 ([`sep_cm::FastCm`], the `fast`
//! preset's model) alone, one stream per file, and prints the size and the
//! speed of each and the total; with `--verify` also decodes and compares.
//!
//! `cargo run --release -p sep-cm --example fast_bench -- [--table-bits 22]
//!  [--match-bits 20] [--match 6] [--verify] FILE...`
use sep_cm::{CmConfig, FastCm};
use sep_coder::{Decoder, Encoder};
use std::time::Instant;

fn main() {
    let mut cfg = CmConfig {
        orders: 0b0010_1111,
        word: true,
        sparse: false,
        record: false,
        long: 0,
        match_min: 6,
        match2_min: 0,
        table_bits: 22,
        match_bits: 20,
        selectors: 0b0011,
        apms: 1,
        image: false,
        revision: 3,
    };
    let mut verify = false;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--table-bits" => cfg.table_bits = args.next().unwrap().parse().unwrap(),
            "--match-bits" => cfg.match_bits = args.next().unwrap().parse().unwrap(),
            "--match" => cfg.match_min = args.next().unwrap().parse().unwrap(),
            "--verify" => verify = true,
            f => files.push(f.to_string()),
        }
    }
    let (mut raw, mut packed, mut secs) = (0usize, 0usize, 0f64);
    for f in &files {
        let data = std::fs::read(f).expect("readable file");
        let t = Instant::now();
        let mut enc = Encoder::new();
        let mut model = FastCm::new(&cfg, data.len());
        let mut buf = data.clone();
        for pos in 0..buf.len() {
            model.code_byte(&mut enc, &mut buf, pos);
        }
        let bytes = enc.finish();
        let s = t.elapsed().as_secs_f64();
        if verify {
            let mut out = vec![0u8; data.len()];
            let mut dec = Decoder::new(&bytes);
            let mut model = FastCm::new(&cfg, data.len());
            for pos in 0..out.len() {
                model.code_byte(&mut dec, &mut out, pos);
            }
            assert!(out == data, "{f}: decoded bytes differ");
        }
        println!(
            "{:<40} {:>9} {:>9} {:6.3} bpb {:6.2} MB/s",
            f.rsplit('/').next().unwrap_or(f),
            data.len(),
            bytes.len(),
            bytes.len() as f64 * 8.0 / data.len().max(1) as f64,
            data.len() as f64 / s / 1e6
        );
        raw += data.len();
        packed += bytes.len();
        secs += s;
    }
    println!(
        "total {raw} -> {packed} ({:.3} bpb), {:.2} MB/s (wall, coding only)",
        packed as f64 * 8.0 / raw.max(1) as f64,
        raw as f64 / secs / 1e6
    );
}
