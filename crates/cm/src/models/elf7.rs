//! The ELF layout of CM revision 7 (doc/FORMAT.md 4.18.5): which bytes of an
//! ELF file are code, read from its program headers.
//!
//! The program headers follow the ELF header at the start of the file, so
//! the decoder has them long before the segments they describe. A loadable
//! segment (`PT_LOAD`) with the execute flag holds the code (`.text`,
//! `.plt`, `.init`...); the others hold read-only data (`.rodata`,
//! `.eh_frame`), writable data and the dynamic-linking tables. The x86
//! family of revision 7 ([`X86v7Contexts`](super::x86_7::X86v7Contexts))
//! codes the bytes outside the code with data contexts instead of its
//! instruction decoder's. A header that lies costs compression, never
//! correctness: bytes are then merely classified wrongly.

/// At most this many code ranges are kept (more are ignored).
const MAX_RANGES: usize = 8;

/// Where the program headers of the block's ELF file say the code is.
#[derive(Debug, Clone, Default)]
pub(crate) struct ElfLayout {
    /// Block position just after the last program header (0: the ELF
    /// header is not complete yet or names no program headers).
    headers_end: usize,
    /// Whether the program headers were read.
    parsed: bool,
    /// The executable segments' file ranges `[start, end)`.
    code: Vec<(usize, usize)>,
}

impl ElfLayout {
    /// Reads a little-endian field of `n` bytes at `at` of `data`.
    fn le(data: &[u8], at: usize, n: usize) -> u64 {
        data[at..at + n]
            .iter()
            .rev()
            .fold(0u64, |v, &b| v << 8 | u64::from(b))
    }

    /// Sees the byte at `pos` (the block's bytes up to `pos` are in
    /// `data`): reads the ELF header's program-header table position once
    /// its 64 bytes are in, and the table once it is complete.
    pub(crate) fn observe(&mut self, data: &[u8], pos: usize) {
        if self.parsed {
            return;
        }
        let wide = data.get(4) == Some(&2);
        let header = if wide { 64 } else { 52 };
        if pos + 1 == header && self.headers_end == 0 {
            let (phoff, entsize, num) = if wide {
                (
                    Self::le(data, 0x20, 8),
                    Self::le(data, 0x36, 2),
                    Self::le(data, 0x38, 2),
                )
            } else {
                (
                    Self::le(data, 0x1C, 4),
                    Self::le(data, 0x2A, 2),
                    Self::le(data, 0x2C, 2),
                )
            };
            let need = if wide { 56 } else { 32 };
            if phoff >= header as u64
                && phoff <= 4096
                && entsize >= need
                && entsize <= 128
                && num <= 64
            {
                self.headers_end = (phoff + entsize * num) as usize;
            } else {
                self.parsed = true;
            }
        }
        if self.headers_end > 0 && pos + 1 == self.headers_end {
            self.parsed = true;
            let (phoff, entsize, num) = if wide {
                (
                    Self::le(data, 0x20, 8) as usize,
                    Self::le(data, 0x36, 2) as usize,
                    Self::le(data, 0x38, 2) as usize,
                )
            } else {
                (
                    Self::le(data, 0x1C, 4) as usize,
                    Self::le(data, 0x2A, 2) as usize,
                    Self::le(data, 0x2C, 2) as usize,
                )
            };
            for k in 0..num {
                let h = phoff + k * entsize;
                let (ty, flags, off, size) = if wide {
                    (
                        Self::le(data, h, 4),
                        Self::le(data, h + 4, 4),
                        Self::le(data, h + 8, 8),
                        Self::le(data, h + 32, 8),
                    )
                } else {
                    (
                        Self::le(data, h, 4),
                        Self::le(data, h + 24, 4),
                        Self::le(data, h + 4, 4),
                        Self::le(data, h + 16, 4),
                    )
                };
                if ty == 1 && flags & 1 != 0 && size > 0 && self.code.len() < MAX_RANGES {
                    let start = off.min(1 << 40) as usize;
                    self.code.push((start, start + size.min(1 << 40) as usize));
                }
            }
        }
    }

    /// Whether the byte at `pos` is data: the program headers were read,
    /// name at least one executable segment and `pos` lies in none. Before
    /// the headers are read, and for a file without them, every byte counts
    /// as code.
    pub(crate) fn is_data(&self, pos: usize) -> bool {
        self.parsed
            && !self.code.is_empty()
            && !self.code.iter().any(|&(s, e)| (s..e).contains(&pos))
    }

    /// Whether `pos` starts an executable segment (the instruction decoder
    /// restarts there).
    pub(crate) fn code_starts(&self, pos: usize) -> bool {
        self.code.iter().any(|&(s, _)| s == pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-bit ELF header with two program headers: a read-only segment
    /// at 0 and an executable one at `0x100..0x180`.
    pub(crate) fn elf64() -> Vec<u8> {
        let mut d = vec![0u8; 0x200];
        d[..4].copy_from_slice(b"\x7fELF");
        d[4] = 2;
        d[0x20] = 64; // phoff
        d[0x36] = 56; // phentsize
        d[0x38] = 2; // phnum
        let ph = |d: &mut Vec<u8>, at: usize, flags: u8, off: u16, size: u16| {
            d[at] = 1;
            d[at + 4] = flags;
            d[at + 8..at + 10].copy_from_slice(&off.to_le_bytes());
            d[at + 32..at + 34].copy_from_slice(&size.to_le_bytes());
        };
        ph(&mut d, 64, 4, 0, 0x100);
        ph(&mut d, 120, 5, 0x100, 0x80);
        d
    }

    #[test]
    fn finds_the_code_segment() {
        let d = elf64();
        let mut l = ElfLayout::default();
        for pos in 0..d.len() {
            assert!(!l.is_data(pos) || pos >= 176, "{pos}");
            l.observe(&d, pos);
        }
        assert_eq!(l.code, [(0x100, 0x180)]);
        assert!(l.is_data(0x80) && !l.is_data(0x100) && !l.is_data(0x17F) && l.is_data(0x180));
        assert!(l.code_starts(0x100));
    }

    #[test]
    fn a_lying_header_leaves_everything_code() {
        let mut d = elf64();
        d[0x20] = 0xFF;
        d[0x21] = 0xFF; // phoff past 4096
        let mut l = ElfLayout::default();
        for pos in 0..d.len() {
            l.observe(&d, pos);
        }
        assert!(!l.is_data(0x80));
    }
}
