//! The block pipeline seen from the library's API: archives and decoded
//! bytes are the same for every thread count and for the pipeline on or off
//! (batch mode); errors come after the bytes before them; a failing writer
//! is an error, not a hang; dropping an encoder or decoder mid-way stops its
//! workers at once, even in the middle of a block that would take minutes.

mod common;
use common::{corpus_set, noise, round_trip, tiny_hybrid, tiny_mix, tiny_neural};
use sep::format::{BlockHeader, BlockType, EndRecord, Record};
use sep::{Decoder, Encoder, Error, Model, Options};
use std::io::{self, Read, Write};
use std::sync::mpsc;
use std::time::Duration;

/// The first `len` bytes of the quick set, concatenated (text, code, binary).
fn sample(len: usize) -> Vec<u8> {
    corpus_set("quick")
        .into_iter()
        .flat_map(|(_, d)| d)
        .take(len)
        .collect()
}

/// Runs `f` on a thread and fails if it has not returned after two minutes:
/// a hang detector for work that takes well under a second, not a timing test.
fn without_hanging<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let t = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(v) => {
            t.join().expect("no panic");
            v
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: hung"),
        Err(mpsc::RecvTimeoutError::Disconnected) => match t.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => unreachable!("the result was sent"),
        },
    }
}

fn with(threads: usize, pipeline: bool, o: &Options) -> Options {
    Options {
        threads,
        pipeline,
        ..o.clone()
    }
}

/// Decodes `archive` with a decoder of `threads` and `pipeline`, in reads of
/// 1000 bytes; returns the bytes before the first error, and the error.
fn decode(archive: &[u8], threads: usize, pipeline: bool) -> (Vec<u8>, Option<Error>) {
    let mut dec = match Decoder::new(archive) {
        Ok(d) => d.with_threads(threads).with_pipeline(pipeline),
        Err(e) => return (Vec::new(), Some(e)),
    };
    let (mut out, mut buf) = (Vec::new(), [0u8; 1000]);
    loop {
        match dec.read(&mut buf) {
            Ok(0) => return (out, None),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) => return (out, Some(Error::from_io(e))),
        }
    }
}

/// Compresses with every thread count 1..=3, pipeline on and off, requires
/// one archive, and decodes it every way.
fn same_archive_every_way(name: &str, data: &[u8], o: &Options) -> Vec<u8> {
    let reference = round_trip(data, &with(1, true, o));
    for threads in 1..=3 {
        for pipeline in [true, false] {
            let a = sep::compress(data, &with(threads, pipeline, o)).unwrap();
            assert!(
                a == reference,
                "{name}: -T{threads} pipeline {pipeline} changes the archive"
            );
            let (back, err) = decode(&reference, threads, pipeline);
            assert!(err.is_none(), "{name}: {err:?}");
            assert!(
                back == data,
                "{name}: decoding with -T{threads} pipeline {pipeline}"
            );
        }
    }
    reference
}

#[test]
fn every_model_gives_one_archive_for_any_threads_and_schedule() {
    let cases: [(&str, Model, usize, u32); 5] = [
        ("order2", Model::Order2, 300_000, 16 << 10),
        ("store", Model::Store, 50_000, 4 << 10),
        ("neural", tiny_neural(), 16_000, 4000),
        ("mix", tiny_mix(), 40_000, 10_000),
        ("mix + network", tiny_hybrid(), 12_000, 3000),
    ];
    for (name, model, len, block) in cases {
        let data = sample(len);
        let o = Options {
            model,
            block_size: Some(block),
            small_blocks: true,
            ..Options::default()
        };
        let archive = same_archive_every_way(name, &data, &o);
        let blocks = sep::inspect(&archive[..]).unwrap()[0].blocks;
        assert!(blocks >= 4, "{name}: only {blocks} blocks");
    }
}

#[test]
fn the_default_model_gives_one_archive_for_any_threads_and_schedule() {
    let data = sample(12_000);
    let o = Options {
        block_size: Some(4000),
        small_blocks: true,
        ..Options::default()
    };
    same_archive_every_way("default", &data, &o);
}

