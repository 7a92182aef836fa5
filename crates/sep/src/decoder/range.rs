//! Random access (issue 22): [`Decoder::range`] decodes a byte range of the
//! content of a seekable input, reading only the blocks that overlap it, and
//! [`content_length`] tells the content's length the same way.
//!
//! Blocks are found with the seek table (doc/FORMAT.md section 12) when the
//! input is one archive followed by one, else by walking the block headers:
//! each header gives its payload's length, so the walk seeks over payloads
//! instead of reading them (a few dozen bytes read per block).

use super::*;
use crate::format::{
    SEEK_FOOTER_LEN, footer_entry_count, parse_seek_table, seek_over_table, seek_table_len,
};
use std::io::{Seek, SeekFrom};

/// What a range decoder still has to do.
#[derive(Debug)]
pub(super) struct RangeState {
    /// Bytes of the next decoded block to drop (the range starts inside it).
    pub(super) skip: u64,
    /// Bytes still to return.
    pub(super) remaining: u64,
    /// Blocks still to read from the input.
    pub(super) blocks_left: u64,
    /// The output limit is checked against the range's length once, at the
    /// first read (positions in the walk are not output positions).
    pub(super) output_checked: bool,
}

/// The first block of a range, and what a walk knows when it reaches it.
struct First {
    /// Where its block header starts in the input.
    offset: u64,
    /// Its archive's header.
    header: Header,
    /// Content bytes of its archive before it.
    in_archive: u64,
    /// Its index in its archive.
    index: u64,
    /// Bytes of it before the range.
    skip: u64,
}

/// The blocks a range needs.
struct Plan {
    /// The header at offset 0 (used when no block is needed).
    header0: Header,
    first: Option<First>,
    /// How many blocks overlap the range.
    blocks: u64,
    /// The content's length, when it was reached.
    length: Option<u64>,
}

/// Counts the blocks of `raw_start .. raw_start + raw_len` that overlap
/// `start..end` and records the first one.
struct Collector {
    start: u64,
    end: Option<u64>,
    first: Option<First>,
    blocks: u64,
}

impl Collector {
    /// Whether no block at or after content offset `at` can overlap the range.
    fn done(&self, at: u64) -> bool {
        self.end.is_some_and(|end| at >= end)
    }

    fn block(&mut self, raw_start: u64, raw_len: u64, at: impl FnOnce(u64) -> First) {
        let raw_end = raw_start + raw_len;
        let empty = self.end == Some(self.start);
        if !empty && raw_end > self.start && !self.done(raw_start) {
            self.blocks += 1;
            if self.first.is_none() {
                self.first = Some(at(self.start - raw_start.min(self.start)));
            }
        }
    }
}

