//! Reversible transforms inside a sep block (doc/FORMAT.md, section 8).
//!
//! A detector ([`detect`]) cuts a block's content into typed segments; each
//! segment gets a transform ([`Kind`]): none, JPEG (re-coded by `lepton_jpeg`),
//! deflate (inflated, with `preflate-rs` reconstruction data), x86 (E8/E9
//! call and jump targets made absolute), PNG IDAT runs (inflated) or whole
//! PNG files (their unfiltered pixels behind a PNM or TGA header) or the
//! pixels of a 24/32-bit PNM, BMP or TGA image (as colour differences).
//! [`analyse`] runs the forward
//! transforms and, for each, the inverse, keeping a transform only when the
//! inverse gives back the exact bytes; [`restore`] is the decoder's side.
//!
//! Every function here takes untrusted input and returns an error (a short
//! message) instead of panicking; the two external codecs are also run under
//! `catch_unwind`, so a panic inside them becomes an error too.

#![forbid(unsafe_code)]

mod colour;
mod deflate;
pub mod detect;
mod jpeg;
mod png;
mod png_pixels;
mod x86;

use std::panic::{AssertUnwindSafe, catch_unwind};

/// The transform of one segment; the numbers are the format's `transform` ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 0: the bytes are coded as they are.
    None = 0,
    /// 1: a JPEG image re-coded by `lepton_jpeg` 0.5.8; the lepton bytes are
    /// the segment's reconstruction data, nothing goes to the model.
    Jpeg = 1,
    /// 2: a raw deflate stream; the inflated bytes go to the model, the
    /// `preflate-rs` 0.7.6 reconstruction data beside them.
    Deflate = 2,
    /// 3: x86 machine code; the rel32 operand of every E8 (call) and E9 (jmp)
    /// byte is made absolute (see [`x86`](crate::x86_forward)).
    X86 = 3,
    /// 4: a PNG's run of two or more IDAT chunks holding one zlib stream;
    /// the inflated image data goes to the model, the chunk lengths, the
    /// zlib header and the `preflate-rs` data beside them (CRCs and the
    /// Adler-32 are recomputed).
    Png = 4,
    /// 6: a whole PNG file (signature to IEND) of 8-bit RGB or RGBA, gray
    /// of 1 to 16 bits, 16-bit RGB or a palette, not interlaced: the model
    /// gets its unfiltered pixels behind a PNM or TGA header (palette
    /// colours looked up), then its filter types and other chunks; the
    /// IHDR data, the IDAT chunk lengths, the zlib header and the
    /// `preflate-rs` data go beside them (doc/FORMAT.md section 8). Tried
    /// only for models with image families that take those headers (CM
    /// revision 5 and later; the caller decides).
    PngPixels = 6,
    /// 7: a 24- or 32-bit PNM (P6, maxval 255), BMP or TGA image that
    /// starts the block: its header stays, each pixel's colour bytes become
    /// `(G, R-G, B-G)` mod 256 (alpha stays); the reconstruction data is
    /// the pixel layout (doc/FORMAT.md section 8.7). Tried only for CM
    /// revision 46 and later (the caller decides).
    Colour = 7,
}

impl Kind {
    /// The kind with format id `id`, if there is one.
    pub fn from_id(id: u8) -> Option<Kind> {
        match id {
            0 => Some(Kind::None),
            1 => Some(Kind::Jpeg),
            2 => Some(Kind::Deflate),
            3 => Some(Kind::X86),
            4 => Some(Kind::Png),
            6 => Some(Kind::PngPixels),
            7 => Some(Kind::Colour),
            _ => None,
        }
    }

    /// Its name, for listings.
    pub fn name(self) -> &'static str {
        match self {
            Kind::None => "none",
            Kind::Jpeg => "jpeg",
            Kind::Deflate => "deflate",
            Kind::X86 => "x86",
            Kind::Png => "png",
            Kind::PngPixels => "png-pixels",
            Kind::Colour => "colour",
        }
    }
}

/// One segment of a block after the forward transform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Its transform.
    pub kind: Kind,
    /// Bytes of the block's content it covers.
    pub raw_len: u32,
    /// Bytes it contributes to the content the model codes.
    pub inner_len: u32,
    /// Reconstruction data (lepton bytes for JPEG, preflate data for deflate).
    pub extra: Vec<u8>,
}

/// A block after the forward transforms: its segments and the bytes the
/// model codes (every segment's inner bytes, in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The segments, in content order, covering the whole block.
    pub segments: Vec<Segment>,
    /// The content the model codes.
    pub inner: Vec<u8>,
}

