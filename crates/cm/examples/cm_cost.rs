//! Writes the cost in bits of every byte the context-mixing model codes
//! (one stream, the presets' CM flags of `cm_bench`) as little-endian f32s
//! to `OUT`, for per-region analysis of where the coded bytes go.
//!
//! `cargo run --release -p sep-cm --example cm_cost -- [--revision R] [--table-bits B] [--match-bits M] FILE OUT`
use sep_cm::{Cm, CmConfig, CmStream, Sequential};
use sep_coder::{Coder, Encoder, FreqTable};

/// An encoder that adds up the cost of the bits it codes.
struct Counting {
    enc: Encoder,
    bits: f64,
}

impl Coder for Counting {
    fn code_bit(&mut self, bit: u32, p1: u32) -> u32 {
        let p = f64::from(if bit == 1 { p1 } else { 65536 - p1 }) / 65536.0;
        self.bits -= p.log2();
        self.enc.code_bit(bit, p1)
    }
    fn code_symbol(&mut self, sym: u32, table: &FreqTable) -> u32 {
        self.enc.code_symbol(sym, table)
    }
    fn code_uniform(&mut self, sym: u32, bits: u32) -> u32 {
        self.bits += f64::from(bits);
        self.enc.code_uniform(sym, bits)
    }
}

fn main() {
    let mut cfg = CmConfig {
        orders: 0x3F,
        word: true,
        sparse: true,
        record: true,
        long: 1,
        match_min: 5,
        match2_min: 12,
        table_bits: 26,
        match_bits: 22,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision: 7,
    };
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--revision" => cfg.revision = args.next().unwrap().parse().unwrap(),
            "--table-bits" => cfg.table_bits = args.next().unwrap().parse().unwrap(),
            "--match-bits" => cfg.match_bits = args.next().unwrap().parse().unwrap(),
            f => files.push(f.to_string()),
        }
    }
    let [input, out] = &files[..] else {
        panic!("usage: cm_cost [flags] FILE OUT");
    };
    let data = std::fs::read(input).expect("read");
    let mut c = Counting {
        enc: Encoder::new(),
        bits: 0.0,
    };
    let mut m = Cm::new(&cfg, false, data.len());
    let mut st = CmStream::new(0);
    let mut buf = data.clone();
    let mut costs = Vec::with_capacity(4 * data.len());
    for pos in 0..buf.len() {
        let before = c.bits;
        m.code_byte(&mut c, &mut st, &mut buf, pos, &Sequential(pos), None);
        costs.extend(((c.bits - before) as f32).to_le_bytes());
    }
    let total = c.enc.finish().len();
    std::fs::write(out, costs).expect("write");
    println!(
        "{input}: {total} bytes, {:.0} bytes estimated",
        c.bits / 8.0
    );
}
