//! Image contexts for a block that starts with a binary PNM header:
//! neighbouring samples of the same channel (W, N, NW, NE, WW).

use super::{ByteCtx, ContextModel, hash2};

/// The layout of a PNM image at the start of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ImageInfo {
    /// Block position of the first sample.
    pub start: usize,
    /// Bytes per pixel (channels x bytes per sample).
    pub pixel_bytes: usize,
    /// Bytes per row.
    pub row_bytes: usize,
}

impl ImageInfo {
    /// Recognises a complete binary PNM header (`P5` grey or `P6` RGB:
    /// magic, width, height, maxval, each after whitespace or comments,
    /// then one whitespace byte) that is exactly `h`.
    pub fn parse_pnm(h: &[u8]) -> Option<ImageInfo> {
        let channels = match h.get(..2)? {
            b"P5" => 1,
            b"P6" => 3,
            _ => return None,
        };
        let mut i = 2;
        let mut fields = [0usize; 3];
        for f in &mut fields {
            loop {
                match h.get(i)? {
                    b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                    b'#' => {
                        while *h.get(i)? != b'\n' {
                            i += 1;
                        }
                    }
                    _ => break,
                }
            }
            let digits = h[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            if digits == 0 || digits > 6 {
                return None;
            }
            *f = std::str::from_utf8(&h[i..i + digits]).ok()?.parse().ok()?;
            i += digits;
        }
        // The header ends with exactly one whitespace byte after maxval.
        if h.len() != i + 1 || !h[i].is_ascii_whitespace() {
            return None;
        }
        let [width, height, maxval] = fields;
        if width == 0 || height == 0 || maxval == 0 || maxval > 65535 {
            return None;
        }
        let pixel_bytes = channels * if maxval > 255 { 2 } else { 1 };
        Some(ImageInfo {
            start: h.len(),
            pixel_bytes,
            row_bytes: width * pixel_bytes,
        })
    }
}

/// The image family (six contexts). It watches the block's first bytes, in
/// order, for a PNM header; until one is complete every context is the same
/// constant.
#[derive(Debug, Clone)]
pub(crate) struct ImageContexts {
    header: Vec<u8>,
    image: Option<ImageInfo>,
}

impl ImageContexts {
    /// A family that has seen nothing yet.
    pub fn new() -> Self {
        ImageContexts {
            header: Vec::with_capacity(96),
            image: None,
        }
    }
}

impl ContextModel for ImageContexts {
    fn contexts(&self) -> usize {
        6
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let (data, pos) = (ctx.data, ctx.pos);
        let Some(img) = self.image.filter(|img| pos >= img.start) else {
            for (h, j) in out.iter_mut().zip(0u32..) {
                *h = hash2(0x700 + j, 0);
            }
            return;
        };
        let (pb, rw) = (img.pixel_bytes, img.row_bytes);
        let at = |back: usize| -> u32 {
            match pos.checked_sub(back) {
                Some(p) if p >= img.start && ctx.vis.known(p) => u32::from(data[p]),
                _ => 0,
            }
        };
        let col = ((pos - img.start) % pb) as u32;
        let (w, n, ne) = (at(pb), at(rw), at(rw.saturating_sub(pb)));
        let c1 = ctx.c4() & 0xFF;
        let v = [
            hash2(w, n << 8),
            (w + n).saturating_sub(at(rw + pb)).min(255),
            hash2(n, ne << 8),
            hash2(w, c1 << 8),
            hash2(w.div_ceil(2) + n / 2, (n + ne).div_ceil(2) << 8),
            hash2(hash2(w, at(2 * pb)), (n >> 2) << 16),
        ];
        for ((h, v), j) in out.iter_mut().zip(v).zip(0u32..) {
            *h = hash2(hash2(v, col), 0x700 + j);
        }
    }

    fn visit_state(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        crate::snapshot::visit_bounded(v, &mut self.header, 96);
    }

    fn detected(&self) -> bool {
        self.image.is_some()
    }

    fn observe(&mut self, _data: &[u8], pos: usize, byte: u8) {
        if self.image.is_none() && pos == self.header.len() && pos < 96 {
            self.header.push(byte);
            self.image = ImageInfo::parse_pnm(&self.header);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_pnm_headers() {
        let img = ImageInfo::parse_pnm(b"P6\n768 512\n255\n").unwrap();
        assert_eq!((img.start, img.pixel_bytes, img.row_bytes), (15, 3, 2304));
        let img = ImageInfo::parse_pnm(b"P5 # comment\n 10 4 65535 ").unwrap();
        assert_eq!((img.pixel_bytes, img.row_bytes), (2, 20));
        assert!(
            ImageInfo::parse_pnm(b"P6\n768 512\n255").is_none(),
            "incomplete"
        );
        assert!(
            ImageInfo::parse_pnm(b"P6\n768 512\n255\n\n").is_none(),
            "two whitespace bytes"
        );
        assert!(
            ImageInfo::parse_pnm(b"P3\n1 1\n255\n").is_none(),
            "ASCII PNM"
        );
        assert!(ImageInfo::parse_pnm(b"P5\n0 1\n255\n").is_none());
    }
}
