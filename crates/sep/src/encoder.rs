//! [`Encoder`]: a `Write` adapter that compresses into an archive.

use crate::codec::{Model, ModelConfig};
use crate::error::{Error, Result};
use crate::format::{
    BlockHeader, BlockType, END_RECORD_LEN, EndRecord, Header, MAX_BLOCK_SIZE, raw_check,
};
use crate::pipeline::{Cancel, Pipeline};
use std::io::{self, Write};
use xxhash_rust::xxh3::Xxh3;

/// The thread count for a requested `threads`: itself, or one per core for 0
/// (see [`Options::threads`]).
pub(crate) fn resolve_threads(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        threads
    }
}

/// The smallest [`Options::block_size`] an encoder accepts (4 KiB), unless
/// [`Options::small_blocks`] is set.
///
/// Every block pays for itself: a 16-byte block header (stored) or 18-21
/// bytes for one stream (modelled: the header, the stream count and lengths), the range
/// coder's final bytes, and a model that starts from nothing, since blocks
/// are independent (doc/FORMAT.md section 3). Measured with `sep -c -T1
/// -m order2`: `cantrbry.xargs.1` (4,227 bytes) is 71,929 bytes in blocks of
/// 1 byte (17x), 8,507 in blocks of 16 and 3,012 in blocks of 256; 40 KiB of
/// random bytes in blocks of 4 KiB is 41,190 bytes against 41,046 as one
/// block (16 bytes a block). At 4 KiB the header is at most 0.4% of a block,
/// so no input grows by more than that; the fresh model still costs more
/// (`calgary.paper1`, 53,161 bytes: 23,769 bytes in 4 KiB blocks against
/// 19,394 in 64 KiB ones with order2, 21,273 against 14,023 with the default
/// mix), which is why the default blocks are 16 MiB. Smaller blocks are valid
/// format v1 and every decoder reads them.
pub const MIN_BLOCK_SIZE: u32 = 4096;

/// How to compress.
///
/// ```
/// // The `fast` context-mixing preset, one thread per core, 1 MiB blocks:
/// let options = sep::Options {
///     model: sep::Model::mix_preset(sep::Preset::Fast),
///     threads: 0,
///     block_size: Some(1 << 20),
///     ..sep::Options::default()
/// };
/// let data = b"a preset and threads, a preset and threads".repeat(100);
/// let archive = sep::compress(&data, &options)?;
/// // The archive does not depend on the thread count.
/// let one = sep::compress(&data, &sep::Options { threads: 1, ..options.clone() })?;
/// assert_eq!(archive, one);
/// # Ok::<(), sep::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The model.
    pub model: Model,
    /// Raw bytes per independent block, [`MIN_BLOCK_SIZE`]`..=2^30`; `None`
    /// picks the model's default (16 MiB), shrunk to the content length
    /// when that is known. Other sizes are refused with
    /// [`Error::BlockSize`].
    pub block_size: Option<u32>,
    /// Accept a `block_size` below [`MIN_BLOCK_SIZE`] (down to 1 byte). Such
    /// archives are valid and decode, but grow: each block costs its header
    /// and a fresh model. For tests and format experiments that want many
    /// blocks out of a small input; `false` by default.
    pub small_blocks: bool,
    /// The thread budget: blocks coded at once, and, while fewer blocks than
    /// this are being coded, threads for the kernels of a network (the
    /// process-wide `sep_kernels::set_num_threads`). The archive is identical
    /// for every value. Values over [`MAX_THREADS`](crate::MAX_THREADS) are clamped.
    ///
    /// The rule, the same for the library and the command line: the number
    /// given is the number used, and `0` means one per core
    /// ([`std::thread::available_parallelism`]), which is what the command
    /// line's default `-T 0` passes. [`Options::default`] asks for 1, because
    /// a library should not take every core of the program that embeds it
    /// unasked, and because each thread coding a block holds a model of its
    /// own (112 MiB for the `default` preset); set `threads: 0` to get the
    /// command line's behaviour. [`Decoder::with_threads`](crate::Decoder::with_threads)
    /// follows the same rule.
    pub threads: usize,
    /// Run the block pipeline (the default): workers code blocks while the
    /// caller reads and writes. `false` codes `threads` blocks at a time and
    /// writes them all before taking more input (batch mode, to measure what
    /// the pipeline buys). The archive is the same either way.
    pub pipeline: bool,
    /// Seed of the model's pseudo-random generators, stored in the header.
    pub seed: u64,
    /// The exact input length, when known: stored in the header, and
    /// checked by [`Encoder::finish`].
    pub content_length: Option<u64>,
    /// Look for segments to transform (JPEG, deflate streams, x86 code; issue
    /// 17, doc/FORMAT.md section 8) and write a segmented block where that
    /// is smaller; `true` by default. `false` writes the archive sep wrote
    /// before transforms existed, for measuring what they buy (command line:
    /// `--no-transforms`).
    pub transforms: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            model: Model::default(),
            block_size: None,
            small_blocks: false,
            threads: 1,
            pipeline: true,
            seed: 0,
            content_length: None,
            transforms: true,
        }
    }
}

