//! The detector: finds JPEG images, deflate streams (zlib, gzip, ZIP members,
//! hence PDF and single-IDAT PNG streams), whole PNG files, runs of PNG IDAT chunks and x86 code (ELF and PE code
//! sections, or E8/E9 statistics) and 24/32-bit PNM, BMP or TGA images
//! that start a block. It only proposes; every
//! candidate is verified by [`analyse`](crate::analyse).

use crate::Kind;

/// A proposed segment. For [`Kind::Deflate`], `end` is the end of the data
/// the stream may use; where it really ends is found by inflating it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    /// The transform to try.
    pub kind: Kind,
    /// First byte.
    pub start: usize,
    /// One past the last byte (for deflate: the most it may take).
    pub end: usize,
}

/// Smallest JPEG worth re-coding.
const MIN_JPEG: usize = 256;
/// Smallest x86 code segment worth transforming.
const MIN_X86: usize = 4096;

/// Candidates in `data`, sorted by start; they may overlap (the first one
/// that verifies wins).
pub fn detect(data: &[u8]) -> Vec<Candidate> {
    let mut out = Vec::new();
    x86_headers(data, &mut out);
    let has_exe_header = !out.is_empty();
    // An uncompressed 24/32-bit image at the block's start (transform 7;
    // the caller drops it below CM revision 46).
    out.extend(crate::colour::detect(data));
    let n = data.len();
    let mut i = 0usize;
    while i + 4 <= n {
        let b = data[i];
        match b {
            0xFF if data[i + 1] == 0xD8 && data[i + 2] == 0xFF => {
                if let Some(end) = jpeg_end(data, i)
                    && end - i >= MIN_JPEG
                {
                    out.push(Candidate {
                        kind: Kind::Jpeg,
                        start: i,
                        end,
                    });
                    i = end;
                    continue;
                }
            }
            // zlib: CM 8, a window of at most 32 KiB, no preset dictionary,
            // header check; the deflate stream follows it.
            0x08 | 0x18 | 0x28 | 0x38 | 0x48 | 0x58 | 0x68 | 0x78 => {
                let flg = data[i + 1];
                if (u16::from(b) << 8 | u16::from(flg)) % 31 == 0
                    && flg & 0x20 == 0
                    && plausible_deflate(data[i + 2])
                {
                    out.push(Candidate {
                        kind: Kind::Deflate,
                        start: i + 2,
                        end: n,
                    });
                }
            }
            0x1F if data[i + 1] == 0x8B && data[i + 2] == 0x08 => {
                if let Some(start) = gzip_body(data, i) {
                    out.push(Candidate {
                        kind: Kind::Deflate,
                        start,
                        end: n,
                    });
                }
            }
            // A PNG's IDAT chunks (from the length field before `IDAT`):
            // two or more in a row hold one zlib stream cut by chunk headers.
            b'I' if i >= 4 && data[i + 1..i + 4] == *b"DAT" => {
                let start = i - 4;
                let first = start < 8 || data[start - 8..start - 4] != *b"IDAT";
                if first && let Some((end, _)) = crate::png::idat_run(data, start) {
                    out.push(Candidate {
                        kind: Kind::Png,
                        start,
                        end,
                    });
                }
            }
            // A whole PNG file (transform 6); its IDAT run and zlib stream
            // are proposed too, for when this one does not verify.
            0x89 if data[i + 1..i + 4] == *b"PNG" => {
                if let Some(end) = crate::png_pixels::png_end(data, i) {
                    out.push(Candidate {
                        kind: Kind::PngPixels,
                        start: i,
                        end,
                    });
                }
            }
            b'P' if data[i + 1..i + 4] == [b'K', 3, 4] => {
                if let Some(start) = zip_body(data, i) {
                    out.push(Candidate {
                        kind: Kind::Deflate,
                        start,
                        end: n,
                    });
                }
            }
            _ => {}
        }
        i += 1;
    }
    if !has_exe_header {
        x86_statistics(data, &mut out);
    }
    out.sort_by_key(|c| (c.start, c.kind as u8));
    out
}

/// The first byte of a deflate stream: block type 3 is invalid.
fn plausible_deflate(first: u8) -> bool {
    (first >> 1) & 3 != 3
}

