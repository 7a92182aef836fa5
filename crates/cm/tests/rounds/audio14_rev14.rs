//! CM revision 14's audio family (doc/FORMAT.md 4.25.5): round trips of
//! 16- and 8-bit, stereo and mono PCM, of tiny inputs and of WAV headers
//! that lie, at revision 14; and that revision 14 codes a reverberant
//! stereo chord smaller than revision 12 (it fails if the family is off).

use crate::common;
use common::{Noise, coded_len, config, push_sample, round_trip_each, wav_header};

/// A WAV file of a decaying chord of five tones with an echo 37 frames
/// back and noise (integer recurrence oscillators), `frames` frames; the
/// second channel mixes the tones differently and hears the first.
fn chord_wav(channels: u16, bits: u16, frames: usize, noise: i64) -> Vec<u8> {
    let mut out = wav_header(
        channels,
        bits,
        44100,
        (frames * usize::from(channels * bits / 8)) as u32,
    );
    // (sin, cos, step / 1024) of each tone.
    let mut osc = [
        (0i64, 9000i64, 23i64),
        (0, 7000, 61),
        (0, 5000, 97),
        (0, 3000, 157),
        (0, 2000, 211),
    ];
    let mut rng = Noise(0x5EED_A014);
    let mut past: Vec<[i64; 2]> = vec![[0; 2]; 64];
    for t in 0..frames {
        let mut tones = [0i64; 5];
        for (k, (a, b, step)) in osc.iter_mut().enumerate() {
            *a += *b * *step / 1024;
            *b -= *a * *step / 1024;
            if t % 128 == 127 {
                *a -= *a / 64;
                *b -= *b / 64;
            }
            tones[k] = *a;
        }
        let echo = past[(t + 64 - 37) % 64];
        let left = tones.iter().sum::<i64>() + echo[1] / 3 + rng.next(noise);
        let right = (tones[0] * 3 + tones[2] * 5 + tones[4] * 7) / 8
            + left / 4
            + echo[0] / 4
            + rng.next(noise);
        past[t % 64] = [left, right];
        for v in [left, right].into_iter().take(usize::from(channels)) {
            push_sample(&mut out, v, bits);
        }
    }
    out
}

#[test]
fn revision_14_audio_round_trips() {
    let mut inputs: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"x".to_vec(),
        chord_wav(2, 16, 3000, 30),
        chord_wav(1, 16, 3000, 300),
        chord_wav(1, 8, 3000, 200),
        chord_wav(2, 8, 2000, 0),
    ];
    // Silence, full-scale square waves and WAV headers that lie.
    inputs.extend(common::hostile_wavs());
    round_trip_each(&[14], &inputs, true);
}

#[test]
fn revision_14_codes_audio_smaller_than_revision_12() {
    // A noisy stereo and a noisier mono chord: together at least 0.1%
    // smaller (equal if the family were off), neither larger.
    let (mut t12, mut t14) = (0, 0);
    for data in [chord_wav(2, 16, 12000, 40), chord_wav(1, 16, 12000, 200)] {
        let v12 = coded_len(&data, &config(12));
        let v14 = coded_len(&data, &config(14));
        assert!(v14 <= v12, "revision 14 {v14} bytes, revision 12 {v12}");
        (t12, t14) = (t12 + v12, t14 + v14);
    }
    assert!(
        t14 * 1000 < t12 * 999,
        "revision 14 {t14} bytes, revision 12 {t12}"
    );
}
