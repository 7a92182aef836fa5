//! Transform 7 (`colour`, doc/FORMAT.md section 8.7): the pixels of an
//! uncompressed 24- or 32-bit image that starts a block (PNM P6 with maxval
//! 255, BMP of 24 or 32 bits, TGA type 2 of 24 or 32 bits) rewritten as
//! colour differences, each pixel `(G, R-G, B-G)` (mod 256) followed by its
//! alpha byte if it has one. The header and any row padding stay as they
//! are, so the model's image families still find the image and its rows.
//!
//! The segment's reconstruction data ([`Layout`], 5 to 13 bytes) says where
//! the pixels are; the inverse needs nothing else, and both directions are
//! exact on any bytes (mod-256 arithmetic), whatever the header claims: a
//! segment covers only the bytes that exist.

use crate::detect::Candidate;

/// Where the pixels of a colour segment are, and in which byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Bytes before the first row (the header), left as they are.
    pub header: usize,
    /// Bytes per pixel: 3 or 4 (the fourth is alpha, left as it is).
    pub pixel_bytes: usize,
    /// Whether a pixel's first three bytes are B, G, R (BMP, TGA) rather
    /// than R, G, B (PNM).
    pub bgr: bool,
    /// Bytes from one row's start to the next's (at least
    /// `width * pixel_bytes`; BMP pads rows to 4 bytes).
    pub row_bytes: usize,
    /// Pixels per row.
    pub width: usize,
}

/// The largest header a layout may name (PNM comments included).
const MAX_HEADER: usize = 1 << 16;

