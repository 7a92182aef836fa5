//! CM revision 36's JPEG family (doc/FORMAT.md 4.47.4, models/jpeg36.rs):
//! a baseline JPEG round-trips at revision 36 and codes smaller than at
//! revision 34; truncated and damaged JPEGs, a JPEG whose header lies
//! about its size, empty and 1-byte inputs round-trip without a panic.

use crate::common;
use common::{JPEG, config, jpeg_scan_start as scan_start, noise, round_trip, round_trip_each};

#[test]
fn revision_36_codes_a_jpeg_smaller_than_revision_34() {
    let r34 = round_trip(JPEG, &config(34)).len();
    let r36 = round_trip(JPEG, &config(36)).len();
    // The 3.4 KB crop: 2,727 -> 2,717 bytes (snappy.fireworks.jpeg: -0.6%).
    assert!(
        r36 * 1000 < r34 * 997,
        "revision 36 {r36} vs revision 34 {r34}"
    );
}

#[test]
fn truncated_damaged_and_lying_jpegs_round_trip() {
    let scan = scan_start(JPEG);
    let mut inputs: Vec<Vec<u8>> = vec![Vec::new(), vec![0xFF], vec![0xFF, 0xD8, 0xFF]];
    // The scan cut mid-block and mid-code.
    for cut in [1, 45, (JPEG.len() - scan) / 2] {
        inputs.push(JPEG[..scan + cut].to_vec());
    }
    // A frame header that lies: twice the width and the height (more
    // blocks per row than the scan holds, so the above-right and
    // above-left neighbours come from wrong places), then half of them.
    let sof = JPEG.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
    for (h, w) in [(192u16, 256u16), (48, 64), (8, 4096)] {
        let mut v = JPEG.to_vec();
        v[sof + 5..sof + 7].copy_from_slice(&h.to_be_bytes());
        v[sof + 7..sof + 9].copy_from_slice(&w.to_be_bytes());
        inputs.push(v);
    }
    // Damaged scan bytes, and a scan of noise.
    let mut v = JPEG.to_vec();
    for at in (scan..JPEG.len() - 2).step_by(53) {
        v[at] ^= 0x41;
    }
    inputs.push(v);
    let mut v = JPEG[..scan].to_vec();
    v.extend(noise(1500, 36));
    inputs.push(v);
    // The JPEG twice: the second image reuses the first one's state.
    inputs.push([JPEG, JPEG].concat());
    round_trip_each(&[36], &inputs, true);
}
