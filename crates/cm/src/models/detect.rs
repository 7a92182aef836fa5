//! Data-type detection at the start of a block (CM revision 1): the block's
//! first bytes, as they are coded, are matched against a binary PNM header,
//! a RIFF/WAVE header, an x86 ELF header and a BIFF (Excel) BOF record. When one is complete, the model switches to the
//! image or audio model set from the next byte on. Only headers are trusted,
//! and only for layout: a header that lies gives worse predictions, never a
//! wrong decode.

use super::audio::AudioInfo;
use super::biff::parse_bof;
use super::float::{DETECT_LEN, FloatInfo};
use super::image::ImageInfo;
use super::m68k::is_resource_fork;
use super::pixel4::{parse_bmp, parse_tga};

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
    /// A bi-level bitmap with rows of this many bytes (found from
    /// statistics, see [`Detector::observe_statistics`]).
    Bilevel(usize),
    /// An array of 4- or 8-byte numbers (CM revision 2, found from
    /// statistics, see [`Detector::observe_floats`]).
    Float(FloatInfo),
    /// A Macintosh resource fork (68000 code and data: CM revision 4, from
    /// its 16-byte header, see [`is_resource_fork`]).
    ResourceFork,
    /// A JPEG: the block starts with SOI and a marker's `FF` (`FF D8 FF`,
    /// CM revision 5); the JPEG family parses the rest.
    Jpeg,
}

/// Watches the first bytes of a block for a header.
#[derive(Debug, Clone)]
pub(crate) struct Detector {
    header: Vec<u8>,
    done: bool,
    /// A header was found.
    found: bool,
    /// Zero bytes among the first [`STATISTICS_LEN`] bytes.
    zeros: u32,
    /// Look for float arrays (CM revision 2).
    floats: bool,
    /// Look for BMP and TGA headers (CM revision 4).
    bitmaps: bool,
    /// Revision 4: split 8-byte layouts whose halves are 4-byte numbers
    /// ([`narrow`](crate::models::float4::narrow)).
    narrow: bool,
    /// Look for resource forks (CM revision 4).
    forks: bool,
    /// Look for JPEGs (CM revision 5).
    jpegs: bool,
    /// Look for bi-level bitmaps by their rows before [`STATISTICS_LEN`]
    /// (CM revision 7, [`Detector::observe_rows`]).
    rows: bool,
}

/// Bytes after which the statistics decide.
pub(crate) const STATISTICS_LEN: usize = 1 << 16;
/// Revision 7: bytes between two looks for rows ([`Detector::observe_rows`]).
pub(crate) const ROWS_STEP: usize = 1024;
/// Revision 7: the bytes before such a look that it counts.
pub(crate) const ROWS_WINDOW: usize = 8192;

