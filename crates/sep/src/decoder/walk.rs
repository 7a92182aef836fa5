//! How the decoder walks its input: records read one by one, each checked
//! against its archive's header, the limits and, after the end record, a
//! seek table and the header of a concatenated archive.

use super::*;

/// Where the reading of the input is.
pub(super) struct Walk {
    /// The header of the archive being read (ahead of the bytes returned).
    pub(super) header: Header,
    pub(super) config: Arc<ModelConfig>,
    /// Sum of `raw_len` of the blocks read so far of this archive.
    pub(super) archive_total: u64,
    /// Content of the archives before this one (concatenated).
    pub(super) earlier: u64,
    pub(super) block_index: u64,
    /// `raw_len` of the last block read, when shorter than `block_size`: no
    /// block of the same archive may follow it.
    pub(super) short_block: Option<u32>,
    /// What the archives read so far cost.
    pub(super) spent: Spent,
    /// What a seek table after this archive must say (section 12).
    pub(super) expected: Expected,
    /// The prior given to the decoder, if any.
    pub(super) prior: Option<crate::Prior>,
}

/// What [`read_record`] read.
pub(super) enum Read1 {
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
pub(super) fn read_record<R: Read>(
    r: &mut R,
    walk: &mut Walk,
    limits: &Limits,
    free: &mut Vec<Vec<u8>>,
) -> Result<Read1> {
    if walk.block_index == 0 && walk.archive_total == 0 {
        start_archive(walk, limits)?;
    }
    let Walk {
        header,
        config,
        archive_total,
        earlier,
        block_index,
        short_block,
        spent,
        expected,
        prior,
    } = walk;
    match Record::read(r, header)? {
        Record::Block(bh) => {
            check_full(short_block, &bh, header)?;
            limits.check_output(*earlier + *archive_total + u64::from(bh.raw_len))?;
            let block_len = bh.encoded_len(header.version) + bh.payload_len as usize;
            spent.bytes += block_len as u64;
            expected.block(SeekEntry {
                block_len: block_len as u32,
                raw_len: bh.raw_len,
            });
            let raw_len = u64::from(bh.raw_len);
            let work = match bh.block_type {
                BlockType::Stored => (0, raw_len),
                // Charged below, from its segment table (issue 17).
                BlockType::Segmented => (0, 0),
                _ => config.block_work(raw_len, bh.stream_lens.len() as u64),
            };
            limits.charge(spent, work)?;
            let payload = read_payload(r, u64::from(bh.payload_len), free)?;
            if bh.block_type == BlockType::Segmented {
                check_segmented(config, header, limits, spent, &payload, bh.raw_len)?;
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
                prior: header.prior_id.and(prior.clone()),
                seed: header.seed,
                header: bh,
                payload,
                out: free.pop().unwrap_or_default(),
                index,
            }))
        }
        Record::End(end) => {
            spent.bytes += end.encoded_len(header.version) as u64;
            check_end(header, end.content_length, *archive_total)?;
            let content_check = end.content_check;
            // A seek table, then another archive, may follow.
            let (more, table) = after_end(r, expected)?;
            spent.bytes += table;
            *expected = Expected::default();
            if !more {
                return Ok(Read1::End {
                    content_check,
                    last: true,
                });
            }
            *header = Header::read_after_magic(r)?;
            *config = Arc::new(ModelConfig::from_header(header)?);
            check_memory(
                config,
                header,
                limits,
                0,
                "decoder memory of a concatenated archive (estimated bytes)",
            )?;
            spent.bytes += header.to_bytes().len() as u64;
            *earlier += *archive_total;
            *archive_total = 0;
            *block_index = 0;
            *short_block = None;
            Ok(Read1::End {
                content_check,
                last: false,
            })
        }
    }
}

/// What the first record of an archive checks: the prior it names (before any
/// of its output), the output limit against its declared length, and for the
/// first archive, the set-up work one full block gets for free.
fn start_archive(walk: &mut Walk, limits: &Limits) -> Result<()> {
    // A built-in prior (issue 20) is found by its id, with no option.
    if let Some(id) = walk.header.prior_id
        && walk.prior.as_ref().is_none_or(|p| p.id() != id)
        && let Some(b) = crate::Prior::builtin_by_id(&id)
    {
        walk.prior = Some(b);
    }
    crate::prior::check_header(&walk.header, walk.prior.as_ref())?;
    if let Some(n) = walk.header.content_length {
        limits.check_output(walk.earlier + n)?;
    }
    if walk.spent.free_setup.is_none() {
        walk.spent.bytes += walk.header.to_bytes().len() as u64;
        walk.spent.free_setup = Some(
            walk.config
                .max_setup_work(walk.header.block_size, walk.header.streams),
        );
    }
    Ok(())
}