/// Plans with the seek table, or `None` when the input does not end in one
/// that describes the whole input (no table, or concatenated archives).
fn by_table<R: Read + Seek>(r: &mut R, c: &mut Collector) -> Result<Option<Plan>> {
    let file_len = r.seek(SeekFrom::End(0))?;
    if file_len < SEEK_FOOTER_LEN {
        return Ok(None);
    }
    r.seek(SeekFrom::End(-(SEEK_FOOTER_LEN as i64)))?;
    let mut footer = [0u8; SEEK_FOOTER_LEN as usize];
    crate::format::read_exact(r, &mut footer, "seek table")?;
    let Some(count) = footer_entry_count(&footer) else {
        return Ok(None);
    };
    let table_len = count
        .checked_mul(8)
        .and_then(|l| l.checked_add(seek_table_len(0)))
        .filter(|&l| l <= file_len)
        .ok_or(Error::SeekTable {
            why: "entry_count is larger than the input",
        })?;
    r.seek(SeekFrom::Start(0))?;
    let header = read_header(r)?;
    let header_len = header.to_bytes().len() as u64;
    r.seek(SeekFrom::Start(file_len - table_len))?;
    let mut table = vec![0u8; table_len as usize];
    crate::format::read_exact(r, &mut table, "seek table")?;
    let entries = parse_seek_table(&table, header.block_size, header.version)?;
    let blocks_len: u64 = entries.iter().map(|e| u64::from(e.block_len)).sum();
    let length: u64 = entries.iter().map(|e| u64::from(e.raw_len)).sum();
    // The end record's length (in version 3 it depends on content_length).
    let end_len = EndRecord {
        content_length: length,
        content_check: 0,
    }
    .encoded_len(header.version) as u64;
    if header_len + blocks_len + end_len + table_len != file_len {
        // The table of the last of several archives: walk instead.
        return Ok(None);
    }
    // The end record before the table must agree with it.
    r.seek(SeekFrom::Start(header_len + blocks_len))?;
    match Record::read(r, &header)? {
        Record::End(end) => check_end(&header, end.content_length, length)?,
        Record::Block(_) => {
            return Err(Error::SeekTable {
                why: "its block lengths do not lead to the end record",
            });
        }
    }
    let (mut offset, mut raw) = (header_len, 0u64);
    for (index, e) in entries.iter().enumerate() {
        if c.done(raw) {
            break;
        }
        c.block(raw, e.raw_len.into(), |skip| First {
            offset,
            header: header.clone(),
            in_archive: raw,
            index: index as u64,
            skip,
        });
        offset += u64::from(e.block_len);
        raw += u64::from(e.raw_len);
    }
    Ok(Some(Plan {
        header0: header,
        first: c.first.take(),
        blocks: c.blocks,
        length: Some(length),
    }))
}

