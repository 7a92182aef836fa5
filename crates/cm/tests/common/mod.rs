//! Helpers shared by the context-mixing model's integration tests: the
//! configuration of a revision, a round trip through encoder and decoder,
//! deterministic noise and generated inputs (mixed text, images, audio).
//! (Each test binary uses some of them.)
#![allow(dead_code)]

use sep_cm::{Cm, CmConfig, CmStream, Sequential};
use sep_coder::{Decoder, Encoder};

pub fn config(revision: u8) -> CmConfig {
    CmConfig {
        orders: 0b0011_1111,
        word: true,
        sparse: true,
        record: true,
        long: 0b0001,
        match_min: 5,
        match2_min: 12,
        table_bits: 18,
        match_bits: 14,
        selectors: 0xF,
        apms: 3,
        image: true,
        revision,
    }
}

/// Encodes `data` as one stream, decodes it, checks the result; returns the
/// coded bytes.
pub fn round_trip(data: &[u8], cfg: &CmConfig) -> Vec<u8> {
    round_trip_skipped(data, cfg).0
}

pub fn noise(len: usize, seed: u64) -> Vec<u8> {
    let mut s = seed | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// A PCM WAV header: `channels` of `bits`-bit samples at `rate` Hz, then
/// `data_len` bytes of samples.
pub fn wav_header(channels: u16, bits: u16, rate: u32, data_len: u32) -> Vec<u8> {
    let mut h = b"RIFF".to_vec();
    h.extend((36 + data_len).to_le_bytes());
    h.extend(b"WAVEfmt ");
    h.extend(16u32.to_le_bytes());
    h.extend(1u16.to_le_bytes());
    h.extend(channels.to_le_bytes());
    h.extend(rate.to_le_bytes());
    h.extend((rate * u32::from(channels * bits / 8)).to_le_bytes());
    h.extend((channels * bits / 8).to_le_bytes());
    h.extend(bits.to_le_bytes());
    h.extend(b"data");
    h.extend(data_len.to_le_bytes());
    h
}

/// A bi-level bitmap (1 bit per pixel, rows of `width` bytes) of vertical
/// streaks: a pixel copies the one above, except that a white pixel turns
/// black with probability 1/128 and a black one white with 1/5; and a
/// vertical rule. Mostly zero bytes, no header.
pub fn fax(width: usize, rows: usize) -> Vec<u8> {
    let mut out = vec![0u8; width * rows];
    let mut s = 0x1234_5678u32;
    for y in 1..rows {
        for x in 0..width * 8 {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            let (byte, bit) = (x / 8, 0x80u8 >> (x % 8));
            let above = out[(y - 1) * width + byte] & bit != 0;
            let black = if above {
                !s.is_multiple_of(5)
            } else {
                s.is_multiple_of(128)
            };
            if black || x == 45 {
                out[y * width + byte] |= bit;
            }
        }
    }
    out
}

/// An image of `channels` channels (1: P5, 3: P6) of soft shapes with noise
/// that the channels share.
pub fn soft_pnm(w: usize, h: usize, channels: usize) -> Vec<u8> {
    let magic = if channels == 1 { "P5" } else { "P6" };
    let mut img = format!("{magic}\n{w} {h}\n255\n").into_bytes();
    let grain = noise(w * h, 31);
    for y in 0..h {
        for x in 0..w {
            let g = i32::from(grain[y * w + x] % 17) - 8;
            let base = ((x * x + y * y) / 64 % 200) as i32 + 20;
            for (scale, off) in [(4, 0), (3, 10), (2, 30)].into_iter().take(channels) {
                img.push((base * scale / 4 + off + g).clamp(0, 255) as u8);
            }
        }
    }
    img
}

/// The pixels of [`soft_pnm`] as a 24-bit BMP (bottom-up, rows padded to 4
/// bytes, BGR) with an info header of 40 bytes.
pub fn soft_bmp(w: usize, h: usize) -> Vec<u8> {
    let pnm = soft_pnm(w, h, 3);
    let pixels = &pnm[pnm.len() - w * h * 3..];
    let row = (w * 3).div_ceil(4) * 4;
    let mut out = b"BM".to_vec();
    out.extend(((54 + row * h) as u32).to_le_bytes());
    out.extend(0u32.to_le_bytes());
    out.extend(54u32.to_le_bytes());
    out.extend(40u32.to_le_bytes());
    out.extend((w as u32).to_le_bytes());
    out.extend((h as u32).to_le_bytes());
    out.extend(1u16.to_le_bytes());
    out.extend(24u16.to_le_bytes());
    out.extend([0u8; 24]);
    for y in (0..h).rev() {
        for x in 0..w {
            let p = &pixels[(y * w + x) * 3..][..3];
            out.extend([p[2], p[1], p[0]]);
        }
        out.resize(out.len() + row - w * 3, 0);
    }
    out
}

/// Markup, JSON, C-like code and UTF-8 text, with the repeats the
/// indirect contexts learn from.
pub fn mixed_text() -> Vec<u8> {
    let mut out = String::new();
    for i in 0..80u32 {
        out.push_str(&format!(
            "<li class=\"k{}\">Item {i}: \u{4e2d}\u{6587}\u{6587}\u{5b57} {}</li>\n",
            i % 4,
            i * 53 % 997
        ));
        out.push_str(&format!(
            "  {{\"id\": {i}, \"next\": {}, \"ok\": {}}},\n",
            i + 1,
            i % 2 == 0
        ));
        out.push_str(&format!(
            "    while (n{} < {}) n{} += g(n);\n",
            i % 3,
            i * 7,
            i % 3
        ));
    }
    out.into_bytes()
}

/// Round trips every input at every revision of `revisions` (the decoder
/// restores it); with `twice`, codes each once more and checks that the
/// coded bytes are the same (the model is deterministic).
pub fn round_trip_each<D: AsRef<[u8]>>(revisions: &[u8], inputs: &[D], twice: bool) {
    for &revision in revisions {
        for data in inputs {
            let a = round_trip(data.as_ref(), &config(revision));
            if twice {
                let b = round_trip(data.as_ref(), &config(revision));
                assert_eq!(a, b, "revision {revision} is not deterministic");
            }
        }
    }
}

/// Encodes `data` as one stream: the coded bytes and how many bytes the
/// model coded by revision 9's shortcut alone.
fn encode(data: &[u8], cfg: &CmConfig) -> (Vec<u8>, u64) {
    let mut enc = Encoder::new();
    let mut m = Cm::new(cfg, false, data.len());
    let mut st = CmStream::new(0);
    let mut buf = data.to_vec();
    for pos in 0..buf.len() {
        m.code_byte(&mut enc, &mut st, &mut buf, pos, &Sequential(pos), None);
    }
    assert_eq!(buf, data, "the encoder changed its input");
    let skipped = m.skipped_bytes();
    (enc.finish(), skipped)
}

/// The coded size of `data` as one stream (encoding only: for size
/// comparisons of inputs that other tests round trip).
pub fn coded_len(data: &[u8], cfg: &CmConfig) -> usize {
    encode(data, cfg).0.len()
}

/// [`round_trip`], also returning how many bytes the encoder's and the
/// decoder's models coded by revision 9's shortcut alone (checked equal).
pub fn round_trip_skipped(data: &[u8], cfg: &CmConfig) -> (Vec<u8>, u64) {
    let (bytes, skipped) = encode(data, cfg);
    let mut out = vec![0u8; data.len()];
    let mut dec = Decoder::new(&bytes);
    let mut m = Cm::new(cfg, false, data.len());
    let mut st = CmStream::new(0);
    for pos in 0..out.len() {
        m.code_byte(&mut dec, &mut st, &mut out, pos, &Sequential(pos), None);
    }
    assert!(
        out == data,
        "decoded bytes differ (revision {})",
        cfg.revision
    );
    assert_eq!(m.skipped_bytes(), skipped, "decoder skipped other bytes");
    (bytes, skipped)
}

/// An x86-64 ELF executable: the header, three program headers (the
/// headers page read-only, `code` at 0x1000 read+execute, `data` after it
/// read-only), then the code and the data.
pub fn elf64(code: &[u8], data: &[u8]) -> Vec<u8> {
    let code_off = 0x1000usize;
    let data_off = code_off + code.len();
    let mut out = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0\x3e\0".to_vec();
    out.resize(64, 0);
    out[0x20] = 64; // e_phoff
    out[0x36] = 56; // e_phentsize
    out[0x38] = 3; // e_phnum
    for (flags, off, size) in [
        (4u32, 0usize, code_off),
        (5, code_off, code.len()),
        (4, data_off, data.len()),
    ] {
        let mut ph = vec![0u8; 56];
        ph[..4].copy_from_slice(&1u32.to_le_bytes());
        ph[4..8].copy_from_slice(&flags.to_le_bytes());
        ph[8..16].copy_from_slice(&(off as u64).to_le_bytes());
        ph[32..40].copy_from_slice(&(size as u64).to_le_bytes());
        out.extend(ph);
    }
    out.resize(code_off, 0);
    out.extend(code);
    out.extend(data);
    out
}

/// The pixels of [`soft_pnm`] as a 32-bit TGA (a fourth channel that
/// follows the first).
pub fn soft_tga32(w: usize, h: usize) -> Vec<u8> {
    let pnm = soft_pnm(w, h, 3);
    let mut out = vec![0u8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend((w as u16).to_le_bytes());
    out.extend((h as u16).to_le_bytes());
    out.extend([32, 8]);
    for p in pnm[pnm.len() - w * h * 3..].chunks_exact(3) {
        out.extend([p[2], p[1], p[0], p[0] / 2 + 7]);
    }
    out
}
