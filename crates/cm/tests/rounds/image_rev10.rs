//! CM revision 10's image families (doc/FORMAT.md 4.21.3): round trips of
//! 24-bit, 32-bit, gray and bi-level images and of headers that lie, at
//! revisions 9 and 10; and that revision 10 codes a real photograph's crop
//! (the corpus' kodim23 when present, else a generated image) and a
//! bi-level bitmap smaller than revision 8.

use crate::common;
use common::{
    coded_len, config, fax, kodim23_crop, lying_pnm_images, pic_page as page, round_trip, soft_bmp,
    soft_pnm, soft_tga32,
};

#[test]
fn revisions_9_and_10_round_trip_images_and_lying_headers() {
    // Headers that lie: noise after a PPM header, a width of one pixel, a
    // size far past the data, pixels that end early, a header cut short.
    let mut inputs = vec![
        soft_pnm(37, 23, 3),
        soft_bmp(37, 21),
        soft_tga32(23, 19),
        soft_pnm(41, 19, 1),
        fax(64, 300),
        page(1000, 60),
    ];
    inputs.extend(lying_pnm_images());
    inputs.extend([
        b"P6\n1 1\n255\n\x01\x02\x03".to_vec(),
        soft_pnm(64, 64, 3)[..5000].to_vec(),
        soft_bmp(200, 150)[..3000].to_vec(),
        soft_pnm(8, 8, 3)[..9].to_vec(),
    ]);
    for revision in [9, 10] {
        for data in &inputs {
            round_trip(data, &config(revision));
        }
    }
}

#[test]
fn revision_10_codes_a_photograph_smaller_than_revision_8() {
    let data = kodim23_crop(200, 150, 96, 64).unwrap_or_else(|| soft_pnm(96, 64, 3));
    let r8 = coded_len(&data, &config(8));
    let r10 = coded_len(&data, &config(10));
    assert!(
        r10 * 1000 < r8 * 995,
        "revision 10 {r10} bytes, revision 8 {r8}"
    );
}

#[test]
fn revision_10_codes_a_bitmap_smaller_than_revision_8() {
    let data = page(400, 600);
    let r8 = coded_len(&data, &config(8));
    let r10 = coded_len(&data, &config(10));
    assert!(r10 < r8, "revision 10 {r10} bytes, revision 8 {r8}");
}
