//! CM revision 8's 24/32-bit image family (doc/FORMAT.md 4.19.3): round
//! trips of RGB PNM, 24-bit BMP and 32-bit TGA images and of headers that
//! lie, at revisions 7 and 8; and that the family codes generated
//! photo-like images smaller than revision 6 (and than revision 7, which
//! keeps revision 4's pixel family).

use crate::common;
use common::{config, noise, round_trip, round_trip_each, soft_bmp, soft_pnm, soft_tga32};

#[test]
fn revisions_7_and_8_round_trip_colour_images_and_lying_headers() {
    let mut lying = b"P6\n300 200\n255\n".to_vec();
    lying.extend(noise(2000, 5));
    let mut narrow = b"P6\n1 40\n255\n".to_vec();
    narrow.extend(noise(120, 8));
    let mut huge = b"P6\n999999 999999\n255\n".to_vec();
    huge.extend(noise(500, 9));
    let inputs = [
        soft_pnm(37, 23, 3),
        soft_bmp(37, 21),
        soft_tga32(23, 19),
        lying,
        narrow,
        huge,
        b"P6\n1 1\n255\n\x01\x02\x03".to_vec(),
        // Pixels that end early, and a header cut in its middle.
        soft_pnm(64, 64, 3)[..5000].to_vec(),
        soft_bmp(200, 150)[..3000].to_vec(),
        soft_pnm(8, 8, 3)[..9].to_vec(),
        // Gray and 16-bit images keep revision 4's family.
        soft_pnm(41, 19, 1),
    ];
    round_trip_each(&[7, 8], &inputs, false);
}

#[test]
fn revision_8_codes_colour_pixels_smaller_than_revisions_6_and_7() {
    let data = soft_pnm(96, 80, 3);
    let r6 = round_trip(&data, &config(6)).len();
    let r7 = round_trip(&data, &config(7)).len();
    let r8 = round_trip(&data, &config(8)).len();
    assert!(r8 * 100 < r6 * 97, "revision 8 {r8} bytes, revision 6 {r6}");
    assert!(r8 * 100 < r7 * 97, "revision 8 {r8} bytes, revision 7 {r7}");
}

#[test]
fn revision_8_finds_bmp_and_tga_pixels() {
    for data in [soft_bmp(80, 60), soft_tga32(72, 56)] {
        let r6 = round_trip(&data, &config(6)).len();
        let r8 = round_trip(&data, &config(8)).len();
        assert!(r8 < r6, "revision 8 {r8} bytes, revision 6 {r6}");
    }
}
