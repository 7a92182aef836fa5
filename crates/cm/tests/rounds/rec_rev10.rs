//! CM revision 10's record and float families (doc/FORMAT.md 4.21.4):
//! round trips at revisions 9 and 10 of generated float records whose
//! runs repeat, IBM floats in traces with headers, a BIFF-like stream, and
//! files that only start like one of those (lying layouts); that
//! revision 10 codes the IBM traces smaller than revision 8 and the float
//! records about as small.

use crate::common;
use common::{config, mixed_text, noise, round_trip, round_trip_each};

/// `n` records of four little-endian f32 (rotations stored as
/// quaternions) in runs: a run copies the records that followed an
/// earlier record (an animation cycle played again), else a new record
/// comes.
fn cycles(n: usize, seed: u64) -> Vec<u8> {
    let pick = noise(3 * n, seed);
    let mut recs: Vec<[f32; 4]> = Vec::with_capacity(n);
    let mut src: Option<usize> = None;
    for k in 0..n {
        let (p, q, r) = (pick[3 * k], pick[3 * k + 1], pick[3 * k + 2]);
        let rec = match src {
            Some(s) if p >= 16 => {
                src = Some(s + 1);
                recs[s]
            }
            _ if k > 8 && p < 128 => {
                let back = 1 + (usize::from(q) << 8 | usize::from(r)) % k.min(300);
                src = Some(k - back + 1);
                recs[k - back]
            }
            _ => {
                src = None;
                let a = (f32::from(q) * 0.021 + f32::from(r) * 1e-4) * 0.5;
                let t = f32::from(r) * 1e-3;
                [t, a.sin(), -t, a.cos()]
            }
        };
        recs.push(rec);
    }
    recs.iter()
        .flat_map(|r| r.iter().flat_map(|x| x.to_bits().to_le_bytes()))
        .collect()
}

/// `x` as an IBM System/360 single-precision pattern.
fn ibm(x: f64) -> u32 {
    if x == 0.0 {
        return 0;
    }
    let sign = u32::from(x < 0.0) << 31;
    let mut a = x.abs();
    let mut e = 64u32;
    while a >= 1.0 {
        a /= 16.0;
        e += 1;
    }
    while a < 1.0 / 16.0 {
        a *= 16.0;
        e -= 1;
    }
    sign | e << 24 | (a * 16_777_216.0) as u32
}

/// `traces` seismic-like traces of `len` big-endian IBM floats (a noisy
/// resonance, the fraction's last byte zero), each after a 200-byte
/// header of text.
fn ibm_traces(traces: usize, len: usize) -> Vec<u8> {
    let jitter = noise(traces * len, 11);
    let mut out = Vec::new();
    for t in 0..traces {
        let mut header = format!("TRACE {t:04} LINE 7 SHOT {} ", 100 + t).into_bytes();
        header.resize(200, b' ');
        out.extend(header);
        let (mut a, mut b) = (0.0f64, 0.0f64);
        for k in 0..len {
            let kick = f64::from(jitter[t * len + k]) - 127.5;
            let v = 1.6 * a - 0.8 * b + kick;
            (a, b) = (v, a);
            out.extend((ibm(v) & !0xFF).to_be_bytes());
        }
    }
    out
}

/// A BIFF2-like stream: BOF, then rows of INTEGER cells of answer codes.
fn biff(rows: u16, cols: u16) -> Vec<u8> {
    let mut out = vec![9, 0, 4, 0, 2, 0, 16, 0];
    let pick = noise(usize::from(rows) * usize::from(cols), 5);
    for r in 0..rows {
        for c in 0..cols {
            let v = pick[usize::from(r * cols + c)] % 5 + 1;
            out.extend([2, 0, 9, 0]);
            out.extend(r.to_le_bytes());
            out.extend(c.to_le_bytes());
            out.extend([0, 0, 0, v, 0]);
        }
    }
    out.extend([10, 0, 0, 0]);
    out
}

#[test]
fn revisions_9_and_10_round_trip_records_and_floats() {
    // Floats for the detector, then text and noise: the layout lies.
    let mut turn = cycles(1100, 3);
    turn.extend(mixed_text());
    turn.extend(noise(3000, 4));
    let mut ibm_turn = ibm_traces(1, 4200);
    ibm_turn.extend(noise(2000, 6));
    ibm_turn.extend(mixed_text());
    // A BOF record, then no records at all.
    let mut lying_biff = biff(0, 0);
    lying_biff.truncate(8);
    lying_biff.extend(noise(3000, 8));
    let inputs = [
        cycles(1100, 1),
        ibm_traces(2, 2200),
        ibm_turn,
        turn,
        biff(40, 30),
        lying_biff,
        cycles(3, 2),
    ];
    round_trip_each(&[9, 10], &inputs, false);
}

/// The record-match family pays on the corpus's float files (calgary.geo,
/// etopo20, the quaternion file), not on these generated runs, which the
/// record vocabulary of revisions 7 and 8 already tells (430 bytes at both
/// revisions when written; 433 at revision 10 once merged with revision 9's
/// shortcut and mixer rates): a bound, not a gain, at most 1% larger.
#[test]
fn revision_10_codes_repeating_runs_of_records_at_most_1_percent_larger() {
    let data = cycles(1400, 7);
    let size = |revision| round_trip(&data, &config(revision)).len();
    let (r8, r10) = (size(8), size(10));
    assert!(
        r10 * 100 <= r8 * 101,
        "revision 10 {r10} bytes, revision 8 {r8}"
    );
}

/// 10,708 against 10,723 bytes when written; calgary.geo: -3.6%.
#[test]
fn revision_10_codes_ibm_floats_smaller() {
    let data = ibm_traces(2, 2500);
    let size = |revision| round_trip(&data, &config(revision)).len();
    let (r8, r10) = (size(8), size(10));
    assert!(r10 < r8, "revision 10 {r10} bytes, revision 8 {r8}");
}
