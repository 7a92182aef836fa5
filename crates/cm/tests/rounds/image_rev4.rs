//! CM revision 4's image models (doc/FORMAT.md 4.15.2): round trips of
//! 8-bit gray, RGB and 16-bit PNM images, BMP and TGA images, headers that
//! lie and bi-level bitmaps, and that the revision-4 pixel and bi-level
//! families (and its BMP and TGA detection) code their kind of input
//! smaller than revision 2.

use crate::common;
use common::{config, fax, noise, round_trip, soft_bmp, soft_pnm};

/// The pixels of [`soft_pnm`] as an uncompressed 24-bit TGA with an image
/// id of 3 bytes.
fn soft_tga(w: usize, h: usize) -> Vec<u8> {
    let pnm = soft_pnm(w, h, 3);
    let mut out = vec![3u8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend((w as u16).to_le_bytes());
    out.extend((h as u16).to_le_bytes());
    out.extend([24, 0, b'i', b'd', b'!']);
    out.extend(&pnm[pnm.len() - w * h * 3..]);
    out
}

#[test]
fn revision_4_round_trips_images_and_bitmaps() {
    let mut lying = b"P6\n300 200\n255\n".to_vec();
    lying.extend(noise(2000, 5));
    let mut wide = b"P6\n3 2\n65535\n".to_vec();
    wide.extend(noise(40, 6));
    let inputs = [
        soft_pnm(37, 23, 3),
        soft_pnm(41, 19, 1),
        wide,
        lying,
        b"P5\n1 1\n255\n".to_vec(),
        b"P5\n7 3\n255\n"
            .iter()
            .copied()
            .chain(noise(21, 5))
            .collect(),
        fax(64, 1100),
        soft_bmp(37, 21),
        soft_tga(29, 17),
        // Headers that lie: pixels end early, a width past the data.
        soft_bmp(200, 150)[..3000].to_vec(),
        {
            let mut t = soft_tga(29, 17);
            t[12] = 0xFF;
            t[13] = 0x7F;
            t
        },
    ];
    for data in &inputs {
        round_trip(data, &config(4));
    }
}

#[test]
fn revision_4_predicts_pixels_better_than_revision_2() {
    let data = soft_pnm(160, 160, 3);
    let v2 = round_trip(&data, &config(2)).len();
    let v4 = round_trip(&data, &config(4)).len();
    assert!(v4 < v2, "revision 4 {v4} bytes, revision 2 {v2}");
}

#[test]
fn revision_4_finds_bmp_and_tga_pixels() {
    for data in [soft_bmp(120, 90), soft_tga(120, 90)] {
        let v2 = round_trip(&data, &config(2)).len();
        let v4 = round_trip(&data, &config(4)).len();
        assert!(
            v4 * 10 < v2 * 9,
            "revision 4 {v4} bytes, revision 2 {v2} (no header found?)"
        );
    }
}

#[test]
fn revision_4_codes_bitmaps_better_than_revision_2() {
    let data = fax(64, 1600);
    let v2 = round_trip(&data, &config(2)).len();
    let v4 = round_trip(&data, &config(4)).len();
    assert!(v4 < v2, "revision 4 {v4} bytes, revision 2 {v2}");
}