fn be16(d: &[u8], at: usize) -> Option<usize> {
    Some(usize::from(u16::from_be_bytes(
        d.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn le16(d: &[u8], at: usize) -> Option<usize> {
    Some(usize::from(u16::from_le_bytes(
        d.get(at..at + 2)?.try_into().ok()?,
    )))
}

fn le32(d: &[u8], at: usize) -> Option<usize> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?) as usize)
}

fn le64(d: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?)).ok()
}

/// The end of the JPEG that starts (SOI) at `start`: one past its EOI.
/// Requires a frame header and a scan.
fn jpeg_end(d: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 2;
    let (mut frame, mut scan) = (false, false);
    loop {
        if *d.get(i)? != 0xFF {
            return None;
        }
        while *d.get(i + 1)? == 0xFF {
            i += 1;
        }
        let m = *d.get(i + 1)?;
        match m {
            0xD9 => return (frame && scan).then_some(i + 2),
            0xD8 | 0x00 => return None,
            0x01 | 0xD0..=0xD7 => i += 2,
            _ => {
                let len = be16(d, i + 2)?;
                if len < 2 {
                    return None;
                }
                if matches!(m, 0xC0..=0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF) {
                    frame = true;
                }
                i += 2 + len;
                if m == 0xDA {
                    scan = true;
                    // Entropy-coded data: up to the next marker that is not
                    // a stuffed byte or a restart marker.
                    loop {
                        let b = *d.get(i)?;
                        if b == 0xFF {
                            let c = *d.get(i + 1)?;
                            if c == 0x00 || (0xD0..=0xD7).contains(&c) {
                                i += 2;
                                continue;
                            }
                            break;
                        }
                        i += 1;
                    }
                }
            }
        }
    }
}

/// Where the deflate stream of the gzip member at `at` starts.
fn gzip_body(d: &[u8], at: usize) -> Option<usize> {
    let flags = *d.get(at + 3)?;
    if flags & 0xE0 != 0 {
        return None;
    }
    let mut i = at + 10;
    if flags & 4 != 0 {
        i += 2 + le16(d, i)?;
    }
    for bit in [8u8, 16] {
        if flags & bit != 0 {
            i += d.get(i..)?.iter().position(|&c| c == 0)? + 1;
        }
    }
    if flags & 2 != 0 {
        i += 2;
    }
    (i < d.len() && plausible_deflate(d[i])).then_some(i)
}

/// Where the deflate data of the ZIP local file at `at` starts (method 8).
fn zip_body(d: &[u8], at: usize) -> Option<usize> {
    if le16(d, at + 8)? != 8 {
        return None;
    }
    let i = at + 30 + le16(d, at + 26)? + le16(d, at + 28)?;
    (i < d.len() && plausible_deflate(d[i])).then_some(i)
}

/// Whether `data` starts with an x86 ELF or PE header that names at least
/// one code section of [`MIN_X86`] bytes or more inside `data`: such code is
/// known to be code, not guessed from statistics (the encoder then trusts
/// the x86 transform without also coding the block untransformed).
pub fn header_names_code(data: &[u8]) -> bool {
    let mut found = Vec::new();
    x86_headers(data, &mut found);
    !found.is_empty()
}

