//! [`Decoder`]: a `Read` adapter that decompresses an archive, and
//! [`inspect`], which lists an archive without decoding it.

use crate::codec::ModelConfig;
use crate::error::{Error, Result};
use crate::format::{
    BlockHeader, BlockType, EndRecord, Expected, Header, MAGIC, Record, SEEK_MAGIC, SeekEntry,
    raw_check, skip_seek_table,
};
use crate::limits::{Limits, Spent};
use crate::pipeline::{Cancel, Pipeline};
use std::collections::VecDeque;
use std::io::{self, Read};
use std::sync::Arc;
use xxhash_rust::xxh3::Xxh3;

mod info;
mod range;
mod walk; // issue 22: random access
pub use info::{ArchiveInfo, inspect, model_memory_bound, read_header};
use info::{header_memory, memory_bound};
pub use range::content_length;
use walk::{Read1, Walk, read_record};
pub(crate) use walk::{after_end, check_end, check_full, read_up_to};

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
    /// Where reading is: the archive, its model, what was read of it.
    walk: Walk,
    /// What the caller allows.
    limits: Limits,
    /// Nothing more to read from `inner`: the input ended after an archive,
    /// or reading failed (the error is queued in `items`).
    input_done: bool,
    threads: usize,
    pipelined: bool,
    /// Created at the first read, once the thread count is settled.
    pipeline: Option<Pipeline<Job, Result<Decoded>>>,
    /// Bytes decoded so far, shared with the pipeline's workers.
    progress: crate::Progress,
    /// What was read, in order, for the caller to take.
    items: VecDeque<Item>,
    /// Buffers for reuse (payloads and decoded blocks).
    free: Vec<Vec<u8>>,
    /// The decoded block being returned, and how much of it has been.
    out: Vec<u8>,
    out_pos: usize,
    hasher: Xxh3,
    failed: bool,
    /// Set by [`Decoder::range`]: the part of the content still to return.
    range: Option<range::RangeState>,
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
    /// The prior the archive names (checked against its header).
    prior: Option<crate::Prior>,
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
        Ok(Self::start(inner, header, config))
    }

    /// A decoder whose input is just past `header` (or at a block of its archive).
    fn start(inner: R, header: Header, config: Arc<ModelConfig>) -> Self {
        Decoder {
            inner,
            walk: Walk {
                header,
                config,
                archive_total: 0,
                earlier: 0,
                block_index: 0,
                short_block: None,
                spent: Spent::default(),
                expected: Expected::default(),
                prior: None,
            },
            limits: Limits::default(),
            input_done: false,
            threads: 1,
            pipelined: true,
            pipeline: None,
            progress: crate::Progress::default(),
            items: VecDeque::new(),
            free: Vec::new(),
            out: Vec::new(),
            out_pos: 0,
            hasher: Xxh3::new(),
            failed: false,
            range: None,
        }
    }

    /// Gives the decoder the prior the archive was compressed with (issue
    /// 20). An archive that names a prior fails before any output, with
    /// [`Error::PriorNeeded`] or [`Error::PriorMismatch`], when it is not
    /// given this one; archives without a prior ignore it.
    pub fn with_prior(mut self, prior: Option<crate::Prior>) -> Self {
        self.walk.prior = prior;
        self
    }

    /// The thread budget: up to `threads` blocks decoded at once, and kernel
    /// threads for a network while fewer blocks are (as
    /// [`Options::threads`](crate::Options::threads)). Output is the same for
    /// any value; `0` means one per core, as for
    /// [`Options::threads`](crate::Options::threads) (the default is 1); clamped to
    /// [`MAX_THREADS`](crate::MAX_THREADS). Takes
    /// effect if called before the first read.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = crate::encoder::resolve_threads(threads).min(crate::MAX_THREADS);
        self
    }

    /// `false`: batch mode, as [`Options::pipeline`](crate::Options::pipeline):
    /// read `threads` blocks, decode them, return them all, then read on.
    /// Takes effect if called before the first read.
    pub fn with_pipeline(mut self, pipelined: bool) -> Self {
        self.pipelined = pipelined;
        self
    }

    /// The most content bytes to decode (all concatenated archives together):
    /// an archive whose header declares more, or whose blocks add up to more,
    /// fails with [`Error::OverLimit`] before the block that would exceed it is
    /// decoded, so no byte past the limit is produced. `None` (the default): no
    /// limit. Takes effect if called before the first read.
    pub fn with_max_output(mut self, max: Option<u64>) -> Self {
        self.limits.max_output = max;
        self
    }

    /// The work budget beyond the allowance per archive byte read, in work units
    /// (about one multiply-add each; [`crate::limits`] has the rules): an
    /// archive whose blocks' estimated decoding work would exceed it fails with
    /// [`Error::OverLimit`] before the block that crosses it is decoded.
    /// Default [`DEFAULT_MAX_WORK`](crate::limits::DEFAULT_MAX_WORK), about 90
    /// minutes of one core; `None`: no work limit (nor a set-up limit). Takes
    /// effect if called before the first read.
    pub fn with_max_work(mut self, max: Option<u64>) -> Self {
        self.limits.max_work = max;
        self
    }

    /// The header of the archive being decoded (for concatenated archives, the
    /// latest one read, which may be ahead of the bytes returned so far).
    pub fn header(&self) -> &Header {
        &self.walk.header
    }

    /// The model of that header.
    pub fn model(&self) -> &ModelConfig {
        &self.walk.config
    }

    /// The most heap this decoder may hold, as estimated by
    /// [`ArchiveInfo::decoder_memory`] (an upper bound) from the header: when
    /// `threads` blocks at once would need more, fewer are decoded at once; when
    /// even one would, decoding fails with [`Error::OverLimit`] before any block
    /// is. A concatenated archive that needs more with the threads already in
    /// use fails the same way. `None` (the default): no limit. Takes effect if
    /// called before the first read.
    pub fn with_memory_limit(mut self, limit: Option<u64>) -> Self {
        self.limits.memory = limit;
        self
    }

    /// The threads this decoder uses: those asked for, or fewer when the memory
    /// limit requires it (settled at the first read).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// A handle on the content bytes decoded so far (by the worker threads,
    /// possibly ahead of what `read` has returned), to read from another
    /// thread: see [`Progress`](crate::Progress).
    pub fn progress(&self) -> crate::Progress {
        self.progress.clone()
    }

    /// Reads blocks ahead, as many as the pipeline takes now.
    fn read_ahead(&mut self) {
        if self.pipeline.is_none() {
            match self
                .limits
                .fit_threads(self.threads, |t| header_memory(&self.walk, t))
            {
                Ok(t) => self.threads = t,
                Err(e) => {
                    self.items.push_back(Item::Fail(e));
                    self.input_done = true;
                }
            }
            self.limits.threads = self.threads;
        }
        if let Some(range) = &mut self.range
            && !range.output_checked
        {
            // The limit counts the range's bytes, not positions in the content.
            range.output_checked = true;
            if let Err(e) = self.limits.check_output(range.remaining) {
                self.items.push_back(Item::Fail(e));
                self.input_done = true;
            }
            self.limits.max_output = None;
        }
        let pipeline = self.pipeline.get_or_insert_with(|| {
            Pipeline::with_progress(
                self.threads,
                self.pipelined,
                self.progress.clone(),
                |job: Job, cancel: &Cancel| decode_block(job, cancel),
            )
        });
        let mut room = pipeline.room();
        // End records take no room; the bound keeps a run of empty archives
        // from being read ahead without limit.
        while room > 0 && !self.input_done && self.items.len() <= 2 * self.threads + 2 {
            if let Some(range) = &self.range
                && range.blocks_left == 0
            {
                // Every block of the range is read: read no further.
                self.input_done = true;
                break;
            }
            match read_record(
                &mut self.inner,
                &mut self.walk,
                &self.limits,
                &mut self.free,
            ) {
                Ok(Read1::Block(job)) => {
                    pipeline.submit(job);
                    self.items.push_back(Item::Block);
                    room -= 1;
                    if let Some(range) = &mut self.range {
                        range.blocks_left -= 1;
                    }
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
                    let mut decoded = pipeline.next().expect("a block in flight")?;
                    self.recycle(decoded.spare);
                    if let Some(range) = &mut self.range {
                        // Only the range's part of the block is returned.
                        let len = decoded.data.len() as u64;
                        let skip = range.skip.min(len);
                        let keep = (len - skip).min(range.remaining);
                        range.skip -= skip;
                        range.remaining -= keep;
                        decoded.data.truncate((skip + keep) as usize);
                        self.out_pos = skip as usize;
                    } else {
                        self.hasher.update(&decoded.data);
                    }
                    self.out = decoded.data;
                }
                Some(Item::End { .. }) if self.range.is_some() => {
                    // Only part of the content was decoded: no content_check.
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

fn decode_block(job: Job, cancel: &Cancel) -> Result<Decoded> {
    let Job {
        config,
        prior,
        seed,
        header,
        payload,
        mut out,
        index,
    } = job;
    let (data, spare) = match header.block_type {
        BlockType::Stored => {
            cancel.advance(payload.len() as u64);
            (payload, out)
        }
        // Issue 17: a segmented block (doc/FORMAT.md section 8).
        BlockType::Segmented => {
            let max_streams = config.header_fields().0;
            crate::segment::decode(
                &config,
                index,
                seed,
                max_streams,
                &payload,
                header.raw_len,
                &mut out,
                &cancel.quiet(),
            )?;
            // The inner bytes may outnumber the block's; progress counts the block.
            cancel.advance(u64::from(header.raw_len));
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
            config.decode_block_with(prior.as_ref(), index, seed, &streams, &mut out, cancel)?;
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

impl<R: Read> std::fmt::Debug for Decoder<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("header", &self.walk.header)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
