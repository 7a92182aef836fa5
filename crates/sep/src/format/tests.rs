//! Unit tests of `format`.

use super::*;

fn header() -> Header {
    Header {
        version: FORMAT_VERSION_1,
        content_length: Some(1234),
        block_size: 1000,
        seed: 99,
        streams: 4,
        context: 2,
        model_id: 1,
        params: vec![22, 0, 0, 0],
        prior_id: None,
    }
}

#[test]
fn header_round_trip_and_layout() {
    let h = header();
    let b = h.to_bytes();
    assert_eq!(&b[..4], &MAGIC);
    assert_eq!(b.len(), 38 + 4 + 4);
    let back = Header::read_after_magic(&mut &b[4..]).unwrap();
    assert_eq!(back, h);
    let h2 = Header {
        content_length: None,
        ..h
    };
    assert_eq!(
        Header::read_after_magic(&mut &h2.to_bytes()[4..]).unwrap(),
        h2
    );
}

#[test]
fn header_rejections_name_the_field() {
    let b = header().to_bytes();
    let parse = |b: &[u8]| {
        Header::read_after_magic(&mut &b[4..])
            .unwrap_err()
            .to_string()
    };
    let mut v = b.clone();
    v[4] = 2;
    assert!(parse(&v).contains("unsupported format version 2"));
    let mut v = b.clone();
    v[5] |= 4;
    assert!(parse(&v).contains("reserved field flags"));
    // Flag bit 1 (issue 20): a prior_id follows params; without its 16
    // bytes the header is short, and the checksum covers them.
    let mut v = b.clone();
    v[5] |= 2;
    assert!(parse(&v).contains("truncated"));
    let with = Header {
        prior_id: Some([7; 16]),
        ..header()
    };
    let wb = with.to_bytes();
    assert_eq!(wb.len(), b.len() + 16);
    assert_eq!(wb[5] & 2, 2);
    assert_eq!(&wb[wb.len() - 20..wb.len() - 4], &[7; 16]);
    assert_eq!(Header::read_after_magic(&mut &wb[4..]).unwrap(), with);
    let mut v = wb.clone();
    v[wb.len() - 10] ^= 1;
    assert!(parse(&v).contains("header checksum"));
    let mut v = b.clone();
    v[7] = 1;
    assert!(parse(&v).contains("reserved"));
    let mut v = b.clone();
    v[39] ^= 1;
    assert!(parse(&v).contains("header checksum"));
    assert!(parse(&b[..20]).contains("truncated"));
    let mut h = header();
    h.block_size = 0;
    assert!(parse(&h.to_bytes()).contains("block_size is 0"));
    h.block_size = MAX_BLOCK_SIZE + 1;
    assert!(parse(&h.to_bytes()).contains("block_size"));
    let mut h = header();
    h.streams = MAX_STREAMS + 1;
    assert!(parse(&h.to_bytes()).contains("streams"));
}

#[test]
fn varints_are_minimal_and_bounded() {
    for v in [0u32, 1, 127, 128, 300, 16383, 16384, u32::MAX] {
        let mut b = Vec::new();
        write_varint(&mut b, v);
        assert_eq!(b.len(), varint_len(v));
        assert_eq!(read_varint(&mut &b[..], "x").unwrap(), v);
    }
    assert!(
        read_varint(&mut &[0x80, 0x00][..], "x")
            .unwrap_err()
            .to_string()
            .contains("not minimal")
    );
    assert!(
        read_varint(&mut &[0xFF, 0xFF, 0xFF, 0xFF, 0x7F][..], "x")
            .unwrap_err()
            .to_string()
            .contains("32 bits")
    );
    assert!(
        read_varint(&mut &[0xFF; 6][..], "x")
            .unwrap_err()
            .to_string()
            .contains("longer than 5")
    );
}

