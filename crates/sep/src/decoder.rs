//! [`Decoder`]: a `Read` adapter that decompresses an archive, and
//! [`inspect`], which lists an archive without decoding it.

use crate::codec::ModelConfig;
use crate::error::{Error, Result};
use crate::format::{BlockHeader, BlockType, END_RECORD_LEN, Header, MAGIC, Record, raw_check};
use std::io::{self, Read};
use xxhash_rust::xxh3::Xxh3;

/// Decompresses an archive read from `R`.
///
/// The header is read and validated by [`new`](Self::new); blocks are decoded
/// `threads` at a time as the caller reads. Every block is checked against its
/// `raw_check` before its bytes are returned, and the whole content against
/// the end record. Concatenated archives decode to the concatenation of
/// their contents.
///
/// Errors reach `Read` callers as [`io::Error`]s of kind `InvalidData`;
/// [`Error::from_io`] recovers the typed error.
pub struct Decoder<R: Read> {
    inner: R,
    header: Header,
    config: ModelConfig,
    threads: usize,
    out: Vec<u8>,
    out_pos: usize,
    hasher: Xxh3,
    archive_total: u64,
    block_index: u64,
    done: bool,
    failed: bool,
}

/// A block read from the archive, not yet decoded.
struct RawBlock {
    header: BlockHeader,
    payload: Vec<u8>,
    index: u64,
}

impl<R: Read> Decoder<R> {
    /// Reads and validates the header.
    pub fn new(mut inner: R) -> Result<Self> {
        let header = read_header(&mut inner)?;
        let config = ModelConfig::from_header(&header)?;
        Ok(Decoder {
            inner,
            header,
            config,
            threads: 1,
            out: Vec::new(),
            out_pos: 0,
            hasher: Xxh3::new(),
            archive_total: 0,
            block_index: 0,
            done: false,
            failed: false,
        })
    }

    /// Decodes up to `threads` blocks at once (output is the same for any
    /// value).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The header of the archive being decoded (the latest one, for
    /// concatenated archives).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The model of the archive being decoded.
    pub fn model(&self) -> &ModelConfig {
        &self.config
    }

    /// Reads the next batch of blocks and decodes them into `self.out`.
    fn fill(&mut self) -> Result<()> {
        self.out.clear();
        self.out_pos = 0;
        let mut batch = Vec::with_capacity(self.threads);
        while batch.len() < self.threads {
            match Record::read(&mut self.inner, &self.header)? {
                Record::Block(bh) => {
                    let want = u64::from(bh.payload_len);
                    // One allocation for the usual payload (not one per doubling); the
                    // cap keeps a corrupt length from reserving gigabytes up front.
                    let mut payload = Vec::with_capacity(want.min(1 << 24) as usize);
                    (&mut self.inner).take(want).read_to_end(&mut payload)?;
                    if payload.len() as u64 != want {
                        return Err(Error::Truncated {
                            what: "block payload",
                        });
                    }
                    self.archive_total += u64::from(bh.raw_len);
                    if let Some(declared) = self.header.content_length
                        && self.archive_total > declared
                    {
                        return Err(Error::LengthMismatch {
                            what: "content (sum of raw_len)",
                            expected: declared,
                            found: self.archive_total,
                        });
                    }
                    batch.push(RawBlock {
                        header: bh,
                        payload,
                        index: self.block_index,
                    });
                    self.block_index += 1;
                }
                Record::End(end) => {
                    self.decode_batch(batch)?;
                    self.finish_archive(end.content_length, end.content_check)?;
                    return Ok(());
                }
            }
        }
        self.decode_batch(batch)
    }

    fn decode_batch(&mut self, batch: Vec<RawBlock>) -> Result<()> {
        let config = &self.config;
        let seed = self.header.seed;
        let decoded: Vec<Result<Vec<u8>>> = if batch.len() > 1 {
            std::thread::scope(|s| {
                let handles: Vec<_> = batch
                    .into_iter()
                    .map(|b| s.spawn(move || decode_block(config, seed, b)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("block decoder panicked"))
                    .collect()
            })
        } else {
            batch
                .into_iter()
                .map(|b| decode_block(config, seed, b))
                .collect()
        };
        for block in decoded {
            let block = block?;
            self.hasher.update(&block);
            if self.out.is_empty() {
                self.out = block;
            } else {
                self.out.extend_from_slice(&block);
            }
        }
        Ok(())
    }

    fn finish_archive(&mut self, content_length: u64, content_check: u64) -> Result<()> {
        if content_length != self.archive_total {
            return Err(Error::LengthMismatch {
                what: "content (sum of raw_len)",
                expected: content_length,
                found: self.archive_total,
            });
        }
        if let Some(declared) = self.header.content_length
            && declared != content_length
        {
            return Err(Error::LengthMismatch {
                what: "content_length of the end record",
                expected: declared,
                found: content_length,
            });
        }
        let found = self.hasher.digest();
        if found != content_check {
            return Err(Error::ContentChecksum {
                expected: content_check,
                found,
            });
        }
        // Another archive may follow.
        let mut magic = [0u8; 4];
        let n = read_up_to(&mut self.inner, &mut magic)?;
        if n == 0 {
            self.done = true;
            return Ok(());
        }
        if magic[..n] != MAGIC[..n] {
            return Err(Error::TrailingData);
        }
        if n < 4 {
            return Err(Error::Truncated {
                what: "magic of a concatenated archive",
            });
        }
        self.header = Header::read_after_magic(&mut self.inner)?;
        self.config = ModelConfig::from_header(&self.header)?;
        self.hasher = Xxh3::new();
        self.archive_total = 0;
        self.block_index = 0;
        Ok(())
    }

    fn read_typed(&mut self, buf: &mut [u8]) -> Result<usize> {
        while self.out_pos == self.out.len() {
            if self.done {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = buf.len().min(self.out.len() - self.out_pos);
        buf[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        Ok(n)
    }
}

impl<R: Read> Read for Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.failed {
            return Err(io::Error::other(
                "sep decoder: an earlier error stopped decoding",
            ));
        }
        self.read_typed(buf).map_err(|e| {
            self.failed = true;
            e.into_io()
        })
    }
}

fn decode_block(config: &ModelConfig, seed: u64, block: RawBlock) -> Result<Vec<u8>> {
    let RawBlock {
        header,
        payload,
        index,
    } = block;
    let data = match header.block_type {
        BlockType::Stored => payload,
        _ => {
            let mut streams = Vec::with_capacity(header.stream_lens.len());
            let mut at = 0usize;
            for &l in &header.stream_lens {
                streams.push(&payload[at..at + l as usize]);
                at += l as usize;
            }
            let mut out = vec![0u8; header.raw_len as usize];
            config.decode_block(seed, &streams, &mut out)?;
            out
        }
    };
    let found = raw_check(&data);
    if found != header.raw_check {
        return Err(Error::BlockChecksum {
            index,
            expected: header.raw_check,
            found,
        });
    }
    Ok(data)
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_up_to<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::Io(e)),
        }
    }
    Ok(n)
}

