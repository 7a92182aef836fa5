//! Golden archives of format version 3, the compact layout (issue 20,
//! doc/FORMAT.md section 13): tests/golden/v3 and its manifest.

#[allow(unused_imports)]
use super::*;

/// Options at format version 3 (written out, not the default, so that the
/// files stay as they are if the default version moves on).
fn v3(model: Model) -> Options {
    Options {
        model,
        format_version: 3,
        ..Options::default()
    }
}

/// Issue 20: version-3 archives of the empty input, one byte, a small text
/// with the default and max presets (CM revisions 9 and 28, what they write
/// at stop 37, pinned), order2
/// in blocks of 1000 bytes, written streaming (no content length) and with a
/// seek table, incompressible noise (a stored block), a gzip file (a
/// segmented block), the built-in text prior, and a version-1 archive
/// followed by a version-3 one.
pub(crate) fn v3_files(files: &mut Files) {
    let dir = golden_dir().join("inputs");
    let input = |name: &str| -> Vec<u8> {
        synthetic()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| b)
            .unwrap_or_else(|| std::fs::read(dir.join(name)).expect("input"))
    };
    let default = preset_r(Preset::Default, 9);
    let order2_1000 = Options {
        block_size: Some(1000),
        small_blocks: true,
        ..v3(Model::Order2)
    };
    let cases: Vec<(&str, &str, Options, bool)> = vec![
        ("default.empty.sep", "empty", v3(default.clone()), false),
        (
            "default.one-byte.sep",
            "one-byte",
            v3(default.clone()),
            false,
        ),
        (
            "default.grammar.sep",
            "grammar.lsp",
            v3(default.clone()),
            false,
        ),
        (
            "max.grammar.sep",
            "grammar.lsp",
            v3(preset_r(Preset::Max, 28)),
            false,
        ),
        ("store.grammar.sep", "grammar.lsp", v3(Model::Store), false),
        (
            "order2.blocks-1000.sep",
            "grammar.lsp",
            order2_1000.clone(),
            false,
        ),
        (
            "order2.streamed.sep",
            "grammar.lsp",
            order2_1000.clone(),
            true,
        ),
        (
            "order2.seek-table.sep",
            "grammar.lsp",
            Options {
                seek_table: true,
                ..order2_1000.clone()
            },
            false,
        ),
        (
            "default.noise-1500.sep",
            "noise-1500",
            v3(default.clone()),
            false,
        ),
        (
            "default.gzip.sep",
            "grammar.lsp.gz",
            v3(default.clone()),
            false,
        ),
        (
            "builtin-text.grammar.sep",
            "grammar.lsp",
            Options {
                prior: Some(sep::Prior::builtin(sep::Builtin::Text)),
                ..v3(sep::Prior::builtin(sep::Builtin::Text).model())
            },
            false,
        ),
    ];
    let mut manifest = String::from(
        "# archive\tinput\tbytes\txxh3_64 of the input\tmodel_id\tmodel (ModelConfig::describe)\n",
    );
    let mut row = |archive: &str, name: &str, data: &[u8], model_id: u16, describe: &str| {
        manifest += &format!(
            "{archive}\t{name}\t{}\t{:016x}\t{model_id}\t{describe}\n",
            data.len(),
            xxhash_rust::xxh3::xxh3_64(data)
        );
    };
    for (archive, name, options, streamed) in cases {
        let data = input(name);
        let bytes = if streamed {
            let mut enc = sep::Encoder::new(Vec::new(), &options).expect("encoder");
            enc.write_all(&data).expect("write");
            enc.finish().expect("finish")
        } else {
            sep::compress(
                &data,
                &Options {
                    content_length: Some(data.len() as u64),
                    ..options
                },
            )
            .expect("compress")
        };
        assert_eq!(bytes[4], 3, "{archive}: format version 3");
        assert_eq!(sep::decompress(&bytes).expect("decompress"), data);
        let model =
            ModelConfig::from_header(&sep::read_header(&mut &bytes[..]).unwrap()).expect("model");
        row(archive, name, &data, model.id(), &model.describe());
        files.insert(format!("v3/{archive}"), bytes);
    }
    // A version-1 archive, then a version-3 one: the concatenation of their contents.
    let a = files["v1/order2.grammar.sep"].clone();
    let b = files["v3/default.one-byte.sep"].clone();
    let both = input("grammar+one-byte");
    row(
        "concatenated-v1-v3.sep",
        "grammar+one-byte",
        &both,
        1,
        "order2 archive of version 1, then a default archive of version 3",
    );
    files.insert("v3/concatenated-v1-v3.sep".into(), [a, b].concat());
    files.insert("v3/MANIFEST.tsv".into(), manifest.into_bytes());
}

/// A varint's minimal LEB128 bytes.
fn leb(mut v: u64) -> Vec<u8> {
    let mut b = Vec::new();
    while v >= 0x80 {
        b.push(v as u8 | 0x80);
        v >>= 7;
    }
    b.push(v as u8);
    b
}

/// A version-3 header from its raw field bytes (after `magic`, version and
/// `flags`), its `header_check` computed over them.
fn header3(flags: u8, fields: &[&[u8]]) -> Vec<u8> {
    let mut h = [&MAGIC[..], &[3, flags]].concat();
    for f in fields {
        h.extend_from_slice(f);
    }
    let check = raw_check(&h);
    h.extend_from_slice(&check.to_le_bytes());
    h
}

