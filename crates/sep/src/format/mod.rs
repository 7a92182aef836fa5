//! The archive format, field by field, as doc/FORMAT.md defines it.
//!
//! Parsing validates every field against the spec and the limits of its
//! section 7 before anything is allocated; errors use the spec's field names.

use crate::error::{Error, Result};
use std::io::{self, Read, Write};
use xxhash_rust::xxh3::xxh3_64;

mod seek; // issue 22: the seek table, section 12
pub(crate) use seek::{Expected, seek_over_table, skip_seek_table};
pub use seek::{
    SEEK_ENTRY_LEN, SEEK_FIXED_LEN, SEEK_FOOTER_LEN, SEEK_FOOTER_MAGIC, SEEK_MAGIC, SeekEntry,
    footer_entry_count, parse_seek_table, seek_table_len, write_seek_table,
};

/// `magic`: the first four bytes of every archive.
pub const MAGIC: [u8; 4] = [0x8F, b'S', b'E', b'P'];
/// The `format_version` this library writes by default: 3, the compact
/// archive (doc/FORMAT.md section 13, issue 20). It reads 1 and 3.
pub const FORMAT_VERSION: u8 = FORMAT_VERSION_3;
/// The first `format_version`: fixed-width fields (doc/FORMAT.md sections 2-3).
pub const FORMAT_VERSION_1: u8 = 1;
/// The compact `format_version`: the fields of version 1 as minimal varints
/// (doc/FORMAT.md section 13).
pub const FORMAT_VERSION_3: u8 = 3;
/// Largest `block_size`.
pub const MAX_BLOCK_SIZE: u32 = 1 << 30;
/// Largest `streams`.
pub const MAX_STREAMS: u32 = 4096;
/// Largest `params_len`.
pub const MAX_PARAMS_LEN: u16 = 1024;
/// Largest `table_bits` of model order2 (a table of 2^24 entries, 64 MiB).
pub const ORDER2_MAX_TABLE_BITS: u8 = 24;
/// Most bytes of model state one block may need, as estimated by
/// [`ModelConfig::max_memory_bytes`](crate::ModelConfig::max_memory_bytes) for
/// blocks of `block_size` bytes: 4 GiB.
pub const MAX_MODEL_MEMORY: u64 = 1 << 32;
/// Bytes of a version-1 block header before the stream lengths.
pub const BLOCK_HEADER_LEN: usize = 16;
/// Bytes of a version-1 end record.
pub const END_RECORD_LEN: usize = 24;
/// The fewest bytes a version-3 block record can take: `block_type`, two
/// one-byte varints and `raw_check`.
pub const COMPACT_BLOCK_MIN_LEN: usize = 7;

/// The fewest bytes of a block record (block header and payload) in an
/// archive of `version`: what a seek table's `block_len` is checked against.
pub fn min_block_len(version: u8) -> u32 {
    if version == FORMAT_VERSION_1 {
        BLOCK_HEADER_LEN as u32
    } else {
        COMPACT_BLOCK_MIN_LEN as u32
    }
}

/// Whether this library reads (and writes) archives of `format_version`.
pub fn is_supported_version(version: u8) -> bool {
    version == FORMAT_VERSION_1 || version == FORMAT_VERSION_3
}

const FLAG_CONTENT_LENGTH: u8 = 1;
/// Flag bit 1: a `prior_id` follows `params` (section 2, issue 20).
const FLAG_PRIOR: u8 = 2;
const FIXED_HEADER_LEN: usize = 38;

/// `block_type` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockType {
    /// `0x00`: raw bytes.
    Stored,
    /// `0x01`: coded by the model.
    Modelled,
    /// `0x02`: cut into segments, some transformed (section 8, issue 17).
    Segmented,
    /// `0xFF`: the end record.
    End,
}

impl BlockType {
    fn from_byte(b: u8) -> Result<Self> {
        match b {
            0x00 => Ok(BlockType::Stored),
            0x01 => Ok(BlockType::Modelled),
            0x02 => Ok(BlockType::Segmented),
            0xFF => Ok(BlockType::End),
            other => Err(Error::InvalidField {
                field: "block_type",
                value: other.into(),
                why: "must be 0x00, 0x01 or 0xFF",
            }),
        }
    }

    fn to_byte(self) -> u8 {
        match self {
            BlockType::Stored => 0x00,
            BlockType::Modelled => 0x01,
            BlockType::Segmented => 0x02,
            BlockType::End => 0xFF,
        }
    }
}

