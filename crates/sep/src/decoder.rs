//! [`Decoder`]: a `Read` adapter that decompresses an archive, and
//! [`inspect`], which lists an archive without decoding it.

use crate::codec::ModelConfig;
use crate::error::{Error, Result};
use crate::format::{BlockHeader, BlockType, END_RECORD_LEN, Header, MAGIC, Record, raw_check};
use crate::pipeline::{Cancel, Pipeline};
use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::Arc;
use xxhash_rust::xxh3::Xxh3;

/// Decompresses an archive read from `R`.
///
/// The header is read and validated by [`new`](Self::new). As the caller
/// reads, the decoder reads blocks ahead from `R` and hands them to `threads`
/// worker threads (the block pipeline, `crates/sep/src/pipeline.rs`), so that
/// up to `threads` blocks are decoded while the caller consumes (and writes
/// out) earlier ones; at most `threads + 1` blocks are read ahead, so memory
/// does not grow with the archive. Every block is checked against its
/// `raw_check` before its bytes are returned, and the whole content against
/// the end record. Concatenated archives decode to the concatenation of
/// their contents.
///
/// Errors reach `Read` callers as [`io::Error`]s of kind `InvalidData`, after
/// every byte before the fault; [`Error::from_io`] recovers the typed error.
/// Dropping a decoder stops its workers.
pub struct Decoder<R: Read> {
    inner: R,
    /// The header of the archive being read (ahead of the bytes returned).
    header: Header,
    config: Arc<ModelConfig>,
    /// Sum of `raw_len` of the blocks read so far of this archive.
    archive_total: u64,
    block_index: u64,
    /// Nothing more to read from `inner`: the input ended after an archive,
    /// or reading failed (the error is queued in `items`).
    input_done: bool,
    threads: usize,
    pipelined: bool,
    /// Created at the first read, once the thread count is settled.
    pipeline: Option<Pipeline<Job, Result<Decoded>>>,
    /// What was read, in order, for the caller to take.
    items: VecDeque<Item>,
    /// Buffers for reuse (payloads and decoded blocks).
    free: Vec<Vec<u8>>,
    /// The decoded block being returned, and how much of it has been.
    out: Vec<u8>,
    out_pos: usize,
    hasher: Xxh3,
    failed: bool,
}

/// One thing read ahead, in archive order.
enum Item {
    /// A block handed to the pipeline; its result comes from there.
    Block,
    /// An end record whose lengths were checked; its checksum is checked
    /// once every block before it has been returned.
    End { content_check: u64 },
    /// Reading failed here: the error is returned after everything before it.
    Fail(Error),
}

/// A block read from the archive, not yet decoded.
struct Job {
    config: Arc<ModelConfig>,
    seed: u64,
    header: BlockHeader,
    payload: Vec<u8>,
    /// A buffer for the decoded bytes (reused; any length).
    out: Vec<u8>,
    index: u64,
}

/// A decoded block, and a buffer the decoder may reuse.
struct Decoded {
    data: Vec<u8>,
    spare: Vec<u8>,
}

impl<R: Read> Decoder<R> {
    /// Reads and validates the header.
    pub fn new(mut inner: R) -> Result<Self> {
        let header = read_header(&mut inner)?;
        let config = Arc::new(ModelConfig::from_header(&header)?);
        Ok(Decoder {
            inner,
            header,
            config,
            archive_total: 0,
            block_index: 0,
            input_done: false,
            threads: 1,
            pipelined: true,
            pipeline: None,
            items: VecDeque::new(),
            free: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            hasher: Xxh3::new(),
            failed: false,
        })
    }

    /// The thread budget: up to `threads` blocks decoded at once, and kernel
    /// threads for a network while fewer blocks are (as
    /// [`Options::threads`](crate::Options::threads)). Output is the same for
    /// any value. Takes effect if called before the first read.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// `false`: batch mode, as [`Options::pipeline`](crate::Options::pipeline):
    /// read `threads` blocks, decode them, return them all, then read on.
    /// Takes effect if called before the first read.
    pub fn with_pipeline(mut self, pipelined: bool) -> Self {
        self.pipelined = pipelined;
        self
    }