/// The most bytes a block of `raw_len` bytes may have the model code after
/// its transforms (inflated data is larger than the stream it came from):
/// `4 * raw_len + 2^23`, at most 2^30. A decoder checks a segment table
/// against it before allocating.
pub fn inner_limit(raw_len: usize) -> usize {
    (raw_len.saturating_mul(4).saturating_add(8 << 20)).min(1 << 30)
}

/// The most bytes of DCT coefficients the encoder lets lepton hold for a
/// JPEG in a block of `block_len` bytes: `64 * block_len + 2^24`, at most
/// 2^27 (a JPEG of quality 90 has about 45 coefficient bytes per byte; 2^27
/// bytes are a 44-megapixel 4:2:0 photo). A JPEG with more is left
/// untransformed, so that the encoder's memory is bounded by its block size
/// ([`analyse_memory_bound`]) and not by lepton's 8192 x 8192 pixels.
pub fn jpeg_coefficient_limit(block_len: usize) -> u64 {
    (block_len as u64)
        .saturating_mul(64)
        .saturating_add(1 << 24)
        .min(1 << 27)
}

/// An upper bound of the heap [`analyse`] holds for a block of `len` bytes
/// (the plan it returns included): the inner bytes (at most
/// [`inner_limit`]), and the larger of what the deflate transform holds
/// (preflate's plain text, hash chains and the verifying re-creation: 3
/// bytes per inner byte, 4 per block byte and 4 MiB; measured 13.7 MB for a
/// 1.46 MB stream inflating to 4 MB, bound 21.8 MB, and 2.9 MB for a 3.7 KB
/// stream) and the JPEG transform (lepton's coefficients, at most
/// [`jpeg_coefficient_limit`], 4 bytes per block byte and 8 MiB; measured
/// 40.6 MB for a 3072 x 2048 4:4:4 JPEG of 830 KB with 37.7 MB of
/// coefficients, bound 49.4 MB). The `sep` test `segment_memory` checks it.
pub fn analyse_memory_bound(len: usize) -> u64 {
    let n = len as u64;
    let inner = inner_limit(len) as u64;
    let deflate = 3 * inner + 4 * n + (4 << 20);
    let jpeg = jpeg_coefficient_limit(len) + 4 * n + (8 << 20);
    inner + deflate.max(jpeg)
}

/// An upper bound of the heap the inverse of one segment holds, its output
/// included ([`inverse`]): for deflate, preflate's re-creation (2 bytes per
/// inner byte, 4 per segment byte and 512 KiB; measured 7.8 MB for a 1.46 MB
/// stream of 4 MB, bound 13.3 MB; 313 KB for a 3.7 KB stream of 10 KB,
/// bound 563 KB); for JPEG, lepton's (see `jpeg::decode_memory_bound`); for
/// x86 and plain segments their output.
pub fn inverse_memory_bound(kind: Kind, raw_len: usize, inner_len: usize, extra: &[u8]) -> u64 {
    let (raw, inner) = (raw_len as u64, inner_len as u64);
    match kind {
        Kind::None | Kind::X86 | Kind::Colour => raw,
        Kind::Deflate => 2 * inner + 4 * raw + (512 << 10),
        // Preflate's re-creation, then the stream and the chunks.
        Kind::Png => 2 * inner + 6 * raw + (512 << 10),
        // Preflate's re-creation of the filtered rows (at most the inner
        // bytes), those rows, the stream and the chunks; measured 552 KB for
        // the 2.4 KB kodim23.crop32x24.png (test `segment_memory`).
        Kind::PngPixels => 3 * inner + 6 * raw + (1 << 20),
        Kind::Jpeg => jpeg::decode_memory_bound(extra, raw_len),
    }
}

/// Runs `f`, turning a panic into an error.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|_| Err(format!("{what}: the codec failed")))
}

/// Detects segments in `data` and transforms them, verifying each transform
/// by its inverse. Returns `None` when no transform applies (the block is
/// then coded as before).
pub fn analyse(data: &[u8]) -> Option<Plan> {
    analyse_found(data, detect::detect(data))
}

