//! Whole PNG files as pixels (transform 6, `png-pixels`): the segment is a PNG
//! from its signature to the end of its IEND chunk. Its IDAT stream is
//! inflated and its row filters are undone, so that the model sees the image
//! as an image file it already knows: a binary PNM (P5 gray, P6 RGB or palette
//! colours looked up) or a TGA (RGBA), whose header comes first so that the
//! context-mixing model's header detection takes it when the PNG starts a
//! block.
//!
//! Inner bytes: the image header ([`Shape::header`]), the pixel rows, one
//! filter type per row, then every chunk but IHDR and IDAT in file order,
//! each as its length (u32 big-endian), type and data (no CRC).
//!
//! Reconstruction data: the 13 bytes of IHDR's data, a varint (how many of
//! those chunks come before the IDAT chunks), a varint `n` (IDAT chunks, at
//! least 1), `n` varints (each IDAT chunk's data length), the 2-byte zlib
//! header, then the `preflate-rs` data of the deflate stream of the filtered
//! rows (as for transform 2). Every CRC and the Adler-32 are recomputed.

use crate::png::{adler32, be32, crc32, read_varint, write_varint};

/// The 8 bytes every PNG starts with.
pub const SIGNATURE: &[u8; 8] = b"\x89PNG\r\n\x1a\n";

/// Bytes a chunk adds around its data: length, type, CRC.
const CHUNK: usize = 12;

/// The most IDAT chunks the reconstruction data may name.
const MAX_CHUNKS: usize = 1 << 20;

/// The end of the PNG whose signature is at `start` (one past its IEND
/// chunk), when its chunks up to IEND lie complete in `d` and the first one
/// is IHDR. Only the layout is looked at; [`encode`] checks the rest.
pub fn png_end(d: &[u8], start: usize) -> Option<usize> {
    if d.get(start..start.checked_add(8)?)? != SIGNATURE {
        return None;
    }
    let mut at = start + 8;
    if d.get(at + 4..at + 8)? != b"IHDR" {
        return None;
    }
    loop {
        let len = be32(d, at)?;
        if len > i32::MAX as usize {
            return None;
        }
        let end = at.checked_add(CHUNK)?.checked_add(len)?;
        if end > d.len() {
            return None;
        }
        let ty = &d[at + 4..at + 8];
        at = end;
        if ty == b"IEND" {
            return Some(at);
        }
    }
}

/// The image a PNG header describes, for the layouts this transform takes:
/// gray of 1, 2, 4, 8 or 16 bits, RGB of 8 or 16, palette of 1, 2, 4 or 8
/// and RGBA of 8, not interlaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    width: usize,
    height: usize,
    depth: u8,
    colour: u8,
}

impl Shape {
    /// The shape of IHDR data `ihdr` (13 bytes), or why it is not taken.
    fn parse(ihdr: &[u8]) -> Result<Shape, String> {
        if ihdr.len() != 13 {
            return Err("png-pixels: IHDR is not 13 bytes".into());
        }
        let width = be32(ihdr, 0).unwrap_or(0);
        let height = be32(ihdr, 4).unwrap_or(0);
        let (depth, colour) = (ihdr[8], ihdr[9]);
        if ihdr[10..13] != [0, 0, 0] {
            return Err("png-pixels: compression, filter or interlace method not 0".into());
        }
        let ok = matches!(
            (colour, depth),
            (0, 1 | 2 | 4 | 8 | 16) | (2, 8 | 16) | (3, 1 | 2 | 4 | 8) | (6, 8)
        );
        if !ok {
            return Err("png-pixels: colour type and bit depth not taken".into());
        }
        let max = if colour == 6 { 0xFFFF } else { 999_999 };
        if width == 0 || height == 0 || width > max || height > max {
            return Err("png-pixels: image size not taken".into());
        }
        Ok(Shape {
            width,
            height,
            depth,
            colour,
        })
    }

    /// Samples per PNG pixel.
    fn samples(&self) -> usize {
        match self.colour {
            2 => 3,
            6 => 4,
            _ => 1,
        }
    }

    /// Bytes of one filtered row, filter byte not counted.
    fn row_len(&self) -> usize {
        (self.width * self.samples() * usize::from(self.depth)).div_ceil(8)
    }

