//! Measures the lossy codec file by file: compressed size, max error, PSNR and
//! the CPU time (this thread's, from /proc/thread-self/schedstat; best of
//! `--runs`) of compression
//! and decompression.
//!
//! `cargo run --release -p sep-lossy --example lossy_speed -- [--runs 3]
//! [--level fast] [--predictor lorenzo|interpolation|levels] MODE FILE...` where each FILE is named like the
//! float set, `float32.NAME.DxHxW.f32` or `float64.NAME.f64` (1-D). Each line
//! ends with the XXH3-64 of the archive, to check that a change of the code
//! keeps every archive's bytes.

use sep_lossy::{Dtype, Mode, Options};
use std::time::Instant;

/// CPU seconds this thread has run so far: nanoseconds from
/// /proc/thread-self/schedstat (the codec runs on this one thread), else
/// user + sys of the process from /proc/self/stat (clock ticks of 10 ms,
/// too coarse for the small files), else the wall clock.
fn cpu_seconds(start: Instant) -> f64 {
    if let Ok(s) = std::fs::read_to_string("/proc/thread-self/schedstat")
        && let Some(ns) = s
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
    {
        return ns / 1e9;
    }
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return start.elapsed().as_secs_f64();
    };
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn shape_of(name: &str, bytes: usize, dtype: Dtype) -> Vec<usize> {
    let parts: Vec<&str> = name.split('.').collect();
    for p in parts {
        let dims: Vec<usize> = p.split('x').filter_map(|d| d.parse().ok()).collect();
        if dims.len() >= 2 && dims.len() == p.split('x').count() {
            return dims;
        }
    }
    vec![bytes / dtype.size()]
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 3;
    let mut fast = false;
    let mut predictor = None;
    while args.first().is_some_and(|a| a.starts_with("--")) {
        let flag = args.remove(0);
        let v = args.remove(0);
        match flag.as_str() {
            "--runs" => runs = v.parse().expect("--runs N"),
            "--level" => fast = v == "fast",
            "--predictor" => {
                predictor = Some(match v.as_str() {
                    "lorenzo" => sep_lossy::Predictor::Lorenzo,
                    "levels" => sep_lossy::Predictor::InterpolationByLevel,
                    _ => sep_lossy::Predictor::Interpolation,
                })
            }
            _ => panic!("unknown flag {flag}"),
        }
    }
    let mode = Mode::parse(&args.remove(0)).expect("mode");
    let opts = Options {
        mode,
        fast,
        predictor,
        ..Options::default()
    };
    let start = Instant::now();
    let (mut total_in, mut total_out) = (0usize, 0usize);
    for path in &args {
        let raw = std::fs::read(path).expect("read");
        let name = path.rsplit('/').next().unwrap_or(path);
        let dtype = if name.contains("float64") || name.ends_with(".f64") {
            Dtype::F64
        } else {
            Dtype::F32
        };
        let raw = if dtype == Dtype::F64 {
            &raw[..raw.len() / 8 * 8]
        } else {
            &raw[..]
        };
        let shape = shape_of(name, raw.len(), dtype);
        let (mut best_c, mut best_d) = (f64::INFINITY, f64::INFINITY);
        let mut archive = Vec::new();
        let mut back = Vec::new();
        for _ in 0..runs {
            let t = cpu_seconds(start);
            archive = sep_lossy::compress_raw(raw, dtype, &shape, &opts).expect("compress");
            best_c = best_c.min(cpu_seconds(start) - t);
            let t = cpu_seconds(start);
            back = sep_lossy::decompress(&archive, u64::MAX).expect("decompress");
            best_d = best_d.min(cpu_seconds(start) - t);
        }
        let info = sep_lossy::inspect(&archive).expect("inspect");
        let s = sep_lossy::compare(dtype, raw, &back, &info.fills).expect("compare");
        let mb = raw.len() as f64 / 1e6;
        println!(
            "{name:40} {:>9} B ratio {:6.2} max_err/e {:.4} psnr {:6.2} {:13} r{} comp {:6.2} MB/s dec {:6.2} MB/s archive {:016x}",
            archive.len(),
            raw.len() as f64 / archive.len() as f64,
            s.max_error / info.bound,
            s.psnr,
            info.predictor.name(),
            info.revision,
            mb / best_c.max(0.005),
            mb / best_d.max(0.005),
            xxhash_rust::xxh3::xxh3_64(&archive),
        );
        total_in += raw.len();
        total_out += archive.len();
    }
    println!("total {total_out} B of {total_in}");
}