impl Options {
    /// The smallest `block_size` these options accept: [`MIN_BLOCK_SIZE`],
    /// or 1 with [`small_blocks`](Self::small_blocks).
    pub fn min_block_size(&self) -> u32 {
        if self.small_blocks { 1 } else { MIN_BLOCK_SIZE }
    }

    /// The block size these options lead to.
    pub fn effective_block_size(&self) -> Result<u32> {
        match self.block_size {
            Some(b) if b < self.min_block_size() || b > MAX_BLOCK_SIZE => Err(Error::BlockSize {
                value: b,
                min: self.min_block_size(),
                max: MAX_BLOCK_SIZE,
            }),
            Some(b) => Ok(b),
            None => {
                let default = self.model.default_block_size();
                Ok(self
                    .content_length
                    .map_or(default, |n| n.clamp(1, default.into()) as u32))
            }
        }
    }

    /// The header an encoder with these options writes.
    pub fn header(&self) -> Result<(Header, ModelConfig)> {
        let block_size = self.effective_block_size()?;
        let config = self.model.configure(block_size);
        let (streams, context, params) = config.header_fields();
        let header = Header {
            content_length: self.content_length,
            block_size,
            seed: self.seed,
            streams,
            context,
            model_id: config.id(),
            params,
        };
        // Never write an archive the decoder would refuse.
        ModelConfig::from_header(&header)
            .map_err(|e| Error::InvalidOption(format!("model {}: {e}", config.describe())))?;
        Ok((header, config))
    }
}

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
    /// Asserts, on drop, that the encoder was finished (see "Finishing").
    guard: FinishGuard,
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
        let transforms = options.transforms;
        let pipeline = Pipeline::new(
            threads,
            options.pipeline,
            move |mut raw: Vec<u8>, cancel: &Cancel| {
                code_block(&config, seed, transforms, &mut raw, cancel)
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
            guard: FinishGuard { armed: true },
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

    fn write_block(&mut self, coded: Coded) -> Result<()> {
        let written = coded.write_to(&mut self.out);
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
        self.out.write_all(&end.to_bytes())?;
        self.out.flush()?;
        let total = self.total_out + END_RECORD_LEN as u64;
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

/// How much of a block the probe codes: 1/64 of it, 4 KiB to 64 KiB.
fn probe_len(block_len: usize) -> usize {
    (block_len / 64).clamp(4 << 10, 64 << 10)
}

/// Early give-up on incompressible data: codes the first [`probe_len`]
/// bytes of a block of at least [`PROBE_MIN_BLOCK`] bytes with a fresh model
/// (as the block itself would start) and says whether they failed to shrink
/// by 1/64. Such a block is then stored without modelling the rest: random
/// or already-compressed data costs 1/64 of the model's time instead of all
/// of it. The decision depends only on the block's bytes and the model, so
/// the archive stays the same for every thread count; stored blocks are
/// format v1 (doc/FORMAT.md section 3.1), so any decoder reads the result.
/// A compressible block pays for the probe: at most 1/64 more work, and a
/// block whose start looks random but whose rest would shrink is stored
/// (crates/sep/tests/api.rs shows one). Measured (`sep -c -T1`, default
/// preset, 2026-12-01): 1 MB of random bytes 5.36 s -> 0.08 s CPU (best of
/// 3), archive 1,000,098 bytes both; the 17 files of the bench set code to
/// the same sizes as before, in 80.4 s CPU against 82.5 s (noise of a shared
/// machine).
///
/// The probe runs with a quiet [`Cancel`] (it stops when the block's work
/// is cancelled, but its bytes do not count as progress: the block is coded
/// again, or stored, after it).
fn looks_incompressible(config: &ModelConfig, seed: u64, raw: &[u8], cancel: &Cancel) -> bool {
    if raw.len() < PROBE_MIN_BLOCK || matches!(config, ModelConfig::Store) {
        return false;
    }
    let mut probe = raw[..probe_len(raw.len())].to_vec();
    match config.encode_block(seed, &mut probe, &cancel.quiet()) {
        Some(streams) => {
            let coded: usize = streams.iter().map(Vec::len).sum();
            coded >= probe.len() - probe.len() / 64
        }
        None => false,
    }
}

/// One block, coded: stored when the model would not make it smaller, or
/// when its start shows it incompressible ([`looks_incompressible`]). `raw`
/// is left as it is (and kept, as the payload of a stored block); the result
/// is garbage once `cancel` is set. `transforms`: try a segmented block too.
fn code_block(
    config: &ModelConfig,
    seed: u64,
    transforms: bool,
    raw: &mut Vec<u8>,
    cancel: &Cancel,
) -> Coded {
    let raw_len = raw.len() as u32;
    let check = raw_check(raw);
    let stored = BlockHeader {
        block_type: BlockType::Stored,
        raw_len,
        payload_len: raw_len,
        raw_check: check,
        stream_lens: vec![],
    };
    // Issue 17: a segmented block (doc/FORMAT.md section 8) when a transform
    // applies and it comes out smaller than the alternatives. It runs with a
    // quiet Cancel (stops when asked, counts no progress): the block's own
    // coding below counts it.
    let segmented = transforms
        .then(|| crate::segment::encode(config, seed, raw, &cancel.quiet()))
        .flatten()
        .map(|(payload, dense)| {
            let bh = BlockHeader {
                block_type: BlockType::Segmented,
                raw_len,
                payload_len: payload.len() as u32,
                raw_check: check,
                stream_lens: vec![],
            };
            (
                bh.encoded_len() + payload.len(),
                header_bytes(&bh),
                payload,
                dense,
            )
        });
    // Coding the block untransformed as well (to keep the smaller) doubles
    // the model's work. It is skipped when the segmented block is at most 7/8
    // of the entropy-coded bytes its transforms decoded (JPEG, compressed
    // deflate): the plain coding could only win by shrinking those bytes by
    // more than 1/8 even if it coded everything else for free, which a
    // byte-level model does not do on such data. Deterministic: it depends
    // only on the block's bytes and the model. Measured in doc/TRANSFORMS.md
    // (section "Coding twice").
    if let Some((seg_len, _, _, dense)) = &segmented
        && segmented_suffices(*seg_len, *dense)
    {
        cancel.advance(raw.len() as u64);
        let (_, header, payload, _) = segmented.expect("checked above");
        return Coded {
            header,
            streams: vec![payload],
            raw: std::mem::take(raw),
        };
    }
    let best =
        |len: usize, header: Vec<u8>, streams: Vec<Vec<u8>>, raw: &mut Vec<u8>| match segmented {
            Some((seg_len, seg_header, payload, _)) if seg_len < len => Coded {
                header: seg_header,
                streams: vec![payload],
                raw: std::mem::take(raw),
            },
            _ => Coded {
                header,
                streams,
                raw: std::mem::take(raw),
            },
        };
    let modelled = if looks_incompressible(config, seed, raw, cancel) {
        None
    } else {
        config.encode_block(seed, raw, cancel)
    };
    if modelled.is_none() {
        // Stored: nothing more to code, the block is done all the same.
        cancel.advance(raw.len() as u64);
    }
    if let Some(streams) = modelled {
        let payload_len: usize = streams.iter().map(Vec::len).sum();
        let modelled = BlockHeader {
            block_type: BlockType::Modelled,
            raw_len,
            payload_len: payload_len as u32,
            raw_check: check,
            stream_lens: streams.iter().map(|s| s.len() as u32).collect(),
        };
        let len = modelled.encoded_len() + payload_len;
        if len < stored.encoded_len() + raw.len() {
            return best(len, header_bytes(&modelled), streams, raw);
        }
    }
    best(
        stored.encoded_len() + raw.len(),
        header_bytes(&stored),
        Vec::new(),
        raw,
    )
}

/// Whether a segmented block of `seg_len` bytes (header included) whose
/// transforms decoded `dense` bytes of entropy-coded data is kept without
/// also coding the block untransformed: at most 7/8 of `dense` (see
/// `code_block`).
fn segmented_suffices(seg_len: usize, dense: u64) -> bool {
    (seg_len as u64).saturating_mul(8) <= dense.saturating_mul(7)
}

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
        ..header.clone()
    }
}

fn header_bytes(bh: &BlockHeader) -> Vec<u8> {
    let mut out = Vec::with_capacity(bh.encoded_len());
    bh.write_to(&mut out).expect("writing to a Vec cannot fail");
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
mod tests {
    use super::*;

    fn repo_file(path: &str) -> Vec<u8> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        std::fs::read(dir.join(path)).expect("a file of the repository")
    }

    #[test]
    fn untransformed_coding_is_skipped_only_for_dense_segments() {
        let (_, config) = Options::default().header().expect("default header");
        let cancel = Cancel::default();
        // A photo: lepton's payload is about 4/5 of the JPEG, so the block is
        // not coded a second time as it is.
        let jpeg = repo_file("tests/corpus/files/snappy.fireworks.jpeg");
        let (payload, dense) =
            crate::segment::encode(&config, 0, &jpeg, &cancel).expect("jpeg segment");
        assert_eq!(dense, jpeg.len() as u64);
        assert!(segmented_suffices(payload.len() + 16, dense));
        // A small JPEG's lepton payload (2969 of 3399 bytes) is not: both
        // codings are compared.
        let small = repo_file("tests/golden/inputs/fireworks.crop128x96.jpg");
        let (payload, dense) =
            crate::segment::encode(&config, 0, &small, &cancel).expect("jpeg segment");
        assert!(!segmented_suffices(payload.len() + 16, dense));
        // x86 code holds no entropy-coded data: both codings are compared.
        let x86 = repo_file("tests/golden/inputs/x86.text16k");
        let (payload, dense) =
            crate::segment::encode(&config, 0, &x86, &cancel).expect("x86 segment");
        assert_eq!(dense, 0);
        assert!(!segmented_suffices(payload.len(), dense));
        // The rule itself: at most 7/8 of the dense bytes.
        assert!(segmented_suffices(700, 800));
        assert!(!segmented_suffices(701, 800));
        // The chosen block decodes to the input either way.
        for data in [&jpeg, &small, &x86] {
            let a = crate::compress(data, &Options::default()).expect("compress");
            assert_eq!(&crate::decompress(&a).expect("decompress"), data);
        }
    }
}