    /// The header of the archive being decoded (for concatenated archives, the
    /// latest one read, which may be ahead of the bytes returned so far).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The model of that header.
    pub fn model(&self) -> &ModelConfig {
        &self.config
    }

    /// Reads blocks ahead, as many as the pipeline takes now.
    fn read_ahead(&mut self) {
        let pipeline = self.pipeline.get_or_insert_with(|| {
            Pipeline::new(self.threads, self.pipelined, |job: Job, cancel: &Cancel| {
                decode_block(job, cancel)
            })
        });
        let mut room = pipeline.room();
        // End records take no room; the bound keeps a run of empty archives
        // from being read ahead without limit.
        while room > 0 && !self.input_done && self.items.len() <= 2 * self.threads + 2 {
            match read_record(
                &mut self.inner,
                &mut self.header,
                &mut self.config,
                &mut self.archive_total,
                &mut self.block_index,
                &mut self.free,
            ) {
                Ok(Read1::Block(job)) => {
                    pipeline.submit(job);
                    self.items.push_back(Item::Block);
                    room -= 1;
                }
                Ok(Read1::End {
                    content_check,
                    last,
                }) => {
                    self.items.push_back(Item::End { content_check });
                    self.input_done = last;
                }
                Err(e) => {
                    self.items.push_back(Item::Fail(e));
                    self.input_done = true;
                }
            }
        }
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        if buf.capacity() > 0 && self.free.len() < 2 * self.threads + 4 {
            self.free.push(buf);
        }
    }