/// Code sections named by an ELF or PE header at the start of `data`.
fn x86_headers(d: &[u8], out: &mut Vec<Candidate>) {
    let mut push = |off: usize, size: usize| {
        if let Some(end) = off.checked_add(size)
            && end <= d.len()
            && size >= MIN_X86
        {
            out.push(Candidate {
                kind: Kind::X86,
                start: off,
                end,
            });
        }
    };
    if d.starts_with(b"\x7FELF") && d.len() > 64 && d[5] == 1 {
        let wide = d[4] == 2;
        let Some(machine) = le16(d, 18) else { return };
        if machine != 3 && machine != 0x3E {
            return;
        }
        let (shoff, shentsize, shnum) = if wide {
            (le64(d, 0x28), le16(d, 0x3A), le16(d, 0x3C))
        } else {
            (le32(d, 0x20), le16(d, 0x2E), le16(d, 0x30))
        };
        let (Some(shoff), Some(shentsize), Some(shnum)) = (shoff, shentsize, shnum) else {
            return;
        };
        let mut found = Vec::new();
        for k in 0..shnum.min(256) {
            let s = shoff + k * shentsize;
            let (ty, flags, off, size) = if wide {
                (
                    le32(d, s + 4),
                    le64(d, s + 8),
                    le64(d, s + 0x18),
                    le64(d, s + 0x20),
                )
            } else {
                (
                    le32(d, s + 4),
                    le32(d, s + 8),
                    le32(d, s + 0x10),
                    le32(d, s + 0x14),
                )
            };
            if let (Some(1), Some(flags), Some(off), Some(size)) = (ty, flags, off, size)
                && flags & 4 != 0
            {
                found.push((off, size));
            }
        }
        found.sort_unstable();
        for (off, size) in found {
            push(off, size);
        }
    } else if d.starts_with(b"MZ") {
        let Some(pe) = le32(d, 0x3C) else { return };
        if d.get(pe..pe + 4) != Some(b"PE\0\0") {
            return;
        }
        let Some(machine) = le16(d, pe + 4) else {
            return;
        };
        if machine != 0x14C && machine != 0x8664 {
            return;
        }
        let (Some(nsec), Some(opt)) = (le16(d, pe + 6), le16(d, pe + 20)) else {
            return;
        };
        let table = pe + 24 + opt;
        let mut found = Vec::new();
        for k in 0..nsec.min(96) {
            let s = table + 40 * k;
            if let (Some(size), Some(off), Some(ch)) =
                (le32(d, s + 16), le32(d, s + 20), le32(d, s + 36))
                && ch & 0x20 != 0
            {
                found.push((off, size));
            }
        }
        found.sort_unstable();
        for (off, size) in found {
            push(off, size);
        }
    }
}

/// Windows of `WINDOW` bytes that look like x86 code: many E8 (call) bytes
/// followed by a small displacement. Adjacent windows are merged.
fn x86_statistics(d: &[u8], out: &mut Vec<Candidate>) {
    const WINDOW: usize = 1 << 14;
    let mut run: Option<usize> = None;
    let mut w = 0;
    while w < d.len() {
        let end = (w + WINDOW).min(d.len());
        let (mut calls, mut movs) = (0usize, 0usize);
        let win = &d[w..end];
        for k in 0..win.len().saturating_sub(4) {
            if win[k] == 0xE8 && (win[k + 4] == 0 || win[k + 4] == 0xFF) {
                calls += 1;
            }
            movs += usize::from(win[k] == 0x89 || win[k] == 0x8B);
        }
        // Code has one call per 60-300 bytes (C about 80, inlined Rust
        // about 270; random bytes one per 32768 that looks like one), and
        // 5-11% of its bytes are the MOV opcodes 89 and 8B (a table of
        // numbers that happens to hold E8s has far fewer: 0.07% in
        // cantrbry.kennedy.xls).
        let code = end - w >= 1024 && calls * 512 >= win.len() && movs * 64 >= win.len();
        match (code, run) {
            (true, None) => run = Some(w),
            (false, Some(s)) => {
                if w - s >= MIN_X86 {
                    out.push(Candidate {
                        kind: Kind::X86,
                        start: s,
                        end: w,
                    });
                }
                run = None;
            }
            _ => {}
        }
        w = end;
    }
    if let Some(s) = run
        && d.len() - s >= MIN_X86
    {
        out.push(Candidate {
            kind: Kind::X86,
            start: s,
            end: d.len(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_zlib_stream_and_a_jpeg_shape() {
        let mut d = vec![b'x'; 100];
        d.extend_from_slice(&[0x78, 0x9C, 0x4B, 0x4C]);
        d.extend_from_slice(&[0u8; 20]);
        let c = detect(&d);
        assert!(c.iter().any(|c| c.kind == Kind::Deflate && c.start == 102));
        // SOI, SOF0 (len 2), SOS (len 2), entropy data with a stuffed byte, EOI.
        let mut j = vec![0xFF, 0xD8, 0xFF, 0xC0, 0, 2, 0xFF, 0xDA, 0, 2];
        j.extend_from_slice(&[1, 2, 0xFF, 0, 3]);
        j.extend_from_slice(&[0xFF, 0xD9]);
        assert_eq!(jpeg_end(&j, 0), Some(j.len()));
    }
}