/// The archive header (section 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// `format_version`: 1 (fixed-width fields) or 3 (compact, section 13).
    /// It decides how this header, the block headers and the end record are
    /// written and read.
    pub version: u8,
    /// `content_length`, when the encoder knew it.
    pub content_length: Option<u64>,
    /// `block_size`.
    pub block_size: u32,
    /// `seed`.
    pub seed: u64,
    /// `streams` (B).
    pub streams: u32,
    /// `context` (L).
    pub context: u16,
    /// `model_id`.
    pub model_id: u16,
    /// `params`.
    pub params: Vec<u8>,
    /// `prior_id` (flag bit 1): the XXH3-128 of the prior file the archive
    /// was coded with (doc/FORMAT.md section 11), `None` without one.
    pub prior_id: Option<[u8; 16]>,
}

impl Header {
    /// The `flags` byte (same bits in versions 1 and 3).
    fn flags(&self) -> u8 {
        (if self.content_length.is_some() {
            FLAG_CONTENT_LENGTH
        } else {
            0
        }) | if self.prior_id.is_some() {
            FLAG_PRIOR
        } else {
            0
        }
    }

    /// Serialises the header, `header_check` included, in the layout of
    /// its [`version`](Self::version).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(FIXED_HEADER_LEN + self.params.len() + 20);
        b.extend_from_slice(&MAGIC);
        b.push(self.version);
        b.push(self.flags());
        if self.version == FORMAT_VERSION_1 {
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&self.content_length.unwrap_or(0).to_le_bytes());
            b.extend_from_slice(&self.block_size.to_le_bytes());
            b.extend_from_slice(&self.seed.to_le_bytes());
            b.extend_from_slice(&self.streams.to_le_bytes());
            b.extend_from_slice(&self.context.to_le_bytes());
            b.extend_from_slice(&self.model_id.to_le_bytes());
            b.extend_from_slice(&(self.params.len() as u16).to_le_bytes());
        } else {
            if let Some(n) = self.content_length {
                write_varint64(&mut b, n);
            }
            write_varint64(&mut b, self.block_size.into());
            write_varint64(&mut b, self.seed);
            write_varint64(&mut b, self.streams.into());
            write_varint64(&mut b, self.context.into());
            write_varint64(&mut b, self.model_id.into());
            write_varint64(&mut b, self.params.len() as u64);
        }
        b.extend_from_slice(&self.params);
        if let Some(id) = &self.prior_id {
            b.extend_from_slice(id);
        }
        let check = xxh3_64(&b) as u32;
        b.extend_from_slice(&check.to_le_bytes());
        b
    }

    /// Reads and validates a header whose `magic` has already been read.
    pub fn read_after_magic<R: Read>(r: &mut R) -> Result<Header> {
        let mut first = [0u8; 2];
        read_exact(r, &mut first[..1], "header")?;
        let version = first[0];
        if !is_supported_version(version) {
            return Err(Error::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        read_exact(r, &mut first[1..], "header")?;
        let flags = first[1];
        if flags & !(FLAG_CONTENT_LENGTH | FLAG_PRIOR) != 0 {
            return Err(Error::Reserved {
                field: "flags",
                value: flags.into(),
            });
        }
        if version == FORMAT_VERSION_3 {
            return Self::read_compact(r, flags);
        }
        let mut fixed = [0u8; FIXED_HEADER_LEN];
        fixed[..4].copy_from_slice(&MAGIC);
        fixed[4..6].copy_from_slice(&first);
        read_exact(r, &mut fixed[6..], "header")?;
        let reserved = u16_at(&fixed, 6);
        if reserved != 0 {
            return Err(Error::Reserved {
                field: "reserved (header)",
                value: reserved.into(),
            });
        }
        let content_length = u64_at(&fixed, 8);
        let block_size = u32_at(&fixed, 16);
        let seed = u64_at(&fixed, 20);
        let streams = u32_at(&fixed, 28);
        let context = u16_at(&fixed, 32);
        let model_id = u16_at(&fixed, 34);
        let params_len = u16_at(&fixed, 36);
        if flags & FLAG_CONTENT_LENGTH == 0 && content_length != 0 {
            return Err(Error::Reserved {
                field: "content_length (flag clear)",
                value: content_length,
            });
        }
        Self::finish_read(
            r,
            &fixed,
            Header {
                version,
                content_length: (flags & FLAG_CONTENT_LENGTH != 0).then_some(content_length),
                block_size,
                seed,
                streams,
                context,
                model_id,
                params: Vec::new(),
                prior_id: (flags & FLAG_PRIOR != 0).then_some([0; 16]),
            },
            params_len,
        )
    }

    /// Reads the rest of a version-3 header (section 13) after `flags`.
    fn read_compact<R: Read>(r: &mut R, flags: u8) -> Result<Header> {
        let mut seen = Vec::with_capacity(64);
        seen.extend_from_slice(&MAGIC);
        seen.extend_from_slice(&[FORMAT_VERSION_3, flags]);
        let mut field =
            |name: &'static str, bits: u32| read_varint_bits(r, &mut seen, name, "header", bits);
        let content_length = if flags & FLAG_CONTENT_LENGTH != 0 {
            Some(field("content_length", 64)?)
        } else {
            None
        };
        let block_size = field("block_size", 32)? as u32;
        let seed = field("seed", 64)?;
        let streams = field("streams", 32)? as u32;
        let context = field("context", 16)? as u16;
        let model_id = field("model_id", 16)? as u16;
        let params_len = field("params_len", 16)? as u16;
        Self::finish_read(
            r,
            &seen,
            Header {
                version: FORMAT_VERSION_3,
                content_length,
                block_size,
                seed,
                streams,
                context,
                model_id,
                params: Vec::new(),
                prior_id: (flags & FLAG_PRIOR != 0).then_some([0; 16]),
            },
            params_len,
        )
    }

    /// Checks the limits of section 7, then reads `params`, `prior_id` (when
    /// `header.prior_id` is set) and `header_check` (over `seen`, the bytes
    /// before `params`, and what follows them) into `header`.
    fn finish_read<R: Read>(
        r: &mut R,
        seen: &[u8],
        mut header: Header,
        params_len: u16,
    ) -> Result<Header> {
        check_range(
            "block_size",
            header.block_size.into(),
            1,
            MAX_BLOCK_SIZE.into(),
            "must be in 1..=2^30",
        )?;
        check_range(
            "streams",
            header.streams.into(),
            1,
            MAX_STREAMS.into(),
            "must be in 1..=4096",
        )?;
        check_range(
            "params_len",
            params_len.into(),
            0,
            MAX_PARAMS_LEN.into(),
            "must be at most 1024",
        )?;
        let id_len = if header.prior_id.is_some() { 16 } else { 0 };
        let mut rest = vec![0u8; usize::from(params_len) + id_len + 4];
        read_exact(r, &mut rest, "header")?;
        let (params, rest) = rest.split_at(usize::from(params_len));
        let (id, check) = rest.split_at(id_len);
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(seen);
        hasher.update(params);
        hasher.update(id);
        if hasher.digest() as u32 != u32_at(check, 0) {
            return Err(Error::HeaderChecksum);
        }
        header.params = params.to_vec();
        if id_len > 0 {
            header.prior_id = Some(id.try_into().expect("16 bytes"));
        }
        Ok(header)
    }
}

/// A block header (section 3.1), or the end record (section 3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A stored or modelled block.
    Block(BlockHeader),
    /// The end record.
    End(EndRecord),
}