/// Issue 20: version-3 archives that must fail, one rejection of section 13
/// each (tests/golden/must-fail, names `v3-*`): non-minimal, over-long and
/// over-wide varints in the header, a block header and the end record, a
/// header cut inside a varint, the header check, a reserved flag, a limit
/// checked as the field is read, and the end record's length and cut.
/// Built by hand from a store archive of `content` (300 bytes in blocks of
/// 100), so that every field's bytes are spelt out here.
pub(crate) fn v3_must_fail_cases(
    content: &[u8],
) -> Vec<(
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Vec<u8>,
)> {
    assert_eq!(content.len(), 300);
    // content_length 300, block_size 100, seed 0, streams 1, context 0,
    // model_id 0 (store), params_len 0.
    let (len300, bs100): (&[u8], &[u8]) = (&[0xAC, 0x02], &[0x64]);
    let fields = |bs: &[u8], seed: &[u8], streams: &[u8], context: &[u8]| -> Vec<u8> {
        header3(1, &[len300, bs, seed, streams, context, &[0], &[0]])
    };
    let good_header = fields(bs100, &[0], &[1], &[0]);
    let block3 = |raw: &[u8], raw_len: &[u8]| -> Vec<u8> {
        [
            &[0x00][..],
            raw_len,
            &leb(raw.len() as u64),
            &raw_check(raw).to_le_bytes(),
            raw,
        ]
        .concat()
    };
    let blocks = |first_len: &[u8]| -> Vec<u8> {
        [
            block3(&content[..100], first_len),
            block3(&content[100..200], &[100]),
            block3(&content[200..], &[100]),
        ]
        .concat()
    };
    let end3 = |len: &[u8]| -> Vec<u8> {
        let check = xxhash_rust::xxh3::xxh3_64(content);
        [&[0xFF][..], len, &check.to_le_bytes()].concat()
    };
    let good = [good_header.clone(), blocks(&[100]), end3(len300)].concat();
    // The hand-built archive is what sep writes for these options.
    let written = sep::compress(
        content,
        &Options {
            model: Model::Store,
            block_size: Some(100),
            small_blocks: true,
            format_version: 3,
            ..Options::default()
        },
    )
    .expect("v3 store archive");
    assert_eq!(good, written, "the hand-built v3 store archive");
    let with_header = |h: Vec<u8>| [h, blocks(&[100]), end3(len300)].concat();
    let mut bad_check = good.clone();
    bad_check[good_header.len() - 1] ^= 0x40;
    let mut reserved = good_header.clone();
    reserved[5] |= 0x04;
    let n = reserved.len();
    let check = raw_check(&reserved[..n - 4]);
    reserved[n - 4..].copy_from_slice(&check.to_le_bytes());
    vec![
        (
            "v3-header-varint-not-minimal.sep",
            "InvalidField",
            "varint is not minimal",
            "version 3: block_size 100 written as E4 00 (header check right)",
            with_header(fields(&[0xE4, 0x00], &[0], &[1], &[0])),
        ),
        (
            "v3-header-varint-too-long.sep",
            "InvalidField",
            "varint longer than 10 bytes",
            "version 3: seed written as eleven bytes 80",
            with_header(fields(bs100, &[0x80; 11], &[1], &[0])),
        ),
        (
            "v3-header-varint-too-wide.sep",
            "InvalidField",
            "varint exceeds 16 bits",
            "version 3: context 65536 (80 80 04) in a 16-bit varint",
            with_header(fields(bs100, &[0], &[1], &[0x80, 0x80, 0x04])),
        ),
        (
            "v3-streams-too-many.sep",
            "InvalidField",
            "streams is 4097",
            "version 3: streams 4097, refused as it is read",
            with_header(fields(bs100, &[0], &leb(4097), &[0])),
        ),
        (
            "v3-header-checksum.sep",
            "HeaderChecksum",
            "header checksum mismatch",
            "version 3: a bit of header_check flipped",
            bad_check,
        ),
        (
            "v3-reserved-flag.sep",
            "Reserved",
            "flags",
            "version 3: flags bit 2 set (header check right)",
            with_header(reserved),
        ),
        (
            "v3-truncated-header.sep",
            "Truncated",
            "header",
            "version 3: the header cut inside content_length's varint (AC)",
            [&MAGIC[..], &[3, 1, 0xAC]].concat(),
        ),
        (
            "v3-block-varint-not-minimal.sep",
            "InvalidField",
            "varint is not minimal",
            "version 3: the first block's raw_len 100 written as E4 00",
            [good_header.clone(), blocks(&[0xE4, 0x00]), end3(len300)].concat(),
        ),
        (
            "v3-block-varint-too-wide.sep",
            "InvalidField",
            "varint exceeds 32 bits",
            "version 3: the first block's raw_len 2^32 (80 80 80 80 10)",
            [
                good_header.clone(),
                blocks(&[0x80, 0x80, 0x80, 0x80, 0x10]),
                end3(len300),
            ]
            .concat(),
        ),
        (
            "v3-end-varint-not-minimal.sep",
            "InvalidField",
            "varint is not minimal",
            "version 3: the end record's content_length 300 written as AC 82 00",
            [
                good_header.clone(),
                blocks(&[100]),
                end3(&[0xAC, 0x82, 0x00]),
            ]
            .concat(),
        ),
        (
            "v3-end-content-length.sep",
            "LengthMismatch",
            "content (sum of raw_len)",
            "version 3: the end record says 301 bytes",
            [good_header.clone(), blocks(&[100]), end3(&leb(301))].concat(),
        ),
        (
            "v3-truncated-end-record.sep",
            "Truncated",
            "end record",
            "version 3: the end record cut after 5 bytes",
            good[..good.len() - 6].to_vec(),
        ),
    ]
}
