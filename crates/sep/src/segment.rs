//! Segmented blocks (block type `0x02`, doc/FORMAT.md section 8): a block
//! whose content was cut into segments, some of them transformed (JPEG,
//! deflate, x86; crate `sep-transform`), with the segment table and the
//! reconstruction data in its payload and the transformed content coded by
//! the archive's model.
//!
//! [`encode`] is the encoder's side (detection, verified transforms, coding),
//! [`decode`] the decoder's, and [`list`] reads a table for listings. Every
//! length in a table is checked before anything is allocated for it.

use crate::codec::ModelConfig;
use crate::error::{Error, Result};
use crate::format::{MAX_MODEL_MEMORY, read_varint_bits, write_varint};
use crate::pipeline::Cancel;
use crate::stats::EncodeStats;
use sep_transform::{Kind, Plan, Segment};
use std::time::Instant;

/// The transforms themselves (crate `sep-transform`), for tools and fuzzing.
pub use sep_transform as transform;
pub use sep_transform::Kind as TransformKind;

/// The first byte of a segmented block.
pub const SEGMENTED_BLOCK_TYPE: u8 = 0x02;

/// One entry of a segment table, as [`list`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentInfo {
    /// Its transform.
    pub kind: TransformKind,
    /// Content bytes it covers.
    pub raw_len: u32,
    /// Bytes it gives the model.
    pub inner_len: u32,
    /// Bytes of reconstruction data.
    pub extra_len: u32,
}

/// Reads a minimal LEB128 value below 2^32 from `p` at `*at` (the archive
/// format's varint, doc/FORMAT.md section 8); a short payload is truncation
/// of `field`.
fn read_varint(p: &[u8], at: &mut usize, field: &'static str) -> Result<u32> {
    let mut rest = p.get(*at..).unwrap_or_default();
    let mut seen = Vec::with_capacity(5);
    let v = read_varint_bits(&mut rest, &mut seen, field, field, 32)?;
    *at += seen.len();
    Ok(v as u32)
}

/// Bytes of `segments` that hold entropy-coded data: JPEG segments, and
/// deflate streams that inflate to at least 5/4 of their length (stored or
/// barely compressed deflate is not dense). A byte-level model gains little
/// on such bytes (sep `default` on snappy.fireworks.jpeg: 0.4%, on the deflate
/// streams of snappy.paper-100k.pdf a few percent); the encoder uses that to
/// skip coding the block untransformed when the segmented payload is clearly
/// smaller (`crate::encoder`, `code_block`).
///
/// At CM revision 5 a JPEG that starts the block is not counted: the
/// model's JPEG family ([`models_jpeg`]) codes it untransformed about as
/// well as lepton or better, so the block is coded both ways and the smaller
/// kept (doc/FORMAT.md 4.16.4).
fn dense_bytes(segments: &[Segment], jpeg_modelled: bool) -> u64 {
    segments
        .iter()
        .filter(|s| match s.kind {
            Kind::Jpeg => !jpeg_modelled,
            Kind::Deflate | Kind::Png | Kind::PngPixels => {
                u64::from(s.inner_len) * 4 >= u64::from(s.raw_len) * 5
            }
            Kind::None | Kind::X86 | Kind::Colour => false,
        })
        .map(|s| u64::from(s.raw_len))
        .sum()
}

/// Whether `config`'s model has the JPEG family of CM revision 5 (a mix
/// model of revision >= 5 without a neural input, doc/FORMAT.md 4.16.4)
/// and `raw` starts with a JPEG's SOI marker, where that family takes over:
/// then the encoder codes the block untransformed too and keeps the smaller.
pub(crate) fn models_jpeg(config: &ModelConfig, raw: &[u8]) -> bool {
    matches!(config, ModelConfig::Mix(m) if m.cm.revision >= 5 && m.neural.is_none())
        && raw.starts_with(&[0xFF, 0xD8, 0xFF])
}

/// Whether the encoder tries transform 6 (`png-pixels`) with `config`: only
/// context mixing of CM revision 5 or later, whose detection takes the PNM
/// and TGA headers it writes (revision 4 on) and whose archives are new;
/// archives of the models and revisions before keep coding as they did.
pub fn pixels_transform(config: &ModelConfig) -> bool {
    matches!(config, ModelConfig::Mix(m) if m.cm.revision >= 5)
}

