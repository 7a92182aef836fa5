//! Issue 14: what a hostile archive or caller may cost, and how strict the decoder is.
//! Thread counts are clamped; short blocks in the middle of an archive and bytes a
//! range decoder never reads are rejected; output and work limits stop a decoder
//! before it does what it was not allowed to.

use sep::{Decoder, Error, Model, Options};
use std::io::Read;

fn text(n: usize) -> Vec<u8> {
    b"It was the best of times, it was the worst of times; "
        .iter()
        .cycle()
        .take(n)
        .copied()
        .collect()
}

fn decode_with(
    archive: &[u8],
    f: impl FnOnce(Decoder<&[u8]>) -> Decoder<&[u8]>,
) -> sep::Result<Vec<u8>> {
    let mut out = Vec::new();
    f(Decoder::new(archive)?)
        .read_to_end(&mut out)
        .map_err(Error::from_io)?;
    Ok(out)
}

#[test]
fn absurd_thread_counts_are_clamped_not_allocated() {
    let data = text(5000);
    for threads in [sep::MAX_THREADS + 1, 100_000_000, usize::MAX] {
        let options = Options {
            model: Model::Order2,
            block_size: Some(1000),
            threads,
            ..Options::default()
        };
        let archive = sep::compress(&data, &options).expect("compress");
        let back = decode_with(&archive, |d| d.with_threads(threads)).expect("decode");
        assert_eq!(back, data, "-T {threads}");
    }
}
