//! CM revision 4's audio family (doc/FORMAT.md 4.15.5): round trips of
//! 8- and 16-bit, mono and stereo PCM and of WAV headers that lie, and a
//! noisy chord that revision 4 codes smaller than revision 2.

use crate::common;
use common::{Noise, config, hostile_wavs, push_sample, round_trip, wav_header};

/// A WAV file of a decaying three-tone chord with noise (integer
/// arithmetic: recurrence oscillators), `frames` frames; the second
/// channel is a quieter mix of the same tones.
fn chord_wav(channels: u16, bits: u16, frames: usize, noise: i64) -> Vec<u8> {
    let mut out = wav_header(
        channels,
        bits,
        22050,
        (frames * usize::from(channels * bits / 8)) as u32,
    );
    // (sin, cos, step / 1024) of each tone.
    let mut osc = [(0i64, 12000i64, 61i64), (0, 8000, 97), (0, 5000, 157)];
    let mut rng = Noise(0x5EED_A0D1);
    for t in 0..frames {
        let mut tones = [0i64; 3];
        for (k, (a, b, step)) in osc.iter_mut().enumerate() {
            *a += *b * *step / 1024;
            *b -= *a * *step / 1024;
            if t % 64 == 63 {
                // Decay.
                *a -= *a / 64;
                *b -= *b / 64;
            }
            tones[k] = *a;
        }
        for c in 0..channels {
            let v = if c == 0 {
                tones[0] + tones[1] + tones[2]
            } else {
                (tones[0] * 3 + tones[2] * 5) / 8
            } + rng.next(noise);
            push_sample(&mut out, v, bits);
        }
    }
    out
}

/// Chords of both widths and channel counts, and `common::hostile_wavs`:
/// silence and a full-scale square wave (the clamps), a data chunk that
/// claims more than there is, an odd byte count after a 16-bit header,
/// text after an 8-bit one and an empty data chunk.
#[test]
fn revision_4_audio_round_trips() {
    let chords = [
        chord_wav(2, 16, 3000, 30),
        chord_wav(1, 16, 3000, 300),
        chord_wav(1, 8, 4000, 200),
        chord_wav(2, 8, 2000, 0),
    ];
    for data in chords.into_iter().chain(hostile_wavs()) {
        let a = round_trip(&data, &config(4));
        assert_eq!(a, round_trip(&data, &config(4)), "deterministic");
    }
}

#[test]
fn revision_4_codes_audio_smaller_than_revision_2() {
    for data in [chord_wav(2, 16, 8000, 60), chord_wav(1, 16, 8000, 400)] {
        let v2 = round_trip(&data, &config(2)).len();
        let v4 = round_trip(&data, &config(4)).len();
        assert!(v4 * 100 < v2 * 97, "revision 4 {v4} bytes, revision 2 {v2}");
    }
}