/// Whether the encoder tries transform 7 (`colour`) with `config`: only
/// context mixing of CM revision 46 or later (doc/FORMAT.md 4.57.1), so that
/// the archives of every earlier model and revision code as they did.
pub fn colour_transform(config: &ModelConfig) -> bool {
    matches!(config, ModelConfig::Mix(m) if m.cm.revision >= 46)
}

/// A segmented block's payload, and what the encoder needs to decide whether
/// to code the block untransformed as well (`crate::encoder`, `code_block`).
pub(crate) struct Segmented {
    /// The payload (section 8).
    pub payload: Vec<u8>,
    /// How many of the block's bytes are entropy-coded data that its
    /// transforms decoded (`dense_bytes`).
    pub dense: u64,
    /// Whether the block's header says its transform applies, so the
    /// encoder does not code the block untransformed too: it starts with an
    /// x86 ELF or PE header naming its code sections and at least one x86
    /// segment was made ([`sep_transform::detect::header_names_code`]), or a
    /// colour segment (transform 7) covers at least 7/8 of it (a 24/32-bit
    /// image known by its header, on which the colour differences were the
    /// smaller on every image measured, doc/FORMAT.md 4.57.1).
    pub header_known: bool,
}

/// The segmented block for `raw`, or `None` when no transform applies or
/// the model is `store`.
pub(crate) fn encode(
    config: &ModelConfig,
    seed: u64,
    raw: &[u8],
    cancel: &Cancel,
    stats: &EncodeStats,
) -> Option<Segmented> {
    // Options::transforms (--no-transforms) turns segmented blocks off in
    // the caller.
    if matches!(config, ModelConfig::Store) {
        return None;
    }
    let t = Instant::now();
    let mut found = sep_transform::detect::detect(raw);
    if !pixels_transform(config) {
        found.retain(|c| c.kind != Kind::PngPixels);
    }
    if !colour_transform(config) {
        found.retain(|c| c.kind != Kind::Colour);
    }
    stats.time_detect(t);
    if found.is_empty() {
        return None;
    }
    let t = Instant::now();
    let plan = sep_transform::analyse_found(raw, found);
    stats.time_transforms(t);
    let Plan {
        segments,
        mut inner,
    } = plan?;
    let dense = dense_bytes(&segments, models_jpeg(config, raw));
    let header_code = segments.iter().any(|s| s.kind == Kind::X86)
        && sep_transform::detect::header_names_code(raw);
    let image = segments
        .iter()
        .any(|s| s.kind == Kind::Colour && u64::from(s.raw_len) * 8 >= raw.len() as u64 * 7);
    let header_known = header_code || image;
    let t = Instant::now();
    let streams = if inner.is_empty() {
        Vec::new()
    } else {
        config.encode_block(seed, &mut inner, cancel)?
    };
    stats.time_segmented_coding(t);
    let mut p = Vec::new();
    write_varint(&mut p, segments.len() as u32);
    for s in &segments {
        p.push(s.kind as u8);
        write_varint(&mut p, s.raw_len);
        write_varint(&mut p, s.inner_len);
        write_varint(&mut p, s.extra.len() as u32);
    }
    write_varint(&mut p, streams.len() as u32);
    for s in &streams {
        write_varint(&mut p, s.len() as u32);
    }
    for s in &segments {
        p.extend_from_slice(&s.extra);
    }
    for s in &streams {
        p.extend_from_slice(s);
    }
    Some(Segmented {
        payload: p,
        dense,
        header_known,
    })
}

/// A parsed, validated table: the segments (with their lengths), the stream
/// lengths, and where the reconstruction data starts in the payload.
struct Table {
    segments: Vec<SegmentInfo>,
    stream_lens: Vec<u32>,
    inner_len: usize,
    data_at: usize,
}

fn bad(field: &'static str, value: u64, why: &'static str) -> Error {
    Error::InvalidField { field, value, why }
}

