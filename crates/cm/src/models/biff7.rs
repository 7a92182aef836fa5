//! Spreadsheet cell contexts of CM revision 7 (doc/FORMAT.md 4.18.4): the
//! revision-1 BIFF family ([`BiffContexts`], unchanged) plus contexts that
//! see a BIFF stream as a table of cells.
//!
//! Cell records (BIFF2 `0x0001`..`0x0006`, BIFF3+ `0x0201`..`0x0206`,
//! `0x027E`, `0x00FD`, `0x0406`, `0x00BD`, `0x00BE`) start with a 16-bit row
//! and a 16-bit column. The family remembers, per column, the last two
//! cells (their type, length and payload after the row and column, as one
//! hash: the cell's *symbol*) and which column followed it in its row; per
//! row, the symbols of the cells to the left. Every byte of a record is
//! then predicted from its offset in the record, the record's bytes so far
//! (row and column left out, so that cells of different rows share
//! statistics), the column (for the next record's header and its row and
//! column fields: the column that followed the current one in the row
//! above), and the symbols of the cells to the left and above. The column
//! alone predicts a questionnaire's answer codes, the cells to the left its
//! skip patterns; the row and column fields are predicted from the
//! expected row and column.

use super::biff::BiffContexts;
use super::{ByteCtx, ContextModel, hash2};
use crate::mixer2::Mixer2;
use crate::prim::AdaptiveProbs;

/// Index bits of the per-bit tables.
const DIRECT_BITS: u32 = 18;
/// Which of the new contexts also get a per-bit table of adaptive
/// probabilities (indexed by the context's hash and the bits so far).
const DIRECT: [usize; 7] = [0, 1, 2, 3, 7, 10, 12];

/// Columns remembered (the column's low bits index the table).
const COLUMNS: usize = 1 << 12;

/// Whether records of type `ty` are cells (row and column first).
pub(crate) fn is_cell(ty: u32) -> bool {
    matches!(
        ty,
        0x0001..=0x0006 | 0x0201..=0x0206 | 0x027E | 0x00FD | 0x0406 | 0x00BD | 0x00BE
    )
}

/// What the family remembers of a column.
#[derive(Debug, Clone, Copy, Default)]
struct Column {
    /// Symbols of its last two cells (0: none).
    last: u32,
    before: u32,
    /// The column that followed its last cell in that cell's row, with
    /// bit 16 set when the next cell was in another row (0: none seen).
    next: u32,
}

/// The revision-7 BIFF family (8 + [`NEW`] contexts).
#[derive(Debug, Clone)]
pub(crate) struct Biff7Contexts {
    inner: BiffContexts,
    /// The record parser: type and length of the current record, offset of
    /// the next byte in it (-4..-1: the next record's header).
    ty: u32,
    pub(super) len: u32,
    pub(super) offset: i64,
    header: [u8; 4],
    /// Hash of the current record's bytes so far, row and column fields
    /// left out.
    pub(super) so_far: u32,
    /// Row and column of the current cell record (and whether it is one),
    /// and of the last cell.
    pub(super) row: u32,
    pub(super) col: u32,
    pub(super) cell: bool,
    pub(super) last_row: u32,
    pub(super) last_col: u32,
    /// Symbols of the last three cells of the current row (0: none) and
    /// the last six record types (4 bits each).
    left: [u32; 3],
    types: u32,
    columns: Vec<Column>,
    /// The last [`ROWS`] rows' cell symbols by column (a ring of rows, the
    /// current row's slot `slot`), how many of the current row's cells
    /// each equals, the best-matching row (most equal cells, the most recent
    /// of equals) and how many cells in a row it predicted.
    rows: Vec<u32>,
    scores: [u32; ROWS],
    slot: usize,
    best: usize,
    run: u32,
    /// Per-bit tables, their indices for the current bit and the byte's
    /// context hashes; the family's mixer (weight sets by column and by
    /// offset) and its contexts for the current byte.
    direct: Vec<AdaptiveProbs>,
    index: [usize; DIRECT.len()],
    byte_hash: [u32; DIRECT.len()],
    mixer: Mixer2,
    mix_ctx: [usize; 2],
    /// How often each column's cell equalled each other column's cell of
    /// the same row (`agree[c * ROW_COLUMNS + d]`, `d` coded before `c`), and
    /// per column the column it agreed with most.
    agree: Vec<u16>,
    partner: Vec<u16>,
}

