//! Transform 6, `png-pixels` (issue 17's nesting, doc/FORMAT.md section 8):
//! whole PNG files of each colour type it takes, written here with several
//! row filters per image, round-trip through the archive with their pixels
//! behind a PNM or TGA header; PNGs that lie about their shape or data fall
//! back to the other transforms without a panic; older models do not use it.

use flate2::Compression;
use flate2::write::ZlibEncoder;
use sep::segment::{TransformKind, list_blocks, transform};
use std::io::Write;

/// A PNG chunk: length, type, data, CRC.
fn chunk(ty: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut c = flate2::Crc::new();
    c.update(ty);
    c.update(data);
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(ty);
    out.extend_from_slice(data);
    out.extend_from_slice(&c.sum().to_be_bytes());
    out
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// The filtered image data of unfiltered `rows` (each `row_len` bytes),
/// row `y` with filter `filter(y)`.
fn filtered(rows: &[u8], row_len: usize, bpp: usize, filter: impl Fn(usize) -> u8) -> Vec<u8> {
    let mut out = Vec::new();
    let zero = vec![0u8; row_len];
    for (y, cur) in rows.chunks_exact(row_len).enumerate() {
        let prev = if y == 0 {
            &zero[..]
        } else {
            &rows[(y - 1) * row_len..y * row_len]
        };
        let f = filter(y);
        out.push(f);
        for i in 0..row_len {
            let a = if i >= bpp { cur[i - bpp] } else { 0 };
            let c = if i >= bpp { prev[i - bpp] } else { 0 };
            let b = prev[i];
            let p = match f {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                _ => paeth(a, b, c),
            };
            out.push(cur[i].wrapping_sub(p));
        }
    }
    out
}

/// A PNG of `w` x `h` with IHDR `depth` and `colour`, the unfiltered rows
/// `rows`, the chunks `pre` before the image data (PLTE, ...), its zlib
/// stream cut into IDAT chunks of `idat` bytes; rows filtered None, Sub,
/// Up, Average, Paeth in turn.
fn png(
    w: u32,
    h: u32,
    depth: u8,
    colour: u8,
    rows: &[u8],
    pre: &[Vec<u8>],
    idat: usize,
) -> Vec<u8> {
    let samples = match colour {
        2 => 3,
        4 => 2,
        6 => 4,
        _ => 1,
    };
    let row_len = (w as usize * samples * usize::from(depth)).div_ceil(8);
    let bpp = (samples * usize::from(depth) / 8).max(1);
    let data = filtered(rows, row_len, bpp, |y| (y % 5) as u8);
    // Level 1: preflate 0.7.6 cannot predict some of miniz_oxide's level 4
    // to 9 streams of these images (PredictionFailure: the deflate and PNG
    // transforms then fall back); C zlib's, as in real PNGs, it can.
    let mut z = ZlibEncoder::new(Vec::new(), Compression::new(1));
    z.write_all(&data).unwrap();
    let z = z.finish().unwrap();
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[depth, colour, 0, 0, 0]);
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    out.extend(chunk(b"IHDR", &ihdr));
    for c in pre {
        out.extend_from_slice(c);
    }
    for part in z.chunks(idat) {
        out.extend(chunk(b"IDAT", part));
    }
    out.extend(chunk(b"tEXt", b"Comment\0written by the png_pixels test"));
    out.extend(chunk(b"IEND", b""));
    out
}

/// A smooth image with a little noise: `n` bytes, `channels` interleaved.
fn smooth(w: usize, h: usize, channels: usize, max: u32) -> Vec<u8> {
    let mut s = 12345u32;
    let mut out = Vec::with_capacity(w * h * channels);
    for y in 0..h {
        for x in 0..w {
            for c in 0..channels {
                s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let v = (x * 3 + y * 2 + c * 40) as u32 + (s >> 29);
                out.push(((v * (max + 1)) / 512 % (max + 1)) as u8);
            }
        }
    }
    out
}

fn compress(data: &[u8]) -> Vec<u8> {
    sep::compress(data, &sep::Options::default()).expect("compress")
}

fn kinds(data: &[u8]) -> Vec<TransformKind> {
    transform::analyse(data)
        .map(|p| p.segments.iter().map(|s| s.kind).collect())
        .unwrap_or_default()
}

/// Each colour type this transform takes, as the only segment, restored
/// exactly by the inverse and through a whole archive.
fn check_taken(name: &str, png: &[u8], header: &[u8]) {
    let plan = transform::analyse(png).expect("a transform");
    assert_eq!(plan.segments.len(), 1, "{name}");
    let s = &plan.segments[0];
    assert_eq!(s.kind, TransformKind::PngPixels, "{name}");
    assert!(plan.inner.starts_with(header), "{name}");
    assert_eq!(
        transform::inverse(s.kind, &plan.inner, &s.extra, png.len()).unwrap(),
        png,
        "{name}"
    );
    let archive = compress(png);
    assert_eq!(sep::decompress(&archive).unwrap(), png, "{name}");
}