/// A network big enough that its kernels split work between threads (width
/// 128), so that fewer blocks than threads run intra-op.
fn wide_neural() -> Model {
    Model::Neural(sep::neural::NeuralConfig {
        backbone: sep::neural::BackboneConfig::Pac(sep::neural::PacConfig {
            context: 8,
            embed: 16,
            ffn: 128,
            pairs: 2,
            cache: true,
        }),
        streams: 16,
        min_stream_len: 16,
        adam: sep::neural::AdamConfig::default(),
    })
}

#[test]
fn fewer_blocks_than_threads_give_the_same_archive() {
    // Two blocks: with -T3 and -T4 the spare threads go to the kernels.
    let data = sample(8192);
    let o = Options {
        model: wide_neural(),
        block_size: Some(4096),
        ..Options::default()
    };
    let reference = sep::compress(&data, &with(1, true, &o)).unwrap();
    for (threads, pipeline) in [(2, true), (3, true), (4, true), (4, false)] {
        let a = sep::compress(&data, &with(threads, pipeline, &o)).unwrap();
        assert!(a == reference, "-T{threads} pipeline {pipeline}");
        let (back, err) = decode(&reference, threads, pipeline);
        assert!(err.is_none() && back == data, "decoding with -T{threads}");
    }
    // One block, all threads to the kernels.
    let one = Options {
        block_size: None,
        ..o
    };
    let a1 = sep::compress(&data[..4096], &with(1, true, &one)).unwrap();
    let a3 = sep::compress(&data[..4096], &with(3, true, &one)).unwrap();
    assert!(a1 == a3, "one block, -T1 vs -T3");
}

/// Offsets of each block's first payload byte, walking the block headers.
fn payload_offsets(archive: &[u8]) -> Vec<usize> {
    let mut r = archive;
    let header = sep::read_header(&mut r).unwrap();
    let mut offsets = Vec::new();
    while let Record::Block(bh) = Record::read(&mut r, &header).unwrap() {
        offsets.push(archive.len() - r.len());
        r = &r[bh.payload_len as usize..];
    }
    offsets
}

#[test]
fn an_error_comes_after_every_byte_before_it() {
    let data = sample(5 * 4096);
    let o = Options {
        model: Model::Order2,
        block_size: Some(4096),
        ..Options::default()
    };
    let archive = sep::compress(&data, &o).unwrap();
    let at = payload_offsets(&archive);
    assert_eq!(at.len(), 5);
    // A payload byte of block 3 flipped: blocks 0-2 decode, then block 3
    // fails its checksum (or its stream decodes to something else).
    let mut corrupt = archive.clone();
    corrupt[at[3] + 5] ^= 0x40;
    // The archive cut inside block 4's payload.
    let truncated = &archive[..at[4] + 3];
    for threads in 1..=3 {
        for pipeline in [true, false] {
            let (got, err) = decode(&corrupt, threads, pipeline);
            assert_eq!(got.len(), 3 * 4096, "-T{threads} pipeline {pipeline}");
            assert!(got == data[..3 * 4096]);
            assert!(
                matches!(err, Some(Error::BlockChecksum { index: 3, .. })),
                "{err:?}"
            );
            let (got, err) = decode(truncated, threads, pipeline);
            assert!(got == data[..4 * 4096], "-T{threads} pipeline {pipeline}");
            assert!(matches!(err, Some(Error::Truncated { .. })), "{err:?}");
        }
    }
}

/// A writer that fails once it has taken `limit` bytes.
#[derive(Debug)]
struct FailAfter {
    limit: usize,
    written: usize,
}