    /// The filters' byte distance to the pixel on the left.
    fn bpp(&self) -> usize {
        (self.samples() * usize::from(self.depth) / 8).max(1)
    }

    /// Bytes of one row of the inner image.
    fn out_row(&self) -> usize {
        self.width
            * match (self.colour, self.depth) {
                (0, 16) => 2,
                (0, _) => 1,
                (2, d) => 3 * usize::from(d) / 8,
                (3, _) => 3,
                _ => 4,
            }
    }

    /// The image file header the inner bytes start with: `P5` (gray) or
    /// `P6` (RGB, palette) with width, height and maxval `2^depth - 1`
    /// (255 for palette) each followed by one `\n`; for RGBA an 18-byte TGA
    /// header (uncompressed true colour, 32 bits, 8 attribute bits, top-left
    /// origin), the pixels then in B, G, R, A order.
    fn header(&self) -> Vec<u8> {
        match self.colour {
            6 => {
                let mut h = vec![0u8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0];
                h.extend_from_slice(&(self.width as u16).to_le_bytes());
                h.extend_from_slice(&(self.height as u16).to_le_bytes());
                h.extend_from_slice(&[32, 0x28]);
                h
            }
            c => {
                let maxval = if c == 3 {
                    255
                } else {
                    (1u32 << self.depth) - 1
                };
                let kind = if c == 0 { 5 } else { 6 };
                format!("P{kind}\n{} {}\n{maxval}\n", self.width, self.height).into_bytes()
            }
        }
    }
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

/// The prediction of filter `f` for byte `i` of a row whose bytes before
/// `i` are `cur` and whose row above is `prev`.
#[inline]
fn predict(f: u8, cur: &[u8], prev: &[u8], i: usize, bpp: usize) -> u8 {
    let a = if i >= bpp { cur[i - bpp] } else { 0 };
    let b = prev[i];
    let c = if i >= bpp { prev[i - bpp] } else { 0 };
    match f {
        1 => a,
        2 => b,
        3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
        4 => paeth(a, b, c),
        _ => 0,
    }
}

/// A chunk of the PNG: its type and data.
struct Chunk<'a> {
    ty: &'a [u8],
    data: &'a [u8],
}

/// Splits the PNG `bytes` into IHDR's data, the chunks before the IDAT
/// chunks, the IDAT chunks' data and the chunks after them; refused unless
/// every CRC is right, the IDAT chunks are consecutive and IEND ends `bytes`.
#[allow(clippy::type_complexity)]
fn split(bytes: &[u8]) -> Result<(&[u8], Vec<Chunk<'_>>, Vec<&[u8]>, Vec<Chunk<'_>>), String> {
    if png_end(bytes, 0) != Some(bytes.len()) {
        return Err("png-pixels: not a PNG ending with IEND".into());
    }
    let (mut pre, mut idat, mut post) = (Vec::new(), Vec::new(), Vec::new());
    let mut ihdr = None;
    let mut at = 8;
    while at < bytes.len() {
        let len = be32(bytes, at).ok_or("png-pixels: short chunk")?;
        let ty = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + len];
        if be32(bytes, at + 8 + len) != Some(crc32(ty, data) as usize) {
            return Err("png-pixels: chunk CRC mismatch".into());
        }
        at += CHUNK + len;
        if ihdr.is_none() {
            ihdr = Some(data);
        } else if ty == b"IHDR" {
            return Err("png-pixels: a second IHDR".into());
        } else if ty == b"IDAT" {
            if !post.is_empty() {
                return Err("png-pixels: IDAT chunks not consecutive".into());
            }
            idat.push(data);
        } else if idat.is_empty() {
            pre.push(Chunk { ty, data });
        } else {
            post.push(Chunk { ty, data });
        }
    }
    let ihdr = ihdr.ok_or("png-pixels: no IHDR")?;
    if idat.is_empty() || idat.len() > MAX_CHUNKS {
        return Err("png-pixels: no IDAT".into());
    }
    Ok((ihdr, pre, idat, post))
}