#[test]
fn every_taken_colour_type_round_trips() {
    let (w, h) = (40u32, 23u32);
    let (wu, hu) = (w as usize, h as usize);
    let gray = smooth(wu, hu, 1, 255);
    check_taken(
        "gray8",
        &png(w, h, 8, 0, &gray, &[], 200),
        b"P5\n40 23\n255\n",
    );
    let rgb = smooth(wu, hu, 3, 255);
    check_taken(
        "rgb8",
        &png(w, h, 8, 2, &rgb, &[], 1 << 20),
        b"P6\n40 23\n255\n",
    );
    let rgba = smooth(wu, hu, 4, 255);
    let mut tga = vec![0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40, 0, 23, 0, 32, 0x28];
    check_taken("rgba8", &png(w, h, 8, 6, &rgba, &[], 300), &tga);
    // The TGA's pixels are B, G, R, A.
    let plan = transform::analyse(&png(w, h, 8, 6, &rgba, &[], 300)).unwrap();
    tga.extend_from_slice(&[rgba[2], rgba[1], rgba[0], rgba[3]]);
    assert!(plan.inner.starts_with(&tga));
    // 16-bit gray and RGB: PNM with maxval 65535 (big-endian as in PNG).
    let g16 = smooth(wu * 2, hu, 1, 255);
    check_taken(
        "gray16",
        &png(w, h, 16, 0, &g16, &[], 1 << 20),
        b"P5\n40 23\n65535\n",
    );
    let rgb16 = smooth(wu * 2, hu, 3, 255);
    check_taken(
        "rgb16",
        &png(w, h, 16, 2, &rgb16, &[], 1 << 20),
        b"P6\n40 23\n65535\n",
    );
    // Palettes of 8 and 4 bits, looked up to RGB; gray of 2 bits unpacked.
    let plte: Vec<u8> = (0..=255u8).flat_map(|i| [i, 255 - i, i / 2]).collect();
    let pal = vec![chunk(b"PLTE", &plte)];
    check_taken(
        "palette8",
        &png(w, h, 8, 3, &gray, &pal, 1 << 20),
        b"P6\n40 23\n255\n",
    );
    let rows4: Vec<u8> = smooth(wu / 2, hu, 1, 255);
    let plte16 = vec![chunk(b"PLTE", &plte[..48])];
    check_taken(
        "palette4",
        &png(w, h, 4, 3, &rows4, &plte16, 1 << 20),
        b"P6\n40 23\n255\n",
    );
    let rows2: Vec<u8> = smooth(wu / 4, hu, 1, 255);
    check_taken(
        "gray2",
        &png(w, h, 2, 0, &rows2, &[], 1 << 20),
        b"P5\n40 23\n3\n",
    );
    // The 2-bit samples unpacked one per byte.
    let plan = transform::analyse(&png(w, h, 2, 0, &rows2, &[], 1 << 20)).unwrap();
    assert_eq!(plan.inner[12], rows2[0] >> 6);
    assert_eq!(plan.inner[13], (rows2[0] >> 4) & 3);
}

/// A PNG of a photo's pixels codes to fewer bytes with transform 6 than
/// with transform 4 (the same file with a broken signature, so that only
/// its IDAT run is found), and close to the same pixels as a PPM.
#[test]
fn pixels_code_smaller_than_inflated_rows() {
    let ppm = std::fs::read(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/golden/inputs/kodim23.crop32x24.ppm"),
    )
    .unwrap();
    let pixels = &ppm[ppm.len() - 32 * 24 * 3..];
    // Tile the crop to 96 x 72, so that there is something to learn.
    let mut rows = Vec::new();
    for y in 0..72 {
        for _ in 0..3 {
            rows.extend_from_slice(&pixels[(y % 24) * 96..(y % 24 + 1) * 96]);
        }
    }
    let file = png(96, 72, 8, 2, &rows, &[], 4096);
    let mut cut = file.clone();
    cut[1] = b'p';
    assert_eq!(kinds(&file), [TransformKind::PngPixels]);
    assert!(kinds(&cut).contains(&TransformKind::Png));
    let (new, old) = (compress(&file), compress(&cut));
    assert!(
        new.len() * 10 < old.len() * 9,
        "png-pixels {} vs png {}",
        new.len(),
        old.len()
    );
    let blocks = list_blocks(&new[..]).unwrap();
    assert_eq!(blocks[0].segments[0].kind, TransformKind::PngPixels);
    assert_eq!(sep::decompress(&new).unwrap(), file);
}

