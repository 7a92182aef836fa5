//! Audio contexts (CM revision 1) for PCM samples after a WAV header: 8-bit
//! (unsigned) or 16-bit (little-endian, signed), mono or stereo.
//!
//! For every sample the family predicts its value from the channel's past
//! samples (fixed polynomial predictors of orders 1 to 3, the other
//! channel's current sample moved by this channel's last step, and an
//! adaptive integer LMS predictor), and each context is the byte that a
//! prediction implies for the byte being coded: for the high byte of a
//! 16-bit sample, the prediction minus the already known low byte. Contexts
//! carry the byte's position in the sample and the channel.

use super::expected::ExpectedBits;
use super::{ByteCtx, ContextModel, hash2};

/// The layout of PCM audio in a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AudioInfo {
    /// Block position of the first sample.
    pub start: usize,
    /// Channels (1 or 2).
    pub channels: usize,
    /// Bytes per sample (1 or 2).
    pub bytes: usize,
}

fn le16(b: &[u8], at: usize) -> Option<usize> {
    Some(usize::from(u16::from_le_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
    ])))
}

fn le32(b: &[u8], at: usize) -> Option<usize> {
    let v = u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?);
    Some(v as usize)
}

impl AudioInfo {
    /// Recognises a RIFF/WAVE header of PCM (format 1) audio, 8 or 16 bits,
    /// 1 or 2 channels, whose `data` chunk's payload starts exactly at the
    /// end of `h`.
    pub fn parse_wav(h: &[u8]) -> Option<AudioInfo> {
        if h.len() < 44 || &h[..4] != b"RIFF" || &h[8..12] != b"WAVE" {
            return None;
        }
        let mut at = 12;
        let mut format = None;
        while at + 8 <= h.len() {
            let id = &h[at..at + 4];
            let size = le32(h, at + 4)?;
            if id == b"data" {
                let (channels, bits) = format?;
                return (at + 8 == h.len()).then_some(AudioInfo {
                    start: h.len(),
                    channels,
                    bytes: bits / 8,
                });
            }
            if id == b"fmt " {
                let tag = le16(h, at + 8)?;
                let channels = le16(h, at + 10)?;
                let bits = le16(h, at + 22)?;
                if tag != 1 || !(1..=2).contains(&channels) || !(bits == 8 || bits == 16) {
                    return None;
                }
                format = Some((channels, bits));
            }
            at = at.checked_add(8 + size + (size & 1))?;
        }
        None
    }
}

/// Number of predictors.
const PREDICTORS: usize = 5;
/// LMS taps per channel.
const TAPS: usize = 16;

/// An integer sign-sign LMS predictor over a channel's last samples.
#[derive(Debug, Clone)]
struct Lms {
    w: [i32; TAPS],
    hist: [i32; TAPS],
}

impl Lms {
    fn new() -> Self {
        let mut w = [0; TAPS];
        w[0] = 1 << 14;
        Lms { w, hist: [0; TAPS] }
    }

    /// The prediction (weights have 14 fraction bits).
    fn predict(&self) -> i32 {
        let dot: i64 = self
            .w
            .iter()
            .zip(&self.hist)
            .map(|(&w, &x)| i64::from(w) * i64::from(x))
            .sum();
        (dot >> 14).clamp(-32768, 32767) as i32
    }

    /// Learns the sample `s` and shifts it into the history.
    fn update(&mut self, s: i32) {
        let err = s - self.predict();
        let sign = err.signum();
        for (w, &x) in self.w.iter_mut().zip(&self.hist) {
            *w = (*w + sign * x.signum() * 16).clamp(-(1 << 17), 1 << 17);
        }
        self.hist.copy_within(0..TAPS - 1, 1);
        self.hist[0] = s;
    }
}

/// The audio family (10 contexts).
#[derive(Debug, Clone)]
pub(crate) struct AudioContexts {
    info: AudioInfo,
    lms: Vec<Lms>,
    /// Per-bit inputs from the bytes the predictions imply.
    bits: ExpectedBits<{ BIT_PREDICTORS.len() }>,
}