/// The palette of PLTE data `plte` (1 to 256 entries).
fn palette(plte: Option<&[u8]>) -> Result<&[u8], String> {
    match plte {
        Some(p) if !p.is_empty() && p.len() % 3 == 0 && p.len() <= 768 => Ok(p),
        _ => Err("png-pixels: no valid PLTE for a palette image".into()),
    }
}

/// The forward transform of the PNG `bytes` (exactly one file, signature to
/// IEND): the inner bytes and the reconstruction data; `room`: the most
/// inner bytes allowed, checked before the image is inflated.
pub fn encode(bytes: &[u8], room: usize) -> Result<(Vec<u8>, Vec<u8>), String> {
    let (ihdr, pre, idat, post) = split(bytes)?;
    let shape = Shape::parse(ihdr)?;
    let header = shape.header();
    let (h, row_len, out_row) = (shape.height, shape.row_len(), shape.out_row());
    let filtered_len = h
        .checked_mul(row_len + 1)
        .ok_or("png-pixels: image too large")?;
    let chunks_len: usize = pre.iter().chain(&post).map(|c| 8 + c.data.len()).sum();
    let inner_len = h
        .checked_mul(out_row + 1)
        .and_then(|n| n.checked_add(header.len() + chunks_len))
        .ok_or("png-pixels: image too large")?;
    if inner_len > room || filtered_len > room {
        return Err("png-pixels: image larger than the room left".into());
    }
    let z: Vec<u8> = idat.concat();
    if z.len() < 6
        || z[0] & 0x0F != 8
        || z[0] >> 4 > 7
        || z[1] & 0x20 != 0
        || !u16::from_be_bytes([z[0], z[1]]).is_multiple_of(31)
    {
        return Err("png-pixels: not a zlib stream".into());
    }
    let (len, plain, corrections) = crate::deflate::encode(&z[2..], filtered_len)?;
    if 2 + len + 4 != z.len() || be32(&z, 2 + len) != Some(adler32(&plain) as usize) {
        return Err("png-pixels: the zlib stream does not fill the IDAT chunks".into());
    }
    if plain.len() != filtered_len {
        return Err("png-pixels: the image data does not match IHDR".into());
    }
    let pal = if shape.colour == 3 {
        let plte = pre.iter().find(|c| c.ty == b"PLTE").map(|c| c.data);
        Some(palette(plte)?)
    } else {
        None
    };
    let bpp = shape.bpp();
    let mut inner = Vec::with_capacity(inner_len);
    inner.extend_from_slice(&header);
    let mut filters = Vec::with_capacity(h);
    let mut prev = vec![0u8; row_len];
    let mut cur = vec![0u8; row_len];
    for row in plain.chunks_exact(row_len + 1) {
        let f = row[0];
        if f > 4 {
            return Err("png-pixels: bad filter type".into());
        }
        filters.push(f);
        for i in 0..row_len {
            cur[i] = row[1 + i].wrapping_add(predict(f, &cur, &prev, i, bpp));
        }
        to_pixels(&shape, &cur, pal, &mut inner)?;
        std::mem::swap(&mut prev, &mut cur);
    }
    inner.extend_from_slice(&filters);
    for c in pre.iter().chain(&post) {
        inner.extend_from_slice(&(c.data.len() as u32).to_be_bytes());
        inner.extend_from_slice(c.ty);
        inner.extend_from_slice(c.data);
    }
    let mut extra = Vec::with_capacity(corrections.len() + 3 * idat.len() + 24);
    extra.extend_from_slice(ihdr);
    write_varint(&mut extra, pre.len());
    write_varint(&mut extra, idat.len());
    for d in &idat {
        write_varint(&mut extra, d.len());
    }
    extra.extend_from_slice(&z[..2]);
    extra.extend_from_slice(&corrections);
    Ok((inner, extra))
}

