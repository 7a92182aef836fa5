//! JPEG segments: re-coded by `lepton_jpeg` (pinned 0.5.8), one thread, with
//! a fixed feature set, so the lepton bytes depend only on the JPEG.

use lepton_jpeg::{EnabledFeatures, SingleThreadPool, decode_lepton, encode_lepton};
use std::io::{self, Cursor, Write};

/// The features used on both sides; part of the format (section 8).
fn features() -> EnabledFeatures {
    EnabledFeatures {
        progressive: true,
        reject_dqts_with_zeros: true,
        max_jpeg_height: 8192,
        max_jpeg_width: 8192,
        use_16bit_dc_estimate: true,
        use_16bit_adv_predict: true,
        accept_invalid_dht: false,
        max_partitions: 8,
        max_processor_threads: 1,
        max_jpeg_file_size: 1 << 30,
        stop_reading_at_eoi: true,
    }
}

/// The lepton bytes of a complete JPEG.
pub fn encode(jpeg: &[u8]) -> Result<Vec<u8>, String> {
    crate::guarded("jpeg", || {
        let mut out = Cursor::new(Vec::with_capacity(jpeg.len()));
        encode_lepton(
            &mut Cursor::new(jpeg),
            &mut out,
            &features(),
            &SingleThreadPool::default(),
        )
        .map_err(|e| format!("jpeg: {e:?}"))?;
        Ok(out.into_inner())
    })
}

/// A `Write` that refuses to grow past `limit` bytes.
struct Bounded {
    buf: Vec<u8>,
    limit: usize,
}

