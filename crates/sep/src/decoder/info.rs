//! Reading an archive without decoding it: [`read_header`], [`inspect`] and
//! [`ArchiveInfo`], and the memory bound a decoder decides on.

use super::*;

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
    /// The most heap one worker holds for a segmented block of this archive
    /// ([`crate::segment::block_memory`]); 0 without segmented blocks.
    pub segmented_memory: u64,
    /// Bytes of the seek table after the end record (doc/FORMAT.md section
    /// 12), 0 without one.
    pub seek_table_bytes: u64,
}

impl ArchiveInfo {
    /// An upper bound of the heap a [`Decoder`] with `threads` threads holds for
    /// this archive (measured against the real peak for every backbone, with and
    /// without SE, mix and order2: `crates/sep/tests/memory_estimate.rs`): a
    /// model per block decoded at once (`min(threads, blocks)`, each
    /// [`model_memory_bound`] of a full block), and the pipeline's buffers: up to
    /// `threads + 1` blocks in flight, each its payload (at most a block) and
    /// its decoded bytes, plus the block being returned. It depends on the block
    /// size and the model, not on the content length (past the first few
    /// blocks). A worker decoding a segmented block (issue 17) holds
    /// [`segmented_memory`](Self::segmented_memory) instead of a block's
    /// model when that is more. A [`Decoder`] with a memory limit decides on
    /// the same bound, from the header alone, and checks each segmented
    /// block's before decoding it.
    pub fn decoder_memory(&self, threads: usize) -> u64 {
        self.decoder_memory_with(threads, None)
    }

    /// [`decoder_memory`](Self::decoder_memory) for an archive coded with
    /// `prior` (issue 20): each worker holds the prior's restored model, its
    /// samples and the block ([`Prior::memory_bytes`](crate::Prior::memory_bytes)
    /// plus the block) instead of a fresh model when that is more, and the
    /// loaded prior holds [`Prior::held_bytes`](crate::Prior::held_bytes) once.
    pub fn decoder_memory_with(&self, threads: usize, prior: Option<&crate::Prior>) -> u64 {
        let block = u64::from(self.header.block_size).min(self.content_length.max(1));
        with_prior(
            &self.model,
            block,
            self.blocks,
            threads,
            self.segmented_memory,
            prior.filter(|_| self.header.prior_id.is_some()),
        )
    }
}

/// An upper bound of the heap one block's model takes while a block of up to
/// `block` bytes is decoded. Context mixing and order2 allocate what
/// [`ModelConfig::memory_bytes`] says, plus 64 KiB of coder and buffers; a
/// network's weights, optimiser state and activations are
/// [`ModelConfig::max_memory_bytes`]' estimate, which the kernels' scratch
/// buffers and the layers' own copies exceed by up to 1.5x in the backbones
/// measured (plus about 1.5 MiB for the smallest): so twice it plus 2 MiB.
pub fn model_memory_bound(model: &ModelConfig, block: u64) -> u64 {
    const SLACK: u64 = 1 << 16;
    let block32 = block.min(u64::from(u32::MAX)) as u32;
    let net = |c: &crate::neural::NeuralConfig| {
        2 * c.memory_bytes(c.streams.min(block32) as usize) + (2 << 20)
    };
    match model {
        ModelConfig::Store => 0,
        ModelConfig::Order2(_) => model.memory_bytes(block) + SLACK,
        ModelConfig::Neural(c) => net(c),
        ModelConfig::Mix(c) => {
            crate::MixConfig {
                neural: None,
                ..c.clone()
            }
            .memory_bytes(block)
                + SLACK
                + c.neural.as_ref().map_or(0, net)
        }
    }
}

/// The memory bound of the archive being read, from its header alone, with
/// `threads` threads: blocks of `block_size` (or the declared content length, if
/// smaller), payloads as large as blocks. With a prior (issue 20), each
/// worker's restored model and history and what the loaded prior holds are
/// counted too.
pub(super) fn header_memory(walk: &Walk, threads: usize) -> u64 {
    let h = &walk.header;
    let block_size = u64::from(h.block_size);
    let (block, blocks) = match h.content_length {
        Some(n) => (block_size.min(n.max(1)), n.div_ceil(block_size).max(1)),
        None => (block_size, u64::MAX),
    };
    let prior = walk.prior.as_ref().filter(|_| h.prior_id.is_some());
    with_prior(&walk.config, block, blocks, threads, 0, prior)
}

/// [`memory_bound`] with payloads as large as blocks, and `prior`'s memory
/// when blocks are coded with one.
fn with_prior(
    model: &ModelConfig,
    block: u64,
    blocks: u64,
    threads: usize,
    segmented: u64,
    prior: Option<&crate::Prior>,
) -> u64 {
    match prior {
        Some(p) => memory_bound(
            model,
            block,
            blocks,
            block,
            threads,
            segmented.max(p.worker_memory(block)),
        )
        .saturating_add(p.held_bytes()),
        None => memory_bound(model, block, blocks, block, threads, segmented),
    }
}

/// [`ArchiveInfo::decoder_memory`] for `blocks` blocks of up to `block` bytes
/// and payloads of up to `payload` bytes, a worker holding at most
/// `segmented` bytes for a segmented block.
pub(super) fn memory_bound(
    model: &ModelConfig,
    block: u64,
    blocks: u64,
    payload: u64,
    threads: usize,
    segmented: u64,
) -> u64 {
    let blocks = blocks.max(1);
    let threads = threads.max(1) as u64;
    let workers = threads.min(blocks);
    let in_flight = (threads + 1).min(blocks);
    let payload = payload.min(block);
    workers.saturating_mul(model_memory_bound(model, block).max(segmented))
        + (in_flight + 1).min(blocks) * block
        + in_flight * payload
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
            segmented_memory: 0,
            seek_table_bytes: 0,
        };
        let max_streams = info.model.header_fields().0;
        let mut total = 0u64;
        let mut expected = crate::format::Expected::default();
        let mut short = None;
        loop {
            match Record::read(&mut r, &info.header)? {
                Record::Block(bh) => {
                    check_full(&mut short, &bh, &info.header)?;
                    let copied = if bh.block_type == BlockType::Segmented {
                        // Read (at most raw_len bytes) for its memory bound.
                        let mut payload = Vec::new();
                        (&mut r)
                            .take(bh.payload_len.into())
                            .read_to_end(&mut payload)?;
                        if payload.len() == bh.payload_len as usize {
                            let need = crate::segment::block_memory(
                                &info.model,
                                &payload,
                                bh.raw_len,
                                max_streams,
                            )?;
                            info.segmented_memory = info.segmented_memory.max(need);
                        }
                        payload.len() as u64
                    } else {
                        io::copy(&mut (&mut r).take(bh.payload_len.into()), &mut io::sink())?
                    };
                    if copied != u64::from(bh.payload_len) {
                        return Err(Error::Truncated {
                            what: "block payload",
                        });
                    }
                    info.blocks += 1;
                    info.stored_blocks += u64::from(bh.block_type == BlockType::Stored);
                    let block_len = bh.encoded_len(info.header.version) + bh.payload_len as usize;
                    info.archive_bytes += block_len as u64;
                    expected.block(crate::format::SeekEntry {
                        block_len: block_len as u32,
                        raw_len: bh.raw_len,
                    });
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
                    info.archive_bytes += end.encoded_len(info.header.version) as u64;
                    break;
                }
            }
        }
        let (more, table) = super::after_end(&mut r, &expected)?;
        info.seek_table_bytes = table;
        infos.push(info);
        if !more {
            return Ok(infos);
        }
        header = Header::read_after_magic(&mut r)?;
    }
}
