//! Transform 7, `colour` (issue 16, doc/FORMAT.md section 8.7 and 4.57.1):
//! `max` at CM revision 46 codes a 24/32-bit PNM or BMP image's pixels as
//! colour differences, round-trips it, beats revision 44 on a photo, leaves
//! revision 44 and other data alone, and refuses broken layouts cleanly.

use sep::format::BlockType;
use sep::segment::{TransformKind, list_blocks};
use std::path::PathBuf;

fn input(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/inputs");
    std::fs::read(p.join(name)).expect("golden input")
}

/// `max` at CM revision `revision`.
fn compress_max(data: &[u8], revision: u8) -> Vec<u8> {
    let mut mix = sep::MixConfig::preset(sep::Preset::Max).expect("a mix preset");
    mix.cm.revision = revision;
    let options = sep::Options {
        model: sep::Model::Mix(mix),
        ..Default::default()
    };
    sep::compress(data, &options).expect("compress")
}

/// The kinds of the segments of an archive's only block.
fn kinds(archive: &[u8]) -> (BlockType, Vec<TransformKind>) {
    let blocks = list_blocks(archive).expect("list");
    assert_eq!(blocks.len(), 1);
    (
        blocks[0].block_type,
        blocks[0].segments.iter().map(|s| s.kind).collect(),
    )
}

/// Offset of the first block's payload in a one-archive file.
fn payload_at(archive: &[u8]) -> usize {
    let h = sep::read_header(&mut &archive[..]).unwrap();
    let hlen = h.to_bytes().len();
    match sep::format::Record::read(&mut &archive[hlen..], &h).unwrap() {
        sep::format::Record::Block(bh) => hlen + bh.encoded_len(h.version),
        sep::format::Record::End(_) => hlen,
    }
}

/// A photo-like 128 x 96 image (36 KiB) behind a P6 header: a smooth
/// brightness field with noise, the three channels moving together (as in
/// a photo) with slowly changing colour offsets.
fn tiled_photo() -> Vec<u8> {
    let mut out = b"P6\n128 96\n255\n".to_vec();
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut noise = |k: i32| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as i32 % k - k / 2
    };
    for y in 0..96i32 {
        for x in 0..128i32 {
            let l = 60 + (x * x / 90 + y * 3 + (x * y) / 40) % 150 + noise(9);
            let (dr, db) = (20 + x / 8 + noise(5), -15 + y / 6 + noise(5));
            for v in [l + dr, l + noise(3), l + db] {
                out.push(v.clamp(0, 255) as u8);
            }
        }
    }
    out
}

#[test]
fn a_photo_is_coded_as_colour_differences_at_revision_46() {
    let photo = tiled_photo();
    let new = compress_max(&photo, 46);
    assert_eq!(
        kinds(&new),
        (BlockType::Segmented, vec![TransformKind::Colour])
    );
    assert_eq!(sep::decompress(&new).unwrap(), photo);
    let old = compress_max(&photo, 44);
    assert_eq!(kinds(&old), (BlockType::Modelled, vec![]));
    assert_eq!(sep::decompress(&old).unwrap(), photo);
    // Measured 2026-12-07: 15,152 -> 14,794 bytes (-2.4%).
    assert!(
        new.len() * 1000 <= old.len() * 985,
        "revision 46 {} vs 44 {}",
        new.len(),
        old.len()
    );
}

#[test]
fn golden_images_get_transform_7_and_text_does_not() {
    for name in ["kodim23.crop32x24.ppm", "image.bmp"] {
        let data = input(name);
        let a = compress_max(&data, 46);
        assert_eq!(
            kinds(&a),
            (BlockType::Segmented, vec![TransformKind::Colour]),
            "{name}"
        );
        assert_eq!(sep::decompress(&a).unwrap(), data, "{name}");
    }
    // No image header: revision 46 codes as 44 did.
    let text = input("grammar.lsp");
    assert_eq!(compress_max(&text, 46).len(), compress_max(&text, 44).len());
}

#[test]
fn a_truncated_image_and_broken_layouts_fail_cleanly() {
    // The header claims 128 x 96 pixels; 1,000 bytes of them exist.
    let photo = tiled_photo();
    let cut = &photo[..1000];
    let a = compress_max(cut, 46);
    assert_eq!(
        kinds(&a),
        (BlockType::Segmented, vec![TransformKind::Colour])
    );
    assert_eq!(sep::decompress(&a).unwrap(), cut);
    // The table: count 1, transform 7, raw_len and inner_len (2-byte
    // varints 1000), extra_len 6, the stream count and lengths, then the
    // layout: pixel_bytes 3, header 14, row_bytes 384 (2 bytes), width 128
    // (2 bytes).
    let p = payload_at(&a);
    assert_eq!(&a[p..p + 2], &[1, 7]);
    assert_eq!(a[p + 6], 6, "extra_len");
    let mut layout = p + 8;
    for _ in 0..a[p + 7] {
        while a[layout] & 0x80 != 0 {
            layout += 1;
        }
        layout += 1;
    }
    assert_eq!(&a[layout..layout + 6], &[3, 14, 0x80, 3, 0x80, 1]);
    for (at, v) in [(0, 5), (0, 0), (2, 0), (4, 0x7F), (5, 0x80)] {
        let mut b = a.clone();
        b[layout + at] = v;
        let e = sep::decompress(&b)
            .expect_err("a broken layout")
            .to_string();
        assert!(!e.contains('\n'), "{e}");
    }
    // A layout that is valid but wrong gives other bytes, which the
    // block's check catches.
    let mut b = a.clone();
    b[layout + 1] = 15;
    assert!(sep::decompress(&b).is_err());
}