/// Plans by walking the block headers from the start, seeking over payloads
/// (and seek tables); stops once the range is covered.
fn by_walk<R: Read + Seek>(r: &mut R, c: &mut Collector) -> Result<Plan> {
    r.seek(SeekFrom::Start(0))?;
    let mut header = read_header(r)?;
    let header0 = header.clone();
    let mut pos = header.to_bytes().len() as u64;
    let mut earlier = 0u64;
    loop {
        let (mut in_archive, mut index, mut short) = (0u64, 0u64, None);
        loop {
            if c.done(earlier + in_archive) {
                return Ok(Plan {
                    header0,
                    first: c.first.take(),
                    blocks: c.blocks,
                    length: None,
                });
            }
            match Record::read(r, &header)? {
                Record::Block(bh) => {
                    check_full(&mut short, &bh, &header)?;
                    let raw_start = earlier + in_archive;
                    c.block(raw_start, bh.raw_len.into(), |skip| First {
                        offset: pos,
                        header: header.clone(),
                        in_archive,
                        index,
                        skip,
                    });
                    pos += (bh.encoded_len(header.version) + bh.payload_len as usize) as u64;
                    r.seek(SeekFrom::Start(pos))?;
                    in_archive += u64::from(bh.raw_len);
                    index += 1;
                }
                Record::End(end) => {
                    check_end(&header, end.content_length, in_archive)?;
                    pos += end.encoded_len(header.version) as u64;
                    break;
                }
            }
        }
        earlier += in_archive;
        let mut magic = [0u8; 4];
        let mut n = read_up_to(r, &mut magic)?;
        if n == 4 && magic == SEEK_MAGIC {
            seek_over_table(r, index)?;
            pos += seek_table_len(index);
            n = read_up_to(r, &mut magic)?;
        }
        if n == 0 {
            return Ok(Plan {
                header0,
                first: c.first.take(),
                blocks: c.blocks,
                length: Some(earlier),
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
        header = Header::read_after_magic(r)?;
        ModelConfig::from_header(&header)?;
        pos += header.to_bytes().len() as u64;
    }
}

/// Finds the blocks of `start..end` (`end` `None`: to the end of the content),
/// checking that the range lies inside the content.
fn plan<R: Read + Seek>(r: &mut R, start: u64, end: Option<u64>) -> Result<Plan> {
    let mut c = Collector {
        start,
        end,
        first: None,
        blocks: 0,
    };
    let plan = match by_table(r, &mut c)? {
        Some(p) => p,
        None => {
            c.first = None;
            c.blocks = 0;
            by_walk(r, &mut c)?
        }
    };
    if let Some(length) = plan.length
        && end.unwrap_or(start).max(start) > length
    {
        return Err(Error::RangePastEnd {
            start,
            end: end.unwrap_or(length),
            length,
        });
    }
    Ok(plan)
}

/// The content length of the archive (or concatenated archives) in `r`, from
/// the seek table when there is one, else by walking the block headers
/// (seeking over payloads); nothing is decoded. `r` is left at an unspecified
/// position.
///
/// ```
/// use std::io::Cursor;
/// let data = vec![7u8; 10_000];
/// let options = sep::Options { model: sep::Model::Store, block_size: Some(4096), ..Default::default() };
/// let archive = sep::compress(&data, &options)?;
/// assert_eq!(sep::content_length(&mut Cursor::new(&archive))?, 10_000);
/// # Ok::<(), sep::Error>(())
/// ```
pub fn content_length<R: Read + Seek>(r: &mut R) -> Result<u64> {
    let plan = plan(r, 0, None)?;
    Ok(plan.length.expect("a walk to the end knows the length"))
}

impl<R: Read + Seek> Decoder<R> {
    /// A decoder of `len` content bytes from `start` (`None`: to the end) of a
    /// seekable input, which reads only the blocks that overlap the range:
    /// found with the seek table (doc/FORMAT.md section 12) when the input has
    /// one, else by walking the block headers and seeking over the payloads.
    /// Works across concatenated archives.
    ///
    /// Each block read is checked against its `raw_check`; the content's
    /// `content_check` cannot be, since only part of the content is decoded.
    /// A range that does not lie inside the content fails here with
    /// [`Error::RangePastEnd`]; an empty range inside it decodes to nothing.
    /// The limits and threads of the other builders apply; the output limit
    /// counts the range's bytes.
    ///
    /// ```
    /// use std::io::{Cursor, Read};
    /// let data: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
    /// let options = sep::Options {
    ///     model: sep::Model::Order2,
    ///     block_size: Some(8192),
    ///     seek_table: true,
    ///     ..Default::default()
    /// };
    /// let archive = sep::compress(&data, &options)?;
    /// let mut part = Vec::new();
    /// sep::Decoder::range(Cursor::new(&archive), 10_000, Some(5_000))?.read_to_end(&mut part)?;
    /// assert_eq!(part, &data[10_000..15_000]);
    /// # Ok::<(), sep::Error>(())
    /// ```
    pub fn range(mut inner: R, start: u64, len: Option<u64>) -> Result<Self> {
        let end = match len {
            None => None,
            Some(l) => Some(start.checked_add(l).ok_or(Error::RangePastEnd {
                start,
                end: u64::MAX,
                length: u64::MAX,
            })?),
        };
        let plan = plan(&mut inner, start, end)?;
        let length = plan.length;
        let remaining = match (end, length) {
            (Some(e), _) => e - start,
            (None, Some(l)) => l - start,
            (None, None) => unreachable!("a walk to the end knows the length"),
        };
        let (header, first) = match plan.first {
            Some(f) => (f.header.clone(), Some(f)),
            None => (plan.header0, None),
        };
        let config = Arc::new(ModelConfig::from_header(&header)?);
        let mut dec = Decoder::start(inner, header, config);
        if let Some(f) = first {
            dec.inner.seek(SeekFrom::Start(f.offset))?;
            let w = &mut dec.walk;
            w.archive_total = f.in_archive;
            w.block_index = f.index;
            // The blocks before this one count, their lengths are not known.
            w.expected.partial = true;
            w.expected.blocks = f.index;
            w.spent.bytes += w.header.to_bytes().len() as u64;
            w.spent.free_setup = Some(
                w.config
                    .max_setup_work(w.header.block_size, w.header.streams),
            );
            dec.range = Some(RangeState {
                skip: f.skip,
                remaining,
                blocks_left: plan.blocks,
                output_checked: false,
            });
        } else {
            dec.range = Some(RangeState {
                skip: 0,
                remaining: 0,
                blocks_left: 0,
                output_checked: false,
            });
        }
        Ok(dec)
    }
}
