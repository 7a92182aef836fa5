//! CM revision 32's 24/32-bit image family (doc/FORMAT.md 4.43.4: one
//! learnt map per pixel predictor, keyed by the predictor's distance to the
//! partial byte): round trips of 24-bit and 32-bit images (PPM, BMP, TGA),
//! of headers that lie (wrong width, sizes past the data, truncated pixels)
//! and of empty and one-byte inputs at revisions 30 and 32; and that
//! revision 32 codes a generated photograph-like image and a real
//! photograph's crop (the corpus' kodim23, when present) smaller than
//! revision 30.

use crate::common;
use common::{coded_len, config, image_cases, kodim23_crop, round_trip_each, soft_pnm, soft_tga32};

#[test]
fn revisions_30_and_32_round_trip_images_and_lying_headers() {
    round_trip_each(&[30, 32], &image_cases(), false);
}

#[test]
fn revision_32_is_deterministic_on_a_photograph() {
    let data = kodim23_crop(100, 300, 64, 32).unwrap_or_else(|| soft_pnm(64, 32, 3));
    round_trip_each(&[32], &[data, soft_tga32(40, 24)], true);
}

#[test]
fn revision_32_codes_a_generated_image_smaller_than_revision_30() {
    let data = soft_pnm(160, 96, 3);
    let r30 = coded_len(&data, &config(30));
    let r32 = coded_len(&data, &config(32));
    eprintln!("revision 32 {r32} bytes, revision 30 {r30}");
    assert!(r32 < r30, "revision 32 {r32} bytes, revision 30 {r30}");
}

#[test]
fn revision_32_codes_a_photograph_smaller_than_revision_30() {
    let Some(data) = kodim23_crop(0, 200, 768, 64) else {
        eprintln!("no corpus: kodim23 not found, size not compared");
        return;
    };
    let r30 = coded_len(&data, &config(30));
    let r32 = coded_len(&data, &config(32));
    eprintln!("revision 32 {r32} bytes, revision 30 {r30}");
    // The maps gain about 1% on the whole photograph; on this small crop
    // demand at least 0.3%.
    assert!(
        r32 * 1000 < r30 * 997,
        "revision 32 {r32} bytes, revision 30 {r30}"
    );
}
