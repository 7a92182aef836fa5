//! Format version 3, the compact archive (issue 20, doc/FORMAT.md section
//! 13): the same archive as version 1 with varint fields. Round trips at
//! both versions, the sizes it saves, archives of both versions concatenated,
//! and every single-byte change of a small version-3 archive.

mod common;
use common::noise;
use sep::format::{Record, min_block_len};
use sep::{Model, Options};
use std::io::Write;

fn at(version: u8, model: Model) -> Options {
    Options {
        model,
        format_version: version,
        ..Options::default()
    }
}

/// The block payloads of a one-archive file, in order.
fn payloads(archive: &[u8]) -> Vec<Vec<u8>> {
    let mut r = archive;
    let header = sep::read_header(&mut r).unwrap();
    let mut out = Vec::new();
    while let Record::Block(b) = Record::read(&mut r, &header).unwrap() {
        out.push(r[..b.payload_len as usize].to_vec());
        r = &r[b.payload_len as usize..];
    }
    out
}

#[test]
fn the_default_is_version_3_and_version_1_is_still_written() {
    assert_eq!(Options::default().format_version, 3);
    let data = b"hello, compact archives".repeat(5);
    let v3 = sep::compress(&data, &Options::default()).unwrap();
    let v1 = sep::compress(&data, &at(1, Model::default())).unwrap();
    assert_eq!((v3[4], v1[4]), (3, 1));
    assert_eq!(sep::decompress(&v3).unwrap(), data);
    assert_eq!(sep::decompress(&v1).unwrap(), data);
    assert_eq!(sep::inspect(&v3[..]).unwrap()[0].header.version, 3);
    for bad in [0u8, 2, 4, 255] {
        let e = sep::compress(&data, &at(bad, Model::Store)).unwrap_err();
        assert!(
            e.to_string().contains(&format!("format_version {bad}")),
            "{e}"
        );
    }
}

#[test]
fn empty_and_one_byte_inputs() {
    for model in [Model::Store, Model::Order2, Model::default()] {
        let name = model.name();
        // The empty input: the store header and the end record. Declared
        // length 0 (flag bit 0, one varint byte; block_size 1): 17 + 10.
        let e3 = sep::compress(b"", &at(3, model.clone())).unwrap();
        let e1 = sep::compress(b"", &at(1, model.clone())).unwrap();
        assert_eq!((e1.len(), e3.len()), (66, 27), "{name}");
        assert_eq!(sep::decompress(&e3).unwrap(), b"");
        // Streamed: no content_length, the model's default block size.
        let s3 = sep::Encoder::new(Vec::new(), &at(3, model.clone()))
            .unwrap()
            .finish()
            .unwrap();
        assert!(s3.len() <= 30, "{name}: {}", s3.len());
        assert_eq!(sep::decompress(&s3).unwrap(), b"");
        let one3 = sep::compress(b"a", &at(3, model.clone())).unwrap();
        let one1 = sep::compress(b"a", &at(1, model.clone())).unwrap();
        assert_eq!(sep::decompress(&one3).unwrap(), b"a");
        // One byte in a stored block: 16 + 42 + 24 bytes of v1 overhead
        // become 7 + at most 17 + 10 (with `params` the same in both).
        assert!(
            one1.len() - one3.len() >= 45,
            "{name}: {} vs {}",
            one1.len(),
            one3.len()
        );
        assert_eq!(payloads(&one1), payloads(&one3), "{name}");
    }
}

/// The size assertion of issue 20: a small input's version-3 archive is at
/// least 40 bytes smaller than its version-1 archive, with the same payloads.
#[test]
fn a_small_input_saves_at_least_40_bytes() {
    let json = br#"{"id": 17, "name": "compact", "tags": ["a", "b"], "ok": true}"#.repeat(4);
    for model in [
        Model::Store,
        Model::Order2,
        Model::mix_preset(sep::Preset::Fast),
        Model::default(),
    ] {
        let v1 = sep::compress(&json, &at(1, model.clone())).unwrap();
        let v3 = sep::compress(&json, &at(3, model.clone())).unwrap();
        assert!(
            v1.len() >= v3.len() + 40,
            "{}: v1 {} bytes, v3 {}",
            model.name(),
            v1.len(),
            v3.len()
        );
        assert_eq!(payloads(&v1), payloads(&v3));
        assert_eq!(sep::decompress(&v3).unwrap(), json);
    }
}

