//! 4.5 GiB through `sep | sep -d`, generated on the fly and never stored:
//! lengths past 4 GiB (32-bit counters would wrap), standard input of unknown
//! length, every byte back in order, and memory bounded by the block size,
//! not the input (`sep -v` reports each process's peak).
//!
//! CI runs it with `--model store` (the same container, length and pipeline
//! code; seconds of CPU). The same test with `--model order2`, which takes
//! tens of minutes on a 2-core machine, is `#[ignore]`d: run it by hand with
//! `cargo test --release -p sep-cli --test large_input -- --ignored`.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// 4.5 GiB.
const LEN: u64 = 9 << 29;
const CHUNK: usize = 1 << 20;

/// Chunk `i` of the input: the same 1 MiB of text-like bytes, with `i` in its
/// first 8 bytes, so that a block lost, repeated or out of order is seen.
fn chunk(base: &[u8], i: u64, out: &mut Vec<u8>) {
    let len = (LEN - i * CHUNK as u64).min(CHUNK as u64) as usize;
    out.clear();
    out.extend_from_slice(&base[..len]);
    let n = len.min(8);
    out[..n].copy_from_slice(&i.to_le_bytes()[..n]);
}

fn base() -> Vec<u8> {
    let words = [
        "four ",
        "gigabytes ",
        "of ",
        "text ",
        "and ",
        "a ",
        "length ",
        "past ",
        "2^32, ",
        "streamed. ",
        "\n",
    ];
    let mut s = 0x2545_F491u32;
    let mut out = Vec::with_capacity(CHUNK + 16);
    while out.len() < CHUNK {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        out.extend_from_slice(words[(s >> 8) as usize % words.len()].as_bytes());
    }
    out.truncate(CHUNK);
    out
}

/// The peak memory, in MiB, that `sep -v` printed.
fn peak_mib(stderr: &str) -> f64 {
    let kib: f64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("sep: peak memory "))
        .and_then(|l| l.split('(').nth(1))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak memory in: {stderr}"));
    kib / 1024.0
}

fn round_trip_4_5_gib(model: &str, max_mib: f64) {
    let sep = assert_cmd::cargo::cargo_bin("sep");
    let mut comp = Command::new(&sep)
        .args(["-m", model, "-T2", "-v", "-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sep");
    let mut dec = Command::new(&sep)
        .args(["-d", "-T2", "-v", "-c"])
        .stdin(Stdio::from(comp.stdout.take().expect("piped")))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sep -d");
    let chunks = LEN.div_ceil(CHUNK as u64);
    let mut input = comp.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        let (base, mut buf) = (base(), Vec::new());
        for i in 0..chunks {
            chunk(&base, i, &mut buf);
            input.write_all(&buf).expect("sep takes its input");
        }
    });
    let (base, mut want, mut got) = (base(), Vec::new(), vec![0u8; CHUNK]);
    let mut output = dec.stdout.take().expect("piped");
    for i in 0..chunks {
        chunk(&base, i, &mut want);
        output
            .read_exact(&mut got[..want.len()])
            .unwrap_or_else(|e| panic!("output ends in chunk {i}: {e}"));
        assert!(got[..want.len()] == want[..], "chunk {i} differs");
    }
    assert_eq!(
        output.read(&mut got).unwrap(),
        0,
        "output longer than input"
    );
    writer.join().expect("writer");
    let (c, d) = (
        comp.wait_with_output().unwrap(),
        dec.wait_with_output().unwrap(),
    );
    let (c_err, d_err) = (
        String::from_utf8_lossy(&c.stderr),
        String::from_utf8_lossy(&d.stderr),
    );
    assert!(c.status.success(), "sep: {c_err}");
    assert!(d.status.success(), "sep -d: {d_err}");
    assert!(c_err.contains(&format!("(stdin): {LEN} => ")), "{c_err}");
    assert!(d_err.contains(&format!("=> {LEN} bytes")), "{d_err}");
    let (c_mib, d_mib) = (peak_mib(&c_err), peak_mib(&d_err));
    eprintln!("{model}: peak memory {c_mib:.1} MiB compressing, {d_mib:.1} MiB decompressing");
    assert!(
        c_mib < max_mib && d_mib < max_mib,
        "{model}: {c_mib:.1} / {d_mib:.1} MiB for 4.5 GiB, the bound is {max_mib} MiB"
    );
}

#[test]
fn four_and_a_half_gib_round_trip_through_pipes_with_store() {
    // 16 MiB blocks, -T2: three blocks in flight and one being filled (or
    // returned) are 64 MiB; sep itself 4 MiB.
    round_trip_4_5_gib("store", 100.0);
}

#[test]
#[ignore = "tens of minutes: run by hand (see the module docs)"]
fn four_and_a_half_gib_round_trip_through_pipes_with_order2() {
    // As store, plus a 16 MiB model per thread and the coded blocks.
    round_trip_4_5_gib("order2", 160.0);
}
