//! CM revision 42's trimmed 24/32-bit image family (doc/FORMAT.md 4.53.3:
//! revision 40's family without its ranked predictors, two maps and two
//! APMs): round trips of 24-bit and 32-bit images (PPM, BMP, TGA), of
//! headers that lie, of truncated pixels and of empty and one-byte inputs
//! at revisions 40 and 42; that revision 42 is deterministic; and that it
//! keeps most of revision 40's gain over revision 38 on a generated image
//! and a real photograph's crop (the corpus' kodim23, when present).

use crate::common;
use common::{
    coded_len, config, image_cases, kodim23_crop, round_trip_each, soft_bmp, soft_pnm, soft_tga32,
};

#[test]
fn revisions_40_and_42_round_trip_images_and_lying_headers() {
    round_trip_each(&[40, 42], &image_cases(), false);
}

#[test]
fn revision_42_is_deterministic_on_a_photograph() {
    let data = kodim23_crop(100, 300, 64, 32).unwrap_or_else(|| soft_pnm(64, 32, 3));
    round_trip_each(&[42], &[data, soft_tga32(40, 24), soft_bmp(33, 17)], true);
}

#[test]
fn revision_42_keeps_most_of_revision_40s_gain_on_a_generated_image() {
    let data = soft_pnm(160, 96, 3);
    let r38 = coded_len(&data, &config(38));
    let r40 = coded_len(&data, &config(40));
    let r42 = coded_len(&data, &config(42));
    eprintln!("revision 42 {r42} bytes, revision 40 {r40}, revision 38 {r38}");
    // At the tests' small tables 10,355 bytes against 10,323 (revision
    // 40) and 10,389 (revision 38): demand less than 38 and at most 0.5%
    // over 40.
    assert!(r42 < r38, "revision 42 {r42} bytes, revision 38 {r38}");
    assert!(
        r42 * 1000 <= r40 * 1005,
        "revision 42 {r42} bytes, revision 40 {r40}"
    );
}

#[test]
fn revision_42_codes_a_photograph_smaller_than_revision_38() {
    let Some(data) = kodim23_crop(0, 200, 768, 64) else {
        eprintln!("no corpus: kodim23 not found, size not compared");
        return;
    };
    let r38 = coded_len(&data, &config(38));
    let r42 = coded_len(&data, &config(42));
    eprintln!("revision 42 {r42} bytes, revision 38 {r38}");
    // 47,940 bytes against 48,158 at the tests' small tables (revision
    // 40: 47,903): demand 0.3%.
    assert!(
        r42 * 1000 < r38 * 997,
        "revision 42 {r42} bytes, revision 38 {r38}"
    );
}