fn read_table(payload: &[u8], raw_len: u32, max_streams: u32) -> Result<Table> {
    let mut at = 0usize;
    let count = read_varint(payload, &mut at, "segment_count")?;
    if count == 0 || count > raw_len {
        return Err(bad("segment_count", count.into(), "must be in 1..=raw_len"));
    }
    // Each entry takes at least 4 bytes: a count past the payload is
    // refused before the table is allocated.
    if count as usize > payload.len() / 4 {
        return Err(Error::Truncated {
            what: "segment table",
        });
    }
    let mut segments = Vec::with_capacity(count as usize);
    let (mut raw_sum, mut inner_sum, mut extra_sum) = (0u64, 0u64, 0u64);
    for _ in 0..count {
        let id = *payload.get(at).ok_or(Error::Truncated {
            what: "segment table",
        })?;
        at += 1;
        let kind = Kind::from_id(id).ok_or(bad(
            "transform",
            id.into(),
            "unknown transform id (known: 0 none, 1 jpeg, 2 deflate, 3 x86, 4 png, 6 png-pixels, 7 colour)",
        ))?;
        let seg_raw = read_varint(payload, &mut at, "segment raw_len")?;
        let seg_inner = read_varint(payload, &mut at, "segment inner_len")?;
        let seg_extra = read_varint(payload, &mut at, "segment extra_len")?;
        if seg_raw == 0 {
            return Err(bad("segment raw_len", 0, "must be at least 1"));
        }
        raw_sum += u64::from(seg_raw);
        if raw_sum > u64::from(raw_len) {
            return Err(bad(
                "segment raw_len",
                raw_sum,
                "segments reach past the end of the block",
            ));
        }
        let ok = match kind {
            Kind::None | Kind::X86 => seg_inner == seg_raw && seg_extra == 0,
            Kind::Colour => seg_inner == seg_raw && seg_extra > 0,
            Kind::Jpeg => seg_inner == 0 && seg_extra > 0,
            Kind::Deflate | Kind::Png | Kind::PngPixels => seg_extra > 0,
        };
        if !ok {
            return Err(bad(
                "segment inner_len",
                seg_inner.into(),
                "lengths do not fit the segment's transform",
            ));
        }
        inner_sum += u64::from(seg_inner);
        extra_sum += u64::from(seg_extra);
        segments.push(SegmentInfo {
            kind,
            raw_len: seg_raw,
            inner_len: seg_inner,
            extra_len: seg_extra,
        });
    }
    if raw_sum != u64::from(raw_len) {
        return Err(Error::LengthMismatch {
            what: "sum of segment raw_len",
            expected: raw_len.into(),
            found: raw_sum,
        });
    }
    let limit = sep_transform::inner_limit(raw_len as usize) as u64;
    if inner_sum > limit {
        return Err(Error::LimitExceeded {
            what: "transformed content of a block (sum of inner_len)",
            value: inner_sum,
            limit,
        });
    }
    let streams = read_varint(payload, &mut at, "stream_count")?;
    let want = if inner_sum == 0 {
        0..=0
    } else {
        1..=max_streams.min(inner_sum as u32)
    };
    if !want.contains(&streams) {
        return Err(bad(
            "stream_count",
            streams.into(),
            "must be 0 without transformed content, else 1..=min(streams, inner length)",
        ));
    }
    if streams as usize > payload.len() - at {
        return Err(Error::Truncated {
            what: "stream lengths",
        });
    }
    let mut stream_lens = Vec::with_capacity(streams as usize);
    let mut stream_sum = 0u64;
    for _ in 0..streams {
        let l = read_varint(payload, &mut at, "stream_len")?;
        stream_sum += u64::from(l);
        stream_lens.push(l);
    }
    let rest = (payload.len() - at) as u64;
    if extra_sum + stream_sum != rest {
        return Err(Error::LengthMismatch {
            what: "reconstruction data and streams of a segmented block",
            expected: extra_sum + stream_sum,
            found: rest,
        });
    }
    Ok(Table {
        segments,
        stream_lens,
        inner_len: inner_sum as usize,
        data_at: at,
    })
}

