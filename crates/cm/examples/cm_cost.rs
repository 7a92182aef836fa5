//! Where the bytes go: codes a file with the context-mixing model (one
//! stream, the presets' settings as in `cm_bench`) and prints the cost in
//! bytes per position modulo `--period` (for an array of 4-byte numbers in
//! groups of four, period 16: lane `k / 4`, byte `k % 4`), optionally
//! up to `--limit` bytes; with `--dump OUT` it also writes every byte's
//! cost in bits as a little-endian `f32` to `OUT` (one file only), for
//! per-region analysis. A measuring tool: the costs are `-log2 p` of the
//! coded bits, summed in `f64`.
//!
//! `cargo run --release -p sep-cm --example cm_cost -- [--revision R]
//!  [--table-bits B] [--match-bits M] [--period N] [--limit N] [--dump OUT] FILE`
use sep_cm::{Cm, CmConfig, CmStream, Sequential};
use sep_coder::{Coder, Encoder, FreqTable};

/// An encoder that also adds up the cost of every bit.
struct Costing {
    enc: Encoder,
    bits: f64,
}

impl Coder for Costing {
    fn code_bit(&mut self, bit: u32, p1: u32) -> u32 {
        let p = f64::from(p1) / 65536.0;
        self.bits -= if bit == 1 { p.log2() } else { (1.0 - p).log2() };
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
    let (mut period, mut limit) = (16usize, usize::MAX);
    let mut dump: Option<String> = None;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = || {
            args.next()
                .expect("a value")
                .parse::<usize>()
                .expect("a number")
        };
        match a.as_str() {
            "--revision" => cfg.revision = num() as u8,
            "--table-bits" => cfg.table_bits = num() as u8,
            "--match-bits" => cfg.match_bits = num() as u8,
            "--period" => period = num(),
            "--limit" => limit = num(),
            "--dump" => dump = args.next(),
            f => files.push(f.to_string()),
        }
    }
    for path in &files {
        let mut data = std::fs::read(path).expect("read");
        data.truncate(limit);
        let mut m = Cm::new(&cfg, false, data.len());
        let mut st = CmStream::new(0);
        let mut c = Costing {
            enc: Encoder::with_capacity(data.len() / 2),
            bits: 0.0,
        };
        let mut cost = vec![0f64; period];
        // Cost of the periods that repeat one of the last 1024 (exactly)
        // and of the others, with their counts.
        let (mut seen, mut repeat, mut fresh) = (
            std::collections::HashMap::<Vec<u8>, usize>::new(),
            (0f64, 0usize),
            (0f64, 0usize),
        );
        let mut group = 0f64;
        let mut costs = Vec::new();
        for pos in 0..data.len() {
            let before = c.bits;
            m.code_byte(&mut c, &mut st, &mut data, pos, &Sequential(pos), None);
            if dump.is_some() {
                costs.extend(((c.bits - before) as f32).to_le_bytes());
            }
            cost[pos % period] += c.bits - before;
            group += c.bits - before;
            if pos % period == period - 1 {
                let r = pos / period;
                let key = data[pos + 1 - period..=pos].to_vec();
                let t = if seen.get(&key).is_some_and(|&q| q + 1024 >= r) {
                    &mut repeat
                } else {
                    &mut fresh
                };
                t.0 += group;
                t.1 += 1;
                seen.insert(key, r);
                group = 0.0;
            }
        }
        println!(
            "repeated periods {} cost {:.0} bytes; new {} cost {:.0} bytes",
            repeat.1,
            repeat.0 / 8.0,
            fresh.1,
            fresh.0 / 8.0
        );
        if let Some(out) = dump.take() {
            std::fs::write(out, costs).expect("write the dump");
        }
        let total: f64 = cost.iter().sum();
        println!(
            "{path}: {} bytes -> {} (sum of costs {:.0})",
            data.len(),
            c.enc.finish().len(),
            total / 8.0
        );
        for (k, b) in cost.iter().enumerate() {
            println!(
                "  position {k:3}: {:10.0} bytes {:5.1}%",
                b / 8.0,
                100.0 * b / total
            );
        }
    }
}
