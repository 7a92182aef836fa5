//! CM revision 12's 24/32-bit image family (doc/FORMAT.md 4.23.2): round
//! trips of 24-bit and 32-bit images and of headers that lie, at revision
//! 12; and that revision 12 codes a photograph's crop (the corpus' kodim23
//! when present, else a generated image) smaller than revision 10, which
//! fails if the family's final APMs are switched off.

mod common;
use common::{coded_len, config, noise, round_trip_each, soft_bmp, soft_pnm, soft_tga32};

/// A `w` x `h` crop at (`x0`, `y0`) of the corpus' kodim23 (768 x 512 RGB
/// PPM) as a PPM, if the corpus is present.
fn kodim23_crop(x0: usize, y0: usize, w: usize, h: usize) -> Option<Vec<u8>> {
    let data = std::fs::read("/work/shared/corpus/files/image.kodim23.ppm").ok()?;
    let header = b"P6\n768 512\n255\n";
    if !data.starts_with(header) || data.len() != header.len() + 768 * 512 * 3 {
        return None;
    }
    let pixels = &data[header.len()..];
    let mut out = format!("P6\n{w} {h}\n255\n").into_bytes();
    for y in y0..y0 + h {
        out.extend_from_slice(&pixels[(y * 768 + x0) * 3..][..w * 3]);
    }
    Some(out)
}

#[test]
fn revision_12_round_trips_images_and_lying_headers() {
    // Headers that lie: noise after a PPM header, a width of one pixel, a
    // size far past the data, pixels that end early, a header cut short.
    let mut lying = b"P6\n300 200\n255\n".to_vec();
    lying.extend(noise(2000, 5));
    let mut narrow = b"P6\n1 40\n255\n".to_vec();
    narrow.extend(noise(120, 8));
    let mut huge = b"P6\n999999 999999\n255\n".to_vec();
    huge.extend(noise(500, 9));
    let mut real = kodim23_crop(300, 200, 24, 16).unwrap_or_else(|| soft_pnm(24, 16, 3));
    real.truncate(real.len() - 100);
    let inputs = [
        soft_pnm(37, 23, 3),
        soft_bmp(37, 21),
        soft_tga32(23, 19),
        lying,
        narrow,
        huge,
        real,
        b"P6\n1 1\n255\n\x01\x02\x03".to_vec(),
        soft_pnm(64, 64, 3)[..5000].to_vec(),
        soft_tga32(40, 30)[..2000].to_vec(),
        soft_pnm(8, 8, 3)[..9].to_vec(),
    ];
    round_trip_each(&[12], &inputs, true);
}

#[test]
fn revision_12_codes_a_photograph_smaller_than_revision_10() {
    let data = kodim23_crop(200, 150, 96, 64).unwrap_or_else(|| soft_pnm(96, 64, 3));
    let r10 = coded_len(&data, &config(10));
    let r12 = coded_len(&data, &config(12));
    assert!(r12 < r10, "revision 12 {r12} bytes, revision 10 {r10}");
}