/// Work units (see [`crate::limits`]) per inner byte of a deflate segment's
/// inverse: preflate's recreation predicts each token with a hash-chain walk
/// of at most `max_chain` (4096) steps and corrects it with at most one hop
/// per window position (32 Ki), about 37 Ki steps; 2^16 covers them and the
/// Huffman and bit writing.
pub const DEFLATE_INVERSE_BYTE_WORK: u64 = 1 << 16;

/// Work units of one JPEG segment's inverse besides its bytes: lepton decodes
/// at most 8192 x 8192 pixels (the feature set, `crates/transform/src/jpeg.rs`),
/// 2^26 pixels at up to 2^9 units each, whatever the segment's length.
pub const JPEG_INVERSE_SEGMENT_WORK: u64 = 1 << 35;

/// Work units per byte of a JPEG segment's inverse (writing the JPEG).
pub const JPEG_INVERSE_BYTE_WORK: u64 = 1 << 6;

/// The estimated work to decode a segmented block, `(set-up, coding)` as
/// [`ModelConfig::block_work`] counts it: the model coding the transformed
/// content (`inner_len` bytes in its streams, which may be many more than
/// the block's) plus every segment's inverse transform (the constants
/// above; x86 and plain segments a few units a byte). The decoder charges it
/// to its work limit (doc/FORMAT.md section 7.1) once the payload is read,
/// before decoding; the table is validated as [`decode`] does.
pub(crate) fn block_work(
    config: &ModelConfig,
    payload: &[u8],
    raw_len: u32,
    max_streams: u32,
) -> Result<(u64, u64)> {
    let t = read_table(payload, raw_len, max_streams)?;
    let (setup, mut coding) = if t.inner_len > 0 {
        config.block_work(t.inner_len as u64, t.stream_lens.len() as u64)
    } else {
        (0, 0)
    };
    for s in &t.segments {
        let (raw, inner) = (u64::from(s.raw_len), u64::from(s.inner_len));
        let inverse = match s.kind {
            Kind::None => raw,
            Kind::X86 | Kind::Colour => raw.saturating_mul(4),
            // PNG: the deflate stream's, then CRCs and Adler-32.
            Kind::Deflate | Kind::Png | Kind::PngPixels => inner
                .saturating_mul(DEFLATE_INVERSE_BYTE_WORK)
                .saturating_add(raw.saturating_mul(8)),
            Kind::Jpeg => {
                JPEG_INVERSE_SEGMENT_WORK.saturating_add(raw.saturating_mul(JPEG_INVERSE_BYTE_WORK))
            }
        };
        coding = coding.saturating_add(inverse);
    }
    Ok((setup, coding))
}

/// An upper bound of the heap one worker holds while it decodes a
/// segmented block (issue 17), its `payload` and output buffers included:
/// the model sized for the transformed content
/// ([`model_memory_bound`](crate::model_memory_bound) of `inner_len` bytes),
/// the inner bytes, a copy of the reconstruction data, the restored block
/// and the largest inverse transform's own
/// ([`sep_transform::inverse_memory_bound`]). The decoder checks it against
/// its memory limit before decoding the block; [`crate::ArchiveInfo`] takes
/// the largest over an archive. The table is validated as [`decode`] does.
pub fn block_memory(
    config: &ModelConfig,
    payload: &[u8],
    raw_len: u32,
    max_streams: u32,
) -> Result<u64> {
    let t = read_table(payload, raw_len, max_streams)?;
    let model = if t.inner_len > 0 {
        crate::model_memory_bound(config, t.inner_len as u64)
    } else {
        0
    };
    let mut at = t.data_at;
    let mut inverse = 0u64;
    for s in &t.segments {
        let end = at + s.extra_len as usize;
        inverse = inverse.max(sep_transform::inverse_memory_bound(
            s.kind,
            s.raw_len as usize,
            s.inner_len as usize,
            &payload[at..end],
        ));
        at = end;
    }
    Ok(model + t.inner_len as u64 + 2 * payload.len() as u64 + u64::from(raw_len) + inverse)
}

/// The segment table of a segmented block's payload, validated.
pub fn list(payload: &[u8], raw_len: u32, max_streams: u32) -> Result<Vec<SegmentInfo>> {
    read_table(payload, raw_len, max_streams).map(|t| t.segments)
}

