//! [`Encoder`]: a `Write` adapter that compresses into an archive.

use crate::codec::ModelConfig;
use crate::error::{Error, Result};
use crate::format::{
    BlockHeader, BlockType, EndRecord, Header, SeekEntry, raw_check, write_seek_table,
};
use crate::pipeline::{Cancel, Pipeline};
use crate::stats::EncodeStats;
use std::io::{self, Write};
use std::time::Instant;
use xxhash_rust::xxh3::Xxh3;

mod block;
mod options;
use block::*;
pub(crate) use options::resolve_threads;
pub use options::{MIN_BLOCK_SIZE, Options};

/// Compresses everything written to it into an archive on `W`.
///
/// Input is gathered into blocks of `block_size` bytes; each full block goes
/// to a pool of `threads` worker threads (the block pipeline,
/// `crates/sep/src/pipeline.rs`) while the caller goes on writing, and coded
/// blocks are written to `W`, in order, from the caller's thread as they come
/// back. At most `threads + 1` blocks are being coded or wait to be written,
/// plus the one being filled, so memory does not grow with the input.
///
/// # Finishing
///
/// Call [`finish`](Self::finish) (or [`finish_counted`](Self::finish_counted))
/// to code the last block, write the end record and flush the writer. An
/// encoder dropped without it stops its workers and leaves an archive with
/// no end record, which every decoder rejects as truncated; in a debug build
/// the drop also **panics** (a debug assertion), so a forgotten `finish`
/// fails the first test that runs it. To give up on purpose (the input
/// failed, the user cancelled), call [`abandon`](Self::abandon). An encoder
/// that has returned an error, or that is dropped while the thread panics,
/// does not assert.
///
/// Why not finish on drop, as some compressors' writers do: a drop on an
/// error path (the input could not be read to its end) would then write a
/// *valid* archive of part of the input, which decodes without complaint,
/// the worst outcome for a lossless compressor; it would also make a
/// cancelled run wait until the blocks in flight are coded (seconds to
/// minutes with context mixing), and it could only report its own failure
/// by printing from a library. An incomplete archive that no decoder
/// accepts, plus an assertion that catches the bug in development, loses
/// no data silently.
///
/// ```
/// use std::io::Write;
/// let mut enc = sep::Encoder::new(Vec::new(), &sep::Options::default())?;
/// enc.write_all(b"hello hello hello")?;
/// let archive = enc.finish()?;
/// assert_eq!(sep::decompress(&archive)?, b"hello hello hello");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Encoder<W: Write> {
    out: W,
    header: Header,
    threads: usize,
    pipelined: bool,
    block_size: usize,
    /// The block being filled.
    filling: Vec<u8>,
    /// Raw block buffers back from the workers, for reuse.
    free: Vec<Vec<u8>>,
    pipeline: Pipeline<Vec<u8>, Coded>,
    hasher: Xxh3,
    total_in: u64,
    total_out: u64,
    /// The header is in `out` (it waits for the first input byte).
    header_written: bool,
    /// An earlier write to `out` failed: the archive is incomplete.
    failed: bool,
    /// Input bytes past the declared `content_length`: they are counted (so
    /// that [`finish`](Encoder::finish) reports the real input length) but
    /// not coded.
    excess: u64,
    /// Where the workers' time goes (detection, transforms, coding).
    stats: EncodeStats,
    /// Asserts, on drop, that the encoder was finished (see "Finishing").
    guard: FinishGuard,
    /// The seek table's entries, one per block written, when
    /// [`Options::seek_table`] asks for one (doc/FORMAT.md section 12).
    seek: Option<Vec<SeekEntry>>,
}

/// Fires the debug assertion of an encoder dropped unfinished; disarmed by
/// `finish`, `abandon` and any error the encoder returns.
struct FinishGuard {
    armed: bool,
}

impl Drop for FinishGuard {
    fn drop(&mut self) {
        if self.armed && !std::thread::panicking() {
            debug_assert!(
                false,
                "sep::Encoder dropped without finish(): the archive has no end record \
                 (call finish(), or abandon() to discard it on purpose)"
            );
        }
    }
}

/// A block coded by a worker: its block header, then its payload, which is
/// either the coded streams or, for a stored block, the raw bytes themselves
/// (never copied). The raw buffer then goes back for reuse.
struct Coded {
    header: Vec<u8>,
    /// The coded streams; empty for a stored block.
    streams: Vec<Vec<u8>>,
    raw: Vec<u8>,
}

impl Coded {
    /// Whether it is a segmented block (the block type, first header byte).
    fn segmented(&self) -> bool {
        self.header.first() == Some(&crate::segment::SEGMENTED_BLOCK_TYPE)
    }

    fn write_to<W: Write>(&self, w: &mut W) -> io::Result<u64> {
        w.write_all(&self.header)?;
        let mut n = self.header.len();
        if self.streams.is_empty() {
            w.write_all(&self.raw)?;
            n += self.raw.len();
        }
        for s in &self.streams {
            w.write_all(s)?;
            n += s.len();
        }
        Ok(n as u64)
    }
}

