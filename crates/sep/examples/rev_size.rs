//! Compresses files through the whole `sep` pipeline (transforms included:
//! E8/E9 for x86, JPEG, PNG...) with a preset whose CM revision is replaced,
//! and prints the archive size and the CPU time; `--verify` also decodes.
//! Measures CM revisions that no preset writes yet (revisions 7 and 8 until
//! the presets switch to them).
//!
//! `cargo run --release -p sep --example rev_size -- [--preset default|max|ultra]
//!  [--revision R] [--serial KIND,DELAY] [--threads T] [--table-bits B] [--match-bits M]
//!  [--lr LR_E4] [--verify] FILE...`
//! (`--serial`: the serial network's kind and delay, doc/FORMAT.md 4.13;
//! `--threads`: `-T`, 1 by default; the time printed is wall-clock.)
use sep::{Model, Options, Preset};
use std::time::Instant;

fn main() {
    let mut preset = Preset::Default;
    let mut revision = None;
    let mut verify = false;
    let mut serial: Option<(u8, u8)> = None;
    let mut lr: Option<u16> = None;
    let mut threads = 1;
    let (mut table_bits, mut match_bits) = (None, None);
    let mut files = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--preset" => {
                let name = args.next().expect("preset name");
                preset = Preset::from_name(&name).expect("known preset");
            }
            "--revision" => revision = Some(args.next().expect("revision").parse().expect("u8")),
            "--verify" => verify = true,
            "--serial" => {
                let v = args.next().expect("KIND,DELAY");
                let (k, d) = v.split_once(',').expect("KIND,DELAY");
                serial = Some((k.parse().expect("kind"), d.parse().expect("delay")));
            }
            "--lr" => lr = Some(args.next().expect("LR_E4").parse().expect("u16")),
            "--table-bits" => table_bits = Some(args.next().expect("B").parse().expect("u8")),
            "--match-bits" => match_bits = Some(args.next().expect("M").parse().expect("u8")),
            "--threads" => threads = args.next().expect("T").parse().expect("threads"),
            f => files.push(f.to_string()),
        }
    }
    let mut mix = sep::MixConfig::preset(preset).expect("a mix preset");
    if let Some(r) = revision {
        mix.cm.revision = r;
    }
    mix.cm.table_bits = table_bits.unwrap_or(mix.cm.table_bits);
    mix.cm.match_bits = match_bits.unwrap_or(mix.cm.match_bits);
    if let Some((kind, delay)) = serial {
        let s = mix.serial.as_mut().expect("a preset with a serial network");
        s.kind = kind;
        s.delay = delay;
    }
    if let Some(lr) = lr {
        mix.serial
            .as_mut()
            .expect("a preset with a serial network")
            .lr = lr;
    }
    let options = Options {
        model: Model::Mix(mix),
        threads,
        ..Options::default()
    };
    let (mut raw, mut packed) = (0usize, 0usize);
    for path in &files {
        let data = std::fs::read(path).expect("read");
        let t = Instant::now();
        let archive = sep::compress(&data, &options).expect("compress");
        let c = t.elapsed().as_secs_f64();
        if verify {
            let out = sep::decompress(&archive).expect("decompress");
            assert_eq!(out, data, "round trip of {path}");
        }
        println!(
            "{:36} {:>9} {:>9} {:6.3} bpb {:7.3} s",
            path.rsplit('/').next().unwrap_or(path),
            data.len(),
            archive.len(),
            archive.len() as f64 * 8.0 / data.len() as f64,
            c
        );
        raw += data.len();
        packed += archive.len();
    }
    println!("TOTAL {raw} -> {packed}");
}