/// Decodes the payload of segmented block number `block` of its archive
/// into `out` (cleared first).
#[allow(clippy::too_many_arguments)]
pub(crate) fn decode(
    config: &ModelConfig,
    block: u64,
    seed: u64,
    max_streams: u32,
    payload: &[u8],
    raw_len: u32,
    out: &mut Vec<u8>,
    cancel: &Cancel,
) -> Result<()> {
    let t = read_table(payload, raw_len, max_streams)?;
    if t.inner_len > 0 {
        let memory = config.memory_bytes(t.inner_len as u64);
        if memory > MAX_MODEL_MEMORY {
            return Err(Error::LimitExceeded {
                what: "model state for the transformed content of a block",
                value: memory,
                limit: MAX_MODEL_MEMORY,
            });
        }
    }
    let mut at = t.data_at;
    let mut segments = Vec::with_capacity(t.segments.len());
    for s in &t.segments {
        let end = at + s.extra_len as usize;
        segments.push(Segment {
            kind: s.kind,
            raw_len: s.raw_len,
            inner_len: s.inner_len,
            extra: payload[at..end].to_vec(),
        });
        at = end;
    }
    let mut inner = vec![0u8; t.inner_len];
    if t.inner_len > 0 {
        let mut streams = Vec::with_capacity(t.stream_lens.len());
        for &l in &t.stream_lens {
            streams.push(&payload[at..at + l as usize]);
            at += l as usize;
        }
        config.decode_block(block, seed, &streams, &mut inner, cancel)?;
    }
    out.clear();
    out.reserve(raw_len as usize);
    sep_transform::restore(&segments, &inner, out).map_err(|_| {
        bad(
            "segment reconstruction data",
            0,
            "does not restore its segment (broken transform data)",
        )
    })?;
    if out.len() != raw_len as usize {
        return Err(Error::LengthMismatch {
            what: "restored segmented block",
            expected: raw_len.into(),
            found: out.len() as u64,
        });
    }
    Ok(())
}

/// One block of an archive as [`list_blocks`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSegments {
    /// Which archive (0 for the first of concatenated ones).
    pub archive: usize,
    /// The block's number within its archive.
    pub index: u64,
    /// Its type.
    pub block_type: crate::format::BlockType,
    /// Content bytes.
    pub raw_len: u32,
    /// Payload bytes.
    pub payload_len: u32,
    /// For a segmented block, its segment table; otherwise empty.
    pub segments: Vec<SegmentInfo>,
}

/// Lists every block of every archive in `r` with its segment table,
/// without decoding; segmented payloads are read (bounded by `raw_len`) to
/// validate their tables.
pub fn list_blocks<R: std::io::Read>(mut r: R) -> Result<Vec<BlockSegments>> {
    use crate::format::{BlockType, Record};
    use std::io::Read;
    let mut out = Vec::new();
    let mut header = crate::decoder::read_header(&mut r)?;
    let mut archive = 0usize;
    loop {
        let (max_streams, _, _) = ModelConfig::from_header(&header)?.header_fields();
        let mut index = 0u64;
        while let Record::Block(bh) = Record::read(&mut r, &header)? {
            let mut payload = Vec::new();
            (&mut r)
                .take(bh.payload_len.into())
                .read_to_end(&mut payload)?;
            if payload.len() != bh.payload_len as usize {
                return Err(Error::Truncated {
                    what: "block payload",
                });
            }
            let segments = if bh.block_type == BlockType::Segmented {
                list(&payload, bh.raw_len, max_streams)?
            } else {
                Vec::new()
            };
            out.push(BlockSegments {
                archive,
                index,
                block_type: bh.block_type,
                raw_len: bh.raw_len,
                payload_len: bh.payload_len,
                segments,
            });
            index += 1;
        }
        // Issue 22: a seek table may follow (doc/FORMAT.md section 12).
        let expected = crate::format::Expected {
            blocks: index,
            partial: true,
            ..Default::default()
        };
        if !crate::decoder::after_end(&mut r, &expected)?.0 {
            return Ok(out);
        }
        header = crate::format::Header::read_after_magic(&mut r)?;
        archive += 1;
    }
}