impl<W: Write> Encoder<W> {
    /// Returns an encoder ready for input, once the options are checked.
    ///
    /// The header goes to `out` with the first input byte (or at
    /// [`finish`](Self::finish)), because an empty input gets the smallest
    /// archive the format allows instead: the store model's header (no
    /// `params`) and the end record, 66 bytes whatever the model (doc/FORMAT.md
    /// section 3).
    pub fn new(out: W, options: &Options) -> Result<Self> {
        let threads = resolve_threads(options.threads).min(crate::MAX_THREADS);
        let (header, config) = options.header()?;
        let seed = header.seed;
        let version = header.version;
        // With a prior, blocks are coded with it and never segmented.
        let transforms = options.transforms && options.prior.is_none();
        let prior = options.prior.clone();
        let stats = EncodeStats::default();
        let counters = stats.clone();
        let pipeline = Pipeline::new(
            threads,
            options.pipeline,
            move |mut raw: Vec<u8>, cancel: &Cancel| {
                let start = Instant::now();
                let coded = code_block(
                    &config,
                    prior.as_ref(),
                    seed,
                    version,
                    transforms,
                    &mut raw,
                    cancel,
                    &counters,
                );
                counters.block_done(start, coded.segmented());
                coded
            },
        );
        Ok(Encoder {
            out,
            block_size: header.block_size as usize,
            header,
            threads,
            pipelined: options.pipeline,
            filling: Vec::new(),
            free: Vec::new(),
            pipeline,
            hasher: Xxh3::new(),
            total_in: 0,
            total_out: 0,
            header_written: false,
            failed: false,
            excess: 0,
            stats,
            guard: FinishGuard { armed: true },
            seek: options.seek_table.then(Vec::new),
        })
    }

    /// The header these options give an archive with content. (An empty
    /// input's archive has the store model's header instead; see
    /// [`new`](Self::new).)
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Content bytes accepted so far.
    pub fn bytes_in(&self) -> u64 {
        self.total_in
    }

    /// Archive bytes written so far.
    pub fn bytes_out(&self) -> u64 {
        self.total_out
    }

    /// A handle on the content bytes coded so far, to read from another
    /// thread (a progress bar) while this one is busy writing: see
    /// [`Progress`](crate::Progress).
    pub fn progress(&self) -> crate::Progress {
        self.pipeline.progress()
    }

    /// A handle on the time the workers spend detecting segments, running
    /// transforms and coding blocks (issue 17), to read after
    /// [`finish`](Self::finish): see [`EncodeStats`].
    pub fn stats(&self) -> EncodeStats {
        self.stats.clone()
    }

    fn write_block(&mut self, coded: Coded) -> Result<()> {
        let written = coded.write_to(&mut self.out);
        if let (Some(seek), Ok(n)) = (&mut self.seek, &written) {
            seek.push(SeekEntry {
                block_len: *n as u32,
                raw_len: coded.raw.len() as u32,
            });
        }
        if self.free.len() <= self.threads {
            let mut raw = coded.raw;
            raw.clear();
            self.free.push(raw);
        }
        match written {
            Ok(n) => {
                self.total_out += n;
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                Err(e.into())
            }
        }
    }

    /// Hands the block being filled to the workers, first writing as many
    /// coded blocks as the pipeline needs taken.
    fn submit(&mut self) -> Result<()> {
        while self.pipeline.room() == 0 {
            let coded = self.pipeline.next().expect("blocks in flight");
            self.write_block(coded)?;
        }
        let fresh = self.free.pop().unwrap_or_default();
        let block = std::mem::replace(&mut self.filling, fresh);
        self.pipeline.submit(block);
        Ok(())
    }

    /// Writes the coded blocks that are ready, in order, without waiting.
    fn write_ready(&mut self) -> Result<()> {
        if self.pipelined {
            while let Some(coded) = self.pipeline.try_next() {
                self.write_block(coded)?;
            }
        }
        Ok(())
    }

    fn check_failed(&self) -> Result<()> {
        if self.failed {
            return Err(Error::Io(io::Error::other(
                "sep encoder: an earlier write failed",
            )));
        }
        Ok(())
    }

    /// Discards the encoder without finishing the archive: its workers stop,
    /// nothing more is written, and `W` (holding an archive without an end
    /// record, which decoders reject) is returned. Use it when the input
    /// failed or the caller gave up; unlike a plain drop it does not trip the
    /// debug assertion described under "Finishing".
    pub fn abandon(mut self) -> W {
        self.guard.armed = false;
        // Stops the workers before the writer is handed back.
        drop(self.pipeline);
        self.out
    }

