//! The must-fail files and their expected errors (tests/golden/must-fail).

#[allow(unused_imports)]
use super::*;
use crate::seek_cases::seek_table_cases;

/// `(file, expected error variant, message substring, what is wrong)` and the bytes.
pub(crate) fn must_fail(files: &mut Files) {
    let text: Vec<u8> = b"It was the best of times, it was the worst of times. ".repeat(6);
    let content = &text[..300];
    let store = sep::compress(
        content,
        &Options {
            model: Model::Store,
            block_size: Some(100),
            small_blocks: true,
            ..v1_options()
        },
    )
    .expect("store archive");
    let order2 = sep::compress(
        content,
        &Options {
            model: Model::Order2,
            block_size: Some(100),
            small_blocks: true,
            ..v1_options()
        },
    )
    .expect("order2 archive");
    let hlen = sep::read_header(&mut &store[..]).unwrap().to_bytes().len();
    let o2len = sep::read_header(&mut &order2[..]).unwrap().to_bytes().len();
    assert_eq!(order2[o2len], 0x01, "order2's first block is modelled");
    let n = store.len();
    let edit = |base: &[u8], at: usize, f: &dyn Fn(&mut u8), fix: bool| {
        let mut v = base.to_vec();
        f(&mut v[at]);
        if fix {
            repair(&mut v);
        }
        v
    };
    let with_header = |h: &Header, rest: &[u8]| [h.to_bytes(), rest.to_vec()].concat();
    let store_body = &store[hlen..];
    let first_payload = &content[..100];
    // The largest PAC the per-field limits allow (context 128 x embed 32, ffn 16384,
    // 8 pairs), with 4096 streams: terabytes of model.
    let pac_max = BackboneConfig::Pac(PacConfig {
        context: 128,
        embed: 32,
        ffn: 16384,
        pairs: 8,
        cache: false,
    });
    let pac_params = {
        let h = Options {
            model: Model::Neural(neural(BackboneConfig::Pac(PAC))),
            ..v1_options()
        }
        .header()
        .expect("pac header")
        .0;
        h.params
    };
    let mix_params = {
        let h = Options {
            model: Model::Mix(MixConfig {
                cm: small_cm(),
                neural: None,
                serial: None,
            }),
            ..v1_options()
        }
        .header()
        .expect("mix header")
        .0;
        h.params
    };
    let pac_max_params = {
        let mut p = pac_params.clone();
        let bb = sep::params::write_backbone(&pac_max);
        p.truncate(48);
        p.extend_from_slice(&(bb.len() as u16).to_le_bytes());
        p.extend_from_slice(&bb);
        p
    };
    let modelled_in_store = [
        store[..hlen].to_vec(),
        block(BlockType::Modelled, first_payload, 100, vec![100]),
        first_payload.to_vec(),
        store[hlen + 16 + 100..].to_vec(),
    ]
    .concat();
    let stored = |raw: &[u8]| {
        [
            block(BlockType::Stored, raw, raw.len(), vec![]),
            raw.to_vec(),
        ]
        .concat()
    };
    let mut cases: Vec<(&str, &str, &str, &str, Vec<u8>)> = vec![
        (
            "empty.sep",
            "Truncated",
            "the input is empty",
            "no bytes at all",
            vec![],
        ),
        (
            "bad-magic.sep",
            "BadMagic",
            "not a sep archive",
            "a zip file",
            b"PK\x03\x04 this is not sep".to_vec(),
        ),
        (
            "short-magic.sep",
            "Truncated",
            "magic",
            "the first two bytes of the magic",
            MAGIC[..2].to_vec(),
        ),
        (
            "future-version.sep",
            "UnsupportedVersion",
            "unsupported format version 2",
            "format_version 2",
            edit(&store, 4, &|b| *b = 2, true),
        ),
        (
            "reserved-flag.sep",
            "Reserved",
            "flags",
            // Bit 1 is the prior flag since issue 20 (doc/FORMAT.md section 2).
            "flags bit 2 set",
            edit(&store, 5, &|b| *b |= 4, true),
        ),
        (
            "reserved-header.sep",
            "Reserved",
            "reserved (header)",
            "the reserved u16 of the header is 1",
            edit(&store, 6, &|b| *b = 1, true),
        ),
        (
            "content-length-flag-clear.sep",
            "Reserved",
            "content_length (flag clear)",
            "content_length 300 with flag bit 0 clear",
            edit(&store, 5, &|b| *b = 0, true),
        ),
        (
            "header-checksum.sep",
            "HeaderChecksum",
            "header checksum mismatch",
            "a bit of seed flipped",
            edit(&store, 20, &|b| *b ^= 1, false),
        ),
        (
            "block-size-zero.sep",
            "InvalidField",
            "block_size is 0",
            "block_size 0",
            with_header(
                &Header {
                    block_size: 0,
                    ..header(0, 1, 0, vec![])
                },
                store_body,
            ),
        ),
        (
            "block-size-too-large.sep",
            "InvalidField",
            "block_size is 1073741825",
            "block_size 2^30 + 1",
            with_header(
                &Header {
                    block_size: (1 << 30) + 1,
                    ..header(0, 1, 0, vec![])
                },
                store_body,
            ),
        ),
        (
            "streams-zero.sep",
            "InvalidField",
            "streams is 0",
            "streams 0",
            with_header(&header(0, 0, 0, vec![]), store_body),
        ),
        (
            "streams-too-many.sep",
            "InvalidField",
            "streams is 4097",
            "streams 4097",
            with_header(&header(2, 4097, 4, pac_params.clone()), store_body),
        ),
        (
            "params-len-too-long.sep",
            "InvalidField",
            "params_len is 1025",
            "params_len 1025",
            with_header(&header(3, 1, 0, vec![0; 1025]), store_body),
        ),
        (
            "unknown-model.sep",
            "UnknownModel",
            "unsupported model id 7",
            "model_id 7",
            with_header(&header(7, 1, 0, vec![]), store_body),
        ),
        (
            "store-with-params.sep",
            "InvalidField",
            "params_len is 4",
            "model store with 4 bytes of params",
            with_header(&header(0, 1, 0, vec![0; 4]), store_body),
        ),
        (
            "order2-table-bits.sep",
            "InvalidField",
            "table_bits is 25",
            "order2 table_bits 25 (limit 24)",
            with_header(&header(1, 1, 2, vec![25, 0, 0, 0]), store_body),
        ),
        (
            "order2-reserved.sep",
            "Reserved",
            "reserved (order2 params)",
            "order2 params reserved byte 1",
            with_header(&header(1, 1, 2, vec![16, 1, 0, 0]), store_body),
        ),
        (
            "mix-table-bits.sep",
            "InvalidModel",
            "table_bits",
            "mix table_bits 31 (limit 30)",
            with_header(
                &header(3, 1, 0, {
                    let mut p = mix_params.clone();
                    p[4 + 7] = 31;
                    p
                }),
                store_body,
            ),
        ),
        (
            "neural-unknown-backbone.sep",
            "InvalidModel",
            "unknown backbone id 9",
            "neural backbone 9",
            with_header(
                &header(2, 4, 4, {
                    let mut p = pac_params.clone();
                    p[0] = 9;
                    p
                }),
                store_body,
            ),
        ),
        (
            "neural-context-mismatch.sep",
            "InvalidModel",
            "context",
            "header context 5, PAC context 4",
            with_header(&header(2, 4, 5, pac_params.clone()), store_body),
        ),
        (
            "neural-too-large.sep",
            "LimitExceeded",
            "model memory",
            "the largest PAC for 4096 streams: every field in range, terabytes in all",
            with_header(
                &Header {
                    block_size: 1 << 20,
                    ..header(2, 4096, 128, pac_max_params)
                },
                store_body,
            ),
        ),
        (
            "truncated-header.sep",
            "Truncated",
            "header",
            "the header cut at 20 bytes",
            store[..20].to_vec(),
        ),
        (
            "truncated-block-header.sep",
            "Truncated",
            "block header",
            "a block header cut after 5 bytes",
            store[..hlen + 5].to_vec(),
        ),
        (
            "truncated-payload.sep",
            "Truncated",
            "block payload",
            "a stored payload cut in half",
            store[..hlen + 16 + 50].to_vec(),
        ),
        (
            "truncated-end-record.sep",
            "Truncated",
            "end record",
            "the end record cut after 10 bytes",
            store[..n - 14].to_vec(),
        ),
        (
            "missing-end-record.sep",
            "Truncated",
            "block header",
            "no end record",
            store[..n - 24].to_vec(),
        ),
        (
            "bad-block-type.sep",
            "InvalidField",
            "block_type is 2",
            "block_type 0x02",
            edit(&store, hlen, &|b| *b = 2, false),
        ),
        (
            "reserved-block-header.sep",
            "Reserved",
            "reserved (block header)",
            "a block header's reserved byte 1",
            edit(&store, hlen + 1, &|b| *b = 1, false),
        ),
        (
            "raw-len-zero.sep",
            "InvalidField",
            "raw_len is 0",
            "raw_len 0",
            [
                store[..hlen].to_vec(),
                block(BlockType::Stored, &[], 0, vec![]),
                store_body.to_vec(),
            ]
            .concat(),
        ),
        (
            "raw-len-over-block-size.sep",
            "InvalidField",
            "raw_len is 101",
            "raw_len 101 with block_size 100",
            [
                store[..hlen].to_vec(),
                stored(&content[..101]),
                end(&content[..101]),
            ]
            .concat(),
        ),
        (
            "payload-len-over-raw-len.sep",
            "InvalidField",
            "payload_len is 101",
            "a modelled block with payload_len 101 > raw_len 100",
            [
                store[..hlen].to_vec(),
                block(BlockType::Modelled, first_payload, 101, vec![101]),
                vec![0; 101],
            ]
            .concat(),
        ),
        (
            "stored-payload-len.sep",
            "LengthMismatch",
            "payload_len of a stored block",
            "a stored block with payload_len 99, raw_len 100",
            [
                store[..hlen].to_vec(),
                block(BlockType::Stored, first_payload, 99, vec![]),
                content[..99].to_vec(),
            ]
            .concat(),
        ),
        (
            "stream-count-zero.sep",
            "InvalidField",
            "stream_count is 0",
            "stream_count 0",
            [
                order2[..o2len].to_vec(),
                block(BlockType::Modelled, first_payload, 0, vec![]),
            ]
            .concat(),
        ),
        (
            "stream-count-over-streams.sep",
            "InvalidField",
            "stream_count is 2",
            "stream_count 2 with streams 1",
            [
                order2[..o2len].to_vec(),
                block(BlockType::Modelled, first_payload, 20, vec![10, 10]),
                vec![0; 20],
            ]
            .concat(),
        ),
        (
            "stream-lens-sum.sep",
            "LengthMismatch",
            "sum of stream_len",
            "stream_len 30 with payload_len 20",
            [
                order2[..o2len].to_vec(),
                block(BlockType::Modelled, first_payload, 20, vec![30]),
                vec![0; 30],
            ]
            .concat(),
        ),
        (
            "varint-not-minimal.sep",
            "InvalidField",
            "not minimal",
            "stream_count written as 0x81 0x00",
            {
                let mut v = order2[..o2len].to_vec();
                v.extend_from_slice(&block(BlockType::Modelled, first_payload, 1, vec![1])[..16]);
                v.extend_from_slice(&[0x81, 0x00, 0x01, 0x00]);
                v
            },
        ),
        (
            "modelled-block-in-store.sep",
            "InvalidField",
            "model store has no modelled blocks",
            "a modelled block in a store archive",
            modelled_in_store,
        ),
        (
            "stored-block-checksum.sep",
            "BlockChecksum",
            "block 1 fails its checksum",
            "a byte of the second stored block changed",
            edit(&store, hlen + 116 + 16 + 7, &|b| *b ^= 0x20, false),
        ),
        (
            "modelled-block-checksum.sep",
            "BlockChecksum",
            "block 0 fails its checksum",
            "a byte of a modelled payload changed",
            edit(&order2, o2len + 20, &|b| *b ^= 0x01, false),
        ),
        (
            "content-checksum.sep",
            "ContentChecksum",
            "content checksum mismatch",
            "content_check flipped",
            edit(&store, n - 1, &|b| *b ^= 0x80, false),
        ),
        (
            "end-content-length.sep",
            "LengthMismatch",
            "content (sum of raw_len)",
            "the end record says 301 bytes",
            edit(&store, n - 16, &|b| *b += 1, false),
        ),
        (
            "header-content-length.sep",
            "LengthMismatch",
            "content_length of the end record",
            "the header says 301 bytes, the blocks hold 300",
            edit(&store, 8, &|b| *b += 1, true),
        ),
        (
            "reserved-end-record.sep",
            "Reserved",
            "reserved (end record)",
            "an end record's reserved byte 3",
            edit(&store, n - 21, &|b| *b = 1, false),
        ),
        (
            "trailing-data.sep",
            "TrailingData",
            "trailing data",
            "junk after the end record",
            [store.clone(), b"junk".to_vec()].concat(),
        ),
        (
            "truncated-second-magic.sep",
            "Truncated",
            "magic of a concatenated archive",
            "half a magic after the end record",
            [store.clone(), MAGIC[..2].to_vec()].concat(),
        ),
        (
            "second-header-checksum.sep",
            "HeaderChecksum",
            "header checksum mismatch",
            "a second archive whose header is damaged",
            [store.clone(), edit(&store, 20, &|b| *b ^= 1, false)].concat(),
        ),
    ];
    // Issue 14 item 8: a short block that is not the last (50, 100, 100, 50 bytes with
    // block_size 100), and order2's first stream with a byte appended (its lengths
    // adjusted): decodable, but no encoder writes either.
    let short_first = [
        store[..hlen].to_vec(),
        block(BlockType::Stored, &content[..50], 50, vec![]),
        content[..50].to_vec(),
        block(BlockType::Stored, &content[50..150], 100, vec![]),
        content[50..150].to_vec(),
        block(BlockType::Stored, &content[150..250], 100, vec![]),
        content[150..250].to_vec(),
        block(BlockType::Stored, &content[250..], 50, vec![]),
        content[250..].to_vec(),
        end(content),
    ]
    .concat();
    let stream_plus = |junk: u8| {
        let h = sep::read_header(&mut &order2[..]).unwrap();
        let mut rest = &order2[o2len..];
        let sep::format::Record::Block(mut bh) = sep::format::Record::read(&mut rest, &h).unwrap()
        else {
            panic!("order2's first record is a block")
        };
        let payload = &rest[..bh.payload_len as usize];
        let after = &rest[bh.payload_len as usize..];
        bh.payload_len += 1;
        bh.stream_lens[0] += 1;
        assert!(bh.payload_len <= bh.raw_len, "room for a junk byte");
        let mut head = Vec::new();
        bh.write_to(&mut head, 1).unwrap();
        [&order2[..o2len], &head, payload, &[junk], after].concat()
    };
    cases.extend([
        (
            "short-block-in-middle.sep",
            "InvalidField",
            "raw_len is 50, less than block_size, but a block follows",
            "a first block of 50 bytes with block_size 100 (only the last may be short)",
            short_first,
        ),
        (
            "stream-junk.sep",
            "StreamJunk",
            "block 0, stream 0: ends in bytes that no encoder writes",
            "a byte appended to order2's first stream, lengths adjusted",
            stream_plus(0x5A),
        ),
        (
            "stream-trailing-zero.sep",
            "StreamJunk",
            "block 0, stream 0: ends in a zero byte",
            "a zero byte appended to order2's first stream, lengths adjusted",
            stream_plus(0),
        ),
    ]);
    cases.extend(seek_table_cases(content, &store));
    cases.extend(crate::v3::v3_must_fail_cases(content));
    let mut expected = String::from("# file\terror variant\tmessage contains\twhat is wrong\n");
    for (file, variant, substring, what, bytes) in cases {
        expected += &format!("{file}\t{variant}\t{substring}\t{what}\n");
        files.insert(format!("must-fail/{file}"), bytes);
    }
    files.insert("must-fail/EXPECTED.tsv".into(), expected.into_bytes());
}