impl AudioContexts {
    /// The family for audio laid out as `info`.
    pub fn new(info: AudioInfo) -> Self {
        AudioContexts {
            info,
            lms: (0..info.channels).map(|_| Lms::new()).collect(),
            bits: ExpectedBits::new(4 * 36),
        }
    }

    /// The sample starting at block position `at` (0 before the audio).
    fn sample(&self, data: &[u8], at: Option<usize>) -> i32 {
        match at {
            Some(p) if p >= self.info.start && p + self.info.bytes <= data.len() => {
                if self.info.bytes == 2 {
                    i32::from(i16::from_le_bytes([data[p], data[p + 1]]))
                } else {
                    i32::from(data[p]) - 128
                }
            }
            _ => 0,
        }
    }
}

/// `floor(log2(|v|)) + 1`, 0 for 0.
fn magnitude(v: i32) -> u32 {
    32 - v.unsigned_abs().leading_zeros()
}

/// What the family knows about the sample the next byte belongs to.
struct Frame {
    /// Byte in the sample, channel.
    bis: usize,
    ch: usize,
    /// The predictions of the sample.
    p: [i32; PREDICTORS],
    /// Loudness of the channel's last two steps.
    noise: u32,
    /// The sample's low byte when the high byte is next (16-bit).
    low: Option<i32>,
}

impl AudioContexts {
    fn frame(&self, ctx: &ByteCtx<'_>) -> Frame {
        let (data, pos) = (ctx.data, ctx.pos);
        let AudioInfo {
            start,
            channels,
            bytes,
        } = self.info;
        let rel = pos - start;
        let frame = channels * bytes;
        let bis = rel % bytes;
        let ch = (rel / bytes) % channels;
        let here = pos - bis;
        let back = |k: usize| here.checked_sub(k * frame);
        let (s1, s2, s3) = (
            self.sample(data, back(1)),
            self.sample(data, back(2)),
            self.sample(data, back(3)),
        );
        let other = if channels == 2 && ch == 1 {
            let o0 = self.sample(data, here.checked_sub(bytes));
            let o1 = self.sample(data, back(1).and_then(|p| p.checked_sub(bytes)));
            o0 + s1 - o1
        } else {
            s1 + (s1 - s2) / 2
        };
        Frame {
            bis,
            ch,
            p: [
                s1,
                2 * s1 - s2,
                3 * s1 - 3 * s2 + s3,
                other,
                self.lms[ch].predict(),
            ],
            noise: magnitude(s1 - s2) + magnitude(s2 - s3),
            low: (bytes == 2 && bis == 1).then(|| i32::from(data[pos - 1])),
        }
    }

    /// The byte that the sample value `v` implies for the byte being coded
    /// (9 bits for a high byte: the sign is kept).
    fn implied(&self, f: &Frame, v: i32) -> u32 {
        match f.low {
            _ if self.info.bytes == 1 => (v.clamp(-128, 127) + 128) as u32,
            None => (v & 0xFF) as u32,
            Some(low) => (((v - low + 128) >> 8) & 0x1FF) as u32,
        }
    }
}

/// Predictions that give a per-bit input: 2 s1 - s2, 3rd order, other
/// channel, LMS.
const BIT_PREDICTORS: [usize; 4] = [1, 2, 3, 4];

impl ContextModel for AudioContexts {
    fn contexts(&self) -> usize {
        10
    }

    fn selector_size(&self) -> usize {
        8 * 4 * 36
    }