/// A block header (section 3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockHeader {
    /// `block_type` (never [`BlockType::End`]).
    pub block_type: BlockType,
    /// `raw_len`.
    pub raw_len: u32,
    /// `payload_len`.
    pub payload_len: u32,
    /// `raw_check`.
    pub raw_check: u32,
    /// `stream_len[i]` (modelled blocks only).
    pub stream_lens: Vec<u32>,
}

/// The end record (section 3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndRecord {
    /// `content_length`.
    pub content_length: u64,
    /// `content_check`.
    pub content_check: u64,
}

impl BlockHeader {
    /// Serialises the block header (stream lengths included) in the layout
    /// of format `version`.
    pub fn write_to<W: Write>(&self, w: &mut W, version: u8) -> io::Result<()> {
        let mut b = Vec::with_capacity(BLOCK_HEADER_LEN + 5 * (1 + self.stream_lens.len()));
        b.push(self.block_type.to_byte());
        if version == FORMAT_VERSION_1 {
            b.extend_from_slice(&[0, 0, 0]);
            b.extend_from_slice(&self.raw_len.to_le_bytes());
            b.extend_from_slice(&self.payload_len.to_le_bytes());
        } else {
            write_varint(&mut b, self.raw_len);
            write_varint(&mut b, self.payload_len);
        }
        b.extend_from_slice(&self.raw_check.to_le_bytes());
        if self.block_type == BlockType::Modelled {
            write_varint(&mut b, self.stream_lens.len() as u32);
            for &l in &self.stream_lens {
                write_varint(&mut b, l);
            }
        }
        w.write_all(&b)
    }

