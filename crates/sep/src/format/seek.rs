//! The seek table (doc/FORMAT.md section 12, issue 22): an optional index after
//! an archive's end record, one entry per block, so that a reader with a
//! seekable input can find block `k` without reading the blocks before it.
//!
//! ```text
//! offset    size  field
//! 0         4     table_magic   8F 53 45 4B  ("\x8FSEK")
//! 4         8 N   entries       per block: block_len u32, raw_len u32
//! 4 + 8N    8     entry_count   N, u64
//! 12 + 8N   4     table_check   check32 of bytes 0 .. 12 + 8N
//! 16 + 8N   4     footer_magic  4B 45 53 8F  ("KES\x8F")
//! ```
//!
//! `block_len` is the bytes of the block's record (block header, stream
//! lengths and payload, in the layout of the archive's format version); block `k` starts at the header's length plus the
//! `block_len` of the blocks before it, and its content at the sum of their
//! `raw_len`. The footer is fixed-size so that a reader can find the table from
//! the end of the file.

use super::{MAX_BLOCK_SIZE, u32_at, u64_at};
use crate::error::{Error, Result};
use std::io::{self, Read};
use xxhash_rust::xxh3::Xxh3;

/// `table_magic`: the first four bytes of a seek table.
pub const SEEK_MAGIC: [u8; 4] = [0x8F, b'S', b'E', b'K'];
/// `footer_magic`: the last four bytes of a seek table.
pub const SEEK_FOOTER_MAGIC: [u8; 4] = [b'K', b'E', b'S', 0x8F];
/// Bytes of one entry.
pub const SEEK_ENTRY_LEN: u64 = 8;
/// Bytes of a seek table besides its entries: `table_magic` and the footer.
pub const SEEK_FIXED_LEN: u64 = 20;
/// Bytes of the footer: `entry_count`, `table_check`, `footer_magic`.
pub const SEEK_FOOTER_LEN: u64 = 16;

/// One block's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeekEntry {
    /// Bytes of the block's record: block header, stream lengths, payload.
    pub block_len: u32,
    /// `raw_len` of the block.
    pub raw_len: u32,
}

impl SeekEntry {
    /// The entry's 8 bytes.
    pub fn to_bytes(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&self.block_len.to_le_bytes());
        b[4..].copy_from_slice(&self.raw_len.to_le_bytes());
        b
    }
}

/// Bytes of a seek table of `entries` entries.
pub fn seek_table_len(entries: u64) -> u64 {
    SEEK_FIXED_LEN + SEEK_ENTRY_LEN * entries
}

/// Serialises a seek table of `entries`, footer included.
pub fn write_seek_table(entries: &[SeekEntry]) -> Vec<u8> {
    let mut b = Vec::with_capacity(seek_table_len(entries.len() as u64) as usize);
    b.extend_from_slice(&SEEK_MAGIC);
    for e in entries {
        b.extend_from_slice(&e.to_bytes());
    }
    b.extend_from_slice(&(entries.len() as u64).to_le_bytes());
    let check = xxhash_rust::xxh3::xxh3_64(&b) as u32;
    b.extend_from_slice(&check.to_le_bytes());
    b.extend_from_slice(&SEEK_FOOTER_MAGIC);
    b
}

fn bad(why: &'static str) -> Error {
    Error::SeekTable { why }
}

/// Reads the footer's `entry_count` after checking `footer_magic`, or `None`
/// when the last bytes are not a seek table's footer.
pub fn footer_entry_count(footer: &[u8; SEEK_FOOTER_LEN as usize]) -> Option<u64> {
    (footer[12..] == SEEK_FOOTER_MAGIC).then(|| u64_at(footer, 0))
}

