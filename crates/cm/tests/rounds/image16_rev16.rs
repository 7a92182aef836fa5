//! CM revision 16's 24/32-bit image family (doc/FORMAT.md 4.27.2): round
//! trips of 24-bit and 32-bit images, of headers that lie and of tiny
//! inputs at revisions 14 and 16; and that revision 16 codes a real
//! photograph's crop (the corpus' kodim23 when present, else a generated
//! image) and a generated image smaller than revision 14.

use crate::common;
use common::{coded_len, config, image_cases, kodim23_crop, round_trip_each, soft_pnm, soft_tga32};

#[test]
fn revisions_14_and_16_round_trip_images_and_lying_headers() {
    round_trip_each(&[14, 16], &image_cases(), false);
}

#[test]
fn revision_16_is_deterministic_on_a_photograph() {
    let data = kodim23_crop(100, 300, 64, 32).unwrap_or_else(|| soft_pnm(64, 32, 3));
    round_trip_each(&[16], &[data], true);
}

#[test]
fn revision_16_codes_a_photograph_smaller_than_revision_14() {
    let data = kodim23_crop(200, 150, 128, 64).unwrap_or_else(|| soft_pnm(128, 64, 3));
    let r14 = coded_len(&data, &config(14));
    let r16 = coded_len(&data, &config(16));
    assert!(
        r16 * 1000 < r14 * 997,
        "revision 16 {r16} bytes, revision 14 {r14}"
    );
}

#[test]
fn revision_16_codes_a_generated_image_smaller_than_revision_14() {
    let data = soft_pnm(128, 64, 3);
    let r14 = coded_len(&data, &config(14));
    let r16 = coded_len(&data, &config(16));
    assert!(r16 < r14, "revision 16 {r16} bytes, revision 14 {r14}");
}

#[test]
fn revision_16_codes_a_32_bit_image_smaller_than_revision_14() {
    let data = soft_tga32(96, 64);
    let r14 = coded_len(&data, &config(14));
    let r16 = coded_len(&data, &config(16));
    assert!(r16 < r14, "revision 16 {r16} bytes, revision 14 {r14}");
}