    /// Disarms the drop assertion when `r` is an error: the caller has
    /// been told that the archive is incomplete.
    fn note<T>(&mut self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.guard.armed = false;
        }
        r
    }

    /// Writes `header` (the archive's, or an empty input's) unless written.
    fn write_header(&mut self, header: &Header) -> Result<()> {
        if self.header_written {
            return Ok(());
        }
        let bytes = header.to_bytes();
        if let Err(e) = self.out.write_all(&bytes) {
            self.failed = true;
            return Err(e.into());
        }
        self.header_written = true;
        self.total_out += bytes.len() as u64;
        Ok(())
    }

    fn accept(&mut self, buf: &[u8]) -> Result<usize> {
        self.check_failed()?;
        if buf.is_empty() {
            return Ok(0);
        }
        if self.excess > 0
            || self
                .header
                .content_length
                .is_some_and(|declared| self.total_in + buf.len() as u64 > declared)
        {
            // More input than declared: the archive cannot be right, but the
            // error waits for `finish`, which then reports the real length.
            self.excess += buf.len() as u64;
            return Ok(buf.len());
        }
        if !self.header_written {
            let header = self.header.clone();
            self.write_header(&header)?;
        }
        if self.filling.capacity() == 0 {
            // Only now: an encoder that is never written to allocates no block.
            self.filling.reserve_exact(self.block_size);
        }
        let room = self.block_size - self.filling.len();
        let n = buf.len().min(room);
        self.filling.extend_from_slice(&buf[..n]);
        self.hasher.update(&buf[..n]);
        self.total_in += n as u64;
        if self.filling.len() == self.block_size {
            self.submit()?;
        }
        self.write_ready()?;
        Ok(n)
    }

    /// Codes the remaining input, writes the end record, flushes the writer
    /// and returns it.
    ///
    /// Fails with [`Error::InputLength`] when `content_length` was declared
    /// and the input was shorter or longer; the error gives the number of
    /// bytes actually written to the encoder.
    pub fn finish(self) -> Result<W> {
        self.finish_counted().map(|(w, _)| w)
    }

    /// Like [`finish`](Self::finish), also returning the archive's size in
    /// bytes.
    pub fn finish_counted(mut self) -> Result<(W, u64)> {
        // Whatever happens next, the caller learns of it: finished, or an error.
        self.guard.armed = false;
        self.check_failed()?;
        let found = self.total_in + self.excess;
        if let Some(declared) = self.header.content_length
            && declared != found
        {
            return Err(Error::InputLength { declared, found });
        }
        let header = if self.total_in == 0 {
            empty_header(&self.header)
        } else {
            self.header.clone()
        };
        self.write_header(&header)?;
        if !self.filling.is_empty() {
            self.submit()?;
        }
        while let Some(coded) = self.pipeline.next() {
            self.write_block(coded)?;
        }
        let end = EndRecord {
            content_length: self.total_in,
            content_check: self.hasher.digest(),
        };
        let end = end.to_bytes(self.header.version);
        self.out.write_all(&end)?;
        let mut total = self.total_out + end.len() as u64;
        if let Some(entries) = &self.seek {
            let table = write_seek_table(entries);
            self.out.write_all(&table)?;
            total += table.len() as u64;
        }
        self.out.flush()?;
        // Stops the (idle) workers before the writer is handed back.
        drop(self.pipeline);
        Ok((self.out, total))
    }
}

impl<W: Write> Encoder<W> {
    fn flush_typed(&mut self) -> Result<()> {
        self.check_failed()?;
        while let Some(coded) = self.pipeline.next() {
            self.write_block(coded)?;
        }
        Ok(self.out.flush()?)
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let r = self.accept(buf);
        self.note(r).map_err(Error::into_io)
    }

    /// Writes every block handed to the workers so far (waiting for them),
    /// then flushes the underlying writer; input short of a full block stays
    /// buffered (blocks are only cut at `block_size`).
    fn flush(&mut self) -> io::Result<()> {
        let r = self.flush_typed();
        self.note(r).map_err(Error::into_io)
    }
}

/// Blocks shorter than this are never probed (see [`looks_incompressible`]).
const PROBE_MIN_BLOCK: usize = 128 << 10;

/// The header of an empty input's archive: the store model (no `params`),
/// whatever model `header` names, so the archive is 66 bytes, the least
/// format v1 allows (42 bytes of header, 24 of end record). A decoder needs
/// no model for zero blocks, and says "store" when it lists the archive.
fn empty_header(header: &Header) -> Header {
    let (streams, context, params) = ModelConfig::Store.header_fields();
    Header {
        streams,
        context,
        model_id: ModelConfig::Store.id(),
        params,
        prior_id: None,
        ..header.clone()
    }
}

fn header_bytes(bh: &BlockHeader, version: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(bh.encoded_len(version));
    bh.write_to(&mut out, version)
        .expect("writing to a Vec cannot fail");
    out
}

impl<W: Write> std::fmt::Debug for Encoder<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("header", &self.header)
            .field("threads", &self.threads)
            .field("pipelined", &self.pipelined)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