/// Parses a whole seek table (`table_magic` to `footer_magic`) and checks its
/// `table_check` and the limits of each entry (`raw_len` in `1..=block_size`, only
/// the last one shorter than `block_size`, `block_len` at least 16 in format
/// version 1 and 7 in version 3: [`min_block_len`](super::min_block_len)).
pub fn parse_seek_table(bytes: &[u8], block_size: u32, version: u8) -> Result<Vec<SeekEntry>> {
    let n = bytes.len() as u64;
    if n < SEEK_FIXED_LEN || !(n - SEEK_FIXED_LEN).is_multiple_of(SEEK_ENTRY_LEN) {
        return Err(bad("its length is not 20 + 8 x entry_count"));
    }
    if bytes[..4] != SEEK_MAGIC {
        return Err(bad("table_magic is wrong"));
    }
    if bytes[bytes.len() - 4..] != SEEK_FOOTER_MAGIC {
        return Err(bad("footer_magic is wrong"));
    }
    let count = (n - SEEK_FIXED_LEN) / SEEK_ENTRY_LEN;
    let body = 4 + 8 * count as usize;
    if u64_at(bytes, body) != count {
        return Err(bad("entry_count does not match the table's length"));
    }
    if xxhash_rust::xxh3::xxh3_64(&bytes[..body + 8]) as u32 != u32_at(bytes, body + 8) {
        return Err(bad("table_check mismatch"));
    }
    let entries: Vec<SeekEntry> = bytes[4..body]
        .chunks_exact(8)
        .map(|c| SeekEntry {
            block_len: u32_at(c, 0),
            raw_len: u32_at(c, 4),
        })
        .collect();
    for (i, e) in entries.iter().enumerate() {
        check_entry(*e, block_size, version, i + 1 == entries.len())?;
    }
    Ok(entries)
}

fn check_entry(e: SeekEntry, block_size: u32, version: u8, last: bool) -> Result<()> {
    if e.raw_len == 0 || e.raw_len > block_size.min(MAX_BLOCK_SIZE) {
        return Err(bad("an entry's raw_len is outside 1..=block_size"));
    }
    if !last && e.raw_len != block_size {
        return Err(bad(
            "an entry other than the last has raw_len below block_size",
        ));
    }
    if e.block_len < super::min_block_len(version) {
        return Err(bad(if version == super::FORMAT_VERSION_1 {
            "an entry's block_len is below 16"
        } else {
            "an entry's block_len is below 7"
        }));
    }
    Ok(())
}

/// What a sequential reader knows of an archive's blocks when it meets a seek
/// table: their number, and the XXH3-64 of the entries they call for (`None`
/// when the reader started in the middle of the archive and cannot tell).
#[derive(Clone, Default)]
pub(crate) struct Expected {
    pub(crate) blocks: u64,
    pub(crate) entries: Xxh3,
    pub(crate) partial: bool,
}

impl Expected {
    /// Records one block read.
    pub(crate) fn block(&mut self, entry: SeekEntry) {
        self.blocks += 1;
        self.entries.update(&entry.to_bytes());
    }
}

/// Reads a seek table whose `table_magic` has been read, checking it against
/// the archive's blocks, without holding it in memory; returns its length.
pub(crate) fn skip_seek_table<R: Read>(r: &mut R, expected: &Expected) -> Result<u64> {
    let mut check = Xxh3::new();
    check.update(&SEEK_MAGIC);
    let mut entries = Xxh3::new();
    let mut left = SEEK_ENTRY_LEN * expected.blocks;
    let mut buf = [0u8; 8192];
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        super::read_exact(r, &mut buf[..n], "seek table")?;
        check.update(&buf[..n]);
        entries.update(&buf[..n]);
        left -= n as u64;
    }
    let mut footer = [0u8; SEEK_FOOTER_LEN as usize];
    super::read_exact(r, &mut footer, "seek table")?;
    if footer[12..] != SEEK_FOOTER_MAGIC {
        return Err(bad(
            "footer_magic is wrong (or entry_count does not match the blocks)",
        ));
    }
    if u64_at(&footer, 0) != expected.blocks {
        return Err(bad("entry_count does not match the archive's blocks"));
    }
    check.update(&footer[..8]);
    if check.digest() as u32 != u32_at(&footer, 8) {
        return Err(bad("table_check mismatch"));
    }
    if !expected.partial && entries.digest() != expected.entries.digest() {
        return Err(bad("entries do not match the archive's blocks"));
    }
    Ok(seek_table_len(expected.blocks))
}

/// Skips a seek table whose `table_magic` has been read by seeking over its
/// entries; checks `entry_count` and `footer_magic` (a random-access reader
/// walking block headers, which decodes only some blocks).
pub(crate) fn seek_over_table<R: Read + io::Seek>(r: &mut R, blocks: u64) -> Result<()> {
    let skip = SEEK_ENTRY_LEN
        .checked_mul(blocks)
        .and_then(|s| i64::try_from(s).ok())
        .ok_or(bad("too many entries"))?;
    r.seek(io::SeekFrom::Current(skip))?;
    let mut footer = [0u8; SEEK_FOOTER_LEN as usize];
    super::read_exact(r, &mut footer, "seek table")?;
    match footer_entry_count(&footer) {
        None => Err(bad("footer_magic is wrong")),
        Some(n) if n != blocks => Err(bad("entry_count does not match the archive's blocks")),
        Some(_) => Ok(()),
    }
}