impl Write for Bounded {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if self.buf.len() + b.len() > self.limit {
            return Err(io::Error::other("jpeg segment longer than its raw_len"));
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Bytes of lepton's fixed header; bytes 24..28 give the length of the
/// zlib-compressed header that follows.
const FIXED_HEADER: usize = 28;

/// Checks what lepton 0.5.8 would allocate unchecked. Its compressed header
/// (zlib) starts with `HDR` and a u32 length of the raw JPEG header, then
/// holds records (`P0D`, `CRS`, `HH`, `FRS`, `GRB`, `EEE`); for `HDR`, `FRS`
/// and `GRB` lepton allocates the u32 length it reads at once, before reading
/// the bytes (crafted 2-4 GiB claims ran the fuzzer out of memory:
/// fuzz/artifacts/transforms/oom-8ce50827…, oom-f73a48aa…). So the header is
/// inflated here first, at most `4 * raw_len + 2^20` bytes (an honest one
/// holds the JPEG's header and trailing garbage, each part of the segment, and
/// a few small tables), and each of those lengths must fit in what follows
/// it, and the raw JPEG header in the segment. The walk follows lepton's
/// grammar (`read_lepton_compressed_header`) and stops, leaving the verdict
/// to lepton, at anything it does not know.
fn check_header(lep: &[u8], raw_len: usize) -> Result<(), String> {
    inflate_header(lep, raw_len).map(|_| ())
}

/// The raw JPEG header inside lepton's compressed header, after the checks
/// described at [`check_header`].
fn inflate_header(lep: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let bad = |why: &str| Err(format!("jpeg segment: broken reconstruction data ({why})"));
    let Some(size) = lep.get(24..FIXED_HEADER) else {
        return bad("short lepton header");
    };
    let size = u32::from_le_bytes(size.try_into().expect("4 bytes")) as usize;
    let end = FIXED_HEADER.saturating_add(size).min(lep.len());
    let cap = raw_len.saturating_mul(4).saturating_add(1 << 20);
    let mut h = Vec::new();
    let inflated = flate2::read::ZlibDecoder::new(&lep[FIXED_HEADER..end])
        .take(cap as u64 + 1)
        .read_to_end(&mut h);
    if h.len() > cap {
        return bad("lepton header too large");
    }
    // A stream that breaks off is lepton's to refuse; check what came out.
    let _ = inflated;
    let u32_at = |at: usize| {
        h.get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
    };
    if h.get(..3) != Some(b"HDR".as_slice()) {
        return bad("no HDR record");
    }
    let Some(header_len) = u32_at(3) else {
        return bad("no HDR record");
    };
    if header_len > raw_len {
        return bad("JPEG header longer than the segment");
    }
    let mut at = 7usize.saturating_add(header_len);
    // A record's length field: the bytes it announces must follow it.
    let fits = |len: usize, from: usize| from.checked_add(len).is_some_and(|e| e <= h.len());
    while let Some(marker) = h.get(at..at + 3) {
        let body = at + 3;
        at = match marker {
            b"P0D" => body + 1,
            // Count, then that many u32: read one by one, nothing reserved.
            b"CRS" => match u32_at(body) {
                Some(n) => body.saturating_add(4).saturating_add(n.saturating_mul(4)),
                None => break,
            },
            b"FRS" | b"GRB" => match u32_at(body) {
                Some(n) if fits(n, body + 4) => body + 4 + n,
                Some(_) => return bad("lepton header record longer than the header"),
                None => break,
            },
            b"EEE" => body + 28,
            [b'H', b'H', threads] => body + 16 * usize::from(*threads),
            _ => break,
        };
    }
    Ok(h.get(7..7 + header_len).unwrap_or_default().to_vec())
}

/// The most bytes of DCT coefficients lepton holds for any JPEG it accepts:
/// 8192 x 8192 pixels (the feature set), MCU padding included, up to 4
/// components, 2 bytes each.
pub const MAX_COEFFICIENT_BYTES: u64 = 8200 * 8200 * 4 * 2;

/// Bytes of DCT coefficients (2 each, MCU-padded) of the JPEG whose markers
/// start at `d` (SOI or the first marker after it): from its frame header;
/// `None` without one.
pub fn coefficient_bytes(d: &[u8]) -> Option<u64> {
    let mut i = if d.starts_with(&[0xFF, 0xD8]) { 2 } else { 0 };
    while i + 4 <= d.len() {
        if d[i] != 0xFF {
            return None;
        }
        let m = d[i + 1];
        if m == 0xFF {
            i += 1;
            continue;
        }
        let len = usize::from(u16::from_be_bytes([d[i + 2], d[i + 3]]));
        if matches!(m, 0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF) {
            let f = d.get(i + 4..i + 2 + len)?;
            let (h, w, n) = (
                u64::from(u16::from_be_bytes([*f.get(1)?, *f.get(2)?])),
                u64::from(u16::from_be_bytes([*f.get(3)?, *f.get(4)?])),
                usize::from(*f.get(5)?),
            );
            let comps: Vec<(u64, u64)> = (0..n)
                .map(|k| {
                    f.get(7 + 3 * k)
                        .map(|s| (u64::from(s >> 4), u64::from(s & 15)))
                })
                .collect::<Option<_>>()?;
            let hmax = comps.iter().map(|c| c.0).max()?.max(1);
            let vmax = comps.iter().map(|c| c.1).max()?.max(1);
            let (mx, my) = (w.div_ceil(8 * hmax), h.div_ceil(8 * vmax));
            return Some(
                comps
                    .iter()
                    .map(|&(hs, vs)| mx * hs * my * vs * 64 * 2)
                    .sum(),
            );
        }
        if m == 0xDA || m == 0xD9 {
            return None;
        }
        i += 2 + len;
    }
    None
}

/// An upper bound of the heap one JPEG segment's inverse (`decode`) holds:
/// its output, lepton's coefficients (from the frame header in `lep`, or
/// the most any JPEG may have when it cannot be read) and 8 MiB of
/// lepton's tables and buffers. Measured peaks (`sep` test
/// `segment_memory`): 5.3 MB for a 960 x 639 4:4:4 JPEG of 123 KB (bound 13.0
/// MB), 7.8 MB for 3072 x 2048 4:4:4 of 830 KB (bound 52 MB).
pub fn decode_memory_bound(lep: &[u8], raw_len: usize) -> u64 {
    let coefficients = inflate_header(lep, raw_len)
        .ok()
        .and_then(|h| coefficient_bytes(&h))
        .unwrap_or(MAX_COEFFICIENT_BYTES)
        .min(MAX_COEFFICIENT_BYTES);
    coefficients + 8 * raw_len as u64 + (8 << 20)
}

/// The JPEG of `raw_len` bytes that the lepton bytes `lep` code.
pub fn decode(lep: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    check_header(lep, raw_len)?;
    crate::guarded("jpeg", || {
        let mut out = Bounded {
            buf: Vec::with_capacity(raw_len),
            limit: raw_len,
        };
        // The lepton header's JPEG size must fit the segment: checked by
        // lepton before it allocates for the image.
        let features = EnabledFeatures {
            max_jpeg_file_size: u32::try_from(raw_len).unwrap_or(u32::MAX),
            ..features()
        };
        decode_lepton(
            &mut Cursor::new(lep),
            &mut out,
            &features,
            &SingleThreadPool::default(),
        )
        .map_err(|e| {
            format!(
                "jpeg segment: broken reconstruction data ({:?})",
                e.exit_code()
            )
        })?;
        Ok(out.buf)
    })
}
