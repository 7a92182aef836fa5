//! [`Encoder`]: a `Write` adapter that compresses into an archive.

use crate::codec::{Model, ModelConfig};
use crate::error::{Error, Result};
use crate::format::{
    BlockHeader, BlockType, END_RECORD_LEN, EndRecord, Header, MAX_BLOCK_SIZE, raw_check,
};
use crate::pipeline::{Cancel, Pipeline};
use std::io::{self, Write};
use xxhash_rust::xxh3::Xxh3;

/// How to compress.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The model.
    pub model: Model,
    /// Raw bytes per independent block; `None` picks the model's default,
    /// shrunk to the content length when that is known.
    pub block_size: Option<u32>,
    /// The thread budget: blocks coded at once, and, while fewer blocks than
    /// this are being coded, threads for the kernels of a network (the
    /// process-wide `sep_kernels::set_num_threads`). The archive is identical
    /// for every value.
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            model: Model::default(),
            block_size: None,
            threads: 1,
            pipeline: true,
            seed: 0,
            content_length: None,
        }
    }
}

impl Options {
    /// The block size these options lead to.
    pub fn effective_block_size(&self) -> Result<u32> {
        match self.block_size {
            Some(b) if b == 0 || b > MAX_BLOCK_SIZE => Err(Error::InvalidOption(format!(
                "block size {b} is outside 1..=2^30"
            ))),
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
/// plus the one being filled, so memory does not grow with the input. Call
/// [`finish`](Self::finish) to code the last block and write the end record;
/// dropping an encoder without it stops its workers and leaves an incomplete
/// archive.
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
    /// An earlier write to `out` failed: the archive is incomplete.
    failed: bool,
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
    /// Writes the header to `out` and returns an encoder ready for input.
    pub fn new(mut out: W, options: &Options) -> Result<Self> {
        if options.threads == 0 {
            return Err(Error::InvalidOption("threads must be at least 1".into()));
        }
        let (header, config) = options.header()?;
        let bytes = header.to_bytes();
        out.write_all(&bytes)?;
        let seed = header.seed;
        let pipeline = Pipeline::new(
            options.threads,
            options.pipeline,
            move |mut raw: Vec<u8>, cancel: &Cancel| code_block(&config, seed, &mut raw, cancel),
        );
        Ok(Encoder {
            out,
            block_size: header.block_size as usize,
            header,
            threads: options.threads,
            pipelined: options.pipeline,
            filling: Vec::new(),
            free: Vec::new(),
            pipeline,
            hasher: Xxh3::new(),
            total_in: 0,
            total_out: bytes.len() as u64,
            failed: false,
        })
    }

    /// The header written at the start of the archive.
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

    fn accept(&mut self, buf: &[u8]) -> Result<usize> {
        self.check_failed()?;
        if self.filling.capacity() == 0 {
            // Only now: an encoder that is never written to allocates no block.
            self.filling.reserve_exact(self.block_size);
        }
        let room = self.block_size - self.filling.len();
        let n = buf.len().min(room);
        if let Some(declared) = self.header.content_length
            && self.total_in + n as u64 > declared
        {
            return Err(Error::InputLength {
                declared,
                found: self.total_in + n as u64,
            });
        }
        self.filling.extend_from_slice(&buf[..n]);
        self.hasher.update(&buf[..n]);
        self.total_in += n as u64;
        if self.filling.len() == self.block_size {
            self.submit()?;
        }
        self.write_ready()?;
        Ok(n)
    }

    /// Codes the remaining input, writes the end record and returns the
    /// writer (not flushed).
    pub fn finish(self) -> Result<W> {
        self.finish_counted().map(|(w, _)| w)
    }

    /// Like [`finish`](Self::finish), also returning the archive's size in
    /// bytes.
    pub fn finish_counted(mut self) -> Result<(W, u64)> {
        self.check_failed()?;
        if let Some(declared) = self.header.content_length
            && declared != self.total_in
        {
            return Err(Error::InputLength {
                declared,
                found: self.total_in,
            });
        }
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
        let total = self.total_out + END_RECORD_LEN as u64;
        // Stops the (idle) workers before the writer is handed back.
        drop(self.pipeline);
        Ok((self.out, total))
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.accept(buf).map_err(Error::into_io)
    }

    /// Writes every block handed to the workers so far (waiting for them),
    /// then flushes the underlying writer; input short of a full block stays
    /// buffered (blocks are only cut at `block_size`).
    fn flush(&mut self) -> io::Result<()> {
        self.check_failed().map_err(Error::into_io)?;
        while let Some(coded) = self.pipeline.next() {
            self.write_block(coded).map_err(Error::into_io)?;
        }
        self.out.flush()
    }
}

/// One block, coded: stored when the model would not make it smaller. `raw`
/// is left as it is (and kept, as the payload of a stored block); the result
/// is garbage once `cancel` is set.
fn code_block(config: &ModelConfig, seed: u64, raw: &mut Vec<u8>, cancel: &Cancel) -> Coded {
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
    // applies and it comes out smaller than the alternatives.
    let segmented = crate::segment::encode(config, seed, raw, cancel).map(|payload| {
        let bh = BlockHeader {
            block_type: BlockType::Segmented,
            raw_len,
            payload_len: payload.len() as u32,
            raw_check: check,
            stream_lens: vec![],
        };
        (bh.encoded_len() + payload.len(), header_bytes(&bh), payload)
    });
    let best =
        |len: usize, header: Vec<u8>, streams: Vec<Vec<u8>>, raw: &mut Vec<u8>| match segmented {
            Some((seg_len, seg_header, payload)) if seg_len < len => Coded {
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
    if let Some(streams) = config.encode_block(seed, raw, cancel) {
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