    /// Bytes this header takes when written in format `version`.
    pub fn encoded_len(&self, version: u8) -> usize {
        let fixed = if version == FORMAT_VERSION_1 {
            BLOCK_HEADER_LEN
        } else {
            5 + varint_len(self.raw_len) + varint_len(self.payload_len)
        };
        fixed
            + if self.block_type == BlockType::Modelled {
                varint_len(self.stream_lens.len() as u32)
                    + self
                        .stream_lens
                        .iter()
                        .map(|&l| varint_len(l))
                        .sum::<usize>()
            } else {
                0
            }
    }
}

impl EndRecord {
    /// Serialises the end record in the layout of format `version`.
    pub fn to_bytes(&self, version: u8) -> Vec<u8> {
        let mut b = Vec::with_capacity(END_RECORD_LEN);
        b.push(BlockType::End.to_byte());
        if version == FORMAT_VERSION_1 {
            b.extend_from_slice(&[0; 7]);
            b.extend_from_slice(&self.content_length.to_le_bytes());
        } else {
            write_varint64(&mut b, self.content_length);
        }
        b.extend_from_slice(&self.content_check.to_le_bytes());
        b
    }

    /// Bytes this record takes when written in format `version`.
    pub fn encoded_len(&self, version: u8) -> usize {
        if version == FORMAT_VERSION_1 {
            END_RECORD_LEN
        } else {
            9 + varint64_len(self.content_length)
        }
    }
}

impl Record {
    /// Reads the next block header or the end record, validated against
    /// `header` (limits of section 7 included), in the layout of
    /// `header.version`.
    pub fn read<R: Read>(r: &mut R, header: &Header) -> Result<Record> {
        let compact = header.version != FORMAT_VERSION_1;
        let mut first = [0u8; 1];
        read_exact(r, &mut first, "block header")?;
        let mut scratch = Vec::new();
        match BlockType::from_byte(first[0])? {
            BlockType::End if compact => {
                let content_length =
                    read_varint_bits(r, &mut scratch, "content_length", "end record", 64)?;
                let mut b = [0u8; 8];
                read_exact(r, &mut b, "end record")?;
                Ok(Record::End(EndRecord {
                    content_length,
                    content_check: u64::from_le_bytes(b),
                }))
            }
            BlockType::End => {
                let mut b = [0u8; END_RECORD_LEN];
                b[0] = first[0];
                read_exact(r, &mut b[1..], "end record")?;
                let reserved = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes")) >> 8;
                if reserved != 0 {
                    return Err(Error::Reserved {
                        field: "reserved (end record)",
                        value: reserved,
                    });
                }
                Ok(Record::End(EndRecord {
                    content_length: u64_at(&b, 8),
                    content_check: u64_at(&b, 16),
                }))
            }
            block_type => {
                let (raw_len, payload_len, raw_check) = if compact {
                    let raw_len =
                        read_varint_bits(r, &mut scratch, "raw_len", "block header", 32)? as u32;
                    let payload_len =
                        read_varint_bits(r, &mut scratch, "payload_len", "block header", 32)?
                            as u32;
                    let mut c = [0u8; 4];
                    read_exact(r, &mut c, "block header")?;
                    (raw_len, payload_len, u32::from_le_bytes(c))
                } else {
                    let mut b = [0u8; BLOCK_HEADER_LEN];
                    b[0] = first[0];
                    read_exact(r, &mut b[1..], "block header")?;
                    let reserved = u32_at(&b, 0) >> 8;
                    if reserved != 0 {
                        return Err(Error::Reserved {
                            field: "reserved (block header)",
                            value: reserved.into(),
                        });
                    }
                    (u32_at(&b, 4), u32_at(&b, 8), u32_at(&b, 12))
                };
                check_range(
                    "raw_len",
                    raw_len.into(),
                    1,
                    header.block_size.into(),
                    "must be in 1..=block_size",
                )?;
                if payload_len > raw_len {
                    return Err(Error::InvalidField {
                        field: "payload_len",
                        value: payload_len.into(),
                        why: "must not exceed raw_len",
                    });
                }
                let mut stream_lens = Vec::new();
                match block_type {
                    BlockType::Stored => {
                        if payload_len != raw_len {
                            return Err(Error::LengthMismatch {
                                what: "payload_len of a stored block",
                                expected: raw_len.into(),
                                found: payload_len.into(),
                            });
                        }
                    }
                    // Section 8 (issue 17): the segment table is in the payload.
                    BlockType::Segmented => {
                        if header.model_id == 0 {
                            return Err(Error::InvalidField {
                                field: "block_type",
                                value: 2,
                                why: "model store has no segmented blocks",
                            });
                        }
                    }
                    _ => {
                        let count = read_varint(r, "stream_count")?;
                        check_range(
                            "stream_count",
                            count.into(),
                            1,
                            header.streams.into(),
                            "must be in 1..=streams",
                        )?;
                        let mut sum = 0u64;
                        for _ in 0..count {
                            let l = read_varint(r, "stream_len")?;
                            sum += u64::from(l);
                            stream_lens.push(l);
                        }
                        if sum != u64::from(payload_len) {
                            return Err(Error::LengthMismatch {
                                what: "sum of stream_len",
                                expected: payload_len.into(),
                                found: sum,
                            });
                        }
                    }
                }
                Ok(Record::Block(BlockHeader {
                    block_type,
                    raw_len,
                    payload_len,
                    raw_check,
                    stream_lens,
                }))
            }
        }
    }
}