    fn read_typed(&mut self, buf: &mut [u8]) -> Result<usize> {
        loop {
            if self.out_pos < self.out.len() {
                let n = buf.len().min(self.out.len() - self.out_pos);
                buf[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
                self.out_pos += n;
                // Keep the workers fed while the caller consumes this block.
                self.read_ahead();
                return Ok(n);
            }
            let used = std::mem::take(&mut self.out);
            self.recycle(used);
            self.out_pos = 0;
            self.read_ahead();
            match self.items.pop_front() {
                None => return Ok(0),
                Some(Item::Block) => {
                    let pipeline = self.pipeline.as_mut().expect("created by read_ahead");
                    let decoded = pipeline.next().expect("a block in flight")?;
                    self.hasher.update(&decoded.data);
                    self.recycle(decoded.spare);
                    self.out = decoded.data;
                }
                Some(Item::End { content_check }) => {
                    let found = std::mem::replace(&mut self.hasher, Xxh3::new()).digest();
                    if found != content_check {
                        return Err(Error::ContentChecksum {
                            expected: content_check,
                            found,
                        });
                    }
                }
                Some(Item::Fail(e)) => return Err(e),
            }
        }
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

/// What [`read_record`] read.
enum Read1 {
    Block(Job),
    /// An end record; `last` when no archive follows.
    End {
        content_check: u64,
        last: bool,
    },
}

/// Reads the next block (with its payload) or end record, checking lengths
/// against the header and the end record; after an end record, reads the
/// header of a concatenated archive if one follows.
fn read_record<R: Read>(
    r: &mut R,
    header: &mut Header,
    config: &mut Arc<ModelConfig>,
    archive_total: &mut u64,
    block_index: &mut u64,
    free: &mut Vec<Vec<u8>>,
) -> Result<Read1> {
    match Record::read(r, header)? {
        Record::Block(bh) => {
            let want = u64::from(bh.payload_len);
            let mut payload = free.pop().unwrap_or_default();
            payload.clear();
            // Reserve up to 1 MiB at once, then grow with the bytes that arrive:
            // a crafted length (up to 2^30) costs no more memory than the input
            // holds (doc/FORMAT.md section 7), and a large payload only a few
            // doublings (the buffer is reused for later blocks).
            payload.reserve(want.min(1 << 20) as usize);
            r.take(want).read_to_end(&mut payload)?;
            if payload.len() as u64 != want {
                return Err(Error::Truncated {
                    what: "block payload",
                });
            }
            *archive_total += u64::from(bh.raw_len);
            if let Some(declared) = header.content_length
                && *archive_total > declared
            {
                return Err(Error::LengthMismatch {
                    what: "content (sum of raw_len)",
                    expected: declared,
                    found: *archive_total,
                });
            }
            let index = *block_index;
            *block_index += 1;
            Ok(Read1::Block(Job {
                config: Arc::clone(config),
                seed: header.seed,
                header: bh,
                payload,
                out: free.pop().unwrap_or_default(),
                index,
            }))
        }
        Record::End(end) => {
            check_end(header, end.content_length, *archive_total)?;
            let content_check = end.content_check;
            // Another archive may follow.
            let mut magic = [0u8; 4];
            let n = read_up_to(r, &mut magic)?;
            if n == 0 {
                return Ok(Read1::End {
                    content_check,
                    last: true,
                });
            }
            if magic[..n] != MAGIC[..n] {
                return Err(Error::TrailingData);
            }
            if n < 4 {
                return Err(Error::Truncated {
                    what: "magic of a concatenated archive",
                });
            }
            *header = Header::read_after_magic(r)?;
            *config = Arc::new(ModelConfig::from_header(header)?);
            *archive_total = 0;
            *block_index = 0;
            Ok(Read1::End {
                content_check,
                last: false,
            })
        }
    }
}

/// Checks an end record's `content_length` against the blocks' `raw_len` sum
/// and the header's `content_length`.
fn check_end(header: &Header, content_length: u64, total: u64) -> Result<()> {
    if content_length != total {
        return Err(Error::LengthMismatch {
            what: "content (sum of raw_len)",
            expected: content_length,
            found: total,
        });
    }
    if let Some(declared) = header.content_length
        && declared != content_length
    {
        return Err(Error::LengthMismatch {
            what: "content_length of the end record",
            expected: declared,
            found: content_length,
        });
    }
    Ok(())
}

fn decode_block(job: Job, cancel: &Cancel) -> Result<Decoded> {
    let Job {
        config,
        seed,
        header,
        payload,
        mut out,
        index,
    } = job;
    let (data, spare) = match header.block_type {
        BlockType::Stored => (payload, out),
        // Issue 17: a segmented block (doc/FORMAT.md section 8).
        BlockType::Segmented => {
            let max_streams = config.header_fields().0;
            crate::segment::decode(
                &config,
                seed,
                max_streams,
                &payload,
                header.raw_len,
                &mut out,
                cancel,
            )?;
            (out, payload)
        }
        _ => {
            let mut streams = Vec::with_capacity(header.stream_lens.len());
            let mut at = 0usize;
            for &l in &header.stream_lens {
                streams.push(&payload[at..at + l as usize]);
                at += l as usize;
            }
            out.clear();
            out.resize(header.raw_len as usize, 0);
            config.decode_block(seed, &streams, &mut out, cancel)?;
            drop(streams);
            (out, payload)
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
    Ok(Decoded { data, spare })
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
    /// The memory a [`Decoder`] with `threads` threads is expected to hold for
    /// this archive: a model per block decoded at once (`min(threads, blocks)`,
    /// each [`ModelConfig::memory_bytes`] of a full block), and the pipeline's
    /// buffers: up to `threads + 1` blocks in flight, each its payload (the
    /// archive's mean) and its decoded bytes, plus the block being returned.
    /// It depends on the block size and the model, not on the content length
    /// (past the first few blocks).
    pub fn decoder_memory(&self, threads: usize) -> u64 {
        let block = u64::from(self.header.block_size).min(self.content_length.max(1));
        let blocks = self.blocks.max(1);
        let threads = threads.max(1) as u64;
        let workers = threads.min(blocks);
        let in_flight = (threads + 1).min(blocks);
        let payload = (self.archive_bytes / blocks).min(block);
        workers * self.model.memory_bytes(block)
            + (in_flight + 1).min(blocks) * block
            + in_flight * payload
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