/// Appends the inner pixels of one unfiltered PNG row `row`.
fn to_pixels(
    shape: &Shape,
    row: &[u8],
    pal: Option<&[u8]>,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let depth = usize::from(shape.depth);
    match (shape.colour, depth) {
        (0 | 2, 8 | 16) => out.extend_from_slice(row),
        (6, _) => {
            for p in row.chunks_exact(4) {
                out.extend_from_slice(&[p[2], p[1], p[0], p[3]]);
            }
        }
        _ => {
            let mask = (1u16 << depth) - 1;
            for x in 0..shape.width {
                let bit = x * depth;
                let v = (u16::from(row[bit / 8]) >> (8 - depth - bit % 8)) & mask;
                match pal {
                    Some(p) => {
                        let at = usize::from(v) * 3;
                        let rgb = p
                            .get(at..at + 3)
                            .ok_or("png-pixels: palette index past PLTE")?;
                        out.extend_from_slice(rgb);
                    }
                    None => out.push(v as u8),
                }
            }
        }
    }
    Ok(())
}

/// The PNG of `raw_len` bytes that `inner` and `extra` re-create. Every
/// length is checked against `inner` and `raw_len` before it is allocated.
pub fn decode(inner: &[u8], extra: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    let bad = |why: &str| format!("png-pixels segment: broken data ({why})");
    let ihdr = extra.get(..13).ok_or_else(|| bad("IHDR"))?;
    let shape = Shape::parse(ihdr).map_err(|_| bad("IHDR"))?;
    let header = shape.header();
    if !inner.starts_with(&header) {
        return Err(bad("image header"));
    }
    let (h, row_len, out_row) = (shape.height, shape.row_len(), shape.out_row());
    let pixels_end = h
        .checked_mul(out_row)
        .and_then(|n| n.checked_add(header.len()))
        .filter(|&n| n.checked_add(h).is_some_and(|e| e <= inner.len()))
        .ok_or_else(|| bad("image past the inner bytes"))?;
    let pixels = &inner[header.len()..pixels_end];
    let filters = &inner[pixels_end..pixels_end + h];
    if filters.iter().any(|&f| f > 4) {
        return Err(bad("filter type"));
    }
    let mut chunks = Vec::new();
    let mut at = pixels_end + h;
    while at < inner.len() {
        let len = be32(inner, at).ok_or_else(|| bad("chunk"))?;
        let end = at
            .checked_add(8 + len)
            .filter(|&e| e <= inner.len())
            .ok_or_else(|| bad("chunk"))?;
        chunks.push(Chunk {
            ty: &inner[at + 4..at + 8],
            data: &inner[at + 8..end],
        });
        at = end;
    }
    let mut e = 13;
    let pre = read_varint(extra, &mut e).ok_or_else(|| bad("chunk count"))?;
    let n = read_varint(extra, &mut e).ok_or_else(|| bad("IDAT count"))?;
    if pre > chunks.len() || n == 0 || n > MAX_CHUNKS || n > raw_len / CHUNK {
        return Err(bad("chunk count"));
    }
    let mut lens = Vec::with_capacity(n);
    let mut total = 0usize;
    for _ in 0..n {
        let l = read_varint(extra, &mut e).ok_or_else(|| bad("IDAT length"))?;
        total = total.checked_add(l).ok_or_else(|| bad("IDAT length"))?;
        lens.push(l);
    }
    let fixed: usize = 8 + CHUNK + 13 + chunks.iter().map(|c| CHUNK + c.data.len()).sum::<usize>();
    if fixed
        .checked_add(CHUNK * n)
        .and_then(|f| f.checked_add(total))
        != Some(raw_len)
        || total < 6
    {
        return Err(bad("lengths do not add up to the segment"));
    }
    let zhead = extra.get(e..e + 2).ok_or_else(|| bad("zlib header"))?;
    let pal = if shape.colour == 3 {
        let plte = chunks[..pre]
            .iter()
            .find(|c| c.ty == b"PLTE")
            .map(|c| c.data);
        let p = palette(plte).map_err(|_| bad("PLTE"))?;
        // Each colour to its first index.
        let mut map = std::collections::HashMap::with_capacity(p.len() / 3);
        for (k, rgb) in p.chunks_exact(3).enumerate() {
            map.entry([rgb[0], rgb[1], rgb[2]]).or_insert(k as u8);
        }
        Some(map)
    } else {
        None
    };
    // The filtered rows are no longer than the pixels and filter bytes.
    let bpp = shape.bpp();
    let mut filtered = Vec::with_capacity(h * (row_len + 1));
    let mut prev = vec![0u8; row_len];
    let mut cur = vec![0u8; row_len];
    for (y, &f) in filters.iter().enumerate() {
        let px = &pixels[y * out_row..(y + 1) * out_row];
        from_pixels(&shape, px, pal.as_ref(), &mut cur).map_err(&bad)?;
        filtered.push(f);
        for i in 0..row_len {
            filtered.push(cur[i].wrapping_sub(predict(f, &cur, &prev, i, bpp)));
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let deflate = crate::deflate::decode(&filtered, &extra[e + 2..], total - 6)?;
    let mut z = Vec::with_capacity(total);
    z.extend_from_slice(zhead);
    z.extend_from_slice(&deflate);
    z.extend_from_slice(&adler32(&filtered).to_be_bytes());
    let mut out = Vec::with_capacity(raw_len);
    out.extend_from_slice(SIGNATURE);
    let mut put = |ty: &[u8], data: &[u8]| {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        out.extend_from_slice(ty);
        out.extend_from_slice(data);
        out.extend_from_slice(&crc32(ty, data).to_be_bytes());
    };
    put(b"IHDR", ihdr);
    for c in &chunks[..pre] {
        put(c.ty, c.data);
    }
    let mut from = 0;
    for l in lens {
        put(b"IDAT", &z[from..from + l]);
        from += l;
    }
    for c in &chunks[pre..] {
        put(c.ty, c.data);
    }
    Ok(out)
}

/// The unfiltered PNG row (`row`, overwritten) of one row of inner pixels.
fn from_pixels(
    shape: &Shape,
    px: &[u8],
    pal: Option<&std::collections::HashMap<[u8; 3], u8>>,
    row: &mut [u8],
) -> Result<(), &'static str> {
    let depth = usize::from(shape.depth);
    match (shape.colour, depth) {
        (0 | 2, 8 | 16) => row.copy_from_slice(px),
        (6, _) => {
            for (o, p) in row.chunks_exact_mut(4).zip(px.chunks_exact(4)) {
                o.copy_from_slice(&[p[2], p[1], p[0], p[3]]);
            }
        }
        _ => {
            row.fill(0);
            let values: Box<dyn Iterator<Item = Result<u8, &'static str>>> = match pal {
                Some(map) => Box::new(px.chunks_exact(3).map(|c| {
                    map.get(&[c[0], c[1], c[2]])
                        .copied()
                        .ok_or("a colour not in PLTE")
                })),
                None => Box::new(px.iter().map(|&v| Ok(v))),
            };
            let max = (1u16 << depth) - 1;
            for (x, v) in values.enumerate() {
                let v = v?;
                if u16::from(v) > max {
                    return Err("a sample past the bit depth");
                }
                let bit = x * depth;
                row[bit / 8] |= v << (8 - depth - bit % 8);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paeth_matches_the_specification() {
        assert_eq!(paeth(10, 20, 10), 20);
        assert_eq!(paeth(20, 10, 10), 20);
        assert_eq!(paeth(10, 10, 30), 10);
        assert_eq!(paeth(0, 0, 0), 0);
    }

    #[test]
    fn headers_are_what_the_model_detects() {
        let s = |depth, colour| Shape {
            width: 3,
            height: 2,
            depth,
            colour,
        };
        assert_eq!(s(8, 0).header(), b"P5\n3 2\n255\n");
        assert_eq!(s(4, 0).header(), b"P5\n3 2\n15\n");
        assert_eq!(s(16, 2).header(), b"P6\n3 2\n65535\n");
        assert_eq!(s(2, 3).header(), b"P6\n3 2\n255\n");
        assert_eq!(s(8, 6).header().len(), 18);
    }

    #[test]
    fn broken_data_is_refused_before_allocating() {
        // IHDR of a 65535 x 65535 RGBA image, inner bytes far too short.
        let mut e = vec![0, 0, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 8, 6, 0, 0, 0];
        e.extend_from_slice(&[0, 1, 10, 0x78, 0xDA]);
        let h = Shape::parse(&e[..13]).unwrap().header();
        assert!(decode(&h, &e, 100).is_err());
        assert!(decode(b"", &[], 100).is_err());
        assert!(decode(b"P5\n1 1\n255\n", &[0; 13], 100).is_err());
    }
}