impl Write for FailAfter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written >= self.limit {
            return Err(io::Error::other("disk full"));
        }
        let n = buf.len().min(self.limit - self.written);
        self.written += n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_failing_writer_is_an_error_not_a_hang() {
    let data = sample(200_000);
    for threads in 1..=3 {
        for pipeline in [true, false] {
            for limit in [10, 100, 20_000] {
                let data = data.clone();
                let err = without_hanging("failing writer", move || {
                    let o = Options {
                        model: Model::Order2,
                        block_size: Some(8192),
                        threads,
                        pipeline,
                        ..Options::default()
                    };
                    let w = FailAfter { limit, written: 0 };
                    let mut enc = match Encoder::new(w, &o) {
                        Ok(e) => e,
                        Err(e) => return e.to_string(),
                    };
                    let err = match enc.write_all(&data) {
                        Ok(()) => enc.finish().expect_err("the writer failed"),
                        Err(e) => {
                            // Later calls fail too, without waiting.
                            assert!(enc.write(b"more").is_err());
                            assert!(enc.flush().is_err());
                            assert!(enc.finish().is_err());
                            Error::from_io(e)
                        }
                    };
                    err.to_string()
                });
                assert!(
                    err.contains("disk full") || err.contains("earlier write failed"),
                    "-T{threads} pipeline {pipeline} limit {limit}: {err}"
                );
            }
        }
    }
}

/// The slow model for the drop tests: the `default` neural preset, which
/// codes well under 1 MB/s, so a block of 4 MiB takes minutes unless
/// cancelled.
fn slow() -> Options {
    Options {
        model: Model::preset(sep::Preset::Default),
        block_size: Some(4 << 20),
        ..Options::default()
    }
}

#[test]
fn dropping_an_encoder_mid_block_stops_its_workers() {
    for (threads, pipeline) in [(1, true), (2, true), (2, false)] {
        without_hanging("dropping an encoder", move || {
            let o = with(threads, pipeline, &slow());
            let mut enc = Encoder::new(Vec::new(), &o).unwrap();
            // One full block (now being coded) and part of the next.
            let data = noise(o.block_size.unwrap() as usize + 1000, 3);
            enc.write_all(&data).unwrap();
            drop(enc.abandon());
        });
        // A plain drop stops them too; in a debug build it then fails the
        // "dropped without finish()" assertion (the workers are already gone).
        without_hanging("dropping an encoder", move || {
            let o = with(threads, pipeline, &slow());
            let mut enc = Encoder::new(Vec::new(), &o).unwrap();
            let data = noise(o.block_size.unwrap() as usize + 1000, 3);
            enc.write_all(&data).unwrap();
            let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(enc)));
            assert_eq!(dropped.is_err(), cfg!(debug_assertions));
        });
    }
}

#[test]
fn dropping_a_decoder_mid_archive_stops_its_workers() {
    // A stored block, then a modelled one of 4 MiB in one stream (garbage:
    // the decoder still runs the network over every byte, for hours).
    let (header, _) = slow().header().unwrap();
    let block = header.block_size;
    let mut archive = header.to_bytes();
    let first = noise(1000, 5);
    let stored = BlockHeader {
        block_type: BlockType::Stored,
        raw_len: first.len() as u32,
        payload_len: first.len() as u32,
        raw_check: sep::format::raw_check(&first),
        stream_lens: vec![],
    };
    stored.write_to(&mut archive, header.version).unwrap();
    archive.extend_from_slice(&first);
    let slow_block = BlockHeader {
        block_type: BlockType::Modelled,
        raw_len: block,
        payload_len: 8,
        raw_check: 0,
        stream_lens: vec![8],
    };
    slow_block.write_to(&mut archive, header.version).unwrap();
    archive.extend_from_slice(&[0x5A; 8]);
    let end = EndRecord {
        content_length: u64::from(block) + 1000,
        content_check: 0,
    };
    archive.extend_from_slice(&end.to_bytes(header.version));
    for (threads, pipeline) in [(1, true), (2, true), (3, false)] {
        let archive = archive.clone();
        let first = first.clone();
        without_hanging("dropping a decoder", move || {
            let mut dec = Decoder::new(&archive[..])
                .unwrap()
                .with_threads(threads)
                .with_pipeline(pipeline);
            let mut buf = vec![0u8; first.len()];
            dec.read_exact(&mut buf).unwrap();
            assert_eq!(buf, first);
            // The next block is being decoded now; stop.
            drop(dec);
        });
    }
}