fn le16(d: &[u8], at: usize) -> Option<usize> {
    Some(usize::from(u16::from_le_bytes(
        d.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn le32(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

/// A PNM P6 header of maxval 255 at the start of `d`: its layout and the
/// number of rows it claims. Fields as the CM image family reads them
/// (whitespace and `#` comments between them, one whitespace byte after
/// maxval).
fn pnm(d: &[u8]) -> Option<(Layout, usize)> {
    if d.get(..2)? != b"P6" {
        return None;
    }
    let mut i = 2;
    let mut fields = [0usize; 3];
    for f in &mut fields {
        loop {
            match d.get(i)? {
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b'#' => {
                    while *d.get(i)? != b'\n' {
                        i += 1;
                        if i > 96 {
                            return None;
                        }
                    }
                }
                _ => break,
            }
            if i > 96 {
                return None;
            }
        }
        let digits = d[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 || digits > 6 {
            return None;
        }
        *f = std::str::from_utf8(&d[i..i + digits]).ok()?.parse().ok()?;
        i += digits;
    }
    if !d.get(i)?.is_ascii_whitespace() {
        return None;
    }
    let [width, height, maxval] = fields;
    (width > 0 && height > 0 && maxval == 255).then_some((
        Layout {
            header: i + 1,
            pixel_bytes: 3,
            bgr: false,
            row_bytes: 3 * width,
            width,
        },
        height,
    ))
}

/// A BMP header (BITMAPINFOHEADER or later, uncompressed 24 bits or 32 bits
/// uncompressed or with bit fields) at the start of `d`.
fn bmp(d: &[u8]) -> Option<(Layout, usize)> {
    if d.get(..2)? != b"BM" {
        return None;
    }
    let (offset, info) = (le32(d, 10)? as usize, le32(d, 14)? as usize);
    let (width, height) = (le32(d, 18)? as i32, le32(d, 22)? as i32);
    let (planes, bits, compression) = (le16(d, 26)?, le16(d, 28)?, le32(d, 30)?);
    let ok = info >= 40
        && offset >= 14 + info
        && offset <= MAX_HEADER
        && (1..=1 << 16).contains(&width)
        && height != 0
        && planes == 1
        && matches!((bits, compression), (24, 0) | (32, 0) | (32, 3));
    ok.then(|| {
        let pixel_bytes = bits / 8;
        let width = width as usize;
        (
            Layout {
                header: offset,
                pixel_bytes,
                bgr: true,
                row_bytes: (width * pixel_bytes).div_ceil(4) * 4,
                width,
            },
            height.unsigned_abs() as usize,
        )
    })
}

/// A TGA header (no colour map, uncompressed true colour of 24 or 32 bits)
/// at the start of `d`.
fn tga(d: &[u8]) -> Option<(Layout, usize)> {
    let h = d.get(..18)?;
    let width = le16(h, 12)?;
    let height = le16(h, 14)?;
    let ok = h[1] == 0
        && h[3..8].iter().all(|&b| b == 0)
        && h[2] == 2
        && matches!(h[16], 24 | 32)
        && matches!(h[17] & 0xCF, 0 | 8)
        && width > 0
        && height > 0;
    ok.then(|| {
        let pixel_bytes = usize::from(h[16] / 8);
        (
            Layout {
                header: 18 + usize::from(h[0]),
                pixel_bytes,
                bgr: true,
                row_bytes: width * pixel_bytes,
                width,
            },
            height,
        )
    })
}

/// The candidate for a 24- or 32-bit image that starts `d`: from its first
/// byte to the end of its pixels (or of `d`, if they are cut short), with
/// at least one whole pixel after the header.
pub(crate) fn detect(d: &[u8]) -> Option<Candidate> {
    let (layout, rows) = pnm(d).or_else(|| bmp(d)).or_else(|| tga(d))?;
    let end = rows
        .checked_mul(layout.row_bytes)
        .and_then(|p| p.checked_add(layout.header))
        .map_or(d.len(), |e| e.min(d.len()));
    (end >= layout.header + layout.pixel_bytes).then_some(Candidate {
        kind: crate::Kind::Colour,
        start: 0,
        end,
    })
}

/// The layout of the image that starts `d` (what [`detect`] found).
pub(crate) fn layout(d: &[u8]) -> Option<Layout> {
    pnm(d).or_else(|| bmp(d)).or_else(|| tga(d)).map(|(l, _)| l)
}

impl Layout {
    /// Its reconstruction data: `header`, `row_bytes` and `width` as LEB128
    /// varints after one byte `pixel_bytes | (bgr << 7)`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.pixel_bytes as u8 | (u8::from(self.bgr) << 7)];
        for mut v in [self.header, self.row_bytes, self.width] {
            loop {
                let b = (v & 0x7F) as u8;
                v >>= 7;
                if v == 0 {
                    out.push(b);
                    break;
                }
                out.push(b | 0x80);
            }
        }
        out
    }

    /// Reads [`Layout::to_bytes`]'s form, checking it: 3 or 4 bytes per
    /// pixel, a width of at least 1 whose pixels fit a row, values below
    /// 2^32, nothing after it.
    pub fn from_bytes(b: &[u8]) -> Result<Layout, String> {
        let bad = || "colour layout: invalid".to_string();
        let first = *b.first().ok_or_else(bad)?;
        let mut at = 1;
        let mut vals = [0usize; 3];
        for v in &mut vals {
            let mut x = 0u64;
            let mut shift = 0;
            loop {
                let c = *b.get(at).ok_or_else(bad)?;
                at += 1;
                x |= u64::from(c & 0x7F) << shift;
                if c & 0x80 == 0 {
                    break;
                }
                shift += 7;
                if shift > 28 {
                    return Err(bad());
                }
            }
            *v = usize::try_from(u32::try_from(x).map_err(|_| bad())?).map_err(|_| bad())?;
        }
        let [header, row_bytes, width] = vals;
        let pixel_bytes = usize::from(first & 0x7F);
        let ok = at == b.len()
            && matches!(pixel_bytes, 3 | 4)
            && width >= 1
            && width
                .checked_mul(pixel_bytes)
                .is_some_and(|w| w <= row_bytes);
        ok.then_some(Layout {
            header,
            pixel_bytes,
            bgr: first & 0x80 != 0,
            row_bytes,
            width,
        })
        .ok_or_else(bad)
    }

    /// Applies `f` to the first three bytes of every whole pixel of `d`.
    fn each_pixel(&self, d: &mut [u8], f: impl Fn(&mut [u8])) {
        let Some(pixels) = d.get_mut(self.header..) else {
            return;
        };
        let used = self.width * self.pixel_bytes;
        for row in pixels.chunks_mut(self.row_bytes) {
            let n = row.len().min(used);
            for px in row[..n].chunks_exact_mut(self.pixel_bytes) {
                f(px);
            }
        }
    }
}

/// The forward transform: `d` with every whole pixel `(R, G, B)` (or
/// `(B, G, R)`) turned into `(G, R-G, B-G)` mod 256.
pub fn forward(layout: &Layout, d: &[u8]) -> Vec<u8> {
    let mut out = d.to_vec();
    let bgr = layout.bgr;
    layout.each_pixel(&mut out, |px| {
        let (r, g, b) = if bgr {
            (px[2], px[1], px[0])
        } else {
            (px[0], px[1], px[2])
        };
        px[0] = g;
        px[1] = r.wrapping_sub(g);
        px[2] = b.wrapping_sub(g);
    });
    out
}

/// The inverse of [`forward`].
pub fn inverse(layout: &Layout, d: &[u8]) -> Vec<u8> {
    let mut out = d.to_vec();
    let bgr = layout.bgr;
    layout.each_pixel(&mut out, |px| {
        let g = px[0];
        let r = px[1].wrapping_add(g);
        let b = px[2].wrapping_add(g);
        if bgr {
            px[0] = b;
            px[2] = r;
        } else {
            px[0] = r;
            px[2] = b;
        }
        px[1] = g;
    });
    out
}

/// The forward transform of the image that starts `bytes`: the inner bytes
/// and the reconstruction data.
pub(crate) fn encode(bytes: &[u8]) -> Result<(Vec<u8>, Vec<u8>), String> {
    let l = layout(bytes).ok_or("colour: no image header")?;
    Ok((forward(&l, bytes), l.to_bytes()))
}

/// The inverse: the segment's bytes from its inner bytes and layout.
pub(crate) fn decode(inner: &[u8], extra: &[u8]) -> Result<Vec<u8>, String> {
    Ok(inverse(&Layout::from_bytes(extra)?, inner))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator (deterministic test data).
    fn bytes(n: usize, mut s: u64) -> Vec<u8> {
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 24) as u8
            })
            .collect()
    }

    fn bmp_header(width: u32, height: i32, bits: u16) -> Vec<u8> {
        let mut h = b"BM".to_vec();
        h.extend(0u32.to_le_bytes());
        h.extend(0u32.to_le_bytes());
        h.extend(54u32.to_le_bytes());
        h.extend(40u32.to_le_bytes());
        h.extend(width.to_le_bytes());
        h.extend(height.to_le_bytes());
        h.extend(1u16.to_le_bytes());
        h.extend(bits.to_le_bytes());
        h.extend([0u8; 24]);
        h
    }

    #[test]
    fn pnm_pixels_become_differences() {
        let mut d = b"P6\n2 1\n255\n".to_vec();
        d.extend([10, 20, 30, 200, 100, 0]);
        let c = detect(&d).expect("found");
        assert_eq!((c.start, c.end), (0, d.len()));
        let (inner, extra) = encode(&d).unwrap();
        assert_eq!(&inner[..11], &d[..11]);
        assert_eq!(&inner[11..], &[20, 246, 10, 100, 100, 156]);
        assert_eq!(decode(&inner, &extra).unwrap(), d);
    }

    #[test]
    fn bmp_rows_keep_their_padding_and_bgr_order() {
        // 3 pixels of 3 bytes: rows of 12 bytes, 3 of them padding.
        let mut d = bmp_header(3, -2, 24);
        let pixels = bytes(24, 5);
        d.extend(&pixels);
        let l = layout(&d).unwrap();
        assert_eq!((l.header, l.row_bytes, l.bgr), (54, 12, true));
        let t = forward(&l, &d);
        // B, G, R -> G, R-G, B-G.
        let (b, g, r) = (pixels[0], pixels[1], pixels[2]);
        assert_eq!(
            &t[54..57],
            &[g, r.wrapping_sub(g), b.wrapping_sub(g)],
            "first pixel"
        );
        assert_eq!(&t[54 + 9..54 + 12], &pixels[9..12], "padding unchanged");
        assert_eq!(inverse(&l, &t), d);
        // 32 bits: alpha unchanged.
        let mut d = bmp_header(2, 1, 32);
        d.extend([1, 2, 3, 4, 5, 6, 7, 8]);
        let (inner, extra) = encode(&d).unwrap();
        assert_eq!(&inner[54..], &[2, 1, 255, 4, 6, 1, 255, 8]);
        assert_eq!(decode(&inner, &extra).unwrap(), d);
    }

    #[test]
    fn tga_is_found() {
        let mut d = vec![2u8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 2, 0, 24, 0];
        d.extend(bytes(24, 9));
        let c = detect(&d).unwrap();
        assert_eq!(c.end, d.len());
        let (inner, extra) = encode(&d).unwrap();
        assert_ne!(inner, d);
        assert_eq!(decode(&inner, &extra).unwrap(), d);
        d[2] = 10;
        assert!(detect(&d).is_none(), "run-length coded");
    }

    #[test]
    fn lying_headers_and_random_bytes_round_trip() {
        let headers: Vec<Vec<u8>> = vec![
            b"P6\n768 512\n255\n".to_vec(),
            b"P6 1 1 255\n".to_vec(),
            b"P6\n#c\n5 999999\n255 ".to_vec(),
            bmp_header(65536, i32::MIN, 32),
            bmp_header(7, 1 << 30, 24),
            vec![
                0u8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 32, 8,
            ],
        ];
        for (k, h) in headers.iter().enumerate() {
            for n in [0usize, 1, 2, 3, 5, 100, 4097] {
                let mut d = h.clone();
                d.extend(bytes(n, k as u64 * 77 + n as u64 + 1));
                let Some(c) = detect(&d) else {
                    assert!(n < 4, "header {k} with {n} bytes");
                    continue;
                };
                assert!(c.end <= d.len());
                let seg = &d[c.start..c.end];
                let (inner, extra) = encode(seg).unwrap();
                assert_eq!(inner.len(), seg.len());
                assert_eq!(decode(&inner, &extra).unwrap(), seg, "header {k}, {n}");
            }
        }
        // Any layout inverts any bytes.
        for s in 1..200u64 {
            let d = bytes(300 + s as usize, s);
            let l = Layout {
                header: (s % 40) as usize,
                pixel_bytes: 3 + (s % 2) as usize,
                bgr: s % 3 == 0,
                row_bytes: 8 + (s % 13) as usize,
                width: 1 + (s % 2) as usize,
            };
            let e = l.to_bytes();
            assert_eq!(Layout::from_bytes(&e).unwrap(), l);
            assert_eq!(inverse(&l, &forward(&l, &d)), d);
            assert_eq!(forward(&l, &inverse(&l, &d)), d);
        }
    }

    #[test]
    fn broken_layouts_are_refused() {
        for b in [
            &[][..],
            &[3],
            &[3, 0, 3],
            &[5, 0, 3, 1],
            &[3, 0, 2, 1],
            &[4, 0, 8, 0],
            &[3, 0, 3, 1, 0],
            &[3, 0x80, 0x80, 0x80, 0x80, 0x10, 3, 1],
        ] {
            assert!(Layout::from_bytes(b).is_err(), "{b:?}");
        }
        assert!(Layout::from_bytes(&[0x83, 0, 3, 1]).is_ok());
    }
}
