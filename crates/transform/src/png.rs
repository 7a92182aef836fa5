//! PNG segments (transform 4): a run of two or more consecutive IDAT chunks,
//! whose concatenated data is one zlib stream. The inner bytes are the
//! inflated image data (filter bytes and pixels); the reconstruction data
//! says how to re-split the stream into chunks, and the chunks' CRCs and the
//! zlib stream's Adler-32 are recomputed.
//!
//! Reconstruction data: a varint `n` (chunks, at least 2), `n` varints (each
//! chunk's data length), the 2-byte zlib header, then the `preflate-rs`
//! reconstruction data of the deflate stream (as for transform 2). The segment
//! is, per chunk, its length (u32 big-endian), `IDAT`, its data and the CRC-32
//! of type and data; the chunks' data concatenated are the zlib header, the
//! deflate stream and the Adler-32 (big-endian) of the inner bytes.

/// Bytes a chunk adds around its data: length, type, CRC.
const CHUNK: usize = 12;

/// The most chunks a segment's reconstruction data may name.
const MAX_CHUNKS: usize = 1 << 20;

pub(crate) fn be32(d: &[u8], at: usize) -> Option<usize> {
    Some(u32::from_be_bytes(d.get(at..at + 4)?.try_into().ok()?) as usize)
}

/// The end of the run of consecutive IDAT chunks that starts (with a length
/// field) at `start`, and how many it has; `None` when fewer than two chunks
/// lie complete in `d`.
pub fn idat_run(d: &[u8], start: usize) -> Option<(usize, usize)> {
    let (mut at, mut n) = (start, 0usize);
    while d.get(at + 4..at + 8) == Some(b"IDAT".as_slice()) {
        let len = be32(d, at)?;
        let end = at.checked_add(CHUNK)?.checked_add(len)?;
        if end > d.len() || len > i32::MAX as usize {
            break;
        }
        at = end;
        n += 1;
    }
    (n >= 2).then_some((at, n))
}

pub(crate) fn crc32(ty: &[u8], data: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(ty);
    c.update(data);
    c.sum()
}

pub(crate) fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65521;
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= MOD;
        b %= MOD;
    }
    (b << 16) | a
}

pub(crate) fn write_varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn read_varint(p: &[u8], at: &mut usize) -> Option<usize> {
    let mut v = 0u64;
    for k in 0..5 {
        let b = *p.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7F) << (7 * k);
        if b & 0x80 == 0 {
            return (v <= u64::from(u32::MAX)).then_some(v as usize);
        }
    }
    None
}

/// The forward transform of the IDAT run `bytes` (exactly the chunks): the
/// inner bytes and the reconstruction data; `room`: the most inner bytes
/// allowed. Refused (an error) unless every CRC and the Adler-32 are right
/// and the zlib stream fills the chunks exactly.
pub fn encode(bytes: &[u8], room: usize) -> Result<(Vec<u8>, Vec<u8>), String> {
    let (end, n) = idat_run(bytes, 0).ok_or("png: not an IDAT run")?;
    if end != bytes.len() {
        return Err("png: bytes after the IDAT run".into());
    }
    let mut lens = Vec::with_capacity(n);
    let mut z = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for _ in 0..n {
        let len = be32(bytes, at).ok_or("png: short chunk")?;
        let data = &bytes[at + 8..at + 8 + len];
        if be32(bytes, at + 8 + len) != Some(crc32(b"IDAT", data) as usize) {
            return Err("png: chunk CRC mismatch".into());
        }
        lens.push(len);
        z.extend_from_slice(data);
        at += CHUNK + len;
    }
    if z.len() < 6
        || z[0] & 0x0F != 8
        || z[0] >> 4 > 7
        || z[1] & 0x20 != 0
        || u16::from_be_bytes([z[0], z[1]]) % 31 != 0
    {
        return Err("png: not a zlib stream".into());
    }
    let (len, plain, corrections) = crate::deflate::encode(&z[2..], room)?;
    if 2 + len + 4 != z.len() || be32(&z, 2 + len) != Some(adler32(&plain) as usize) {
        return Err("png: the zlib stream does not fill the chunks".into());
    }
    let mut extra = Vec::with_capacity(corrections.len() + 3 * n + 8);
    write_varint(&mut extra, n);
    for l in lens {
        write_varint(&mut extra, l);
    }
    extra.extend_from_slice(&z[..2]);
    extra.extend_from_slice(&corrections);
    Ok((plain, extra))
}

/// The IDAT run of `raw_len` bytes that `plain` and `extra` re-create. The
/// chunk table is checked against `raw_len` before anything is allocated.
pub fn decode(plain: &[u8], extra: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    let bad = |why: &str| format!("png segment: broken reconstruction data ({why})");
    let mut at = 0;
    let n = read_varint(extra, &mut at).ok_or_else(|| bad("chunk count"))?;
    if !(2..=MAX_CHUNKS).contains(&n) || n > raw_len / CHUNK {
        return Err(bad("chunk count"));
    }
    let mut lens = Vec::with_capacity(n);
    let mut total = 0usize;
    for _ in 0..n {
        let l = read_varint(extra, &mut at).ok_or_else(|| bad("chunk length"))?;
        total = total.checked_add(l).ok_or_else(|| bad("chunk length"))?;
        lens.push(l);
    }
    if total.checked_add(CHUNK * n) != Some(raw_len) || total < 6 {
        return Err(bad("chunk lengths do not add up to the segment"));
    }
    let header = extra.get(at..at + 2).ok_or_else(|| bad("zlib header"))?;
    let deflate = crate::deflate::decode(plain, &extra[at + 2..], total - 6)?;
    let mut z = Vec::with_capacity(total);
    z.extend_from_slice(header);
    z.extend_from_slice(&deflate);
    z.extend_from_slice(&adler32(plain).to_be_bytes());
    let mut out = Vec::with_capacity(raw_len);
    let mut from = 0;
    for l in lens {
        let data = &z[from..from + l];
        out.extend_from_slice(&(l as u32).to_be_bytes());
        out.extend_from_slice(b"IDAT");
        out.extend_from_slice(data);
        out.extend_from_slice(&crc32(b"IDAT", data).to_be_bytes());
        from += l;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adler32_of_known_strings() {
        assert_eq!(adler32(b""), 1);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    }

    #[test]
    fn broken_tables_are_refused_before_allocating() {
        // A chunk count far past the segment, lengths that do not add up.
        let mut e = Vec::new();
        write_varint(&mut e, 1 << 19);
        assert!(decode(b"", &e, 100).is_err());
        let mut e = Vec::new();
        write_varint(&mut e, 2);
        write_varint(&mut e, 10);
        write_varint(&mut e, 10);
        e.extend_from_slice(&[0x78, 0xDA]);
        assert!(decode(b"", &e, 45).is_err());
        assert!(decode(b"", &[0xFF; 6], 100).is_err());
    }
}
