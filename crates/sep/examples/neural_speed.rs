//! Compresses and decompresses files with a neural preset and prints size,
//! bits per byte and speed: the tool behind the preset choices.
//!
//! `cargo run --release -p sep --example neural_speed -- PRESET FILE... [--streams B] [--context L]
//!  [--ffn F] [--pairs P] [--embed E] [--heads H] [--cache 0|1] [--min-stream N] [--lr X] [--max-bytes N] [--no-decode]
//!  [--backbone pac|trace|patchtst] [--se on|off] [--patch P] [--stride S] [--adaptive off|soft|hard]
//!  [--tokens T] [--sparsity X] [--se-init newest|random] [--threads N] [--mask-stats]`
//!
//! `PRESET` is a preset name or `tiny` (the test suite's configuration). The
//! knobs `--backbone` .. `--sparsity` are those of `sep::neural::Knobs`; `--ffn` sets the
//! FFN width of any backbone, `--pairs` and `--cache` apply to PAC, `--embed` to
//! PAC, TRACE and PatchTST (per byte), `--heads` to TRACE and PatchTST; they apply
//! before `--se on` wraps the backbone (to the body of an SE preset: `--ffn` and
//! PAC's). `--threads` sets the kernels' thread count.
//!
//! `--mask-stats` (SE only) runs the engine's training loop on the model directly
//! instead of compressing: it prints the ideal code length (the archive's size
//! within a few bytes) and, per step, how many patches the gate kept.

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
    let heads: Option<u8> = take("--heads").map(|v| v.parse().unwrap());
    let cache = take("--cache").map(|v| v == "1");
    let min_stream = take("--min-stream").map(|v| v.parse().unwrap());
    let lr = take("--lr").map(|v| v.parse().unwrap());
    let max_bytes: Option<usize> = take("--max-bytes").map(|v| v.parse().unwrap());
    let threads: Option<usize> = take("--threads").map(|v| v.parse().unwrap());
    let knobs = sep::neural::Knobs {
        backbone: take("--backbone")
            .map(|v| sep::neural::BackboneKind::from_name(&v).expect("pac, trace or patchtst")),
        se: take("--se").map(|v| v == "on"),
        patch: take("--patch").map(|v| v.parse().unwrap()),
        stride: take("--stride").map(|v| v.parse().unwrap()),
        adaptive: take("--adaptive")
            .map(|v| sep::neural::AdaptiveKind::from_name(&v).expect("off, soft or hard")),
        tokens: take("--tokens").map(|v| v.parse().unwrap()),
        sparsity: take("--sparsity").map(|v| v.parse().unwrap()),
        newest_init: take("--se-init").map(|v| v == "newest"),
        context,
    };
    let no_decode = args.iter().any(|a| a == "--no-decode");
    let stats = args.iter().any(|a| a == "--mask-stats");
    args.retain(|a| a != "--no-decode" && a != "--mask-stats");
    let preset_name = args.remove(0);
    let (mut config, preset) = if preset_name == "tiny" {
        let tiny = sep::neural::NeuralConfig {
            backbone: sep::neural::BackboneConfig::Pac(sep::neural::PacConfig {
                context: 4,
                embed: 8,
                ffn: 32,
                pairs: 2,
                cache: true,
            }),
            streams: 8,
            min_stream_len: 64,
            adam: sep::neural::AdamConfig::default(),
        };
        (tiny, sep::Preset::Fast)
    } else {
        let p = sep::Preset::from_name(&preset_name).expect("preset name or tiny");
        (sep::neural::NeuralConfig::preset(p), p)
    };
    // The backbone first, then its sizes, then the SE knobs (so that `--se on`
    // wraps the resized backbone).
    let first = sep::neural::Knobs {
        backbone: knobs.backbone,
        context: knobs.context,
        ..sep::neural::Knobs::default()
    };
    config = config.with_knobs(preset, &first).expect("valid knobs");
    match &mut config.backbone {
        sep::neural::BackboneConfig::Pac(pac)
        | sep::neural::BackboneConfig::Se(sep::neural::SeConfig {
            body: sep::neural::SeBody::Pac(pac),
            ..
        }) => {
            pac.ffn = ffn.unwrap_or(pac.ffn);
            pac.pairs = pairs.unwrap_or(pac.pairs);
            pac.embed = embed.unwrap_or(pac.embed);
            pac.cache = cache.unwrap_or(pac.cache);
        }
        sep::neural::BackboneConfig::Trace(sep::neural::TraceConfig { shape, .. })
        | sep::neural::BackboneConfig::PatchTst(sep::neural::PatchTstConfig { shape, .. }) => {
            shape.ffn = ffn.unwrap_or(shape.ffn);
            shape.embed = embed.unwrap_or(shape.embed);
            shape.heads = heads.unwrap_or(shape.heads);
        }
        sep::neural::BackboneConfig::Se(sep::neural::SeConfig {
            body:
                sep::neural::SeBody::Trace(sep::neural::TraceConfig { shape, .. })
                | sep::neural::SeBody::PatchTst(sep::neural::PatchTstConfig { shape, .. }),
            ..
        }) => shape.ffn = ffn.unwrap_or(shape.ffn),
    }
    config.backbone.validate().expect("valid backbone");
    let second = sep::neural::Knobs {
        backbone: None,
        context: None,
        ..knobs
    };
    config = config.with_knobs(preset, &second).expect("valid knobs");
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
    if stats {
        mask_stats(&config, &args, max_bytes);
        return;
    }
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

