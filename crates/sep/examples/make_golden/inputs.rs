//! The synthetic inputs the generator writes (tests/golden/inputs).

#[allow(unused_imports)]
use super::*;

/// A 44-byte WAV header for `data_len` bytes of 16-bit PCM.
pub(crate) fn wav_header(channels: u16, data_len: u32) -> Vec<u8> {
    let mut h = b"RIFF".to_vec();
    h.extend(36u32.wrapping_add(data_len).to_le_bytes());
    h.extend(b"WAVEfmt ");
    h.extend(16u32.to_le_bytes());
    h.extend(1u16.to_le_bytes());
    h.extend(channels.to_le_bytes());
    h.extend(8000u32.to_le_bytes());
    h.extend((8000 * 2 * u32::from(channels)).to_le_bytes());
    h.extend((2 * channels).to_le_bytes());
    h.extend(16u16.to_le_bytes());
    h.extend(b"data");
    h.extend(data_len.to_le_bytes());
    h
}

/// 16-bit stereo WAV of 2000 frames: an integer oscillator, the right
/// channel a scaled copy of the left with a small ripple.
pub(crate) fn tone_wav() -> Vec<u8> {
    let mut out = wav_header(2, 8000);
    let (mut a, mut b) = (0i32, 9000i32);
    for t in 0..2000 {
        a += b * 3 / 64;
        b -= a * 3 / 64;
        out.extend((a as i16).to_le_bytes());
        out.extend(((a / 2 + (t % 5) * 30) as i16).to_le_bytes());
    }
    out
}

/// An x86-64 ELF header (20 bytes, then zeros to 64) and 150 small
/// functions of machine code.
pub(crate) fn x86_elf() -> Vec<u8> {
    let mut out = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0".to_vec();
    out.extend([0u8; 44]);
    for f in 0..150u32 {
        out.extend([0x55, 0x48, 0x89, 0xE5, 0x8B, 0x45, 0xF8, 0xE8]);
        out.extend(
            (f.wrapping_mul(2_654_435_761) >> 20)
                .wrapping_neg()
                .to_le_bytes(),
        );
        out.extend([0x0F, 0x85]);
        out.extend((f % 64 + 16).to_le_bytes());
        out.extend([0xC9, 0xC3]);
    }
    out
}

/// A BIFF stream: BOF, then 60 rows of four NUMBER cells.
pub(crate) fn cells_xls() -> Vec<u8> {
    let mut out = vec![0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00];
    for r in 0..60u16 {
        for c in 0..4u16 {
            out.extend([0x03, 0x02, 14, 0]);
            out.extend(r.to_le_bytes());
            out.extend(c.to_le_bytes());
            out.extend(15u16.to_le_bytes());
            out.extend((f64::from(r) * 1.5 + f64::from(c)).to_le_bytes());
        }
    }
    out
}

/// A bi-level bitmap of 1100 rows of 64 bytes: vertical streaks (a pixel
/// copies the one above, except that white turns black with probability
/// 1/128 and black turns white with 1/5) and a vertical rule. Large enough
/// (70,400 bytes) for CM revision 1 to switch to its bi-level model.
pub(crate) fn fax() -> Vec<u8> {
    let (width, rows) = (64, 1100);
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

/// A WAV header that lies: it claims 1 GiB of audio, followed by 3000 bytes
/// of 6-bit noise.
pub(crate) fn fake_wav() -> Vec<u8> {
    let mut out = wav_header(2, 1 << 30);
    out.extend(noise(3000).iter().map(|b| b & 63));
    out
}

/// Deterministic noise (xorshift64), incompressible: stored blocks.
pub(crate) fn noise(len: usize) -> Vec<u8> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 24) as u8
        })
        .collect()
}

/// The synthetic inputs (the others are copied from the corpus; see the README).
pub(crate) fn synthetic() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("empty", Vec::new()),
        ("one-byte", b"a".to_vec()),
        ("zeros-2000", vec![0; 2000]),
        ("noise-1500", noise(1500)),
        ("tone.wav", tone_wav()),
        ("fake.wav", fake_wav()),
        ("x86.elf", x86_elf()),
        ("cells.xls", cells_xls()),
        ("fax.pbm", fax()),
        ("image.bmp", bmp()),
        ("quat.f32", quaternions()),
        ("code.rsrc", resource_fork()),
    ]
}

/// A 24-bit bottom-up BMP of 24 x 16 smooth pixels (CM revision 4 detects
/// BMP headers, doc/FORMAT.md 4.15.2).
pub(crate) fn bmp() -> Vec<u8> {
    let (w, h) = (24u32, 16u32);
    let row = (w * 3).div_ceil(4) * 4;
    let mut v = b"BM".to_vec();
    for x in [54 + row * h, 0, 54, 40, w, h] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.extend_from_slice(&1u16.to_le_bytes());
    v.extend_from_slice(&24u16.to_le_bytes());
    v.extend_from_slice(&[0; 24]);
    let mut n = noise(row as usize * h as usize);
    for y in 0..h {
        for x in 0..row {
            let k = (y * row + x) as usize;
            n[k] = (40 + x * 5 + y * 7 + u32::from(n[k] & 3)) as u8;
        }
    }
    v.extend_from_slice(&n);
    v
}

/// 1100 records of four f32 (a unit quaternion turning slowly): a float
/// array of 4-byte records (revision 4's float family, 4.15.3).
pub(crate) fn quaternions() -> Vec<u8> {
    let mut v = Vec::with_capacity(1100 * 16);
    for i in 0..1100 {
        let t = i as f32 * 0.01;
        let (a, b) = (t.sin(), (t * 0.7).cos());
        let q = [
            a * b,
            a * (1.0 - b * b).sqrt(),
            (1.0 - a * a).sqrt() * 0.6,
            0.0,
        ];
        let n2: f32 = q[..3].iter().map(|x| x * x).sum();
        let w = (1.0 - n2).max(0.0).sqrt();
        for x in [q[0], q[1], q[2], w] {
            v.extend_from_slice(&x.to_le_bytes());
        }
    }
    v
}

/// A Macintosh resource fork header and 3000 bytes of 16-bit big-endian
/// words in a few 68000-like patterns (revision 4's word family, 4.15.4).
pub(crate) fn resource_fork() -> Vec<u8> {
    let len = 3000u32;
    let mut v = Vec::new();
    for x in [0x100, 0x100 + len, len, 0x40] {
        v.extend_from_slice(&u32::to_be_bytes(x));
    }
    v.resize(0x100, 0);
    let ops = [
        0x4E56u16, 0x2F0E, 0x206E, 0x4EBA, 0x4E75, 0x7000, 0x3F3C, 0xA9F4,
    ];
    let r = noise(len as usize / 2);
    for (k, &x) in r.iter().enumerate() {
        let op = ops[usize::from(x) % ops.len()];
        let word = if k % 3 == 2 { u16::from(x) * 4 } else { op };
        v.extend_from_slice(&word.to_be_bytes());
    }
    v
}
