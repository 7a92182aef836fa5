//! CM revision 7's JPEG family (doc/FORMAT.md 4.18.2, models/jpeg7.rs): a
//! baseline JPEG round-trips at revisions 7 and 8 and codes smaller than
//! at revisions 5 and 6; corrupt and truncated scans round-trip without a
//! panic.

use crate::common;
use common::{JPEG, config, jpeg_scan_start as scan_start, noise, round_trip, round_trip_each};

#[test]
fn revisions_7_and_8_code_a_jpeg_smaller_than_revisions_5_and_6() {
    let r5 = round_trip(JPEG, &config(5)).len();
    let r6 = round_trip(JPEG, &config(6)).len();
    let r7 = round_trip(JPEG, &config(7)).len();
    let r8 = round_trip(JPEG, &config(8)).len();
    // At least 2% smaller (fireworks.jpeg itself: 4%).
    assert!(r7 * 100 < r5 * 98, "revision 7 {r7} vs revision 5 {r5}");
    assert!(r8 * 100 < r6 * 98, "revision 8 {r8} vs revision 6 {r6}");
}

#[test]
fn corrupt_and_truncated_scans_round_trip() {
    let scan = scan_start(JPEG);
    let mut inputs = Vec::new();
    // The scan cut at several places (mid-block, mid-code).
    for cut in [1, 17, 333, (JPEG.len() - scan) / 2] {
        inputs.push(JPEG[..scan + cut].to_vec());
    }
    // A truncated scan followed by noise with markers, restarts and
    // another SOI in it.
    let mut v = JPEG[..scan + 500].to_vec();
    v.extend([0xFF, 0xD5, 0xFF, 0x00, 0xFF, 0xD8, 0xFF, 0xDA, 0, 2]);
    v.extend(noise(700, 11));
    inputs.push(v);
    // Damaged scan bytes: bit flips every 61 bytes, and a run of `FF`.
    let mut v = JPEG.to_vec();
    for at in (scan..JPEG.len() - 2).step_by(61) {
        v[at] ^= 0x24;
    }
    let mid = scan + 200;
    v[mid..mid + 9].fill(0xFF);
    inputs.push(v);
    // A scan whose bytes are noise, and the JPEG twice in a row.
    let mut v = JPEG[..scan].to_vec();
    v.extend(noise(2500, 12));
    inputs.push(v);
    inputs.push([JPEG, JPEG].concat());
    round_trip_each(&[7, 8], &inputs, false);
}
