//! CM revision 40's ranked-predictor APMs for a detected 24/32-bit image
//! (doc/FORMAT.md 4.51.3): round trips of 24-bit and 32-bit images (PPM,
//! BMP, TGA), of headers that lie, of truncated pixels and of empty and
//! one-byte inputs at revisions 38 and 40; that revision 40 is
//! deterministic; and that it codes a generated image and a real
//! photograph's crop (the corpus' kodim23, when present) smaller than
//! revision 38.

use crate::common;
use common::{
    coded_len, config, image_cases, kodim23_crop, round_trip_each, soft_bmp, soft_pnm, soft_tga32,
};

#[test]
fn revisions_38_and_40_round_trip_images_and_lying_headers() {
    round_trip_each(&[38, 40], &image_cases(), false);
}

#[test]
fn revision_40_is_deterministic_on_a_photograph() {
    let data = kodim23_crop(100, 300, 64, 32).unwrap_or_else(|| soft_pnm(64, 32, 3));
    round_trip_each(&[40], &[data, soft_tga32(40, 24), soft_bmp(33, 17)], true);
}

#[test]
fn revision_40_codes_a_generated_image_smaller_than_revision_38() {
    let data = soft_pnm(160, 96, 3);
    let r38 = coded_len(&data, &config(38));
    let r40 = coded_len(&data, &config(40));
    eprintln!("revision 40 {r40} bytes, revision 38 {r38}");
    assert!(r40 < r38, "revision 40 {r40} bytes, revision 38 {r38}");
}

#[test]
fn revision_40_codes_a_photograph_smaller_than_revision_38() {
    let Some(data) = kodim23_crop(0, 200, 768, 64) else {
        eprintln!("no corpus: kodim23 not found, size not compared");
        return;
    };
    let r38 = coded_len(&data, &config(38));
    let r40 = coded_len(&data, &config(40));
    eprintln!("revision 40 {r40} bytes, revision 38 {r38}");
    assert!(
        r40 * 10000 < r38 * 9990,
        "revision 40 {r40} bytes, revision 38 {r38}"
    );
}
