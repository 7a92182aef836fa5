//! The library's API contracts a caller relies on: errors keep their variant
//! through `?`, an unfinished encoder cannot go unnoticed, `finish` flushes,
//! and a wrong declared length reports the real one.

mod common;
use common::noise;
use sep::{Error, Model, Options};
use std::io::{Read, Write};

/// A two-block order2 archive whose second block's payload has a flipped bit
/// stored (noise, so the block is stored and the flip is a checksum error).
fn corrupt_archive() -> Vec<u8> {
    let mut archive = good_archive();
    let n = archive.len();
    // The end record is 24 bytes (doc/FORMAT.md); the byte before it is the
    // stored block's last payload byte.
    archive[n - 24 - 1] ^= 0x10;
    archive
}

fn good_archive() -> Vec<u8> {
    let data = [b"abcabcabc".repeat(100), noise(900, 5)].concat();
    let options = Options {
        model: Model::Order2,
        block_size: Some(900),
        ..Options::default()
    };
    sep::compress(&data, &options).unwrap()
}

fn read_all_with_question_mark(archive: &[u8]) -> sep::Result<Vec<u8>> {
    let mut out = Vec::new();
    sep::Decoder::new(archive)?.read_to_end(&mut out)?;
    Ok(out)
}

#[test]
fn decoder_read_errors_keep_their_variant_through_question_mark() {
    let archive = corrupt_archive();
    let err = read_all_with_question_mark(&archive).unwrap_err();
    assert!(
        matches!(err, Error::BlockChecksum { index: 1, .. }),
        "got {err:?}"
    );
    assert!(err.is_corrupt());
    // The same through From, for any io::Error the library made.
    let io_err = sep::Decoder::new(&archive[..])
        .unwrap()
        .read_to_end(&mut Vec::new())
        .unwrap_err();
    assert!(matches!(Error::from(io_err), Error::BlockChecksum { .. }));
    // A truncated archive is still Truncated, not Io.
    let good = good_archive();
    assert!(read_all_with_question_mark(&good).is_ok());
    let cut = &good[..good.len() - 3];
    let err = read_all_with_question_mark(cut).unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "got {err:?}");
    assert!(err.is_corrupt());
}

#[test]
fn foreign_io_errors_stay_io_and_not_corrupt() {
    let e: Error = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "nope").into();
    assert!(matches!(e, Error::Io(_)));
    assert!(!e.is_corrupt());
}

#[test]
fn too_long_input_reports_the_real_length() {
    let data = noise(35_149, 1);
    let options = Options {
        model: Model::Order2,
        content_length: Some(10),
        ..Options::default()
    };
    let mut enc = sep::Encoder::new(Vec::new(), &options).unwrap();
    // As io::copy feeds it: 8 KiB writes.
    for chunk in data.chunks(8192) {
        enc.write_all(chunk).unwrap();
    }
    let err = enc.finish().unwrap_err();
    assert!(
        matches!(
            err,
            Error::InputLength {
                declared: 10,
                found: 35_149
            }
        ),
        "got {err:?}"
    );
    assert_eq!(
        err.to_string(),
        "input was 35149 bytes but 10 were declared"
    );
    // Through io::copy and `?`, too.
    let mut enc = sep::Encoder::new(Vec::new(), &options).unwrap();
    std::io::copy(&mut &data[..], &mut enc).unwrap();
    assert_eq!(
        enc.finish().unwrap_err().to_string(),
        "input was 35149 bytes but 10 were declared"
    );
}

/// A writer that counts flushes and keeps what is flushed apart from what is
/// only buffered.
#[derive(Default)]
struct Buffered {
    pending: Vec<u8>,
    flushed: Vec<u8>,
}

impl Write for Buffered {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.flushed.append(&mut self.pending);
        Ok(())
    }
}

#[test]
fn finish_returns_the_writer_flushed() {
    let data = b"flush me, flush me, flush me".repeat(20);
    let mut enc = sep::Encoder::new(Buffered::default(), &Options::default()).unwrap();
    enc.write_all(&data).unwrap();
    let w = enc.finish().unwrap();
    assert!(
        w.pending.is_empty(),
        "{} bytes not flushed",
        w.pending.len()
    );
    assert_eq!(sep::decompress(&w.flushed).unwrap(), data);
}

#[test]
fn abandoned_encoder_leaves_an_archive_no_decoder_accepts() {
    let mut enc = sep::Encoder::new(Vec::new(), &Options::default()).unwrap();
    enc.write_all(b"some input that will never be finished")
        .unwrap();
    let partial = enc.abandon();
    let err = sep::decompress(&partial).unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "got {err:?}");
}

#[test]
fn encoder_that_returned_an_error_may_be_dropped() {
    // finish() failed (wrong length): the caller knows; no assertion on drop.
    let options = Options {
        content_length: Some(3),
        ..Options::default()
    };
    let enc = sep::Encoder::new(Vec::new(), &options).unwrap();
    assert!(enc.finish().is_err());
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "dropped without finish()")]
fn dropping_an_unfinished_encoder_asserts_in_debug_builds() {
    let mut enc = sep::Encoder::new(Vec::new(), &Options::default()).unwrap();
    enc.write_all(b"forgotten").unwrap();
    drop(enc);
}
