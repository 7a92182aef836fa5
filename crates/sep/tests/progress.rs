//! `Encoder::progress` and `Decoder::progress`: the bytes coded so far,
//! block by block and within a block, for progress bars.

use std::io::{Read, Write};

fn text(n: usize) -> Vec<u8> {
    let words = ["alpha ", "beta ", "gamma ", "delta\n", "epsilon ", "zeta, "];
    let mut state = 7u64;
    let mut v = Vec::with_capacity(n + 8);
    while v.len() < n {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.extend_from_slice(words[(state >> 33) as usize % words.len()].as_bytes());
    }
    v.truncate(n);
    v
}

fn options(model: &str, block: u32) -> sep::Options {
    sep::Options {
        model: sep::Model::from_name(model).unwrap(),
        block_size: Some(block),
        threads: 1,
        pipeline: false,
        ..sep::Options::default()
    }
}

/// With one thread in batch mode, handing over block i waits for block i-1:
/// after each block the count is between the blocks finished and the blocks
/// handed over; after `finish` it is the whole content.
#[test]
fn encoder_counts_coded_bytes_after_each_block() {
    const BLOCK: usize = 16 << 10;
    for model in ["order2", "store", "mix"] {
        let data = text(6 * BLOCK + 1000);
        let mut enc = sep::Encoder::new(Vec::new(), &options(model, BLOCK as u32)).unwrap();
        let progress = enc.progress();
        assert_eq!(progress.bytes(), 0);
        let mut last = 0;
        for (i, block) in data.chunks(BLOCK).enumerate() {
            enc.write_all(block).unwrap();
            let now = progress.bytes();
            assert!(now >= last, "{model}: never goes back");
            assert!(
                now >= (i * BLOCK).saturating_sub(BLOCK) as u64,
                "{model} block {i}: {now}"
            );
            assert!(now <= ((i + 1) * BLOCK) as u64, "{model} block {i}: {now}");
            last = now;
        }
        let archive = enc.finish().unwrap();
        assert_eq!(progress.bytes(), data.len() as u64, "{model}");
        assert_eq!(sep::decompress(&archive).unwrap(), data);
    }
}

/// Within one long block the count rises step by step, seen from another
/// thread while the encoder's thread is busy.
#[test]
fn encoder_progress_rises_within_a_block() {
    let data = text(400_000);
    let mut enc = sep::Encoder::new(Vec::new(), &options("mix", 1 << 20)).unwrap();
    let progress = enc.progress();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (p, d) = (progress.clone(), done.clone());
    let watcher = std::thread::spawn(move || {
        let mut seen = Vec::new();
        while !d.load(std::sync::atomic::Ordering::Relaxed) {
            seen.push(p.bytes());
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        seen
    });
    enc.write_all(&data).unwrap();
    enc.finish().unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    let inside = seen
        .iter()
        .filter(|&&b| b > 0 && b < data.len() as u64)
        .count();
    assert!(
        inside >= 3,
        "intermediate counts seen: {inside} of {}",
        seen.len()
    );
    assert!(seen.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(progress.bytes(), data.len() as u64);
}

#[test]
fn decoder_counts_decoded_bytes() {
    for model in ["order2", "store"] {
        let data = text(100_000);
        let archive = sep::compress(&data, &options(model, 16 << 10)).unwrap();
        let mut dec = sep::Decoder::new(&archive[..]).unwrap();
        let progress = dec.progress();
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = dec.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
            assert!(
                progress.bytes() >= out.len() as u64,
                "{model}: ahead of reads"
            );
        }
        assert_eq!(out, data);
        assert_eq!(progress.bytes(), data.len() as u64, "{model}");
    }
}