/// check32 of a block's content.
pub fn raw_check(data: &[u8]) -> u32 {
    xxh3_64(data) as u32
}

fn check_range(field: &'static str, value: u64, lo: u64, hi: u64, why: &'static str) -> Result<()> {
    if value < lo || value > hi {
        return Err(Error::InvalidField { field, value, why });
    }
    Ok(())
}

/// `read_exact` that reports a clean end of input as truncation of `what`.
pub(crate) fn read_exact<R: Read>(r: &mut R, buf: &mut [u8], what: &'static str) -> Result<()> {
    r.read_exact(buf).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            Error::Truncated { what }
        } else {
            Error::Io(e)
        }
    })
}

/// Writes `v` as a minimal LEB128 varint (also the segmented payload's,
/// doc/FORMAT.md section 8).
pub(crate) fn write_varint(out: &mut Vec<u8>, v: u32) {
    write_varint64(out, v.into());
}

/// Writes `v` as a minimal LEB128 varint (section 13 uses it for 64-bit
/// fields as well).
fn write_varint64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_len(v: u32) -> usize {
    varint64_len(v.into())
}

fn varint64_len(v: u64) -> usize {
    (64 - v.max(1).leading_zeros() as usize).div_ceil(7)
}

fn read_varint<R: Read>(r: &mut R, field: &'static str) -> Result<u32> {
    read_varint_bits(r, &mut Vec::new(), field, "block header", 32).map(|v| v as u32)
}

/// Reads a minimal LEB128 varint of at most `bits` bits (16, 32 or 64: at
/// most 3, 5 or 10 bytes) into a `u64`, appending the bytes read to `seen`;
/// a clean end of input is truncation of `what`.
pub(crate) fn read_varint_bits<R: Read>(
    r: &mut R,
    seen: &mut Vec<u8>,
    field: &'static str,
    what: &'static str,
    bits: u32,
) -> Result<u64> {
    let (max_bytes, too_wide, too_long) = match bits {
        16 => (3, "varint exceeds 16 bits", "varint longer than 3 bytes"),
        32 => (5, "varint exceeds 32 bits", "varint longer than 5 bytes"),
        _ => (10, "varint exceeds 64 bits", "varint longer than 10 bytes"),
    };
    let mut v = 0u128;
    for i in 0..max_bytes {
        let mut b = [0u8; 1];
        read_exact(r, &mut b, what)?;
        seen.push(b[0]);
        v |= u128::from(b[0] & 0x7F) << (7 * i);
        if b[0] & 0x80 == 0 {
            let shown = v.min(u64::MAX.into()) as u64;
            if b[0] == 0 && i > 0 {
                return Err(Error::InvalidField {
                    field,
                    value: shown,
                    why: "varint is not minimal",
                });
            }
            if v >> bits != 0 {
                return Err(Error::InvalidField {
                    field,
                    value: shown,
                    why: too_wide,
                });
            }
            return Ok(v as u64);
        }
    }
    Err(Error::InvalidField {
        field,
        value: v.min(u64::MAX.into()) as u64,
        why: too_long,
    })
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().expect("2 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests;
