//! CM revision 12's mixing of detected data kinds (doc/FORMAT.md 4.23.1):
//! round trips of inputs whose kind is detected (images, bi-level pages,
//! x86 code, spreadsheets, floats, audio), of headers that lie or are cut
//! short, at revision 12; and that revision 12 codes detected
//! kinds smaller than revision 10 (it fails if the kind mixing is off).

use crate::common;
use common::{
    coded_len, config, elf64, fax, noise, round_trip_each, soft_bmp, soft_pnm, wav_header,
};

/// A sine-like 16-bit stereo signal with a little noise, after a WAV
/// header.
fn wav(samples: usize) -> Vec<u8> {
    let mut out = wav_header(2, 16, 44100, (samples * 4) as u32);
    let n = noise(samples * 2, 77);
    let mut phase = 0i32;
    for k in 0..samples {
        phase = (phase + 37) % 1024;
        let tri = if phase < 512 {
            phase - 256
        } else {
            768 - phase
        };
        for ch in 0..2 {
            let v = tri * 40 + i32::from(n[2 * k + ch]) - 128;
            out.extend((v as i16).to_le_bytes());
        }
    }
    out
}

/// x86-like code: a few instruction patterns with varying operands.
fn code(len: usize) -> Vec<u8> {
    let n = noise(len, 31);
    let mut out = Vec::with_capacity(len);
    let mut k = 0;
    while out.len() < len {
        match n[k % n.len()] % 4 {
            0 => out.extend([0x48, 0x89, 0xC7 + (n[(k + 1) % n.len()] & 7)]),
            1 => out.extend([0xE8, n[(k + 2) % n.len()], 0x10, 0, 0]),
            2 => out.extend([0x8B, 0x45, n[(k + 3) % n.len()] & 0xF8]),
            _ => out.extend([0x0F, 0x85, 0x20, 0, 0, 0]),
        }
        k += 1;
    }
    out.truncate(len);
    out
}

/// Little-endian 32-bit floats of a smooth curve.
fn floats(count: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for k in 0..count {
        let x = k as f32 / 50.0;
        out.extend((x * 0.37 + (k % 17) as f32 * 0.01).to_le_bytes());
    }
    out
}

#[test]
fn revision_12_round_trips_detected_kinds_and_lying_headers() {
    let mut lying = b"P6\n300 200\n255\n".to_vec();
    lying.extend(noise(2000, 5));
    let mut short_wav = wav(400);
    short_wav.truncate(900);
    let mut lying_wav = wav_header(2, 16, 44100, 1 << 30);
    lying_wav.extend(noise(700, 3));
    let inputs = [
        soft_pnm(37, 23, 3),
        soft_bmp(37, 21),
        soft_pnm(41, 19, 1),
        fax(64, 120),
        elf64(&code(3000), &noise(300, 4)),
        wav(1500),
        short_wav,
        lying_wav,
        floats(1500),
        lying,
        soft_pnm(64, 64, 3)[..5000].to_vec(),
        soft_pnm(8, 8, 3)[..9].to_vec(),
    ];
    round_trip_each(&[12], &inputs, false);
    round_trip_each(&[12], &inputs[..1], true);
}

#[test]
fn revision_12_codes_detected_kinds_smaller_than_revision_10() {
    let inputs = [
        soft_pnm(96, 64, 3),
        elf64(&code(12_000), &noise(200, 6)),
        wav(6000),
    ];
    let (mut r10, mut r12) = (0, 0);
    for data in &inputs {
        r10 += coded_len(data, &config(10));
        r12 += coded_len(data, &config(12));
    }
    // Without the kind mixing revision 12 codes exactly as revision 10.
    assert!(r12 < r10, "revision 12 {r12} bytes, revision 10 {r10}");
}