/// Bytes the family allocates: the per-bit tables, the row ring, the
/// column agreement counts, the column table and the mixer's weight sets.
pub(crate) const MEMORY: u64 = (DIRECT.len() as u64) * (4 << DIRECT_BITS)
    + (ROWS * ROW_COLUMNS * 4) as u64
    + (ROW_COLUMNS * ROW_COLUMNS * 2) as u64
    + (COLUMNS * 12) as u64
    + ((COLUMNS + 64 * 8) * 64 * 2) as u64;
/// Byte-level contexts of the main mixer's selector.
const SELECTOR: usize = 1024 + 64;
/// Rows the row match looks back over.
const ROWS: usize = 256;
/// Columns of a row that the row match keeps.
const ROW_COLUMNS: usize = 512;

/// Contexts added to the revision-1 family's.
const NEW: usize = 13;

impl Biff7Contexts {
    /// Follows records from the payload of the BOF record (`ty`, `len`)
    /// starting at block position `start`.
    pub fn new(ty: u16, len: u16, start: usize) -> Self {
        Biff7Contexts {
            inner: BiffContexts::new(ty, len, start),
            ty: u32::from(ty),
            len: u32::from(len),
            offset: 0,
            header: [0; 4],
            so_far: hash2(u32::from(ty), u32::from(len)),
            row: 0,
            col: 0,
            cell: false,
            last_row: 0,
            last_col: 0,
            left: [0; 3],
            types: 0,
            columns: vec![Column::default(); COLUMNS],
            rows: vec![0; ROWS * ROW_COLUMNS],
            scores: [0; ROWS],
            slot: 0,
            best: 0,
            run: 0,
            direct: DIRECT
                .iter()
                .map(|_| AdaptiveProbs::new(1 << DIRECT_BITS, 255))
                .collect(),
            index: [0; DIRECT.len()],
            byte_hash: [0; DIRECT.len()],
            mixer: Mixer2::new(DIRECT.len() + 1, &[COLUMNS, 64 * 8], 1, 6, 2),
            mix_ctx: [0; 2],
            agree: vec![0; ROW_COLUMNS * ROW_COLUMNS],
            partner: vec![u16::MAX; ROW_COLUMNS],
        }
    }

    /// The column table's entry of column `col`.
    pub(super) fn column_last(&self, col: u32) -> u32 {
        self.column(col).last
    }

    /// The column table's entry of column `col`.
    fn column(&self, col: u32) -> &Column {
        &self.columns[col as usize & (COLUMNS - 1)]
    }

    /// The expected row and column of the next cell: the column that
    /// followed the last cell's column in the row above, else the next
    /// column of the same row.
    pub(super) fn expected(&self) -> (u32, u32) {
        let next = self.column(self.last_col).next;
        if next == 0 {
            (self.last_row, self.last_col + 1)
        } else if next & 1 << 16 != 0 {
            (self.last_row + 1, next & 0xFFFF)
        } else {
            (self.last_row, next)
        }
    }

    /// The current record is complete.
    fn end_record(&mut self) {
        self.types = self.types << 4 | (self.ty & 0xF);
        if !self.cell {
            return;
        }
        let sym = hash2(self.so_far, 0x5E11) | 1;
        let (row, col) = (self.row, self.col);
        if row != self.last_row {
            self.left = [0; 3];
            self.slot = (self.slot + 1) % ROWS;
            self.rows[self.slot * ROW_COLUMNS..][..ROW_COLUMNS].fill(0);
            self.scores = [0; ROWS];
            self.best = (self.slot + ROWS - 1) % ROWS;
            self.run = 0;
        }
        if (col as usize) < ROW_COLUMNS {
            let c = col as usize;
            let predicted = self.rows[self.best * ROW_COLUMNS + c];
            self.run = if predicted == sym {
                (self.run + 1).min(15)
            } else {
                0
            };
            self.rows[self.slot * ROW_COLUMNS + c] = sym;
            // Which earlier cell of this row this column repeats.
            let row = &self.rows[self.slot * ROW_COLUMNS..][..ROW_COLUMNS];
            let agree = &mut self.agree[c * ROW_COLUMNS..][..ROW_COLUMNS];
            let mut best = (0u16, u16::MAX);
            for (d, (&v, a)) in row.iter().zip(agree.iter_mut()).enumerate() {
                if d != c && v != 0 {
                    if v == sym {
                        *a = a.saturating_add(1);
                    }
                    if *a > 0 && *a >= best.0 {
                        best = (*a, d as u16);
                    }
                }
            }
            self.partner[c] = best.1;
            // Rank the rows above by the cells they share with this one; the
            // most recent of equals wins.
            let mut best = (0, self.best);
            for back in 1..ROWS {
                let q = (self.slot + ROWS - back) % ROWS;
                if self.rows[q * ROW_COLUMNS + c] == sym {
                    self.scores[q] += 1;
                }
                if self.scores[q] > best.0 {
                    best = (self.scores[q], q);
                }
            }
            self.best = best.1;
        }
        let prev = self.last_col as usize & (COLUMNS - 1);
        self.columns[prev].next = if row == self.last_row {
            col & 0xFFFF
        } else {
            1 << 16 | (col & 0xFFFF)
        };
        let c = &mut self.columns[col as usize & (COLUMNS - 1)];
        c.before = c.last;
        c.last = sym;
        self.left = [sym, self.left[0], self.left[1]];
        self.last_row = row;
        self.last_col = col;
    }

