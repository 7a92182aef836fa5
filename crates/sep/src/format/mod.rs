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
/// The `format_version` this library writes and reads.
pub const FORMAT_VERSION: u8 = 1;
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
/// Bytes of a block header before the stream lengths.
pub const BLOCK_HEADER_LEN: usize = 16;
/// Bytes of the end record.
pub const END_RECORD_LEN: usize = 24;

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
    /// Serialises the header, `header_check` included.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(FIXED_HEADER_LEN + self.params.len() + 4);
        b.extend_from_slice(&MAGIC);
        b.push(FORMAT_VERSION);
        b.push(
            if self.content_length.is_some() {
                FLAG_CONTENT_LENGTH
            } else {
                0
            } | if self.prior_id.is_some() {
                FLAG_PRIOR
            } else {
                0
            },
        );
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&self.content_length.unwrap_or(0).to_le_bytes());
        b.extend_from_slice(&self.block_size.to_le_bytes());
        b.extend_from_slice(&self.seed.to_le_bytes());
        b.extend_from_slice(&self.streams.to_le_bytes());
        b.extend_from_slice(&self.context.to_le_bytes());
        b.extend_from_slice(&self.model_id.to_le_bytes());
        b.extend_from_slice(&(self.params.len() as u16).to_le_bytes());
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
        let mut fixed = [0u8; FIXED_HEADER_LEN];
        fixed[..4].copy_from_slice(&MAGIC);
        read_exact(r, &mut fixed[4..], "header")?;
        let version = fixed[4];
        if version != FORMAT_VERSION {
            return Err(Error::UnsupportedVersion {
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        let flags = fixed[5];
        if flags & !(FLAG_CONTENT_LENGTH | FLAG_PRIOR) != 0 {
            return Err(Error::Reserved {
                field: "flags",
                value: flags.into(),
            });
        }
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
        check_range(
            "block_size",
            block_size.into(),
            1,
            MAX_BLOCK_SIZE.into(),
            "must be in 1..=2^30",
        )?;
        check_range(
            "streams",
            streams.into(),
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
        let id_len = if flags & FLAG_PRIOR != 0 { 16 } else { 0 };
        let mut rest = vec![0u8; usize::from(params_len) + id_len + 4];
        read_exact(r, &mut rest, "header")?;
        let (params, rest) = rest.split_at(usize::from(params_len));
        let (id, check) = rest.split_at(id_len);
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&fixed);
        hasher.update(params);
        hasher.update(id);
        if hasher.digest() as u32 != u32_at(check, 0) {
            return Err(Error::HeaderChecksum);
        }
        Ok(Header {
            content_length: (flags & FLAG_CONTENT_LENGTH != 0).then_some(content_length),
            block_size,
            seed,
            streams,
            context,
            model_id,
            params: params.to_vec(),
            prior_id: (id_len > 0).then(|| id.try_into().expect("16 bytes")),
        })
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
    /// Serialises the block header (stream lengths included).
    pub fn write_to<W: Write>(&self, w: &mut W) -> io::Result<()> {
        let mut b = Vec::with_capacity(BLOCK_HEADER_LEN + 5 * (1 + self.stream_lens.len()));
        b.push(self.block_type.to_byte());
        b.extend_from_slice(&[0, 0, 0]);
        b.extend_from_slice(&self.raw_len.to_le_bytes());
        b.extend_from_slice(&self.payload_len.to_le_bytes());
        b.extend_from_slice(&self.raw_check.to_le_bytes());
        if self.block_type == BlockType::Modelled {
            write_varint(&mut b, self.stream_lens.len() as u32);
            for &l in &self.stream_lens {
                write_varint(&mut b, l);
            }
        }
        w.write_all(&b)
    }

    /// Bytes this header takes when written.
    pub fn encoded_len(&self) -> usize {
        BLOCK_HEADER_LEN
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
    /// Serialises the end record.
    pub fn to_bytes(&self) -> [u8; END_RECORD_LEN] {
        let mut b = [0u8; END_RECORD_LEN];
        b[0] = BlockType::End.to_byte();
        b[8..16].copy_from_slice(&self.content_length.to_le_bytes());
        b[16..24].copy_from_slice(&self.content_check.to_le_bytes());
        b
    }
}

impl Record {
    /// Reads the next block header or the end record, validated against
    /// `header` (limits of section 7 included).
    pub fn read<R: Read>(r: &mut R, header: &Header) -> Result<Record> {
        let mut first = [0u8; 1];
        read_exact(r, &mut first, "block header")?;
        match BlockType::from_byte(first[0])? {
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
                let raw_len = u32_at(&b, 4);
                let payload_len = u32_at(&b, 8);
                let raw_check = u32_at(&b, 12);
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

fn write_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_len(v: u32) -> usize {
    (32 - v.max(1).leading_zeros() as usize).div_ceil(7)
}

fn read_varint<R: Read>(r: &mut R, field: &'static str) -> Result<u32> {
    let mut v = 0u64;
    for i in 0..5 {
        let mut b = [0u8; 1];
        read_exact(r, &mut b, "block header")?;
        v |= u64::from(b[0] & 0x7F) << (7 * i);
        if b[0] & 0x80 == 0 {
            if b[0] == 0 && i > 0 {
                return Err(Error::InvalidField {
                    field,
                    value: v,
                    why: "varint is not minimal",
                });
            }
            return u32::try_from(v).map_err(|_| Error::InvalidField {
                field,
                value: v,
                why: "varint exceeds 32 bits",
            });
        }
    }
    Err(Error::InvalidField {
        field,
        value: v,
        why: "varint longer than 5 bytes",
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
