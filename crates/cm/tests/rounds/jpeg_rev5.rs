//! CM revision 5's JPEG family (doc/FORMAT.md 4.16.4): a baseline JPEG
//! round-trips at revisions 5 and 6 and codes smaller than revision 4 codes
//! its bytes; corrupt and unsupported JPEG data (noise after the headers, a
//! truncated scan, damaged scan bytes, a progressive or arithmetic frame,
//! broken Huffman tables) round-trips without a panic.

use crate::common;
use common::{JPEG, config, jpeg_scan_start as scan_start, noise, round_trip, round_trip_each};

#[test]
fn revisions_5_and_6_code_a_jpeg_smaller_than_revision_4() {
    let r4 = round_trip(JPEG, &config(4)).len();
    let r5 = round_trip(JPEG, &config(5)).len();
    let r6 = round_trip(JPEG, &config(6)).len();
    // Revision 4 sees the scan as noise; the JPEG family decodes it.
    assert!(r5 * 100 < r4 * 95, "revision 5 {r5} vs revision 4 {r4}");
    assert!(r6 * 100 < r4 * 95, "revision 6 {r6} vs revision 4 {r4}");
}

#[test]
fn corrupt_and_unsupported_jpegs_round_trip() {
    let scan = scan_start(JPEG);
    let mut inputs = Vec::new();
    // Noise after the headers.
    let mut v = JPEG[..scan].to_vec();
    v.extend(noise(3000, 7));
    inputs.push(v);
    // A truncated scan, then noise with markers in it.
    let mut v = JPEG[..scan + (JPEG.len() - scan) / 2].to_vec();
    v.extend([0xFF, 0xD3, 0xFF, 0x00, 0xFF, 0xFF, 0xC4, 0, 3, 0xFF]);
    v.extend(noise(500, 8));
    inputs.push(v);
    // Damaged scan bytes (invalid codes, stray markers and restarts).
    let mut v = JPEG.to_vec();
    for (k, at) in (scan..JPEG.len() - 2).step_by(97).enumerate() {
        v[at] = [0xFF, 0x00, 0x5A, 0xD0][k % 4];
    }
    inputs.push(v);
    // Progressive (SOF2) and arithmetic (SOF9) frames: the family stops.
    let sof = JPEG.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
    for code in [0xC2, 0xC9] {
        let mut v = JPEG.to_vec();
        v[sof + 1] = code;
        inputs.push(v);
    }
    // Huffman tables whose counts overflow the code space, and a segment
    // length that runs past the data.
    let dht = JPEG.windows(2).position(|w| w == [0xFF, 0xC4]).unwrap();
    let mut v = JPEG.to_vec();
    v[dht + 5] = 200;
    inputs.push(v);
    let mut v = JPEG[..dht + 4].to_vec();
    v[dht + 2] = 0xFF;
    inputs.push(v);
    // Only the start of a JPEG, and SOI with nothing valid after it.
    inputs.push(vec![0xFF, 0xD8, 0xFF]);
    inputs.push(
        [0xFF, 0xD8, 0xFF]
            .into_iter()
            .chain(noise(2000, 9))
            .collect(),
    );
    round_trip_each(&[5, 6], &inputs, false);
}
