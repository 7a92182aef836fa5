//! Compresses files with the context-mixing model (one stream) and prints
//! size, bits per byte and speed; with `--verify` also decodes. Kind 3's
//! trainer runs on a second thread unless `SEP_KERNELS_THREADS=1`.
//!
//! `cargo run --release -p sep-cm --example cm_bench -- [--orders 0x3f] [--no-word]
//!  [--no-sparse] [--no-record] [--match N] [--table-bits B] [--match-bits M] [--revision R] [--lstm CELLS,HORIZON,LR_E4[,KIND[,DELAY]]] [--verify] FILE...`
use sep_cm::{Cm, CmConfig, CmStream, LstmConfig, Sequential};
use sep_coder::{Decoder, Encoder};
use std::time::Instant;

fn main() {
    let mut cfg = CmConfig {
        orders: 0x3F,
        word: true,
        sparse: true,
        record: true,
        long: 0,
        match_min: 6,
        match2_min: 0,
        table_bits: 24,
        match_bits: 22,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision: 0,
    };
    let mut verify = false;
    let mut streams = 1usize;
    let mut lstm: Option<LstmConfig> = None;
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--orders" => {
                cfg.orders =
                    u8::from_str_radix(args.next().unwrap().trim_start_matches("0x"), 16).unwrap()
            }
            "--no-word" => cfg.word = false,
            "--no-sparse" => cfg.sparse = false,
            "--no-record" => cfg.record = false,
            "--match" => cfg.match_min = args.next().unwrap().parse().unwrap(),
            "--match2" => cfg.match2_min = args.next().unwrap().parse().unwrap(),
            "--long" => {
                cfg.long =
                    u8::from_str_radix(args.next().unwrap().trim_start_matches("0x"), 16).unwrap()
            }
            "--table-bits" => cfg.table_bits = args.next().unwrap().parse().unwrap(),
            "--match-bits" => cfg.match_bits = args.next().unwrap().parse().unwrap(),
            "--selectors" => {
                cfg.selectors =
                    u8::from_str_radix(args.next().unwrap().trim_start_matches("0x"), 16).unwrap()
            }
            "--apms" => cfg.apms = args.next().unwrap().parse().unwrap(),
            "--no-image" => cfg.image = false,
            "--revision" => cfg.revision = args.next().unwrap().parse().unwrap(),
            "--streams" => streams = args.next().unwrap().parse().unwrap(),
            "--verify" => verify = true,
            "--lstm" => {
                let v: Vec<u16> = args
                    .next()
                    .unwrap()
                    .split(',')
                    .map(|x| x.parse().unwrap())
                    .collect();
                lstm = Some(LstmConfig {
                    kind: v.get(3).map_or(1, |&k| k as u8),
                    cells: v[0] as u8,
                    horizon: v[1] as u8,
                    lr: v[2],
                    delay: v.get(4).map_or(0, |&d| d as u8),
                });
            }
            f => files.push(f.to_string()),
        }
    }
    let (mut raw, mut packed, mut ct, mut dt) = (0usize, 0usize, 0f64, 0f64);
    for path in &files {
        let data = std::fs::read(path).expect("read");
        let t = Instant::now();
        let mut enc = Encoder::with_capacity(data.len() / 2);
        let m = Cm::new(&cfg, false, data.len());
        let mut m = match &lstm {
            Some(l) => m.with_lstm(l),
            None => m,
        };
        let mut st = CmStream::new(0);
        let mut buf = data.clone();
        let bytes = if streams > 1 {
            // Emulate the engine's side-by-side streams (one coder each).
            let (n, k) = (buf.len(), streams);
            let (base, rem) = (n / k, n % k);
            let start = |s: usize| s * base + s.min(rem);
            let mut encs: Vec<Encoder> = (0..k).map(|_| Encoder::new()).collect();
            let mut sts: Vec<CmStream> = (0..k).map(|s| CmStream::new(start(s))).collect();
            struct Front {
                base: usize,
                rem: usize,
                t: usize,
                s: usize,
            }
            impl sep_cm::Visibility for Front {
                fn known(&self, p: usize) -> bool {
                    let long = self.rem * (self.base + 1);
                    let (s, off) = if p < long {
                        (p / (self.base + 1), p % (self.base + 1))
                    } else {
                        (self.rem + (p - long) / self.base, (p - long) % self.base)
                    };
                    off < self.t + usize::from(s < self.s)
                }
            }
            for t in 0..base + usize::from(rem > 0) {
                let active = if t < base { k } else { rem };
                for s in 0..active {
                    m.code_byte(
                        &mut encs[s],
                        &mut sts[s],
                        &mut buf,
                        start(s) + t,
                        &Front { base, rem, t, s },
                        None,
                    );
                }
            }
            encs.into_iter()
                .flat_map(|e| e.finish())
                .collect::<Vec<u8>>()
        } else {
            for pos in 0..buf.len() {
                m.code_byte(&mut enc, &mut st, &mut buf, pos, &Sequential(pos), None);
            }
            enc.finish()
        };
        let c = t.elapsed().as_secs_f64();
        if std::env::var_os("CM_DEBUG").is_some() {
            eprintln!(
                "{path}: detected record length {}, {} bytes skipped (revision 9 shortcut)",
                st.record_len(),
                m.skipped_bytes()
            );
        }
        if std::env::var_os("CM_HASH").is_some() {
            // FNV-1a of the coded bytes: a quick check that a speed change
            // left every coded bit as it was (compare before/after builds).
            let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            eprintln!("{path}: coded {} bytes, fnv1a {h:016x}", bytes.len());
        }
        let mut d = 0.0;
        if verify {
            let t = Instant::now();
            let mut out = vec![0u8; data.len()];
            let mut dec = Decoder::new(&bytes);
            let m = Cm::new(&cfg, false, data.len());
            let mut m = match &lstm {
                Some(l) => m.with_lstm(l),
                None => m,
            };
            let mut st = CmStream::new(0);
            for pos in 0..out.len() {
                m.code_byte(&mut dec, &mut st, &mut out, pos, &Sequential(pos), None);
            }
            d = t.elapsed().as_secs_f64();
            assert_eq!(out, data, "round trip of {path}");
        }
        println!(
            "{:36} {:>9} {:>9} {:6.3} bpb {:7.2} MB/s {:7.2} MB/s",
            path.rsplit('/').next().unwrap(),
            data.len(),
            bytes.len(),
            bytes.len() as f64 * 8.0 / data.len() as f64,
            data.len() as f64 / c / 1e6,
            if verify {
                data.len() as f64 / d / 1e6
            } else {
                0.0
            }
        );
        raw += data.len();
        packed += bytes.len();
        ct += c;
        dt += d;
    }
    println!(
        "TOTAL {raw} -> {packed} compress {:.2} MB/s decompress {:.2} MB/s",
        raw as f64 / ct / 1e6,
        if verify { raw as f64 / dt / 1e6 } else { 0.0 }
    );
}
