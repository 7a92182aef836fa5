//! CM revision 24's unit-norm record family (doc/FORMAT.md 4.35.3): round
//! trips of generated unit quaternions (records of four little-endian f32
//! whose squares sum to 1), of a float grid (where the family stays idle),
//! of empty and one-byte inputs and of a block whose float layout lies;
//! and that revision 24 codes the quaternions smaller than revision 22.

use crate::common;
use common::{
    Rng64, coded_len, config, f32_grid, mixed_text, noise, round_trip_each, unit_quaternion,
};

/// `n` unit quaternions (x, y, z, w) as little-endian f32: rotations
/// about the Y axis (x = z = 0, three in four) and about random axes, a
/// third of them
/// repeats of the record before, the rest new.
fn quaternions(n: usize, seed: u64) -> Vec<u8> {
    quaternions_back(n, seed, 1)
}

/// As [`quaternions`], the repeats copying one of the last `back` records.
fn quaternions_back(n: usize, seed: u64, back: usize) -> Vec<u8> {
    let mut rng = Rng64(seed | 1);
    let mut recs: Vec<[f32; 4]> = Vec::with_capacity(n);
    for k in 0..n {
        if k > 0 && rng.next().is_multiple_of(3) {
            let lag = if back > 1 {
                1 + (rng.next() % back.min(k) as u64) as usize
            } else {
                1
            };
            recs.push(recs[k - lag]);
            continue;
        }
        recs.push(unit_quaternion(&mut rng, 4));
    }
    recs.iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

#[test]
fn revision_24_round_trips_quaternions() {
    let mut lying = quaternions(2000, 3);
    lying.extend(mixed_text());
    lying.extend(noise(4000, 9));
    let mut shifted = b"abc".to_vec();
    shifted.extend(quaternions(3000, 4));
    let inputs: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"x".to_vec(),
        quaternions(5000, 1),
        shifted,
        f32_grid(8000),
        // Quaternions for the detector, then text and noise: the layout lies.
        lying,
    ];
    round_trip_each(&[22, 24], &inputs, false);
}

#[test]
fn quaternions_repeating_older_records_round_trip() {
    // Repeats of the last 8 records: the detector finds rows of 5 to 16
    // elements here, where revision 7's record vocabulary (float7.rs)
    // indexed its four-element views past their end and panicked, from
    // revision 7 on, before stop 35.
    let data = quaternions_back(12000, 7, 8);
    round_trip_each(&[7, 8, 22, 24], &[data], false);
}

#[test]
fn revision_24_codes_quaternions_smaller() {
    let data = quaternions(12000, 7);
    let old = coded_len(&data, &config(22));
    let new = coded_len(&data, &config(24));
    // 48,953 bytes against 50,938 when written: at least 2% smaller.
    assert!(new * 50 < old * 49, "revision 24: {new} bytes, 22: {old}");
}

#[test]
fn revision_24_codes_a_grid_as_revision_22() {
    // The family is idle on arrays without unit-norm records: the grid
    // codes within a few bytes of revision 22 (the family's constant
    // contexts still take mixer weights).
    let data = f32_grid(20000);
    let old = coded_len(&data, &config(22));
    let new = coded_len(&data, &config(24));
    assert!(
        new <= old + old / 200,
        "revision 24: {new} bytes, 22: {old}"
    );
}
