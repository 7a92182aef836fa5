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

/// Checks what lepton 0.5.8 would allocate unchecked: its compressed header
/// starts with `HDR` and a u32 length of the raw JPEG header, for which lepton
/// allocates that many bytes at once (a crafted 4 GiB claim ran the fuzzer out
/// of memory). The raw JPEG header is part of the JPEG, so it cannot be longer
/// than the segment.
fn check_header(lep: &[u8], raw_len: usize) -> Result<(), String> {
    use std::io::Read;
    let bad = |why: &str| Err(format!("jpeg segment: broken reconstruction data ({why})"));
    let Some(size) = lep.get(24..FIXED_HEADER) else {
        return bad("short lepton header");
    };
    let size = u32::from_le_bytes(size.try_into().expect("4 bytes")) as usize;
    let end = FIXED_HEADER.saturating_add(size).min(lep.len());
    let mut start = [0u8; 7];
    if flate2::read::ZlibDecoder::new(&lep[FIXED_HEADER..end])
        .read_exact(&mut start)
        .is_err()
        || &start[..3] != b"HDR"
    {
        return bad("no HDR record");
    }
    let header_len = u32::from_le_bytes(start[3..7].try_into().expect("4 bytes")) as usize;
    if header_len > raw_len {
        return bad("JPEG header longer than the segment");
    }
    Ok(())
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
