//! Deflate segments: inflated by `preflate-rs` (pinned 0.7.6), which also
//! records how to re-create the exact compressed bytes.

use preflate_rs::{
    PreflateConfig, RecreateLimits, preflate_whole_deflate_stream,
    recreate_whole_deflate_stream_limited,
};

/// Smallest stream worth a segment.
const MIN_STREAM: usize = 32;

/// The longest hash chain the encoder lets preflate assume (its estimate is
/// refused above it); a decoder refuses reconstruction data asking for more.
const MAX_CHAIN: u32 = 4096;

/// Inflates the raw deflate stream at the start of `data`, returning its
/// length, the plain text and the reconstruction data; gives up when the
/// plain text would pass `limit` bytes (an inflate bomb).
pub fn encode(data: &[u8], limit: usize) -> Result<(usize, Vec<u8>, Vec<u8>), String> {
    crate::guarded("deflate", || {
        let config = PreflateConfig {
            max_chain_length: MAX_CHAIN,
            plain_text_limit: limit,
            verify_compression: false,
        };
        let (result, plain) =
            preflate_whole_deflate_stream(data, &config).map_err(|e| format!("deflate: {e:?}"))?;
        if result.compressed_size < MIN_STREAM {
            return Err("deflate: too short".into());
        }
        Ok((
            result.compressed_size,
            plain.text().to_vec(),
            result.corrections,
        ))
    })
}

/// The deflate stream of `raw_len` bytes that `plain` and `extra` re-create.
///
/// Bounded work: the patched preflate (vendor/preflate-rs/PATCHES.md) checks
/// the reconstruction parameters first and stops as soon as its output passes
/// `raw_len` bytes, so crafted data cannot make it loop (each deflate block
/// writes at least 3 bits, each token consumes a plain byte, each chain search
/// is bounded by the 64 KiB window table).
pub fn decode(plain: &[u8], extra: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    crate::guarded("deflate", || {
        let limits = RecreateLimits {
            max_output: raw_len,
            max_chain: MAX_CHAIN,
        };
        let out = recreate_whole_deflate_stream_limited(plain, extra, &limits).map_err(|e| {
            format!(
                "deflate segment: broken reconstruction data ({:?})",
                e.exit_code()
            )
        })?;
        if out.len() != raw_len {
            return Err(format!(
                "deflate segment: re-created {} bytes, expected {raw_len}",
                out.len()
            ));
        }
        Ok(out)
    })
}
