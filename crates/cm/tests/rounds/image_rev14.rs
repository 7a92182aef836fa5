//! CM revision 14's 24/32-bit image family (doc/FORMAT.md 4.25.1): round
//! trips of 24-bit and 32-bit images, of headers that lie and of tiny
//! inputs at revisions 12 and 14; and
//! that revision 14 codes a real photograph's crop (the corpus' kodim23
//! when present, else a generated image) smaller than revision 12.

use crate::common;
use common::{coded_len, config, image_cases, kodim23_crop, round_trip_each, soft_pnm};

#[test]
fn revisions_12_and_14_round_trip_images_and_lying_headers() {
    round_trip_each(&[12, 14], &image_cases(), false);
}

#[test]
fn revision_14_codes_a_photograph_smaller_than_revision_12() {
    let data = kodim23_crop(200, 150, 128, 64).unwrap_or_else(|| soft_pnm(128, 64, 3));
    let r12 = coded_len(&data, &config(12));
    let r14 = coded_len(&data, &config(14));
    assert!(
        r14 * 1000 < r12 * 997,
        "revision 14 {r14} bytes, revision 12 {r12}"
    );
}

#[test]
fn revision_14_codes_a_generated_image_smaller_than_revision_12() {
    let data = soft_pnm(128, 64, 3);
    let r12 = coded_len(&data, &config(12));
    let r14 = coded_len(&data, &config(14));
    assert!(r14 < r12, "revision 14 {r14} bytes, revision 12 {r12}");
}