impl Detector {
    /// Walks the detector's state (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        crate::snapshot::visit_bounded(v, &mut self.header, MAX_HEADER);
        crate::snapshot::visit_bool(v, &mut self.done);
        crate::snapshot::visit_bool(v, &mut self.found);
        crate::snapshot::visit_u32(v, &mut self.zeros);
    }

    /// Whether the counts fit in `history` bytes (a restored prior).
    pub(crate) fn within(&self, history: usize) -> bool {
        self.zeros as usize <= history
    }

    /// A kind was found (the model switched families).
    pub(crate) fn found(&self) -> bool {
        self.found
    }

    /// A detector that has seen nothing.
    pub fn new() -> Self {
        Detector {
            header: Vec::with_capacity(64),
            done: false,
            found: false,
            zeros: 0,
            floats: false,
            bitmaps: false,
            narrow: false,
            forks: false,
            jpegs: false,
            rows: false,
        }
    }

    /// The detector of CM revision `revision`: from revision 2 on it also
    /// looks for float arrays, from revision 4 on for BMP and TGA headers
    /// and resource forks, and splits 8-byte float layouts; from revision 5
    /// on it finds JPEGs.
    pub fn for_revision(revision: u8) -> Self {
        Detector {
            jpegs: revision >= 5,
            rows: crate::revision_has(revision, 7),
            floats: revision >= 2,
            bitmaps: revision >= 4,
            narrow: revision >= 4,
            forks: revision >= 4,
            ..Detector::new()
        }
    }

    /// Revision 2: whether the [`DETECT_LEN`] bytes of a single stream
    /// starting at 0 that end at `pos` (`data` the block) are an array of
    /// numbers ([`FloatInfo::detect`]), looked at when `pos + 1` is
    /// [`DETECT_LEN`] times 1, 4, 16 or 64 and no kind was found before,
    /// unless 60% of the bytes so far (of the first [`STATISTICS_LEN`])
    /// were zero: that is left to the bi-level test.
    pub fn observe_floats(&mut self, data: &[u8], pos: usize) -> Option<DataKind> {
        if let Some(kind) = self.observe_rows(data, pos) {
            return Some(kind);
        }
        let end = pos + 1;
        if !self.floats
            || self.found
            || !end.is_multiple_of(DETECT_LEN)
            || ![1, 4, 16, 64].contains(&(end / DETECT_LEN))
            || self.zeros as usize * 10 >= end.min(STATISTICS_LEN) * 6
        {
            return None;
        }
        let start = end - DETECT_LEN;
        let kind = FloatInfo::detect(&data[start..end]).map(|f| {
            let f = if self.narrow {
                crate::models::float4::narrow(&data[start..end], f)
            } else {
                f
            };
            DataKind::Float(FloatInfo {
                offset: (start + f.offset) % f.width,
                ..f
            })
        });
        self.found = kind.is_some();
        kind
    }

    /// Revision 7: whether the single stream starting at 0 whose bytes end
    /// at `pos` is a bi-level bitmap, decided from its rows before the
    /// record detector finds them. Looked at when `pos + 1` is a multiple of
    /// [`ROWS_STEP`] up to [`STATISTICS_LEN`], no kind was found before and
    /// at least 60% of the bytes so far were zero: among the last 512
    /// non-zero bytes of the last [`ROWS_WINDOW`] bytes (at least 256), count for each
    /// distance `w` of 16 to 1024 those whose byte `w` before is non-zero
    /// too (ink above ink). A bitmap with rows of `w` bytes has one clear
    /// peak: the best count is at least 80% of the non-zero bytes and twice
    /// the average count, and at most 8 distances come within 90% of it
    /// (data of 2- or 4-byte numbers peaks at every multiple). The rows are
    /// the shortest such distance.
    pub fn observe_rows(&mut self, data: &[u8], pos: usize) -> Option<DataKind> {
        let end = pos + 1;
        if !self.rows
            || self.found
            || end > STATISTICS_LEN
            || !end.is_multiple_of(ROWS_STEP)
            || (self.zeros as usize) * 10 < end * 6
        {
            return None;
        }
        let mut ink: Vec<usize> = (end.saturating_sub(ROWS_WINDOW)..end)
            .rev()
            .filter(|&p| data[p] != 0)
            .take(512)
            .collect();
        ink.reverse();
        if ink.len() < 256 {
            return None;
        }
        let (lo, hi) = (16usize, 1024usize);
        let scores: Vec<u32> = (lo..=hi)
            .map(|w| ink.iter().filter(|&&p| p >= w && data[p - w] != 0).count() as u32)
            .collect();
        let best = scores.iter().copied().max().unwrap_or(0);
        let sum: u64 = scores.iter().map(|&s| u64::from(s)).sum();
        let near = scores.iter().filter(|&&s| s * 10 >= best * 9).count();
        let clear = u64::from(best) * 10 >= ink.len() as u64 * 8
            && u64::from(best) * scores.len() as u64 >= 2 * sum
            && near <= 8;
        if !clear {
            return None;
        }
        let w = lo + scores.iter().position(|&s| s * 10 >= best * 9)?;
        self.found = true;
        Some(DataKind::Bilevel(w))
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
        .or_else(|| parse_bof(&self.header).map(|(t, l)| DataKind::Biff(t, l)))
        .or_else(|| {
            self.bitmaps
                .then(|| parse_bmp(&self.header).or_else(|| parse_tga(&self.header)))
                .flatten()
                .map(DataKind::Image)
        })
        .or_else(|| {
            (self.forks && is_resource_fork(&self.header)).then_some(DataKind::ResourceFork)
        })
        .or_else(|| (self.jpegs && self.header == [0xFF, 0xD8, 0xFF]).then_some(DataKind::Jpeg));
        if kind.is_some() {
            self.done = true;
            self.found = true;
        }
        kind
    }

    /// Sees the byte coded at `pos` of a single stream starting at 0 whose
    /// record detector reports rows of `record_len` bytes (0: none). From
    /// the [`STATISTICS_LEN`]-th byte on, up to 1 MiB, without a header: a
    /// bi-level bitmap once at least 60% of the first [`STATISTICS_LEN`]
    /// bytes were zero and rows of 16 to 8192 bytes have been found.
    pub fn observe_statistics(
        &mut self,
        pos: usize,
        byte: u8,
        record_len: u32,
    ) -> Option<DataKind> {
        if self.found || pos >= 1 << 20 {
            return None;
        }
        if pos < STATISTICS_LEN {
            self.zeros += u32::from(byte == 0);
        }
        let enough = self.zeros as usize * 10 >= STATISTICS_LEN * 6;
        if pos + 1 >= STATISTICS_LEN && enough && (16..=8192).contains(&record_len) {
            self.found = true;
            return Some(DataKind::Bilevel(record_len as usize));
        }
        None
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
        feed_with(Detector::new(), bytes)
    }

    /// What `d` detects in `bytes`, with the position of each detection.
    fn feed_with(mut d: Detector, bytes: &[u8]) -> Vec<(usize, DataKind)> {
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

    /// A BMP header for `width` x `height` pixels of `bits` bits, pixels at
    /// `offset`.
    pub(crate) fn bmp_header(width: u32, height: i32, bits: u16, offset: u32) -> Vec<u8> {
        let mut h = b"BM".to_vec();
        h.extend(0u32.to_le_bytes());
        h.extend(0u32.to_le_bytes());
        h.extend(offset.to_le_bytes());
        h.extend(40u32.to_le_bytes());
        h.extend(width.to_le_bytes());
        h.extend(height.to_le_bytes());
        h.extend(1u16.to_le_bytes());
        h.extend(bits.to_le_bytes());
        h.extend([0u8; 24]);
        h.resize(offset as usize, 0);
        h
    }

    #[test]
    fn revision_4_finds_bmp_and_tga_headers() {
        let feed4 = |bytes: &[u8], revision: u8| feed_with(Detector::for_revision(revision), bytes);
        let mut bmp = bmp_header(5, -3, 24, 60);
        bmp.extend([9u8; 48]);
        let img = ImageInfo {
            start: 60,
            pixel_bytes: 3,
            row_bytes: 16,
        };
        assert_eq!(feed4(&bmp, 4), [(59, DataKind::Image(img))]);
        assert!(feed4(&bmp, 2).is_empty(), "revision 2 does not look");
        let mut rle = bmp_header(5, 3, 24, 60);
        rle[30] = 1;
        assert!(feed4(&rle, 4).is_empty(), "compressed");
        let mut tga = vec![2u8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 0, 2, 0, 32, 8];
        tga.extend([1, 2]);
        tga.extend([5u8; 56]);
        let img = ImageInfo {
            start: 20,
            pixel_bytes: 4,
            row_bytes: 28,
        };
        assert_eq!(feed4(&tga, 4), [(19, DataKind::Image(img))]);
        tga[2] = 10;
        assert!(feed4(&tga, 4).is_empty(), "run-length coded");
    }

    #[test]
    fn revision_5_finds_jpegs_at_the_start_only() {
        let feed5 = |bytes: &[u8], revision: u8| feed_with(Detector::for_revision(revision), bytes);
        let jpeg = [0xFF, 0xD8, 0xFF, 0xE0, 0, 16, b'J', b'F'];
        assert_eq!(feed5(&jpeg, 5), [(2, DataKind::Jpeg)]);
        assert_eq!(feed5(&jpeg, 6), [(2, DataKind::Jpeg)]);
        assert!(feed5(&jpeg, 4).is_empty(), "revision 4 does not look");
        assert!(feed5(&[0, 0xFF, 0xD8, 0xFF, 0xE0], 5).is_empty());
    }

    /// What a revision-`revision` detector finds in `data` by statistics and
    /// rows (as the model calls it), with the position.
    fn rows_in(data: &[u8], revision: u8) -> Option<(usize, DataKind)> {
        let mut d = Detector::for_revision(revision);
        (0..data.len()).find_map(|pos| {
            d.observe_statistics(pos, data[pos], 0)
                .or_else(|| d.observe_floats(data, pos))
                .map(|k| (pos, k))
        })
    }

    #[test]
    fn revision_7_finds_rows_of_ink_early() {
        // Rows of 200 bytes: 30 blank rows, then blobs of ink 24 rows high
        // and a byte wide, at random columns.
        let (w, rows) = (200usize, 300usize);
        let mut img = vec![0u8; w * rows];
        let mut s = 0x9E37_79B9u32;
        for y in 30..rows {
            for x in 0..w {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                let h = (x as u32).wrapping_mul(0x9E37_79B1)
                    ^ ((y / 24) as u32).wrapping_mul(0x85EB_CA77);
                let blob = h.rotate_left(7).wrapping_mul(0xC2B2_AE3D) >> 29 == 0;
                if blob && !s.is_multiple_of(16) {
                    img[y * w + x] = (s >> 8) as u8 | 1;
                }
            }
        }
        let (pos, kind) = rows_in(&img, 7).expect("rows found");
        assert_eq!(kind, DataKind::Bilevel(w));
        assert!(pos < STATISTICS_LEN, "found at {pos}");
        assert!(
            rows_in(&img, 5).is_none(),
            "revision 5 waits for the record detector"
        );
        // 32-bit numbers below 256 (75% zero bytes) peak at every multiple
        // of 4: no rows.
        let words: Vec<u8> = (0..STATISTICS_LEN as u32)
            .map(|i| {
                if i % 4 != 0 {
                    0
                } else {
                    (i / 4 % 97) as u8 | 1
                }
            })
            .collect();
        assert!(rows_in(&words, 7).is_none());
    }

    #[test]
    fn finds_bitmaps_from_statistics() {
        let mut d = Detector::new();
        let mut got = Vec::new();
        for pos in 0..STATISTICS_LEN + 100 {
            let byte = u8::from(pos % 3 == 0);
            let rows = if pos < STATISTICS_LEN + 50 { 0 } else { 216 };
            if let Some(k) = d.observe_statistics(pos, byte, rows) {
                got.push((pos, k));
            }
        }
        assert_eq!(got, [(STATISTICS_LEN + 50, DataKind::Bilevel(216))]);
        // Too few zero bytes: never.
        let mut d = Detector::new();
        assert!((0..STATISTICS_LEN + 10).all(|p| {
            d.observe_statistics(p, 1 + (p % 2 == 0) as u8, 216)
                .is_none()
        }));
    }
}
