//! CM revision 26's repeated-record family (doc/FORMAT.md 4.37.1): round
//! trips of generated unit quaternions whose records mostly repeat an
//! earlier distinct record (at move-to-front ranks as the corpus's), of a
//! float grid (where the family does not apply), of empty and one-byte
//! inputs and of a block whose float layout lies; and that revision 26
//! codes the repeating records smaller than revision 24.

use crate::common;
use common::{
    Rng64, coded_len, config, f32_grid, mixed_text, noise, round_trip_each, unit_quaternion,
};

/// Per 65,536 records: the cumulative shares of new records and of the
/// move-to-front ranks 0, 1, 2, 3, 4..8, 8..16, 16..64, 64..128,
/// 128..1024 and 1024..4096 among repeats (those of the corpus's
/// quaternion file's first MiB).
const SHARES: [(u64, usize, usize); 11] = [
    (14094, 0, 0),
    (28664, 0, 1),
    (36128, 1, 2),
    (41213, 2, 3),
    (44814, 3, 4),
    (50089, 4, 8),
    (52989, 8, 16),
    (58481, 16, 64),
    (59739, 64, 128),
    (61701, 128, 1024),
    (65536, 1024, 4096),
];

/// `n` unit quaternions (x, y, z, w) as little-endian f32, rotations about
/// the Y axis and about random axes, new or a repeat of the distinct record
/// at a move-to-front rank drawn with [`SHARES`] (within a range, the
/// smaller of two uniform draws).
fn repeating_quaternions(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng64(seed | 1);
    let mut mtf: Vec<[f32; 4]> = Vec::new();
    let mut out = Vec::with_capacity(16 * n);
    for _ in 0..n {
        let u = rng.next() % 65536;
        let (lo, hi) = SHARES
            .iter()
            .find(|s| u < s.0)
            .map_or((0, 0), |s| (s.1, s.2));
        let rec = if hi > 0 && lo < mtf.len() {
            let k = (hi.min(mtf.len()) - lo) as u64;
            let r = lo + (rng.next() % k).min(rng.next() % k) as usize;
            mtf.remove(r)
        } else {
            unit_quaternion(&mut rng, 3)
        };
        mtf.insert(0, rec);
        mtf.truncate(4096);
        out.extend(rec.iter().flat_map(|v| v.to_le_bytes()));
    }
    out
}

#[test]
fn revision_26_round_trips_repeating_records() {
    let mut lying = repeating_quaternions(2000, 3);
    lying.extend(mixed_text());
    lying.extend(noise(4000, 9));
    let mut shifted = b"abc".to_vec();
    shifted.extend(repeating_quaternions(3000, 4));
    let inputs: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"x".to_vec(),
        repeating_quaternions(5000, 1),
        shifted,
        f32_grid(8000),
        // Quaternions for the detector, then text and noise: the layout lies.
        lying,
    ];
    round_trip_each(&[24, 26], &inputs, false);
}

#[test]
fn revision_26_codes_repeating_records_smaller() {
    let data = repeating_quaternions(16000, 7);
    let old = coded_len(&data, &config(24));
    let new = coded_len(&data, &config(26));
    assert!(new < old, "revision 26: {new} bytes, 24: {old}");
}