    /// A record's header is complete: its payload follows.
    fn begin_record(&mut self) {
        self.ty = u32::from(u16::from_le_bytes([self.header[0], self.header[1]]));
        self.len = u32::from(u16::from_le_bytes([self.header[2], self.header[3]]));
        self.offset = 0;
        self.cell = is_cell(self.ty) && self.len >= 6;
        self.row = 0;
        self.col = 0;
    }
}

impl ContextModel for Biff7Contexts {
    fn contexts(&self) -> usize {
        self.inner.contexts() + NEW
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let k = self.inner.contexts();
        self.inner.hashes(ctx, &mut out[..k]);
        self.cell_hashes(ctx, &mut out[k..]);
    }

    fn selector_size(&self) -> usize {
        SELECTOR * 8
    }

    /// The column for a cell's value bytes, else the offset in the record.
    fn selector(&self, _ctx: &ByteCtx<'_>) -> usize {
        if self.cell && self.offset >= 4 {
            self.col as usize & 1023
        } else {
            1024 + (self.offset.clamp(-4, 59) + 4) as usize
        }
    }

    /// The column's low byte for a cell's value bytes.
    fn apm_byte(&self, _ctx: &ByteCtx<'_>) -> Option<u32> {
        (self.cell && self.offset >= 4).then_some(self.col & 0xFF)
    }

    fn bit_inputs(&self) -> usize {
        DIRECT.len() + 1
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let mut h = [0u32; NEW];
        self.cell_hashes(ctx, &mut h);
        for (b, &j) in self.byte_hash.iter_mut().zip(&DIRECT) {
            *b = h[j];
        }
        let col = self.current_col() as usize & (COLUMNS - 1);
        self.mix_ctx = [col, (self.offset.clamp(-4, 59) + 4) as usize];
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let n = DIRECT.len();
        for (j, o) in out[..n].iter_mut().enumerate() {
            let idx = (hash2(self.byte_hash[j], c0) >> (32 - DIRECT_BITS)) as usize;
            self.index[j] = idx;
            *o = self.direct[j].stretched(idx);
            self.mixer.set(j, *o);
        }
        self.mixer.set(n, 256);
        self.mixer.select(0, self.mix_ctx[0]);
        self.mixer.select(1, self.mix_ctx[1] * 8 + i as usize);
        self.mixer.select_final(0);
        out[n] = self.mixer.mix();
    }

    fn update_bit(&mut self, bit: u32) {
        for (t, &idx) in self.direct.iter_mut().zip(&self.index) {
            t.update(idx, bit);
        }
        self.mixer.update(bit);
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.observe_byte(data, pos, byte);
    }
}

impl Biff7Contexts {
    /// The column of the cell being coded: expected until its column field
    /// is complete.
    fn current_col(&self) -> u32 {
        if self.cell && self.offset >= 4 {
            self.col
        } else {
            self.expected().1
        }
    }

