//! CM revision 18's float family (doc/FORMAT.md 4.29.3): round trips of
//! generated float grids (little- and big-endian f32, f64), of short
//! records (where the family is idle), of empty and one-byte inputs and of
//! a block whose float layout lies; and that revision 18 codes a grid of
//! f32 smaller than revision 16. Revision 20 (4.31.4: the family's
//! contexts are the byte's own, not the byte before's) round trips the
//! same inputs and codes a grid of f32 smaller than revision 18.

use crate::common;
use common::{config, mixed_text, noise, round_trip, round_trip_each};

/// A smooth field over `cols` x `rows` (a terrain), with noise from `seed`.
fn field(cols: usize, rows: usize, seed: u64) -> Vec<f64> {
    let n = noise(cols * rows, seed);
    let mut out = Vec::with_capacity(cols * rows);
    for y in 0..rows {
        for x in 0..cols {
            let (fx, fy) = (x as f64 * 0.05, y as f64 * 0.07);
            let h = 1500.0
                + 900.0 * (fx.sin() * fy.cos())
                + 300.0 * (0.3 * fx + 0.2 * fy).sin()
                + f64::from(n[y * cols + x]) * 0.05;
            out.push(h);
        }
    }
    out
}

/// The field as little-endian f32 rounded to sixteenths.
fn grid_f32(cols: usize, rows: usize, seed: u64) -> Vec<u8> {
    field(cols, rows, seed)
        .iter()
        .flat_map(|&h| (((h * 16.0).round() / 16.0) as f32).to_le_bytes())
        .collect()
}

/// The field as big-endian f32.
fn grid_f32_be(cols: usize, rows: usize) -> Vec<u8> {
    field(cols, rows, 5)
        .iter()
        .flat_map(|&h| (h as f32).to_be_bytes())
        .collect()
}

/// The field as little-endian f64 rounded to tenths (negated in part).
fn grid_f64(cols: usize, rows: usize) -> Vec<u8> {
    field(cols, rows, 6)
        .iter()
        .enumerate()
        .flat_map(|(k, &h)| {
            let v = (h * 10.0).round() / 10.0 - 1400.0;
            (if k % 7 == 0 { -v } else { v }).to_le_bytes()
        })
        .collect()
}

/// Records of four f32 (short records: the family stays idle).
fn records(n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|k| {
            let a = (k % 13) as f32 * 0.4;
            [0.0f32, a.sin(), 0.0, a.cos()]
        })
        .flat_map(f32::to_le_bytes)
        .collect()
}

#[test]
fn revision_18_round_trips_float_grids() {
    let mut lying = grid_f32(100, 60, 2);
    lying.extend(mixed_text());
    lying.extend(noise(4000, 9));
    let inputs: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"x".to_vec(),
        grid_f32(120, 100, 1),
        grid_f32_be(90, 80),
        grid_f64(70, 60),
        records(1500),
        // Floats for the detector, then text and noise: the layout lies.
        lying,
        // Too short for the detector.
        grid_f32(10, 10, 3),
    ];
    round_trip_each(&[18, 20], &inputs, true);
}

#[test]
fn revision_18_codes_float_grids_smaller() {
    let data = grid_f32(160, 110, 4);
    let size = |revision| round_trip(&data, &config(revision)).len();
    let (r16, r18) = (size(16), size(18));
    assert!(
        r18 * 1000 < r16 * 995,
        "revision 18 {r18} bytes, revision 16 {r16}"
    );
}

#[test]
fn revision_20_codes_float_grids_smaller() {
    // (21,943 -> 21,940 bytes at the test configuration; Basel's f64
    // file -0.25%, doc/FORMAT.md 4.31.4.)
    let data = grid_f32(160, 110, 4);
    let size = |revision| round_trip(&data, &config(revision)).len();
    let (r18, r20) = (size(18), size(20));
    assert!(r20 < r18, "revision 20 {r20} bytes, revision 18 {r18}");
}