/// Reads `magic` and the header.
pub fn read_header<R: Read>(r: &mut R) -> Result<Header> {
    let mut magic = [0u8; 4];
    let n = read_up_to(r, &mut magic)?;
    if n == 0 {
        return Err(Error::Truncated {
            what: "magic (the input is empty)",
        });
    }
    if magic[..n] != MAGIC[..n] {
        return Err(Error::BadMagic {
            found: magic[..n].to_vec(),
        });
    }
    if n < 4 {
        return Err(Error::Truncated { what: "magic" });
    }
    Header::read_after_magic(r)
}

/// What [`inspect`] finds in one archive.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveInfo {
    /// The header.
    pub header: Header,
    /// The model it names.
    pub model: ModelConfig,
    /// Number of blocks.
    pub blocks: u64,
    /// How many of them are stored.
    pub stored_blocks: u64,
    /// Content bytes (from the end record).
    pub content_length: u64,
    /// `content_check` from the end record.
    pub content_check: u64,
    /// Bytes of the archive, header to end record.
    pub archive_bytes: u64,
}

impl ArchiveInfo {
    /// Memory a decoder needs for this archive with `threads` blocks at once:
    /// per thread, the model, one block of output and one of payload.
    pub fn decoder_memory(&self, threads: usize) -> u64 {
        let block = u64::from(self.header.block_size).min(self.content_length.max(1));
        threads.max(1) as u64 * (self.model.memory_bytes(block) + 2 * block)
    }
}

/// Lists every archive in `r` (several when concatenated) by walking the
/// block headers, without decoding. It validates the structure, not the
/// content: use a [`Decoder`] for that.
pub fn inspect<R: Read>(mut r: R) -> Result<Vec<ArchiveInfo>> {
    let mut infos = Vec::new();
    let mut header = read_header(&mut r)?;
    loop {
        let model = ModelConfig::from_header(&header)?;
        let mut info = ArchiveInfo {
            archive_bytes: header.to_bytes().len() as u64,
            header,
            model,
            blocks: 0,
            stored_blocks: 0,
            content_length: 0,
            content_check: 0,
        };
        let mut total = 0u64;
        loop {
            match Record::read(&mut r, &info.header)? {
                Record::Block(bh) => {
                    let copied =
                        io::copy(&mut (&mut r).take(bh.payload_len.into()), &mut io::sink())?;
                    if copied != u64::from(bh.payload_len) {
                        return Err(Error::Truncated {
                            what: "block payload",
                        });
                    }
                    info.blocks += 1;
                    info.stored_blocks += u64::from(bh.block_type == BlockType::Stored);
                    info.archive_bytes += (bh.encoded_len() + bh.payload_len as usize) as u64;
                    total += u64::from(bh.raw_len);
                }
                Record::End(end) => {
                    if end.content_length != total {
                        return Err(Error::LengthMismatch {
                            what: "content (sum of raw_len)",
                            expected: end.content_length,
                            found: total,
                        });
                    }
                    if let Some(declared) = info.header.content_length
                        && declared != total
                    {
                        return Err(Error::LengthMismatch {
                            what: "content_length of the end record",
                            expected: declared,
                            found: total,
                        });
                    }
                    info.content_length = end.content_length;
                    info.content_check = end.content_check;
                    info.archive_bytes += END_RECORD_LEN as u64;
                    break;
                }
            }
        }
        infos.push(info);
        let mut magic = [0u8; 4];
        let n = read_up_to(&mut r, &mut magic)?;
        if n == 0 {
            return Ok(infos);
        }
        if magic[..n] != MAGIC[..n] {
            return Err(Error::TrailingData);
        }
        if n < 4 {
            return Err(Error::Truncated {
                what: "magic of a concatenated archive",
            });
        }
        header = Header::read_after_magic(&mut r)?;
    }
}

impl<R: Read> std::fmt::Debug for Decoder<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("header", &self.header)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}
