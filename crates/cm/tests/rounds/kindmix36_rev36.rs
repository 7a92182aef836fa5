//! CM revision 36's mixing of detected kinds (doc/FORMAT.md 4.47.2): the
//! second final mixer layer and the learned mix of the refinement stages
//! for every detected kind but images. Round trips at revisions 34 and 36
//! of x86 code (empty, 1 byte, a bare ELF magic, real code, a lying and a
//! truncated ELF header), 16-bit stereo audio behind a WAV header (one
//! that lies about its length too) and a float grid; and that revision 36
//! codes real x86 code smaller than revision 34 (it fails if the mixers
//! are off).

use crate::common;
use common::{f32_grid, round_trip_each, wav_header, x86_cases, x86_code_sizes, xorshift64};

/// A 16-bit stereo WAV file of `frames` frames of two tones with noise,
/// its header announcing `claimed` bytes of samples.
fn tones_wav(frames: usize, claimed: u32) -> Vec<u8> {
    let mut out = wav_header(2, 16, 44100, claimed);
    let mut next = xorshift64(0x36_4B1D);
    let (mut a, mut b) = (0i64, 12000i64);
    for _ in 0..frames {
        a += b * 37 / 1024;
        b -= a * 37 / 1024;
        let n = (next() % 64) as i64 - 32;
        let left = (a + n).clamp(-32768, 32767) as i16;
        let right = (a / 2 + b / 4 - n).clamp(-32768, 32767) as i16;
        out.extend(left.to_le_bytes());
        out.extend(right.to_le_bytes());
    }
    out
}

#[test]
fn revision_36_round_trips_detected_kinds() {
    let mut cases = x86_cases();
    cases.push(tones_wav(3000, 12000));
    // A header that claims far more samples than follow, and one cut
    // inside the first sample.
    cases.push(tones_wav(500, 1 << 30));
    cases.push(tones_wav(1, 4)[..45].to_vec());
    cases.push(f32_grid(4000));
    round_trip_each(&[34, 36], &cases, true);
}

/// Revision 36 pays on real x86-64 code in an ELF file: smaller than
/// revision 34. Only "smaller" is asserted; doc/FORMAT.md 4.47.2 has the
/// corpus numbers.
#[test]
fn revision_36_beats_34_on_x86_code() {
    let (a, b) = x86_code_sizes(34, 36);
    assert!(b < a, "revision 36 {b} bytes, revision 34 {a}");
}