#[test]
fn many_blocks_stored_and_segmented_blocks_round_trip() {
    // Text then noise in blocks of 1000: modelled blocks and stored ones.
    let text = b"It was the best of times, it was the worst of times; ".repeat(60);
    let data = [&text[..], &noise(2500, 9)].concat();
    for model in [Model::Store, Model::Order2, common::tiny_mix()] {
        let options = Options {
            block_size: Some(1000),
            small_blocks: true,
            ..at(3, model.clone())
        };
        let v3 = common::round_trip(&data, &options);
        let v1 = sep::compress(
            &data,
            &Options {
                format_version: 1,
                ..options.clone()
            },
        )
        .unwrap();
        let info = &sep::inspect(&v3[..]).unwrap()[0];
        assert_eq!(info.blocks, data.len().div_ceil(1000) as u64);
        assert!(info.stored_blocks >= 2, "{}", model.name());
        assert_eq!(info.archive_bytes, v3.len() as u64);
        assert_eq!(payloads(&v1), payloads(&v3));
        // At least 22 bytes of header, 7 per block (raw_len and payload_len in
        // 2 bytes each) and 13 of end record saved.
        let blocks = info.blocks as usize;
        assert!(
            v1.len() >= v3.len() + 22 + 7 * blocks + 13,
            "{}",
            model.name()
        );
        // The random-access decoder, with and without a seek table.
        for table in [false, true] {
            let a = sep::compress(
                &data,
                &Options {
                    seek_table: table,
                    ..options.clone()
                },
            )
            .unwrap();
            let mut dec = sep::Decoder::range(std::io::Cursor::new(&a), 1500, Some(2000)).unwrap();
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut dec, &mut out).unwrap();
            assert_eq!(out, &data[1500..3500], "table {table}");
            assert_eq!(
                sep::content_length(&mut std::io::Cursor::new(&a)).unwrap(),
                data.len() as u64
            );
        }
    }
    // A gzip member: a segmented block (doc/FORMAT.md section 8).
    let gz = std::fs::read(
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/golden/inputs/grammar.lsp.gz"),
    )
    .unwrap();
    let v3 = sep::compress(&gz, &at(3, Model::default())).unwrap();
    let mut r = &v3[..];
    let h = sep::read_header(&mut r).unwrap();
    let Record::Block(b) = Record::read(&mut r, &h).unwrap() else {
        panic!("a block")
    };
    assert_eq!(b.block_type, sep::format::BlockType::Segmented);
    assert_eq!(sep::decompress(&v3).unwrap(), gz);
    let v1 = sep::compress(&gz, &at(1, Model::default())).unwrap();
    assert_eq!(payloads(&v1), payloads(&v3));
}

#[test]
fn archives_of_both_versions_concatenate() {
    let a = b"first archive, version one ".repeat(9);
    let b = b"second, version three".to_vec();
    let one = sep::compress(&a, &at(1, Model::Order2)).unwrap();
    let three = sep::compress(&b, &at(3, Model::Order2)).unwrap();
    let tabled = sep::compress(
        &b,
        &Options {
            seek_table: true,
            ..at(3, Model::Store)
        },
    )
    .unwrap();
    let file = [&one[..], &three[..], &tabled[..], &one[..]].concat();
    let want = [&a[..], &b[..], &b[..], &a[..]].concat();
    assert_eq!(sep::decompress(&file).unwrap(), want);
    let infos = sep::inspect(&file[..]).unwrap();
    let versions: Vec<u8> = infos.iter().map(|i| i.header.version).collect();
    assert_eq!(versions, [1, 3, 3, 1]);
    let sizes: Vec<u64> = infos.iter().map(|i| i.archive_bytes).collect();
    assert_eq!(
        sizes,
        [one.len(), three.len(), tabled.len() - 28, one.len()].map(|n| n as u64)
    );
    // The streaming encoder writes the same.
    let mut enc = sep::Encoder::new(Vec::new(), &at(3, Model::Order2)).unwrap();
    enc.write_all(&b).unwrap();
    let streamed = enc.finish().unwrap();
    assert_eq!(
        sep::decompress(&[&streamed[..], &one[..]].concat()).unwrap(),
        [&b[..], &a[..]].concat()
    );
}

/// Every single-byte change of a small version-3 archive (two blocks, the
/// second stored; flipped to its complement and to the next value) fails
/// with a corruption error or decodes to exactly the input; never a panic.
#[test]
fn every_byte_change_of_a_small_archive_fails_cleanly_or_decodes_exactly() {
    let data = [
        &b"small archives, small overhead. ".repeat(4)[..],
        &noise(100, 4),
    ]
    .concat();
    for model in [Model::Store, Model::Order2] {
        let options = Options {
            block_size: Some(128),
            small_blocks: true,
            ..at(3, model.clone())
        };
        let archive = sep::compress(&data, &options).unwrap();
        let mut errors = 0;
        for i in 0..archive.len() {
            for change in [0xFFu8, 0x01] {
                let mut v = archive.clone();
                v[i] = if change == 0xFF {
                    !v[i]
                } else {
                    v[i].wrapping_add(1)
                };
                match sep::decompress(&v) {
                    Err(e) => {
                        assert!(e.is_corrupt(), "{} byte {i}: {e}", model.name());
                        errors += 1;
                    }
                    Ok(out) => assert!(out == data, "{} byte {i}: wrong content", model.name()),
                }
                let _ = sep::inspect(&v[..]);
                let _ = sep::content_length(&mut std::io::Cursor::new(&v));
            }
        }
        assert!(errors * 100 >= archive.len() * 2 * 99, "{}", model.name());
        for n in 0..archive.len() {
            assert!(sep::decompress(&archive[..n]).unwrap_err().is_corrupt());
        }
    }
    assert_eq!(min_block_len(3), 7);
    assert_eq!(min_block_len(1), 16);
}
