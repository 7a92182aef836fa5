//! CM revision 36's mixing and refinement of a detected 24/32-bit image
//! (doc/FORMAT.md 4.47.1: the final layer by channel, a second final layer
//! by the moved gradient's distance to the bit's threshold, two APMs keyed
//! by the moved W and N): round trips of 24-bit and 32-bit images (PPM,
//! BMP, TGA), of headers that lie, of truncated pixels and of empty and
//! one-byte inputs at revisions 34 and 36; that revision 36 is
//! deterministic; and that it codes a generated image and a real
//! photograph's crop (the corpus' kodim23, when present) smaller than
//! revision 34.

use crate::common;
use common::{coded_len, config, image_cases, kodim23_crop, round_trip_each, soft_pnm, soft_tga32};

#[test]
fn revisions_34_and_36_round_trip_images_and_lying_headers() {
    round_trip_each(&[34, 36], &image_cases(), false);
}

#[test]
fn revision_36_is_deterministic_on_a_photograph() {
    let data = kodim23_crop(100, 300, 64, 32).unwrap_or_else(|| soft_pnm(64, 32, 3));
    round_trip_each(&[36], &[data, soft_tga32(40, 24)], true);
}

#[test]
fn revision_36_codes_a_generated_image_smaller_than_revision_34() {
    let data = soft_pnm(160, 96, 3);
    let r34 = coded_len(&data, &config(34));
    let r36 = coded_len(&data, &config(36));
    eprintln!("revision 36 {r36} bytes, revision 34 {r34}");
    assert!(r36 < r34, "revision 36 {r36} bytes, revision 34 {r34}");
}

#[test]
fn revision_36_codes_a_photograph_smaller_than_revision_34() {
    let Some(data) = kodim23_crop(0, 200, 768, 64) else {
        eprintln!("no corpus: kodim23 not found, size not compared");
        return;
    };
    let r34 = coded_len(&data, &config(34));
    let r36 = coded_len(&data, &config(36));
    eprintln!("revision 36 {r36} bytes, revision 34 {r34}");
    // 0.43% on the whole photograph, 0.21% on this small crop (48,211
    // bytes against 48,311): demand 0.1%.
    assert!(
        r36 * 1000 < r34 * 999,
        "revision 36 {r36} bytes, revision 34 {r34}"
    );
}