    /// The byte's place in the sample and its channel, with the loudness of
    /// the channel's last steps.
    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        let f = self.frame(ctx);
        (f.bis * 2 + f.ch) * 36 + f.noise.min(35) as usize
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let f = self.frame(ctx);
        let tag = (f.bis as u32) << 4 | (f.ch as u32) << 2 | self.info.bytes as u32;
        let e: [u32; PREDICTORS] = f.p.map(|v| self.implied(&f, v));
        for (j, (h, &e)) in out.iter_mut().zip(&e).enumerate() {
            *h = hash2(e, tag | (j as u32) << 8);
        }
        let noise = f.noise;
        out[5] = hash2(hash2(e[1], e[4]), tag | 5 << 8);
        out[6] = hash2(hash2(e[2], noise), tag | 6 << 8);
        out[7] = hash2(hash2(ctx.c4() & 0xFF, noise), tag | 7 << 8);
        // Finer: where in the high byte's range a prediction falls.
        let fine = |v: i32| -> u32 {
            match f.low {
                Some(low) => ((v - low) >> 5) as u32 & 0xFFF,
                None => self.implied(&f, v),
            }
        };
        out[8] = hash2(hash2(fine(f.p[4]), noise), tag | 8 << 8);
        out[9] = hash2(hash2(fine(f.p[1]), fine(f.p[3])), tag | 9 << 8);
        for h in out.iter_mut() {
            *h = hash2(*h, 0x800);
        }
    }

    fn bit_inputs(&self) -> usize {
        BIT_PREDICTORS.len()
    }

    /// The byte the LMS prediction implies.
    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        let f = self.frame(ctx);
        Some(self.implied(&f, f.p[4]) & 0xFF)
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let f = self.frame(ctx);
        let expected = BIT_PREDICTORS.map(|j| self.implied(&f, f.p[j]));
        let situation = (f.bis * 2 + f.ch) * 36 + f.noise.min(35) as usize;
        self.bits.begin(expected, situation);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.bits.predict(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.bits.update(bit);
    }

    fn observe(&mut self, data: &[u8], pos: usize, _byte: u8) {
        let AudioInfo {
            start,
            channels,
            bytes,
        } = self.info;
        if pos < start || !(pos - start + 1).is_multiple_of(bytes) {
            return;
        }
        let first = pos + 1 - bytes;
        let ch = ((first - start) / bytes) % channels;
        let s = self.sample(data, Some(first));
        self.lms[ch].update(s);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A canonical 44-byte WAV header for `data_len` bytes of PCM.
    pub fn wav_header(channels: u16, bits: u16, data_len: u32) -> Vec<u8> {
        let mut h = b"RIFF".to_vec();
        h.extend((36 + data_len).to_le_bytes());
        h.extend(b"WAVEfmt ");
        h.extend(16u32.to_le_bytes());
        h.extend(1u16.to_le_bytes());
        h.extend(channels.to_le_bytes());
        h.extend(44100u32.to_le_bytes());
        h.extend((44100 * u32::from(channels * bits / 8)).to_le_bytes());
        h.extend((channels * bits / 8).to_le_bytes());
        h.extend(bits.to_le_bytes());
        h.extend(b"data");
        h.extend(data_len.to_le_bytes());
        h
    }

    #[test]
    fn parses_wav_headers() {
        let h = wav_header(1, 8, 10);
        assert_eq!(
            AudioInfo::parse_wav(&h),
            Some(AudioInfo {
                start: 44,
                channels: 1,
                bytes: 1
            })
        );
        assert_eq!(AudioInfo::parse_wav(&h[..43]), None);
        let mut bad = wav_header(3, 16, 10);
        assert_eq!(AudioInfo::parse_wav(&bad), None, "3 channels");
        bad = wav_header(2, 24, 10);
        assert_eq!(AudioInfo::parse_wav(&bad), None, "24 bits");
        // A huge chunk size does not overflow.
        let mut odd = wav_header(2, 16, 10);
        odd[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(AudioInfo::parse_wav(&odd), None);
    }

    #[test]
    fn lms_learns_a_ramp() {
        let mut l = Lms::new();
        for t in 0..2000 {
            l.update(t * 3 % 20000);
        }
        assert!((l.predict() - 6000).abs() < 200, "{}", l.predict());
    }
}
