//! [`Encoder`]: a `Write` adapter that compresses into an archive.

use crate::codec::{Model, ModelConfig};
use crate::error::{Error, Result};
use crate::format::{
    BlockHeader, BlockType, END_RECORD_LEN, EndRecord, Header, MAX_BLOCK_SIZE, raw_check,
};
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
    /// Blocks coded at once. The archive is identical for every value.
    pub threads: usize,
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
        Ok((header, config))
    }
}

/// Compresses everything written to it into an archive on `W`.
///
/// Input is gathered into blocks of `block_size` bytes; `threads` blocks at
/// a time are coded in parallel and written in order. Call
/// [`finish`](Self::finish) to code the last block and write the end record;
/// dropping an encoder without it leaves an incomplete archive.
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
    config: ModelConfig,
    threads: usize,
    pending: Vec<u8>,
    hasher: Xxh3,
    total_in: u64,
    total_out: u64,
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
        Ok(Encoder {
            out,
            header,
            config,
            threads: options.threads,
            pending: Vec::new(),
            hasher: Xxh3::new(),
            total_in: 0,
            total_out: bytes.len() as u64,
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

    fn batch_len(&self) -> usize {
        self.header.block_size as usize * self.threads
    }

    /// Codes the first `len` pending bytes (whole blocks, the last may be
    /// short) and writes them.
    fn flush_blocks(&mut self, len: usize) -> Result<()> {
        let block_size = self.header.block_size as usize;
        let seed = self.header.seed;
        let config = &self.config;
        let coded: Vec<Vec<u8>> = {
            let chunks: Vec<&[u8]> = self.pending[..len].chunks(block_size).collect();
            if self.threads > 1 && chunks.len() > 1 {
                std::thread::scope(|s| {
                    let handles: Vec<_> = chunks
                        .iter()
                        .map(|c| s.spawn(move || code_block(config, seed, c)))
                        .collect();
                    handles
                        .into_iter()
                        .map(|h| h.join().expect("block coder panicked"))
                        .collect()
                })
            } else {
                chunks.iter().map(|c| code_block(config, seed, c)).collect()
            }
        };
        for block in &coded {
            self.out.write_all(block)?;
            self.total_out += block.len() as u64;
        }
        self.pending.drain(..len);
        Ok(())
    }

    fn accept(&mut self, buf: &[u8]) -> Result<usize> {
        let room = self.batch_len() - self.pending.len();
        let n = buf.len().min(room);
        if let Some(declared) = self.header.content_length
            && self.total_in + n as u64 > declared
        {
            return Err(Error::InputLength {
                declared,
                found: self.total_in + n as u64,
            });
        }
        self.pending.extend_from_slice(&buf[..n]);
        self.hasher.update(&buf[..n]);
        self.total_in += n as u64;
        if self.pending.len() == self.batch_len() {
            self.flush_blocks(self.pending.len())?;
        }
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
        if let Some(declared) = self.header.content_length
            && declared != self.total_in
        {
            return Err(Error::InputLength {
                declared,
                found: self.total_in,
            });
        }
        self.flush_blocks(self.pending.len())?;
        let end = EndRecord {
            content_length: self.total_in,
            content_check: self.hasher.digest(),
        };
        self.out.write_all(&end.to_bytes())?;
        Ok((self.out, self.total_out + END_RECORD_LEN as u64))
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.accept(buf).map_err(Error::into_io)
    }

    /// Flushes the underlying writer; input short of a full block stays
    /// buffered (blocks are only cut at `block_size`).
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// One block, serialised: stored when the model would not make it smaller.
pub(crate) fn code_block(config: &ModelConfig, seed: u64, raw: &[u8]) -> Vec<u8> {
    let raw_len = raw.len() as u32;
    let check = raw_check(raw);
    if let Some(streams) = config.encode_block(seed, raw) {
        let stream_lens: Vec<u32> = streams.iter().map(|s| s.len() as u32).collect();
        let payload_len: usize = streams.iter().map(Vec::len).sum();
        let bh = BlockHeader {
            block_type: BlockType::Modelled,
            raw_len,
            payload_len: payload_len as u32,
            raw_check: check,
            stream_lens,
        };
        let stored_cost = BlockHeader {
            block_type: BlockType::Stored,
            raw_len,
            payload_len: raw_len,
            raw_check: check,
            stream_lens: vec![],
        }
        .encoded_len()
            + raw.len();
        if bh.encoded_len() + payload_len < stored_cost {
            let mut out = Vec::with_capacity(bh.encoded_len() + payload_len);
            bh.write_to(&mut out).expect("writing to a Vec cannot fail");
            for s in &streams {
                out.extend_from_slice(s);
            }
            return out;
        }
    }
    let bh = BlockHeader {
        block_type: BlockType::Stored,
        raw_len,
        payload_len: raw_len,
        raw_check: check,
        stream_lens: vec![],
    };
    let mut out = Vec::with_capacity(bh.encoded_len() + raw.len());
    bh.write_to(&mut out).expect("writing to a Vec cannot fail");
    out.extend_from_slice(raw);
    out
}

impl<W: Write> std::fmt::Debug for Encoder<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("header", &self.header)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}
