//! Spreadsheet record contexts (CM revision 1) for a block that starts with
//! an Excel BIFF stream (a BOF record: type `0x0009`, `0x0209`, `0x0409` or
//! `0x0809`).
//!
//! A BIFF stream is a sequence of records, each a 16-bit type, a 16-bit
//! length and that many bytes of payload (all little-endian). The family
//! follows the record boundaries and gives every byte its record type and
//! offset, with the byte at the same offset in the previous record of the
//! same type: cells of one kind (numbers, labels, formats) repeat their
//! layout and often their row, column and format fields. A stream that only
//! starts like BIFF is followed just as well; the contexts are then merely
//! less useful.

use super::{ByteCtx, ContextModel, hash2};

/// The BOF record's type and payload length if `h` is exactly the 4-byte
/// header of a BIFF BOF record.
pub(crate) fn parse_bof(h: &[u8]) -> Option<(u16, u16)> {
    let [t0, t1, l0, l1] = *h else {
        return None;
    };
    let (ty, len) = (u16::from_le_bytes([t0, t1]), u16::from_le_bytes([l0, l1]));
    (matches!(ty, 0x0009 | 0x0209 | 0x0409 | 0x0809) && (4..=32).contains(&len))
        .then_some((ty, len))
}

/// The BIFF family (8 contexts).
#[derive(Debug, Clone)]
pub(crate) struct BiffContexts {
    /// Type and payload length of the current record; byte offset in it
    /// (the 4 header bytes count as offsets -4..-1 of the next record).
    ty: u32,
    len: u32,
    offset: i64,
    prev_ty: u32,
    /// Header bytes of the next record read so far.
    header: [u8; 4],
    /// Block position of the payload of the last record of each type (its
    /// low 12 bits), and of the one before it; 0: none.
    last: Vec<u32>,
    before: Vec<u32>,
    /// Payload start of the current record, and of the previous records of
    /// its type.
    start: u32,
    same: u32,
    same2: u32,
    /// For cell records (row, column, ... at the payload's start): payload
    /// start of the last record of each (type, column) pair (low 12 bits of
    /// the type and 8 of the column), and the current record's.
    by_column: Vec<u32>,
    column_above: u32,
}

impl BiffContexts {
    /// Follows records from the payload of the BOF record (`ty`, `len`)
    /// starting at block position `start`.
    pub fn new(ty: u16, len: u16, start: usize) -> Self {
        BiffContexts {
            ty: u32::from(ty),
            len: u32::from(len),
            offset: 0,
            prev_ty: 0,
            header: [0; 4],
            last: vec![0; 4096],
            before: vec![0; 4096],
            start: start as u32,
            same: 0,
            same2: 0,
            by_column: vec![0; 1 << 20],
            column_above: 0,
        }
    }

    fn begin_record(&mut self, pos: usize) {
        let ty = u32::from(u16::from_le_bytes([self.header[0], self.header[1]]));
        let len = u32::from(u16::from_le_bytes([self.header[2], self.header[3]]));
        let k = (ty & 0xFFF) as usize;
        self.prev_ty = self.ty;
        self.ty = ty;
        self.len = len;
        self.offset = 0;
        self.start = pos as u32;
        self.same = self.last[k];
        self.same2 = self.before[k];
        self.before[k] = self.last[k];
        self.last[k] = pos as u32;
    }
}

impl ContextModel for BiffContexts {
    fn contexts(&self) -> usize {
        8
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let (data, pos) = (ctx.data, ctx.pos);
        let off = self.offset.clamp(-4, 0xFFFF) as i32 as u32;
        let above = |rec: u32| -> u32 {
            if rec == 0 || self.offset < 0 {
                return 0x100;
            }
            let p = rec as usize + self.offset as usize;
            if p < pos && ctx.vis.known(p) {
                u32::from(data[p])
            } else {
                0x100
            }
        };
        let (a1, a2) = (above(self.same), above(self.same2));
        let ac = above(self.column_above);
        let c1 = ctx.c4() & 0xFF;
        let key = self.ty << 16 | (off & 0xFFFF);
        out[0] = hash2(key, 0);
        out[1] = hash2(key, a1 | 1 << 12);
        out[2] = hash2(key, c1 | 2 << 12);
        out[3] = hash2(key, (a1 << 8 | c1) | 3 << 20);
        out[4] = hash2(key, (a1 << 9 | a2) | 4 << 20);
        out[5] = hash2(
            self.prev_ty << 16 | self.len.min(255) << 8,
            off.min(64) | 5 << 12,
        );
        out[6] = hash2(key, ac | 6 << 12);
        out[7] = hash2(key, (ac << 8 | c1) | 7 << 20);
        for (h, j) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0xB00 + j);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        if self.offset == 3 && self.len >= 6 {
            // The column field is complete: find the cell above.
            let col = u32::from(data[pos - 1]) & 0xFF;
            let k = ((self.ty & 0xFFF) << 8 | col) as usize;
            self.column_above = self.by_column[k];
            self.by_column[k] = self.start;
        } else if self.offset == 0 {
            self.column_above = 0;
        }
        if self.offset < 0 {
            self.header[(self.offset + 4) as usize] = byte;
        }
        self.offset += 1;
        if self.offset == 0 {
            self.begin_record(pos + 1);
            if self.len == 0 {
                self.offset = -4;
            }
        } else if self.offset > 0 && self.offset as u32 >= self.len {
            self.offset = -4;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_records() {
        assert_eq!(parse_bof(&[9, 0, 4, 0]), Some((9, 4)));
        assert_eq!(parse_bof(&[9, 0, 200, 0]), None);
        assert_eq!(parse_bof(&[9, 0, 4]), None);
        // BOF payload (4 bytes), then a record of type 0x0203 with 3 bytes,
        // an empty record of type 0x000A, and a record of type 0x0203 again.
        let stream = [
            1, 2, 3, 4, 3, 2, 3, 0, 7, 8, 9, 10, 0, 0, 0, 3, 2, 3, 0, 5, 6, 7,
        ];
        let mut b = BiffContexts::new(9, 4, 0);
        let mut starts = Vec::new();
        for (pos, &byte) in stream.iter().enumerate() {
            b.observe(&stream, pos, byte);
            if b.offset == 0 {
                starts.push((pos + 1, b.ty, b.len, b.same, b.prev_ty));
            }
        }
        // The empty record has no payload byte but still counts as the
        // previous record.
        assert_eq!(starts, [(8, 0x0203, 3, 0, 9), (19, 0x0203, 3, 8, 0x000A)]);
    }
}
