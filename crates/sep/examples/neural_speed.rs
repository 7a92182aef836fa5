//! Compresses and decompresses files with a neural preset and prints size,
//! bits per byte and speed: the tool behind the preset choices.
//!
//! `cargo run --release -p sep --example neural_speed -- PRESET FILE... [--streams B] [--context L]
//!  [--ffn F] [--pairs P] [--embed E] [--cache 0|1] [--min-stream N] [--lr X] [--max-bytes N] [--no-decode]
//!  [--backbone pac|trace|patchtst] [--se on|off] [--patch P] [--stride S] [--adaptive off|soft|hard]
//!  [--tokens T] [--sparsity X] [--threads N]`
//!
//! `PRESET` is a preset name or `tiny` (the test suite's configuration). The
//! knobs `--backbone` .. `--sparsity` are those of `sep::Knobs`; `--ffn` sets the
//! FFN width of any backbone, `--pairs`, `--embed` and `--cache` apply to PAC
//! (plain or behind the SE). `--threads` sets the kernels' thread count.

use std::time::Instant;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut take = |flag: &str| -> Option<String> {
        let i = args.iter().position(|a| a == flag)?;
        let v = args.get(i + 1).cloned();
        args.drain(i..(i + 2).min(args.len()));
        v
    };
    let streams = take("--streams").map(|v| v.parse().unwrap());
    let context = take("--context").map(|v| v.parse().unwrap());
    let ffn: Option<u16> = take("--ffn").map(|v| v.parse().unwrap());
    let pairs = take("--pairs").map(|v| v.parse().unwrap());
    let embed = take("--embed").map(|v| v.parse().unwrap());
    let cache = take("--cache").map(|v| v == "1");
    let min_stream = take("--min-stream").map(|v| v.parse().unwrap());
    let lr = take("--lr").map(|v| v.parse().unwrap());
    let max_bytes: Option<usize> = take("--max-bytes").map(|v| v.parse().unwrap());
    let threads: Option<usize> = take("--threads").map(|v| v.parse().unwrap());
    let knobs = sep::Knobs {
        backbone: take("--backbone")
            .map(|v| sep::BackboneKind::from_name(&v).expect("pac, trace or patchtst")),
        se: take("--se").map(|v| v == "on"),
        patch: take("--patch").map(|v| v.parse().unwrap()),
        stride: take("--stride").map(|v| v.parse().unwrap()),
        adaptive: take("--adaptive")
            .map(|v| sep::AdaptiveKind::from_name(&v).expect("off, soft or hard")),
        tokens: take("--tokens").map(|v| v.parse().unwrap()),
        sparsity: take("--sparsity").map(|v| v.parse().unwrap()),
        context,
    };
    let no_decode = args.iter().any(|a| a == "--no-decode");
    args.retain(|a| a != "--no-decode");
    let preset_name = args.remove(0);
    let (mut config, preset) = if preset_name == "tiny" {
        let tiny = sep::NeuralConfig {
            backbone: sep::BackboneConfig::Pac(sep::PacConfig {
                context: 4,
                embed: 8,
                ffn: 32,
                pairs: 2,
                cache: true,
            }),
            streams: 8,
            min_stream_len: 64,
            adam: sep::AdamConfig::default(),
        };
        (tiny, sep::Preset::Fast)
    } else {
        let p = sep::Preset::from_name(&preset_name).expect("preset name or tiny");
        (sep::NeuralConfig::preset(p), p)
    };
    config = config.with_knobs(preset, &knobs).expect("valid knobs");
    let pac = match &mut config.backbone {
        sep::BackboneConfig::Pac(p) => Some(p),
        sep::BackboneConfig::Se(sep::SeConfig {
            body: sep::SeBody::Pac(p),
            ..
        }) => Some(p),
        _ => None,
    };
    if let Some(pac) = pac {
        if let Some(v) = ffn {
            pac.ffn = v;
        }
        if let Some(v) = pairs {
            pac.pairs = v;
        }
        if let Some(v) = embed {
            pac.embed = v;
        }
        if let Some(v) = cache {
            pac.cache = v;
        }
    } else if let Some(v) = ffn {
        match &mut config.backbone {
            sep::BackboneConfig::Trace(t)
            | sep::BackboneConfig::Se(sep::SeConfig {
                body: sep::SeBody::Trace(t),
                ..
            }) => t.ffn = v,
            sep::BackboneConfig::PatchTst(t)
            | sep::BackboneConfig::Se(sep::SeConfig {
                body: sep::SeBody::PatchTst(t),
                ..
            }) => t.ffn = v,
            _ => {}
        }
    }
    config.backbone.validate().expect("valid backbone");
    if let Some(v) = streams {
        config.streams = v;
    }
    if let Some(v) = min_stream {
        config.min_stream_len = v;
    }
    if let Some(v) = lr {
        config.adam.lr = v;
    }
    if let Some(t) = threads {
        sep_kernels::set_num_threads(t);
    }
    eprintln!(
        "{} ({:.1} M multiply-adds per byte forward)",
        config.describe(),
        config.backbone.forward_macs() as f64 / 1e6
    );
    let options = sep::Options {
        model: sep::Model::Neural(config),
        block_size: Some(1 << 30),
        threads: 1,
        ..Default::default()
    };
    let (mut raw, mut packed, mut ct, mut dt) = (0usize, 0usize, 0f64, 0f64);
    for path in &args {
        let mut data = std::fs::read(path).expect("read");
        if let Some(m) = max_bytes {
            data.truncate(m);
        }
        let t = Instant::now();
        let archive = sep::compress(&data, &options).expect("compress");
        let c = t.elapsed().as_secs_f64();
        let d = if no_decode {
            0.0
        } else {
            let t = Instant::now();
            assert_eq!(
                sep::decompress(&archive).expect("decompress"),
                data,
                "round trip"
            );
            t.elapsed().as_secs_f64()
        };
        println!(
            "{:36} {:>9} {:>9} {:6.3} bpb {:8.1} KB/s {:8.1} KB/s",
            path.rsplit('/').next().unwrap(),
            data.len(),
            archive.len(),
            archive.len() as f64 * 8.0 / data.len() as f64,
            data.len() as f64 / c / 1e3,
            if no_decode {
                0.0
            } else {
                data.len() as f64 / d / 1e3
            }
        );
        raw += data.len();
        packed += archive.len();
        ct += c;
        dt += d;
    }
    println!(
        "TOTAL {raw} -> {packed} ({:.3} bpb) compress {:.1} KB/s decompress {:.1} KB/s",
        packed as f64 * 8.0 / raw as f64,
        raw as f64 / ct / 1e3,
        if no_decode {
            0.0
        } else {
            raw as f64 / dt / 1e3
        }
    );
}
