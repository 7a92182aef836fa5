//! Data-type detection at the start of a block (CM revision 1): the block's
//! first bytes, as they are coded, are matched against a binary PNM header,
//! a RIFF/WAVE header, an x86 ELF header and a BIFF (Excel) BOF record. When one is complete, the model switches to the
//! image or audio model set from the next byte on. Only headers are trusted,
//! and only for layout: a header that lies gives worse predictions, never a
//! wrong decode.

use super::audio::AudioInfo;
use super::biff::parse_bof;
use super::image::ImageInfo;

/// Longest header looked at.
pub(crate) const MAX_HEADER: usize = 1024;

/// What a block was detected to hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DataKind {
    /// PCM audio from a WAV header.
    Audio(AudioInfo),
    /// Pixels from a PNM header.
    Image(ImageInfo),
    /// An ELF file for i386 or x86-64.
    X86,
    /// An Excel BIFF stream: the BOF record's type and payload length; its
    /// payload starts at block position 4.
    Biff(u16, u16),
}

/// Watches the first bytes of a block for a header.
#[derive(Debug, Clone)]
pub(crate) struct Detector {
    header: Vec<u8>,
    done: bool,
}

impl Detector {
    /// A detector that has seen nothing.
    pub fn new() -> Self {
        Detector {
            header: Vec::with_capacity(64),
            done: false,
        }
    }

    /// Sees the byte coded at `pos`; returns the block's kind when a header
    /// ends with this byte. Bytes not coded in order end the detection.
    pub fn observe(&mut self, pos: usize, byte: u8) -> Option<DataKind> {
        if self.done || pos != self.header.len() || pos >= MAX_HEADER {
            self.done = true;
            return None;
        }
        self.header.push(byte);
        let kind = if pos < 96 {
            ImageInfo::parse_pnm(&self.header).map(DataKind::Image)
        } else {
            None
        }
        .or_else(|| AudioInfo::parse_wav(&self.header).map(DataKind::Audio))
        .or_else(|| is_x86_elf(&self.header).then_some(DataKind::X86))
        .or_else(|| parse_bof(&self.header).map(|(t, l)| DataKind::Biff(t, l)));
        if kind.is_some() {
            self.done = true;
        }
        kind
    }
}

/// Whether `h` is exactly the first 20 bytes of an ELF header (either
/// class, little-endian) whose machine is i386 (3) or x86-64 (62).
fn is_x86_elf(h: &[u8]) -> bool {
    h.len() == 20
        && h[..4] == *b"\x7fELF"
        && h[5] == 1
        && matches!(u16::from_le_bytes([h[18], h[19]]), 3 | 62)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(bytes: &[u8]) -> Vec<(usize, DataKind)> {
        let mut d = Detector::new();
        bytes
            .iter()
            .enumerate()
            .filter_map(|(i, &b)| d.observe(i, b).map(|k| (i, k)))
            .collect()
    }

    #[test]
    fn finds_pnm_and_wav_headers_once() {
        let mut img = b"P6\n4 2\n255\n".to_vec();
        img.extend([0u8; 24]);
        let got = feed(&img);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 10);
        let wav = crate::models::audio::tests::wav_header(2, 16, 100);
        let mut data = wav.clone();
        data.extend([0u8; 100]);
        let got = feed(&data);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, wav.len() - 1);
        let DataKind::Audio(a) = got[0].1 else {
            panic!("not audio")
        };
        assert_eq!((a.start, a.channels, a.bytes), (wav.len(), 2, 2));
        assert!(feed(b"hello world, no header here").is_empty());
        let mut elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0\x3e\0".to_vec();
        elf.extend([0x90; 40]);
        assert_eq!(feed(&elf), [(19, DataKind::X86)]);
        elf[18] = 0x28; // ARM
        assert!(feed(&elf).is_empty());
        assert_eq!(feed(&[9, 0, 4, 0, 1, 2]), [(3, DataKind::Biff(9, 4))]);
    }
}