/// [`analyse`] with the detector's candidates given ([`detect::detect`] of
/// `data`), so that a caller can time detection and transforms apart.
pub fn analyse_found(data: &[u8], found: Vec<detect::Candidate>) -> Option<Plan> {
    if found.is_empty() {
        return None;
    }
    let limit = inner_limit(data.len());
    let mut segments = Vec::new();
    let mut inner = Vec::new();
    let mut at = 0usize;
    let plain = |from: usize, to: usize, segments: &mut Vec<Segment>, inner: &mut Vec<u8>| {
        if to > from {
            segments.push(Segment {
                kind: Kind::None,
                raw_len: (to - from) as u32,
                inner_len: (to - from) as u32,
                extra: Vec::new(),
            });
            inner.extend_from_slice(&data[from..to]);
        }
    };
    let mut any = false;
    for cand in found {
        if cand.start < at || cand.end > data.len() || cand.start >= cand.end {
            continue;
        }
        // Room left for inner bytes: what follows this segment is at most
        // copied as it is.
        let room = limit.saturating_sub(inner.len() + (data.len() - cand.start));
        let Some((len, seg_inner, extra)) =
            forward_verified(cand.kind, &data[cand.start..cand.end], room, data.len())
        else {
            continue;
        };
        let bytes = &data[cand.start..cand.start + len];
        plain(at, cand.start, &mut segments, &mut inner);
        segments.push(Segment {
            kind: cand.kind,
            raw_len: bytes.len() as u32,
            inner_len: seg_inner.len() as u32,
            extra,
        });
        inner.extend_from_slice(&seg_inner);
        at = cand.start + len;
        any = true;
    }
    if !any {
        return None;
    }
    plain(at, data.len(), &mut segments, &mut inner);
    Some(Plan { segments, inner })
}

/// The forward transform of `bytes` as `kind`: the length it covers (a
/// deflate stream may end before `bytes` does), the inner bytes and the
/// reconstruction data; kept only if the inverse gives the covered bytes
/// back exactly and the inner bytes fit in `room`. `block_len`: the length
/// of the block it is in.
fn forward_verified(
    kind: Kind,
    bytes: &[u8],
    room: usize,
    block_len: usize,
) -> Option<(usize, Vec<u8>, Vec<u8>)> {
    let (len, inner, extra) = match kind {
        Kind::None => return None,
        Kind::Jpeg => {
            // Lepton holds every coefficient while it encodes: bounded by
            // the block's length (see `jpeg_coefficient_limit`).
            if jpeg::coefficient_bytes(bytes)? > jpeg_coefficient_limit(block_len) {
                return None;
            }
            (bytes.len(), Vec::new(), jpeg::encode(bytes).ok()?)
        }
        Kind::Deflate => deflate::encode(bytes, room).ok()?,
        Kind::X86 => (bytes.len(), x86::forward(bytes), Vec::new()),
        Kind::Png => {
            let (inner, extra) = png::encode(bytes, room).ok()?;
            (bytes.len(), inner, extra)
        }
        Kind::PngPixels => {
            let (inner, extra) = png_pixels::encode(bytes, room).ok()?;
            (bytes.len(), inner, extra)
        }
        Kind::Colour => {
            let (inner, extra) = colour::encode(bytes).ok()?;
            (bytes.len(), inner, extra)
        }
    };
    if inner.len() > room || len == 0 || len > bytes.len() || len > u32::MAX as usize {
        return None;
    }
    let back = inverse(kind, &inner, &extra, len).ok()?;
    (back == bytes[..len]).then_some((len, inner, extra))
}

/// The inverse transform of one segment: its original bytes, which must be
/// exactly `raw_len` long.
pub fn inverse(kind: Kind, inner: &[u8], extra: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    let out = match kind {
        Kind::None => inner.to_vec(),
        Kind::Jpeg => jpeg::decode(extra, raw_len)?,
        Kind::Deflate => deflate::decode(inner, extra, raw_len)?,
        Kind::X86 => x86::inverse(inner),
        Kind::Png => png::decode(inner, extra, raw_len)?,
        Kind::PngPixels => png_pixels::decode(inner, extra, raw_len)?,
        Kind::Colour => colour::decode(inner, extra)?,
    };
    if out.len() != raw_len {
        return Err(format!(
            "{} segment restored to {} bytes, expected {raw_len}",
            kind.name(),
            out.len()
        ));
    }
    Ok(out)
}

/// Rebuilds a block from its segments and the decoded inner bytes, appending
/// to `out`. The caller has checked that the segments' `inner_len` sum to
/// `inner.len()` and that each `extra` is the segment's own.
pub fn restore(segments: &[Segment], inner: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut at = 0usize;
    for s in segments {
        let end = at
            .checked_add(s.inner_len as usize)
            .filter(|&e| e <= inner.len())
            .ok_or("segment table: inner_len past the decoded content")?;
        let bytes = &inner[at..end];
        if s.kind == Kind::None {
            out.extend_from_slice(bytes);
        } else {
            out.extend_from_slice(&inverse(s.kind, bytes, &s.extra, s.raw_len as usize)?);
        }
        at = end;
    }
    Ok(())
}

pub use colour::{Layout as ColourLayout, forward as colour_forward, inverse as colour_inverse};
pub use x86::{forward as x86_forward, inverse as x86_inverse};
