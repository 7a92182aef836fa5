//! Compresses files through the whole `sep` pipeline (transforms included:
//! E8/E9 for x86, JPEG, PNG...) with a preset whose CM revision is replaced,
//! and prints the archive size and the CPU time; `--verify` also decodes.
//! Measures CM revisions that no preset writes yet (revisions 7 and 8 until
//! the presets switch to them).
//!
//! `cargo run --release -p sep --example rev_size -- [--preset default|max]
//!  [--revision R] [--verify] FILE...`
use sep::{Model, Options, Preset};
use std::time::Instant;

fn main() {
    let mut preset = Preset::Default;
    let mut revision = None;
    let mut verify = false;
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
            f => files.push(f.to_string()),
        }
    }
    let mut mix = sep::MixConfig::preset(preset).expect("a mix preset");
    if let Some(r) = revision {
        mix.cm.revision = r;
    }
    let options = Options {
        model: Model::Mix(mix),
        threads: 1,
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
