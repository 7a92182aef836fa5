//! Segmented blocks (issue 17, doc/FORMAT.md section 8): JPEG, deflate, x86 and PNG
//! transforms round-trip through the archive, are chosen only when they make
//! the block smaller, and crafted segment tables fail with one-line errors.

use sep::format::BlockType;
use sep::segment::{TransformKind, list_blocks};
use std::path::PathBuf;

fn input(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/inputs");
    std::fs::read(p.join(name)).expect("golden input")
}

fn compress(data: &[u8]) -> Vec<u8> {
    sep::compress(data, &sep::Options::default()).expect("compress")
}

/// `compress` with the default preset's model at CM revision 4, which has no
/// JPEG family: a JPEG is always recoded by lepton.
fn compress_rev4(data: &[u8]) -> Vec<u8> {
    let sep::Model::Mix(mix) = sep::Options::default().model else {
        panic!("the default model is the mixed one")
    };
    let model = sep::Model::Mix(sep::MixConfig {
        cm: sep::CmConfig {
            revision: 4,
            ..mix.cm
        },
        ..mix
    });
    sep::compress(
        data,
        &sep::Options {
            model,
            ..Default::default()
        },
    )
    .expect("compress")
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

#[test]
fn jpeg_is_recoded_by_lepton_and_round_trips() {
    let jpeg = input("fireworks.crop128x96.jpg");
    let archive = compress_rev4(&jpeg);
    assert_eq!(
        kinds(&archive),
        (BlockType::Segmented, vec![TransformKind::Jpeg])
    );
    assert_eq!(sep::decompress(&archive).unwrap(), jpeg);
    // Embedded between other bytes, it is found too.
    let mut mixed = b"some text before the image ".repeat(20);
    mixed.extend_from_slice(&jpeg);
    mixed.extend_from_slice(&b"and some after".repeat(20));
    let archive = compress(&mixed);
    let (ty, k) = kinds(&archive);
    assert_eq!(ty, BlockType::Segmented);
    assert!(k.contains(&TransformKind::Jpeg), "{k:?}");
    assert_eq!(sep::decompress(&archive).unwrap(), mixed);
    // Identical for any thread count.
    let t4 = sep::compress(
        &mixed,
        &sep::Options {
            threads: 4,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(t4, archive);
}

/// CM revision 5 (doc/FORMAT.md 4.16.4): a block that starts with a JPEG
/// is coded both ways, and the JPEG family's untransformed coding is kept
/// when it is smaller than lepton's segment (it is, on this crop).
#[test]
fn default_codes_a_jpeg_untransformed_when_its_model_wins() {
    let jpeg = input("fireworks.crop128x96.jpg");
    let lepton = compress_rev4(&jpeg);
    let archive = compress(&jpeg);
    assert_eq!(kinds(&archive), (BlockType::Modelled, vec![]));
    assert!(
        archive.len() < lepton.len(),
        "{} >= lepton's {}",
        archive.len(),
        lepton.len()
    );
    assert_eq!(sep::decompress(&archive).unwrap(), jpeg);
}

#[test]
fn gzip_stream_is_inflated_and_round_trips() {
    let gz = input("grammar.lsp.gz");
    let archive = compress(&gz);
    assert_eq!(
        kinds(&archive),
        (
            BlockType::Segmented,
            vec![
                TransformKind::None,
                TransformKind::Deflate,
                TransformKind::None
            ]
        )
    );
    assert_eq!(sep::decompress(&archive).unwrap(), gz);
    let segs = &list_blocks(&archive[..]).unwrap()[0].segments;
    // The model sees the inflated text (grammar.lsp, 3721 bytes).
    assert_eq!(segs[1].inner_len, 3721);
}

#[test]
fn x86_code_gets_e8e9_and_round_trips() {
    let code = input("x86.text16k");
    let archive = compress(&code);
    let (ty, k) = kinds(&archive);
    assert_eq!(ty, BlockType::Segmented);
    assert!(k.contains(&TransformKind::X86), "{k:?}");
    assert_eq!(sep::decompress(&archive).unwrap(), code);
}

#[test]
fn text_without_streams_gets_a_plain_block() {
    let text = input("grammar.lsp");
    let (ty, k) = kinds(&compress(&text));
    assert_eq!(ty, BlockType::Modelled);
    assert!(k.is_empty());
}

/// A raw deflate stream (fixed Huffman codes) of one zero byte and then
/// `repeats` copies of 258 bytes at distance 1: 13 bits per 258 bytes.
fn deflate_bomb(repeats: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut n) = (0u32, 0u32);
    let mut put = |code: u32, len: u32, out: &mut Vec<u8>| {
        // Huffman codes go most significant bit first.
        for i in (0..len).rev() {
            acc |= ((code >> i) & 1) << n;
            n += 1;
            if n == 8 {
                out.push(acc as u8);
                (acc, n) = (0, 0);
            }
        }
    };
    put(1, 1, &mut out); // BFINAL
    put(0b10, 2, &mut out); // BTYPE 01, least significant bit first
    put(0x30, 8, &mut out); // literal 0
    for _ in 0..repeats {
        put(0xC5, 8, &mut out); // length 258 (code 285)
        put(0, 5, &mut out); // distance 1
    }
    put(0, 7, &mut out); // end of block
    put(0, 7, &mut out); // flush
    out
}

#[test]
fn an_inflate_bomb_is_capped_and_coded_untransformed() {
    // 16 MiB inflated from ~26 KiB: past 4 * raw_len + 1 MiB.
    let mut bomb = vec![0x78, 0xDA];
    bomb.extend(deflate_bomb(65_000));
    bomb.extend_from_slice(b"tail");
    let archive = compress(&bomb);
    let (_, k) = kinds(&archive);
    assert!(!k.contains(&TransformKind::Deflate), "{k:?}");
    assert_eq!(sep::decompress(&archive).unwrap(), bomb);
    // A small one of the same shape is inflated.
    let mut small = vec![0x78, 0xDA];
    small.extend(deflate_bomb(400));
    assert!(sep_transform_kinds(&small).contains(&TransformKind::Deflate));
}

fn sep_transform_kinds(data: &[u8]) -> Vec<TransformKind> {
    sep_transform::analyse(data)
        .map(|p| p.segments.iter().map(|s| s.kind).collect())
        .unwrap_or_default()
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

/// Decoding must fail with a one-line error, without a panic.
fn must_fail(archive: &[u8], what: &str) -> String {
    let e = sep::decompress(archive).expect_err(what).to_string();
    assert!(!e.contains('\n'), "{what}: {e}");
    e
}

/// A damaged archive either fails with a one-line error or (where the damage
/// hits bytes the decoder never needs, such as a range coder's last bits)
/// still gives the original; never other bytes, never a panic.
fn fails_or_original(archive: &[u8], original: &[u8], what: &str) {
    match sep::decompress(archive) {
        Ok(d) => assert_eq!(d, original, "{what}: wrong data, no error"),
        Err(e) => assert!(!e.to_string().contains('\n'), "{what}: {e}"),
    }
}

#[test]
fn crafted_segment_tables_are_refused() {
    let jpeg = input("fireworks.crop128x96.jpg");
    let archive = compress_rev4(&jpeg);
    let p = payload_at(&archive);
    // The table: count 1, transform 1, raw_len (2-byte varint), inner 0,
    // extra_len (2-byte varint), stream_count 0, then the lepton bytes.
    assert_eq!(archive[p], 1);
    assert_eq!(archive[p + 1], 1);

    let mut a = archive.clone();
    a[p + 1] = 9;
    let e = must_fail(&a, "unknown transform");
    assert!(e.contains("unknown transform id"), "{e}");

    let mut a = archive.clone();
    a[p + 3] += 1; // raw_len past the block
    let e = must_fail(&a, "past the block");
    assert!(e.contains("past the end of the block"), "{e}");

    let mut a = archive.clone();
    a[p + 2] -= 1; // raw_len short of the block
    let e = must_fail(&a, "short");
    assert!(e.contains("sum of segment raw_len"), "{e}");

    let mut a = archive.clone();
    a[p] = 2; // two segments, the second one's entry is lepton bytes
    must_fail(&a, "count");

    let mut a = archive.clone();
    a[p + 4] = 5; // a JPEG segment that gives the model bytes
    must_fail(&a, "inner of jpeg");

    let mut a = archive.clone();
    a[p + 7] = 1; // a stream count without transformed content
    must_fail(&a, "stream count");

    // Broken reconstruction data: a spread of bytes of the lepton data,
    // flipped, fail cleanly.
    let start = p + 8;
    for k in (start..archive.len() - 24).step_by(97) {
        let mut a = archive.clone();
        a[k] ^= 0x5A;
        fails_or_original(&a, &jpeg, "broken lepton data");
    }
}

#[test]
fn crafted_deflate_and_x86_data_are_refused() {
    for name in ["grammar.lsp.gz", "x86.text16k", "kodim23.crop32x24.png"] {
        let original = input(name);
        let archive = compress(&original);
        let p = payload_at(&archive);
        let step = (archive.len() - 24 - p) / 16 + 1;
        for k in (p..archive.len() - 24).step_by(step) {
            for x in [0x01u8, 0xFF] {
                let mut a = archive.clone();
                a[k] ^= x;
                fails_or_original(&a, &original, name);
            }
        }
    }
}

/// The deflate inverse on `inner` and `extra`, expecting `raw_len` bytes.
fn deflate_inverse(inner: &[u8], extra: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    sep::segment::transform::inverse(TransformKind::Deflate, inner, extra, raw_len)
}

#[test]
fn deflate_recreation_of_crafted_data_is_bounded() {
    // The fuzzer's endless-recreation input (fuzz/artifacts/transforms), cut so
    // that its reconstruction data has no trailing bytes: published preflate-rs
    // 0.7.6 recreates empty blocks from it for ever (output growing ~60 MB/s);
    // the patched one (vendor/preflate-rs/PATCHES.md) stops once the output
    // passes the segment's declared length.
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/artifacts/transforms/timeout-cf0f3e440d1a1a60c78b346128a9539c8b4e9b68");
    let data = std::fs::read(p).expect("artifact");
    let raw_len = usize::from(u16::from_le_bytes([data[1], data[2]]));
    let split = usize::from(u16::from_le_bytes([data[3], data[4]]));
    let (inner, extra) = data[5..].split_at(split);
    assert_eq!(extra.len(), 36);
    let t = std::time::Instant::now();
    let e = deflate_inverse(inner, extra, raw_len).expect_err("crafted data");
    assert!(e.contains("broken reconstruction data"), "{e}");
    // Bounded work, not a timeout: the same input under any declared length
    // up to 1 MiB fails the same way (the work grows with the length).
    for len in [0, 1, 1 << 20] {
        assert!(deflate_inverse(inner, extra, len).is_err());
    }
    assert!(t.elapsed().as_secs() < 60, "took {:?}", t.elapsed());
}

#[test]
fn deflate_recreation_stops_at_the_declared_length() {
    // Real reconstruction data of a gzip member's deflate stream: the
    // inverse gives the stream back under its own length and refuses any
    // shorter declared length instead of producing more.
    let gz = input("grammar.lsp.gz");
    let plan = sep::segment::transform::analyse(&gz).expect("a deflate segment");
    let mut at = 0usize;
    let mut raw_at = 0usize;
    let mut seen = false;
    for s in &plan.segments {
        let inner = &plan.inner[at..at + s.inner_len as usize];
        if s.kind == TransformKind::Deflate {
            let n = s.raw_len as usize;
            let back = deflate_inverse(inner, &s.extra, n).expect("own length");
            assert_eq!(back, gz[raw_at..raw_at + n]);
            for short in [0, 1, n / 2, n - 1] {
                assert!(deflate_inverse(inner, &s.extra, short).is_err(), "{short}");
            }
            seen = true;
        }
        at += s.inner_len as usize;
        raw_at += s.raw_len as usize;
    }
    assert!(seen);
}

#[test]
fn options_transforms_false_writes_plain_blocks() {
    let gz = input("grammar.lsp.gz");
    let with = compress(&gz);
    let options = sep::Options {
        transforms: false,
        ..sep::Options::default()
    };
    let without = sep::compress(&gz, &options).expect("compress");
    assert_eq!(kinds(&with).0, BlockType::Segmented);
    // Coded as it is: the gzip bytes do not shrink, so the block is stored.
    assert_eq!(kinds(&without), (BlockType::Stored, vec![]));
    assert_eq!(sep::decompress(&without).expect("decompress"), gz);
    assert!(with.len() < without.len());
}

#[test]
fn inverse_transforms_count_against_the_work_limit() {
    use sep::format::{BlockHeader, EndRecord};
    // A crafted segmented block of 65,536 8-byte JPEG segments, each with
    // one byte of "lepton data": cheap to read (5 bytes a segment), but each
    // lepton inverse may decode up to 8192 x 8192 pixels, so the decoder
    // charges every JPEG segment (doc/FORMAT.md 7.1, 8) and refuses the block
    // before decoding it, instead of charging it as 512 KiB of modelled bytes.
    let n = 1u32 << 16;
    let (header, _) = sep::Options::default().header().expect("header");
    let mut payload = Vec::new();
    // segment_count (varint), then per segment: jpeg, raw 8, inner 0, extra 1.
    let mut v = n;
    while v >= 0x80 {
        payload.push(v as u8 | 0x80);
        v >>= 7;
    }
    payload.push(v as u8);
    for _ in 0..n {
        payload.extend_from_slice(&[1, 8, 0, 1]);
    }
    payload.push(0); // no streams: nothing for the model
    payload.extend(std::iter::repeat_n(0xFFu8, n as usize));
    let mut a = header.to_bytes();
    BlockHeader {
        block_type: BlockType::Segmented,
        raw_len: 8 * n,
        payload_len: payload.len() as u32,
        raw_check: 0,
        stream_lens: vec![],
    }
    .write_to(&mut a, header.version)
    .expect("write to a Vec");
    a.extend_from_slice(&payload);
    a.extend_from_slice(
        &EndRecord {
            content_length: 8 * u64::from(n),
            content_check: 0,
        }
        .to_bytes(header.version),
    );
    let table = sep::segment::list_blocks(&a[..]).expect("the table is well-formed");
    assert_eq!(table[0].segments.len(), n as usize);
    match sep::decompress(&a) {
        Err(sep::Error::OverLimit { what, .. }) => assert!(what.contains("work"), "{what}"),
        other => panic!("expected the work limit, got {other:?}"),
    }
}

/// A PNG whose zlib stream is split over several IDAT chunks (3 of at most
/// 512 bytes: `kodim23.crop32x24.png`, written by the golden generator) gets
/// one PNG segment: the inflated rows (24 x (1 + 96) bytes) go to the model,
/// the chunks and their CRCs are rebuilt exactly. Its signature is broken
/// here (as in a PNG cut from its start), so that the whole-file transform 6
/// (`png_pixels.rs`) does not take it first.
#[test]
fn multi_idat_png_is_inflated_and_round_trips() {
    let mut png = input("kodim23.crop32x24.png");
    png[1] = b'p';
    let plan = sep_transform::analyse(&png).expect("a transform");
    let kinds: Vec<TransformKind> = plan.segments.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [TransformKind::None, TransformKind::Png, TransformKind::None]
    );
    assert_eq!(plan.segments[1].inner_len, 24 * (1 + 32 * 3));
    // The segment is the IDAT run: from the first chunk's length field to the
    // last one's CRC, before IEND.
    assert_eq!(plan.segments[0].raw_len, 8 + 25);
    assert_eq!(plan.segments[2].raw_len, 12);
    let archive = compress(&png);
    let (ty, k) = kinds_of(&archive);
    assert_eq!(ty, BlockType::Segmented);
    assert!(k.contains(&TransformKind::Png), "{k:?}");
    assert_eq!(sep::decompress(&archive).unwrap(), png);
    // A wrong CRC: the PNG transform is refused (it would repair it), the
    // file still round-trips as it is.
    let mut bad = png.clone();
    let crc_at = 33 + 8 + 512;
    bad[crc_at] ^= 1;
    assert!(!sep_transform_kinds(&bad).contains(&TransformKind::Png));
    assert_eq!(sep::decompress(&compress(&bad)).unwrap(), bad);
    // Broken reconstruction data: an error, not a panic or other bytes.
    let s = &plan.segments[1];
    let inner = &plan.inner[33..33 + s.inner_len as usize];
    let inverse = |extra: &[u8], raw: usize| {
        sep::segment::transform::inverse(TransformKind::Png, inner, extra, raw)
    };
    assert_eq!(
        inverse(&s.extra, s.raw_len as usize).unwrap(),
        png[33..33 + s.raw_len as usize]
    );
    assert!(inverse(&s.extra, s.raw_len as usize + 1).is_err());
    let mut e = s.extra.clone();
    e[0] = 200; // a chunk count past the segment
    assert!(inverse(&e, s.raw_len as usize).is_err());
    let mut e = s.extra.clone();
    let last = e.len() - 1;
    e[last] ^= 0x55;
    if let Ok(out) = inverse(&e, s.raw_len as usize) {
        assert_eq!(out.len(), s.raw_len as usize);
    }
}

fn kinds_of(archive: &[u8]) -> (BlockType, Vec<TransformKind>) {
    kinds(archive)
}