#[test]
fn records_round_trip_and_validate() {
    let h = header();
    let bh = BlockHeader {
        block_type: BlockType::Modelled,
        raw_len: 1000,
        payload_len: 300,
        raw_check: 7,
        stream_lens: vec![100, 200],
    };
    let mut b = Vec::new();
    bh.write_to(&mut b, h.version).unwrap();
    assert_eq!(b.len(), bh.encoded_len(h.version));
    assert_eq!(
        Record::read(&mut &b[..], &h).unwrap(),
        Record::Block(bh.clone())
    );
    let end = EndRecord {
        content_length: 5,
        content_check: 6,
    };
    assert_eq!(
        Record::read(&mut &end.to_bytes(h.version)[..], &h).unwrap(),
        Record::End(end)
    );

    let bad = |bh: &BlockHeader| {
        let mut b = Vec::new();
        bh.write_to(&mut b, h.version).unwrap();
        Record::read(&mut &b[..], &h).unwrap_err().to_string()
    };
    assert!(
        bad(&BlockHeader {
            raw_len: 1001,
            ..bh.clone()
        })
        .contains("raw_len")
    );
    assert!(
        bad(&BlockHeader {
            payload_len: 1001,
            raw_len: 1000,
            ..bh.clone()
        })
        .contains("payload_len")
    );
    assert!(
        bad(&BlockHeader {
            stream_lens: vec![100, 201],
            ..bh.clone()
        })
        .contains("sum of stream_len")
    );
    assert!(
        bad(&BlockHeader {
            stream_lens: vec![60; 5],
            ..bh.clone()
        })
        .contains("stream_count")
    );
    assert!(
        bad(&BlockHeader {
            block_type: BlockType::Stored,
            stream_lens: vec![],
            ..bh.clone()
        })
        .contains("stored")
    );
    assert!(
        Record::read(&mut &[0x03][..], &h)
            .unwrap_err()
            .to_string()
            .contains("block_type")
    );
    let mut e = end.to_bytes(h.version);
    e[3] = 1;
    assert!(
        Record::read(&mut &e[..], &h)
            .unwrap_err()
            .to_string()
            .contains("reserved")
    );
    assert!(
        Record::read(&mut &e[..10], &h)
            .unwrap_err()
            .to_string()
            .contains("truncated")
    );
}

/// Section 13 (issue 20): the compact header is the version-1 header's
/// fields as minimal varints, and reads back to the same header.
#[test]
fn compact_header_round_trip_and_layout() {
    let h = Header {
        version: FORMAT_VERSION_3,
        ..header()
    };
    let b = h.to_bytes();
    // magic, version, flags, content_length 1234 (2 bytes), block_size 1000
    // (2), seed 99, streams 4, context 2, model_id 1, params_len 4 (1 each),
    // params (4), header_check (4).
    assert_eq!(b.len(), 4 + 1 + 1 + 2 + 2 + 5 + 4 + 4);
    assert_eq!(b[4], 3);
    assert_eq!(&b[6..10], &[0xD2, 0x09, 0xE8, 0x07]);
    assert_eq!(Header::read_after_magic(&mut &b[4..]).unwrap(), h);
    for h2 in [
        Header {
            content_length: None,
            ..h.clone()
        },
        Header {
            content_length: Some(u64::MAX),
            seed: u64::MAX,
            block_size: MAX_BLOCK_SIZE,
            streams: MAX_STREAMS,
            context: u16::MAX,
            model_id: u16::MAX,
            prior_id: Some([9; 16]),
            ..h.clone()
        },
    ] {
        let b2 = h2.to_bytes();
        assert_eq!(Header::read_after_magic(&mut &b2[4..]).unwrap(), h2);
        // Every proper prefix is truncated, never a panic.
        for n in 4..b2.len() {
            assert!(Header::read_after_magic(&mut &b2[4..n]).is_err(), "{n}");
        }
    }
    // Version 1's 46 bytes become 23.
    assert_eq!(header().to_bytes().len(), 46);
    assert_eq!(b.len(), 23);
}

