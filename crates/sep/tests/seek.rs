//! Issue 22: the seek table (doc/FORMAT.md section 12) and random access
//! (`Decoder::range`, `sep::content_length`), with and without a table, on
//! single and concatenated archives; reads counted to show that only the
//! blocks of the range are read.

use sep::format::{SEEK_MAGIC, parse_seek_table, write_seek_table};
use sep::{Decoder, Error, Model, Options};
use std::cell::Cell;
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::rc::Rc;

fn data(n: usize) -> Vec<u8> {
    let text = b"It was the best of times, it was the worst of times; ".repeat(n / 53 + 1);
    text[..n]
        .iter()
        .enumerate()
        .map(|(i, &b)| b ^ ((i / 4099) as u8 & 3))
        .collect()
}

fn archive(content: &[u8], model: Model, block: u32, table: bool) -> Vec<u8> {
    sep::compress(
        content,
        &Options {
            model,
            block_size: Some(block),
            seek_table: table,
            ..Options::default()
        },
    )
    .expect("compress")
}

/// A reader that counts the bytes read through it.
struct Counting<R> {
    inner: R,
    read: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// The range through `Decoder::range`, and the archive bytes it read.
fn range(archive: &[u8], start: u64, len: Option<u64>) -> sep::Result<(Vec<u8>, u64)> {
    let read = Rc::new(Cell::new(0));
    let input = Counting {
        inner: Cursor::new(archive),
        read: read.clone(),
    };
    let mut out = Vec::new();
    Decoder::range(input, start, len)?
        .with_threads(2)
        .read_to_end(&mut out)?;
    Ok((out, read.get()))
}

#[test]
fn a_seek_table_costs_8_bytes_per_block_and_decodes_as_before() {
    let content = data(40_000);
    let plain = archive(&content, Model::Order2, 4096, false);
    let with = archive(&content, Model::Order2, 4096, true);
    let blocks = 40_000u64.div_ceil(4096);
    assert_eq!(with.len() as u64, plain.len() as u64 + 20 + 8 * blocks);
    assert_eq!(
        &with[..plain.len()],
        &plain[..],
        "the archive itself is unchanged"
    );
    assert_eq!(sep::decompress(&with).unwrap(), content);
    let infos = sep::inspect(&with[..]).unwrap();
    assert_eq!(infos[0].seek_table_bytes, 20 + 8 * blocks);
    assert_eq!(sep::inspect(&plain[..]).unwrap()[0].seek_table_bytes, 0);
    // The table lists every block: record length and raw length.
    let entries = parse_seek_table(&with[plain.len()..], 4096, 3).unwrap();
    assert_eq!(entries.len() as u64, blocks);
    assert_eq!(entries.last().unwrap().raw_len, 40_000 % 4096);
    let header_len = sep::read_header(&mut &with[..]).unwrap().to_bytes().len();
    let sum: usize = entries.iter().map(|e| e.block_len as usize).sum();
    // The end record of format version 3: 0xFF, content_length 40,000 (3
    // varint bytes), content_check.
    assert_eq!(header_len + sum + 12, plain.len());
    // Concatenated archives with tables decode to the concatenation; so does an
    // empty archive with its (empty) table.
    let empty = archive(b"", Model::Order2, 4096, true);
    // The store header of format version 3 (18 bytes with block_size 4096)
    // and its end record (10).
    assert_eq!(empty.len(), 28 + 20);
    let both = [with.clone(), empty, with.clone()].concat();
    assert_eq!(
        sep::decompress(&both).unwrap(),
        [&content[..], &content[..]].concat()
    );
    // Thread counts do not change the table.
    let t4 = sep::compress(
        &content,
        &Options {
            model: Model::Order2,
            block_size: Some(4096),
            seek_table: true,
            threads: 4,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(t4, with);
}

#[test]
fn ranges_match_slices_of_the_full_decode_with_and_without_a_table() {
    let content = data(50_000);
    let n = content.len() as u64;
    for table in [false, true] {
        for model in [Model::Store, Model::Order2] {
            let a = archive(&content, model.clone(), 4096, table);
            let cases: &[(u64, Option<u64>)] = &[
                (0, Some(1)),
                (0, Some(n)),
                (4095, Some(2)),      // across a block border
                (4096, Some(4096)),   // exactly one block
                (1000, Some(20_000)), // several blocks
                (n - 1, Some(1)),     // the last byte
                (12_345, None),       // to the end
                (n, None),            // empty, at the end
                (n, Some(0)),         // empty, at the end
                (7000, Some(0)),      // empty, inside
                (0, None),            // everything
            ];
            for &(start, len) in cases {
                let (got, _) = range(&a, start, len)
                    .unwrap_or_else(|e| panic!("{start} {len:?} table {table}: {e}"));
                let end = len.map_or(n, |l| start + l) as usize;
                assert!(
                    got == content[start as usize..end],
                    "{start} {len:?} table {table}"
                );
            }
            assert_eq!(sep::content_length(&mut Cursor::new(&a)).unwrap(), n);
        }
    }
}

#[test]
fn ranges_past_the_end_fail_before_any_output() {
    let content = data(10_000);
    for table in [false, true] {
        let a = archive(&content, Model::Order2, 4096, table);
        for (start, len) in [
            (10_000, Some(1)),
            (9_999, Some(2)),
            (10_001, None),
            (u64::MAX, Some(2)),
        ] {
            match Decoder::range(Cursor::new(&a), start, len) {
                Err(e @ Error::RangePastEnd { .. }) => {
                    assert!(e.to_string().contains("past the end of the content"), "{e}");
                    assert!(!e.is_corrupt());
                }
                other => panic!("{start} {len:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn ranges_read_only_the_blocks_they_need() {
    // 40 blocks of 4 KiB, stored: each block is 16 + 4096 bytes in the archive.
    let content = data(40 * 4096);
    for table in [false, true] {
        let a = archive(&content, Model::Store, 4096, table);
        let (got, read) = range(&a, 20 * 4096 + 100, Some(10)).unwrap();
        assert_eq!(got, &content[20 * 4096 + 100..20 * 4096 + 110]);
        // One block's payload plus headers (the walk reads 16 bytes per block
        // header; the table path reads the table and the end record).
        assert!(
            read < 4096 + 2 * 16 * 40 + 400,
            "table {table}: read {read}"
        );
        let (_, read2) = range(&a, 4000, Some(200)).unwrap();
        assert!(
            read2 < 2 * 4096 + 2 * 16 * 40 + 400,
            "table {table}: read {read2}"
        );
    }
}

#[test]
fn ranges_cross_concatenated_archives_with_and_without_tables() {
    let x = data(9000);
    let y: Vec<u8> = data(7000).iter().map(|b| b.wrapping_add(1)).collect();
    let both = [&x[..], &y[..]].concat();
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        let a = [
            archive(&x, Model::Order2, 4096, ta),
            archive(&y, Model::Store, 4096, tb),
        ]
        .concat();
        for (start, len) in [
            (8000, Some(2000)),
            (0, None),
            (9000, Some(7000)),
            (8999, Some(1)),
            (12000, None),
        ] {
            let (got, _) = range(&a, start, len).unwrap();
            let end = len.map_or(both.len(), |l| (start + l) as usize);
            assert!(
                got == both[start as usize..end],
                "{start} {len:?} {ta} {tb}"
            );
        }
        assert_eq!(sep::content_length(&mut Cursor::new(&a)).unwrap(), 16_000);
    }
}

#[test]
fn a_damaged_seek_table_is_an_error_not_a_panic() {
    let content = data(20_000);
    let a = archive(&content, Model::Order2, 4096, true);
    let plain = archive(&content, Model::Order2, 4096, false).len();
    // Every single-byte change inside the table is detected by the sequential
    // decoder, and never panics the random-access one.
    for at in plain..a.len() {
        let mut bad = a.clone();
        bad[at] ^= 0x20;
        let e = sep::decompress(&bad).expect_err("a damaged table");
        assert!(e.is_corrupt(), "byte {at}: {e}");
        let _ = range(&bad, 5000, Some(100));
        let _ = sep::content_length(&mut Cursor::new(&bad));
    }
    // A table whose entries lie (checksum recomputed) is caught by the decoder.
    let mut entries = parse_seek_table(&a[plain..], 4096, 3).unwrap();
    entries[0].block_len += 1;
    entries[1].block_len -= 1;
    let lying = [&a[..plain], &write_seek_table(&entries)[..]].concat();
    let e = sep::decompress(&lying).unwrap_err();
    assert!(e.to_string().contains("entries do not match"), "{e}");
    // A table missing its footer, or cut short.
    let e = sep::decompress(&a[..a.len() - 1]).unwrap_err();
    assert!(matches!(e, Error::Truncated { .. }), "{e}");
    let e = sep::decompress(&[&a[..plain], &SEEK_MAGIC[..]].concat()).unwrap_err();
    assert!(matches!(e, Error::Truncated { .. }), "{e}");
    // A table with the wrong number of entries: one too few reads as truncated,
    // one too many as a wrong footer.
    let short = write_seek_table(&entries[..entries.len() - 1]);
    let e = sep::decompress(&[&a[..plain], &short[..]].concat()).unwrap_err();
    assert!(matches!(e, Error::Truncated { .. }), "{e}");
    let long = write_seek_table(&[&entries[..], &entries[..1]].concat());
    let e = sep::decompress(&[&a[..plain], &long[..]].concat()).unwrap_err();
    assert!(matches!(e, Error::SeekTable { .. }), "{e}");
}