/// Reads a payload of `want` bytes into a reused buffer. Reserves up to 1 MiB
/// at once, then grows with the bytes that arrive: a crafted length (up to
/// 2^30) costs no more memory than the input holds (doc/FORMAT.md section 7),
/// and a large payload only a few doublings.
fn read_payload<R: Read>(r: &mut R, want: u64, free: &mut Vec<Vec<u8>>) -> Result<Vec<u8>> {
    let mut payload = free.pop().unwrap_or_default();
    payload.clear();
    payload.reserve(want.min(1 << 20) as usize);
    r.take(want).read_to_end(&mut payload)?;
    if payload.len() as u64 != want {
        return Err(Error::Truncated {
            what: "block payload",
        });
    }
    Ok(payload)
}

/// A segmented block, before it is decoded: the model's work on the
/// transformed content and the inverse transforms' are charged (doc/FORMAT.md
/// sections 7.1 and 8), and its memory checked against the limit.
fn check_segmented(
    config: &ModelConfig,
    header: &Header,
    limits: &Limits,
    spent: &mut Spent,
    payload: &[u8],
    raw_len: u32,
) -> Result<()> {
    let max_streams = config.header_fields().0;
    let work = crate::segment::block_work(config, payload, raw_len, max_streams)?;
    limits.charge(spent, work)?;
    if limits.memory.is_some() {
        let seg = crate::segment::block_memory(config, payload, raw_len, max_streams)?;
        check_memory(
            config,
            header,
            limits,
            seg,
            "decoder memory for a segmented block (estimated bytes)",
        )?;
    }
    Ok(())
}

/// Refuses, under a memory limit, an archive (or a segmented block needing
/// `segmented` bytes) whose decoder memory bound exceeds it.
fn check_memory(
    config: &ModelConfig,
    header: &Header,
    limits: &Limits,
    segmented: u64,
    what: &'static str,
) -> Result<()> {
    let Some(limit) = limits.memory else {
        return Ok(());
    };
    let need = memory_bound(
        config,
        header.block_size.into(),
        u64::MAX,
        header.block_size.into(),
        limits.threads,
        segmented,
    );
    if need > limit {
        return Err(Error::OverLimit {
            what,
            value: need,
            limit,
            raise: crate::limits::Limit::Memory,
            note: "",
        });
    }
    Ok(())
}

/// Section 3.1: every block but the last of an archive has `raw_len =
/// block_size`. Fails when a block follows a shorter one; records this block's
/// length in `short` when it is shorter.
pub(crate) fn check_full(short: &mut Option<u32>, bh: &BlockHeader, header: &Header) -> Result<()> {
    if let Some(len) = *short {
        return Err(Error::InvalidField {
            field: "raw_len",
            value: len.into(),
            why: "less than block_size, but a block follows (only the last block of an archive may be shorter)",
        });
    }
    if bh.raw_len < header.block_size {
        *short = Some(bh.raw_len);
    }
    Ok(())
}

/// Checks an end record's `content_length` against the blocks' `raw_len` sum
/// and the header's `content_length`.
pub(crate) fn check_end(header: &Header, content_length: u64, total: u64) -> Result<()> {
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

/// Reads what follows an end record (sections 5 and 12): an optional seek
/// table, checked against `expected` (returns its length), then the end of the
/// input (`false`) or the `magic` of another archive (`true`).
pub(crate) fn after_end<R: Read>(r: &mut R, expected: &Expected) -> Result<(bool, u64)> {
    let mut magic = [0u8; 4];
    let mut n = read_up_to(r, &mut magic)?;
    let mut table = 0;
    if n == 4 && magic == SEEK_MAGIC {
        table = skip_seek_table(r, expected)?;
        n = read_up_to(r, &mut magic)?;
    }
    if n == 0 {
        return Ok((false, table));
    }
    if magic[..n] != MAGIC[..n] {
        return Err(Error::TrailingData);
    }
    if n < 4 {
        return Err(Error::Truncated {
            what: "magic of a concatenated archive",
        });
    }
    Ok((true, table))
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
pub(crate) fn read_up_to<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<usize> {
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