#[test]
fn compact_header_rejections() {
    let parse = |b: &[u8]| {
        Header::read_after_magic(&mut &b[4..])
            .unwrap_err()
            .to_string()
    };
    let h = Header {
        version: FORMAT_VERSION_3,
        ..header()
    };
    let b = h.to_bytes();
    let mut v = b.clone();
    v[12] ^= 1; // seed
    assert!(parse(&v).contains("header checksum"));
    let mut v = b.clone();
    v[5] |= 8;
    assert!(parse(&v).contains("reserved field flags"));
    // A non-minimal block_size (1000 as 3 bytes), with a good header_check.
    let mut v = b[..8].to_vec();
    v.extend_from_slice(&[0xE8, 0x87, 0x00]);
    v.extend_from_slice(&b[10..b.len() - 4]);
    let check = xxh3_64(&v) as u32;
    v.extend_from_slice(&check.to_le_bytes());
    assert!(parse(&v).contains("not minimal"), "{}", parse(&v));
    // context wider than 16 bits.
    let mut v = b[..13].to_vec();
    v.extend_from_slice(&[0x80, 0x80, 0x04]);
    assert!(parse(&v).contains("exceeds 16 bits"), "{}", parse(&v));
    // block_size 0 and over 2^30, named before anything is allocated.
    for (bs, want) in [(0u32, "block_size is 0"), ((1 << 30) + 1, "block_size")] {
        let mut v = b[..8].to_vec();
        write_varint(&mut v, bs);
        v.extend_from_slice(&b[10..]);
        assert!(parse(&v).contains(want), "{}", parse(&v));
    }
    // A seed of 11 varint bytes.
    let mut v = b[..10].to_vec();
    v.extend_from_slice(&[0xFF; 11]);
    assert!(parse(&v).contains("longer than 10 bytes"), "{}", parse(&v));
    // Versions 2 and 4 are not this format.
    let mut v = b.clone();
    v[4] = 4;
    assert!(parse(&v).contains("unsupported format version 4"));
}

#[test]
fn compact_records_round_trip_and_validate() {
    let h = Header {
        version: FORMAT_VERSION_3,
        ..header()
    };
    for bh in [
        BlockHeader {
            block_type: BlockType::Modelled,
            raw_len: 1000,
            payload_len: 300,
            raw_check: 7,
            stream_lens: vec![100, 200],
        },
        BlockHeader {
            block_type: BlockType::Stored,
            raw_len: 1,
            payload_len: 1,
            raw_check: 0xDEAD_BEEF,
            stream_lens: vec![],
        },
    ] {
        let mut b = Vec::new();
        bh.write_to(&mut b, 3).unwrap();
        assert_eq!(b.len(), bh.encoded_len(3));
        assert!(b.len() + 7 <= bh.encoded_len(1), "{} bytes", b.len());
        assert_eq!(
            Record::read(&mut &b[..], &h).unwrap(),
            Record::Block(bh.clone())
        );
        for n in 0..b.len() {
            assert!(Record::read(&mut &b[..n], &h).is_err());
        }
    }
    let mut b = Vec::new();
    BlockHeader {
        block_type: BlockType::Stored,
        raw_len: 1,
        payload_len: 1,
        raw_check: 0,
        stream_lens: vec![],
    }
    .write_to(&mut b, 3)
    .unwrap();
    assert_eq!(b.len() as u32, min_block_len(3));
    for end in [
        EndRecord {
            content_length: 0,
            content_check: 6,
        },
        EndRecord {
            content_length: u64::MAX,
            content_check: u64::MAX,
        },
    ] {
        let e = end.to_bytes(3);
        assert_eq!(e.len(), end.encoded_len(3));
        assert_eq!(Record::read(&mut &e[..], &h).unwrap(), Record::End(end));
        for n in 0..e.len() {
            assert!(Record::read(&mut &e[..n], &h).is_err());
        }
    }
    assert_eq!(
        EndRecord {
            content_length: 0,
            content_check: 0
        }
        .encoded_len(3),
        10
    );
    // raw_len over block_size, payload over raw_len, a non-minimal raw_len.
    let bad = |b: &[u8]| Record::read(&mut &b[..], &h).unwrap_err().to_string();
    assert!(bad(&[0x00, 0xE9, 0x07, 0x01, 0, 0, 0, 0]).contains("raw_len"));
    assert!(bad(&[0x00, 0x02, 0x03, 0, 0, 0, 0]).contains("payload_len"));
    assert!(bad(&[0x00, 0x82, 0x00, 0x02, 0, 0, 0, 0]).contains("not minimal"));
    assert!(bad(&[0xFF, 0x80, 0x00]).contains("not minimal"));
}