/// The engine's loop (same streams, contexts and training) on an SE model, with the
/// ideal code length and the gate's kept patches per step.
fn mask_stats(config: &sep::neural::NeuralConfig, paths: &[String], max_bytes: Option<usize>) {
    let sep::neural::BackboneConfig::Se(se) = &config.backbone else {
        panic!("--mask-stats needs an SE backbone");
    };
    let (mut raw, mut bits_all, mut secs) = (0usize, 0f64, 0f64);
    for path in paths {
        let mut data = std::fs::read(path).expect("read");
        if let Some(m) = max_bytes {
            data.truncate(m);
        }
        let n = data.len();
        let s = (n / config.min_stream_len.max(1) as usize)
            .clamp(1, config.streams as usize)
            .min(n.max(1));
        let (base, rem) = (n / s, n % s);
        let start = |i: usize| i * base + i.min(rem);
        // The engine's training step, on the concrete SE type for its statistics.
        let mut trainer =
            sep_model::Trainer::new(Box::new(sep_model::Se::new(se, s, 0)), config.adam, s);
        let mut targets = vec![0u8; s];
        let (mut bits, mut kept_sum, mut kept_last) = (0f64, 0f64, 0);
        let steps = base + usize::from(rem > 0);
        let t0 = Instant::now();
        for t in 0..steps {
            let k = if t < base { s } else { rem };
            let probs = trainer.predict(t, k, &targets);
            for (i, target) in targets.iter_mut().enumerate().take(k) {
                *target = data[start(i) + t];
                bits -= f64::from(probs[i * 256 + usize::from(*target)].max(1e-9)).log2();
            }
            kept_last = trainer.model().kept_patches();
            kept_sum += kept_last as f64;
            if t + 1 < steps {
                trainer.learn(&targets[..k]);
            }
        }
        let c = t0.elapsed().as_secs_f64();
        let np = trainer.model().patches() as f64;
        println!(
            "{:36} {:>9} {:6.3} bpb {:8.1} KB/s  kept {:5.1}% (mean) {:5.1}% (last step) of {} patches",
            path.rsplit('/').next().unwrap(),
            n,
            bits / n as f64,
            n as f64 / c / 1e3,
            100.0 * kept_sum / steps as f64 / np,
            100.0 * kept_last as f64 / np,
            np
        );
        raw += n;
        bits_all += bits;
        secs += c;
    }
    println!(
        "TOTAL {raw} -> {:.0} ({:.3} bpb) compress {:.1} KB/s",
        bits_all / 8.0,
        bits_all / raw as f64,
        raw as f64 / secs / 1e3
    );
}
