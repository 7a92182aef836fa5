//! Unit tests of `format`.

use super::*;

fn header() -> Header {
    Header {
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
    bh.write_to(&mut b).unwrap();
    assert_eq!(b.len(), bh.encoded_len());
    assert_eq!(
        Record::read(&mut &b[..], &h).unwrap(),
        Record::Block(bh.clone())
    );
    let end = EndRecord {
        content_length: 5,
        content_check: 6,
    };
    assert_eq!(
        Record::read(&mut &end.to_bytes()[..], &h).unwrap(),
        Record::End(end)
    );

    let bad = |bh: &BlockHeader| {
        let mut b = Vec::new();
        bh.write_to(&mut b).unwrap();
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
    let mut e = end.to_bytes();
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
