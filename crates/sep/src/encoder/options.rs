//! [`Options`]: what an [`Encoder`](crate::Encoder) writes (model, block size,
//! threads, seed, transforms), and the thread-count rule.

use crate::codec::{Model, ModelConfig};
use crate::error::{Error, Result};
use crate::format::{Header, MAX_BLOCK_SIZE};

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
    /// Write a seek table after the end record (doc/FORMAT.md section 12,
    /// issue 22): 8 bytes per block plus 20, so that
    /// [`Decoder::range`](crate::Decoder::range) finds any block of a seekable
    /// archive at once. `false` by default: a decoder released before the table
    /// existed rejects such an archive as trailing data, and one without a
    /// table is still read at random by walking its block headers (command
    /// line: `--seek-table`). The encoder holds the table in memory until
    /// [`Encoder::finish`](crate::Encoder::finish): 8 bytes per block.
    pub seek_table: bool,
    /// The prior to code every block with (issue 20, doc/FORMAT.md section
    /// 11): its id goes into the header, and the model must be the one it
    /// was trained for ([`Prior::model`](crate::Prior::model)). Blocks are
    /// then never segmented. `None` by default.
    pub prior: Option<crate::Prior>,
    /// The archive's `format_version`: 3 (the default), the compact layout
    /// of doc/FORMAT.md section 13 (issue 20: about 45 bytes less per
    /// archive), or 1, the fixed-width layout every sep release reads. The
    /// same content and options give the same model coding in both; only
    /// the header, block headers and end record differ. Other values are
    /// refused with [`Error::InvalidOption`].
    pub format_version: u8,
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
            seek_table: false,
            prior: None,
            format_version: crate::format::FORMAT_VERSION,
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

    /// An upper bound of the heap an [`Encoder`](crate::Encoder) with these
    /// options holds (in the manner of
    /// [`ArchiveInfo::decoder_memory`](crate::ArchiveInfo::decoder_memory)):
    /// a model per block coded at once and, per block in flight (`threads +
    /// 2`), the raw block and its coded streams.
    ///
    /// With [`transforms`](Self::transforms) (issue 17), a block of `n`
    /// bytes (at most the block size and the content length) is first
    /// analysed and its transformed content coded: the transforms' own
    /// memory ([`analyse_memory_bound`](crate::segment::transform::analyse_memory_bound),
    /// the plan included), a model sized for the most transformed content
    /// the block may have ([`inner_limit`](crate::segment::transform::inner_limit)
    /// bytes) and that content's coded streams; then the block is coded as it
    /// is while the segmented payload (at most `inner_limit(n) + n`) waits.
    /// A worker holds the larger of the two phases. Measured against the
    /// real peak in `crates/sep/tests/segment_memory.rs`.
    pub fn encoder_memory(&self) -> Result<u64> {
        let (header, config) = self.header()?;
        let block = u64::from(header.block_size);
        let blocks = self
            .content_length
            .map_or(u64::MAX, |n| n.div_ceil(block).max(1));
        let threads = crate::encoder::resolve_threads(self.threads).min(crate::MAX_THREADS) as u64;
        let model = crate::model_memory_bound(&config, block);
        let worker = if self.transforms && !matches!(config, ModelConfig::Store) {
            use sep_transform::{analyse_memory_bound, inner_limit};
            let n = self.content_length.map_or(block, |c| c.min(block)).max(1) as usize;
            let inner = inner_limit(n) as u64;
            let segmented =
                analyse_memory_bound(n) + crate::model_memory_bound(&config, inner) + inner;
            segmented.max(model + inner + n as u64)
        } else {
            model
        };
        // A prior's blocks (issue 20) restore its model and continue its
        // samples; the loaded prior is held once.
        let (worker, held) = match &self.prior {
            Some(p) => (worker.max(p.worker_memory(block)), p.held_bytes()),
            None => (worker, 0),
        };
        Ok(threads.min(blocks) * worker
            + (threads + 2).min(blocks.saturating_add(1)) * 2 * block
            + held)
    }

    /// The header an encoder with these options writes.
    pub fn header(&self) -> Result<(Header, ModelConfig)> {
        if !crate::format::is_supported_version(self.format_version) {
            return Err(Error::InvalidOption(format!(
                "format_version {} (sep writes 1 or 3)",
                self.format_version
            )));
        }
        let block_size = self.effective_block_size()?;
        let config = self.model.configure(block_size);
        let (streams, context, params) = config.header_fields();
        let header = Header {
            version: self.format_version,
            content_length: self.content_length,
            block_size,
            seed: self.seed,
            streams,
            context,
            model_id: config.id(),
            params,
            prior_id: self.prior.as_ref().map(crate::Prior::id),
        };
        if let Some(p) = &self.prior {
            p.check_params(header.model_id, &header.params)?;
        }
        // Never write an archive the decoder would refuse.
        ModelConfig::from_header(&header)
            .map_err(|e| Error::InvalidOption(format!("model {}: {e}", config.describe())))?;
        Ok((header, config))
    }
}