/// PNGs whose header lies about the data, with a bad filter type, a
/// palette index past PLTE or a palette with a repeated colour (the inverse
/// could not tell the indices apart) are not taken; they still round-trip.
#[test]
fn lying_pngs_fall_back_without_panic() {
    let rgb = smooth(30, 20, 3, 255);
    let good = png(30, 20, 8, 2, &rgb, &[], 1 << 20);
    let set_ihdr = |p: &[u8], at: usize, v: u8| {
        let mut p = p.to_vec();
        p[16 + at] = v;
        let c = chunk(b"IHDR", &p[16..29]);
        p[8..33].copy_from_slice(&c);
        p
    };
    // Height 21 instead of 20, width 31, 16-bit: the data does not match.
    for (at, v) in [(7, 21), (3, 31), (8, 16)] {
        let bad = set_ihdr(&good, at, v);
        assert!(!kinds(&bad).contains(&TransformKind::PngPixels), "{at}");
        assert_eq!(sep::decompress(&compress(&bad)).unwrap(), bad);
    }
    // Interlaced, gray with alpha: not taken.
    for (at, v) in [(12, 1), (9, 4)] {
        let bad = set_ihdr(&good, at, v);
        assert!(!kinds(&bad).contains(&TransformKind::PngPixels), "{at}");
    }
    // A filter type of 7 in row 0.
    let mut data = vec![7u8];
    data.extend_from_slice(&rgb[..90]);
    for y in 1..20 {
        data.push(0);
        data.extend_from_slice(&rgb[y * 90..(y + 1) * 90]);
    }
    let mut z = ZlibEncoder::new(Vec::new(), Compression::new(1));
    z.write_all(&data).unwrap();
    let mut bad = good[..33].to_vec();
    bad.extend(chunk(b"IDAT", &z.finish().unwrap()));
    bad.extend(chunk(b"IEND", b""));
    assert!(!kinds(&bad).contains(&TransformKind::PngPixels));
    assert_eq!(sep::decompress(&compress(&bad)).unwrap(), bad);
    // Palette: an index past a 4-entry PLTE; a PLTE with a colour twice.
    let idx: Vec<u8> = (0..600u32).map(|i| (i % 7) as u8).collect();
    let short = vec![chunk(b"PLTE", &[0; 12])];
    let bad = png(30, 20, 8, 3, &idx, &short, 1 << 20);
    assert!(!kinds(&bad).contains(&TransformKind::PngPixels));
    let twice = vec![chunk(b"PLTE", &[5; 21])];
    let bad = png(30, 20, 8, 3, &idx, &twice, 1 << 20);
    assert!(!kinds(&bad).contains(&TransformKind::PngPixels));
    assert_eq!(sep::decompress(&compress(&bad)).unwrap(), bad);
    // A wrong CRC on an ancillary chunk.
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 13] ^= 1;
    assert!(!kinds(&bad).contains(&TransformKind::PngPixels));
}

/// Broken reconstruction data or inner bytes: an error, never a panic or
/// bytes of another length.
#[test]
fn broken_segments_are_errors() {
    let file = png(30, 20, 8, 0, &smooth(30, 20, 1, 255), &[], 100);
    let plan = transform::analyse(&file).unwrap();
    let s = &plan.segments[0];
    let inv = |inner: &[u8], extra: &[u8], raw: usize| {
        transform::inverse(TransformKind::PngPixels, inner, extra, raw)
    };
    assert!(inv(&plan.inner, &s.extra, file.len() + 1).is_err());
    assert!(inv(&plan.inner[..100], &s.extra, file.len()).is_err());
    assert!(inv(&plan.inner, &s.extra[..12], file.len()).is_err());
    for k in 0..s.extra.len() {
        for flip in [1u8, 0x80] {
            let mut e = s.extra.clone();
            e[k] ^= flip;
            if let Ok(out) = inv(&plan.inner, &e, file.len()) {
                assert_eq!(out.len(), file.len());
            }
        }
    }
    for k in (0..plan.inner.len()).step_by(7) {
        let mut inner = plan.inner.clone();
        inner[k] ^= 0x41;
        if let Ok(out) = inv(&inner, &s.extra, file.len()) {
            assert_eq!(out.len(), file.len());
        }
    }
}

/// Models before CM revision 5 (here `fast`, revision 3) keep coding PNGs
/// as before: no transform 6 in their archives.
#[test]
fn older_models_do_not_use_it() {
    let file = png(64, 48, 8, 2, &smooth(64, 48, 3, 255), &[], 1 << 20);
    let options = sep::Options {
        model: sep::Model::mix_preset(sep::Preset::Fast),
        ..Default::default()
    };
    let archive = sep::compress(&file, &options).unwrap();
    for b in list_blocks(&archive[..]).unwrap() {
        assert!(
            b.segments
                .iter()
                .all(|s| s.kind != TransformKind::PngPixels)
        );
    }
    assert_eq!(sep::decompress(&archive).unwrap(), file);
}
