//! CM revision 38's audio family (doc/FORMAT.md 4.49.4): round trips of
//! 16- and 8-bit, stereo and mono PCM, of tiny inputs and of WAV headers
//! that lie or are cut, at revision 38; and that revision 38 codes a
//! signal with a period longer than revision 14's predictors reach (plus
//! noise) smaller than revision 36 (it fails if the NLMS stages are off).

use crate::common;
use common::{Noise, coded_len, config, push_sample, round_trip_each, wav_header, xorshift64};

/// A WAV file of `frames` frames repeating a random smooth waveform of
/// `period` frames with noise of amplitude `noise` on top; the second
/// channel is the waveform read a third of a period later, scaled, plus
/// the first channel's noise and its own.
fn periodic_wav(channels: u16, bits: u16, frames: usize, period: usize, noise: i64) -> Vec<u8> {
    let mut out = wav_header(
        channels,
        bits,
        44100,
        (frames * usize::from(channels * bits / 8)) as u32,
    );
    let mut next = xorshift64(0x0A0D_1038_5EED_0001);
    let mut level = 0i64;
    let wave: Vec<i64> = (0..period)
        .map(|_| {
            level += ((next() >> 40) as i64 % 4001) - 2000;
            level -= level / 16;
            level
        })
        .collect();
    let mut rng = Noise(0x5EED_A038);
    for t in 0..frames {
        let n = rng.next(noise);
        let left = wave[t % period] + n;
        let right = wave[(t + period / 3) % period] * 3 / 4 + n / 2 + rng.next(noise);
        for v in [left, right].into_iter().take(usize::from(channels)) {
            push_sample(&mut out, v, bits);
        }
    }
    out
}

#[test]
fn revision_38_audio_round_trips() {
    let whole = periodic_wav(2, 16, 1000, 150, 30);
    let mut inputs: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"x".to_vec(),
        whole[..20].to_vec(),
        whole[..44].to_vec(),
        whole[..45].to_vec(),
        whole,
        periodic_wav(1, 16, 3000, 150, 100),
        periodic_wav(1, 8, 3000, 150, 300),
        periodic_wav(2, 8, 2000, 150, 0),
    ];
    // Silence, full-scale square waves and WAV headers that lie.
    inputs.extend(common::hostile_wavs());
    round_trip_each(&[38], &inputs, true);
}

#[test]
fn revision_38_codes_long_periods_smaller_than_revision_36() {
    // Periods of 300 and 250 frames (600 and 250 interleaved samples, far
    // beyond OLS 64) under noise: each at least 0.5% smaller (measured:
    // 2.1% stereo, 0.9% mono, where revision 14's 512-tap sign-sign cascade
    // already sees the period).
    for data in [
        periodic_wav(2, 16, 6000, 300, 60),
        periodic_wav(1, 16, 8000, 250, 60),
    ] {
        let v36 = coded_len(&data, &config(36));
        let v38 = coded_len(&data, &config(38));
        assert!(
            v38 * 1000 < v36 * 995,
            "revision 38 {v38} bytes, revision 36 {v36}"
        );
    }
}