    /// The [`NEW`] contexts of the byte at `ctx.pos`.
    fn cell_hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let off = self.offset.clamp(-4, 0xFFF) as i32;
        // The column of the cell being coded: expected until its column
        // field is complete.
        let (erow, ecol) = self.expected();
        let in_cell = self.offset >= 0 && self.cell;
        let col = if in_cell && self.offset >= 4 {
            self.col
        } else {
            ecol
        };
        // The expected byte of the row and column fields, with the byte
        // before it.
        let exp = if in_cell && self.offset < 4 {
            let f = if self.offset < 2 { erow } else { ecol };
            0x100 | (f >> (8 * (self.offset as u32 & 1)) & 0xFF)
        } else {
            0
        };
        let c1 = if exp != 0 { ctx.c4() & 0xFF } else { 0 };
        let above = self.column(col);
        let (a1, a2) = (above.last, above.before);
        let [l1, l2, l3] = self.left;
        let base = hash2(self.so_far, off as u32);
        // The best-matching row's cell in this column.
        let m = if (col as usize) < ROW_COLUMNS {
            self.rows[self.best * ROW_COLUMNS + col as usize]
        } else {
            0
        };
        out[0] = hash2(base, exp << 8 | c1);
        out[1] = hash2(base, col | 1 << 20);
        out[2] = hash2(hash2(base, col | 2 << 20), l1);
        out[3] = hash2(hash2(base, col | 3 << 20), a1);
        out[4] = hash2(hash2(base, col | 4 << 20), hash2(l1, l2));
        out[5] = hash2(hash2(base, 5 << 20), hash2(l1, a1));
        out[6] = hash2(hash2(base, col | 6 << 20), hash2(a1, a2));
        out[7] = hash2(hash2(base, col | 7 << 20), hash2(l1, a1));
        out[8] = hash2(hash2(base, col | 8 << 20), self.types & 0xFF_FFFF);
        out[9] = hash2(hash2(base, 9 << 20), hash2(hash2(l1, l2), l3));
        out[10] = hash2(hash2(base, col | 10 << 20), m);
        out[11] = hash2(hash2(base, self.run | 11 << 20), hash2(m, l1));
        // The cell of this row in the column this one repeats most.
        let p = if (col as usize) < ROW_COLUMNS {
            let d = self.partner[col as usize] as usize;
            if d < ROW_COLUMNS {
                self.rows[self.slot * ROW_COLUMNS + d] | 1
            } else {
                0
            }
        } else {
            0
        };
        out[12] = hash2(hash2(base, col | 12 << 20), p);
        for (h, j) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0xB70 + j);
        }
    }

    /// Sees the byte just coded.
    fn observe_byte(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.inner.observe(data, pos, byte);
        if self.offset < 0 {
            self.header[(self.offset + 4) as usize] = byte;
        }
        if self.cell && (0..4).contains(&self.offset) {
            let b = u32::from(byte);
            match self.offset {
                0 => self.row = b,
                1 => self.row |= b << 8,
                2 => self.col = b,
                _ => self.col |= b << 8,
            }
        } else {
            self.so_far = hash2(self.so_far, u32::from(byte) | (self.offset as u32) << 8);
        }
        self.offset += 1;
        if self.offset == 0 {
            self.begin_record();
            if self.len == 0 {
                self.end_record();
                self.offset = -4;
                self.so_far = 0;
            }
        } else if self.offset > 0 && self.offset as u32 >= self.len {
            self.end_record();
            self.offset = -4;
            self.so_far = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follows_cells_and_columns() {
        // BOF payload, then cells (row, col) (0,0), (0,2), (1,0), (1,2):
        // BIFF2 INTEGER records of 9 bytes.
        let mut stream = vec![2, 0, 16, 0];
        let cell = |row: u16, col: u16, v: u8| {
            let mut r = vec![2, 0, 9, 0];
            r.extend(row.to_le_bytes());
            r.extend(col.to_le_bytes());
            r.extend([0, 0, 0, v, 0]);
            r
        };
        for (row, col) in [(0, 0), (0, 2), (1, 0), (1, 2)] {
            stream.extend(cell(row, col, 7));
        }
        let mut b = Biff7Contexts::new(9, 4, 0);
        let mut expected = Vec::new();
        for (pos, &byte) in stream.iter().enumerate() {
            b.observe(&stream, pos, byte);
            if b.offset == -4 && pos > 4 {
                expected.push(b.expected());
            }
        }
        // After (0,0): column 1 (nothing known); after (0,2): column 3;
        // after (1,0): column 2 as in the row above; after (1,2): the next
        // row's column 0.
        assert_eq!(expected, [(0, 1), (0, 3), (1, 2), (2, 0)]);
        assert_eq!(b.column(0).last, b.column(2).last, "same payloads");
        assert_ne!(b.column(0).last, 0);
    }
}
