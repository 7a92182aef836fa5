//! CM revision 22's 24/32-bit image family (doc/FORMAT.md 4.33.2): round
//! trips of 24-bit and 32-bit images, of headers that lie and of tiny
//! inputs at revisions 20 and 22; and that revision 22 codes a generated
//! photograph-like image and a real photograph's crop (the corpus'
//! kodim23, when present) smaller than revision 20.

use crate::common;
use common::{coded_len, config, image_cases, kodim23_crop, round_trip_each, soft_pnm, soft_tga32};

#[test]
fn revisions_20_and_22_round_trip_images_and_lying_headers() {
    round_trip_each(&[20, 22], &image_cases(), false);
}

#[test]
fn revision_22_is_deterministic_on_a_photograph() {
    let data = kodim23_crop(100, 300, 64, 32).unwrap_or_else(|| soft_pnm(64, 32, 3));
    round_trip_each(&[22], &[data, soft_tga32(40, 24)], true);
}

#[test]
fn revision_22_codes_a_generated_image_smaller_than_revision_20() {
    let data = soft_pnm(160, 96, 3);
    let r20 = coded_len(&data, &config(20));
    let r22 = coded_len(&data, &config(22));
    eprintln!("revision 22 {r22} bytes, revision 20 {r20}");
    assert!(r22 < r20, "revision 22 {r22} bytes, revision 20 {r20}");
}

#[test]
fn revision_22_codes_a_photograph_smaller_than_revision_20() {
    let Some(data) = kodim23_crop(0, 200, 768, 64) else {
        eprintln!("no corpus: kodim23 not found, size not compared");
        return;
    };
    let r20 = coded_len(&data, &config(20));
    let r22 = coded_len(&data, &config(22));
    eprintln!("revision 22 {r22} bytes, revision 20 {r20}");
    assert!(r22 < r20, "revision 22 {r22} bytes, revision 20 {r20}");
}
