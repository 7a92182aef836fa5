//! Spreadsheet cell contexts of CM revision 12 (doc/FORMAT.md 4.23.5): the
//! revision-7 family ([`Biff7Contexts`], unchanged) plus contexts from the
//! cells of the same row that best predict a column.
//!
//! A questionnaire's answer in one column often follows from the answer in
//! another column of the same row, not as an equal value but as a function
//! of it. The family keeps, for every pair of columns `(c, d)` with `d`
//! coded before `c` in a row, the last symbol of column `c` seen after each
//! symbol of column `d` (a hashed table of predictions) and a decaying score
//! of how often that prediction was right. The two best-scoring columns of
//! the current row (the partners) then give the contexts of the cell being
//! coded: their symbols and the symbols they predict.

use super::biff7::Biff7Contexts;
use super::forward_family;
use super::{ByteCtx, ContextModel, hash2};
use crate::prim::AdaptiveProbs;

/// Columns of a row that the family follows.
const ROW_COLUMNS: usize = 512;
/// Index bits of the prediction table.
const PRED_BITS: u32 = 20;
/// Open successors kept per column.
const OPEN: usize = 32;
/// A value closes the open successors up to this far below it.
const SKIPPED: u16 = 8;
/// Index bits of the seen-values bitmap.
const SEEN_BITS: u32 = 22;
/// Contexts of the successor input: consistent successors with a 0 and
/// with a 1 next (0..=7 each), low or high byte, bit position.
/// and whether the column's last two values were successors,
const SUCC: usize = 4 * 8 * 8 * 2 * 8;
/// Contexts added to the revision-7 family's.
const NEW: usize = 5;

/// Bytes the family allocates on top of revision 7's: the prediction
/// table, the pair scores, the current row, the successor lists, the
/// seen-values bitmap and the successor input's table.
pub(crate) const MEMORY: u64 = (1 << (SEEN_BITS - 3))
    + (ROW_COLUMNS * (OPEN * 2 + 25)) as u64
    + (SUCC * 4) as u64
    + (4u64 << PRED_BITS)
    + (ROW_COLUMNS * ROW_COLUMNS * 2) as u64
    + (ROW_COLUMNS * 4) as u64;

/// The revision-12 BIFF family (revision 7's contexts + [`NEW`]).
#[derive(Debug, Clone)]
pub(crate) struct Biff12Contexts {
    inner: Biff7Contexts,
    /// The row of the cells in `cur` and their symbols by column (0: none).
    cur_row: u32,
    cur: Vec<u32>,
    /// The last symbol of column `c` after a symbol of column `d`, hashed.
    pred: Vec<u32>,
    /// Score of column `d` as a predictor of column `c`
    /// (`score[c * ROW_COLUMNS + d]`).
    score: Vec<u16>,
    /// The column the partners were chosen for, the partners (column,
    /// symbol; `u32::MAX`: none) and their predictions.
    for_col: u32,
    partners: [(u32, u32); 2],
    predicted: [u32; 2],
    /// Per column, the open successors: values one above a value of the
    /// column whose own successor has not been seen (oldest first, at most
    /// [`OPEN`]); the values seen, hashed with their column (a bit each).
    open: Vec<Vec<u16>>,
    /// Per column, whether its last two values were open successors.
    hits: Vec<u8>,
    seen: Vec<u8>,
    /// For the current byte: 0 (not a value byte), 1 (the value's low
    /// byte) or 2 with the low byte above bit 8 (its high byte); the
    /// successor input's table and its index for the current bit
    /// (`usize::MAX`: none).
    value_byte: u32,
    succ: AdaptiveProbs,
    index: usize,
}

/// The prediction table's index of column `c` after symbol `sym` in
/// column `d`.
fn pred_index(c: u32, d: u32, sym: u32) -> usize {
    (hash2(hash2(c, d | 0xB12 << 16), sym) >> (32 - PRED_BITS)) as usize
}

impl Biff12Contexts {
    /// Follows records from the payload of the BOF record (`ty`, `len`)
    /// starting at block position `start`.
    pub fn new(ty: u16, len: u16, start: usize) -> Self {
        Biff12Contexts {
            inner: Biff7Contexts::new(ty, len, start),
            cur_row: u32::MAX,
            cur: vec![0; ROW_COLUMNS],
            pred: vec![0; 1 << PRED_BITS],
            score: vec![0; ROW_COLUMNS * ROW_COLUMNS],
            for_col: u32::MAX,
            partners: [(u32::MAX, 0); 2],
            predicted: [0; 2],
            open: vec![Vec::new(); ROW_COLUMNS],
            hits: vec![0; ROW_COLUMNS],
            seen: vec![0; 1 << (SEEN_BITS - 3)],
            value_byte: 0,
            succ: AdaptiveProbs::new(SUCC, 1023),
            index: usize::MAX,
        }
    }

    /// Revision 7's record parser and cell state (read by revision 32's
    /// family).
    pub(super) fn cells(&self) -> &Biff7Contexts {
        &self.inner
    }

    /// The [`NEW`] contexts of the next byte.
    fn partner_hashes(&self, out: &mut [u32]) {
        let i = &self.inner;
        let off = i.offset.clamp(-4, 0xFFF) as u32;
        // Row and column fields are revision 7's business.
        let in_fields = i.cell && (0..4).contains(&i.offset);
        let base = hash2(
            hash2(i.so_far, off),
            self.for_col | u32::from(in_fields) << 16,
        );
        let [(d1, s1), (d2, s2)] = self.partners;
        let [p1, p2] = self.predicted;
        out[0] = hash2(hash2(base, d1 | 1 << 20), s1);
        out[1] = hash2(hash2(base, d1 | 2 << 20), hash2(hash2(s1, d2), s2));
        out[2] = hash2(base, p1 | 1);
        out[3] = hash2(hash2(base, p1 | 1), p2);
        out[4] = hash2(hash2(base, d2 | 5 << 20), s2);
        for (h, j) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0xB12 + j);
        }
    }

    /// Column `c`'s cell had value `v`: `v` is no longer open, `v + 1` is
    /// unless seen.
    fn succeed(&mut self, c: usize, v: u16) {
        let seen =
            |v: u16| (hash2(c as u32 | 0x5EE << 16, u32::from(v)) >> (32 - SEEN_BITS)) as usize;
        let s = seen(v);
        self.seen[s >> 3] |= 1 << (s & 7);
        let open = &mut self.open[c];
        self.hits[c] = (self.hits[c] << 1 | u8::from(open.contains(&v))) & 3;
        // `v` and the successors it skipped are no longer open.
        open.retain(|&o| o > v || v - o >= SKIPPED);
        let next = v.wrapping_add(1);
        let s = seen(next);
        if self.seen[s >> 3] & 1 << (s & 7) == 0 && !open.contains(&next) {
            if open.len() == OPEN {
                open.remove(0);
            }
            open.push(next);
        }
    }

    /// No partners (a row begins).
    fn clear_partners(&mut self) {
        self.for_col = u32::MAX;
        self.partners = [(u32::MAX, 0); 2];
        self.predicted = [0; 2];
    }

    /// Chooses the two best-scoring columns of the current row as the
    /// partners of column `c` (ties: the lower column).
    fn choose(&mut self, c: u32) {
        self.clear_partners();
        self.for_col = c;
        if c as usize >= ROW_COLUMNS {
            return;
        }
        let scores = &self.score[c as usize * ROW_COLUMNS..][..ROW_COLUMNS];
        let mut best = [(0u16, u32::MAX); 2];
        for (d, (&s, &v)) in scores.iter().zip(&self.cur).enumerate() {
            if v == 0 || d == c as usize || s == 0 {
                continue;
            }
            if s > best[0].0 {
                best = [(s, d as u32), best[0]];
            } else if s > best[1].0 {
                best[1] = (s, d as u32);
            }
        }
        for (k, &(_, d)) in best.iter().enumerate() {
            if d != u32::MAX {
                let sym = self.cur[d as usize];
                self.partners[k] = (d, sym);
                self.predicted[k] = self.pred[pred_index(c, d, sym)];
            }
        }
    }

    /// A cell of column `c` with symbol `sym` is complete: scores and
    /// predictions of every earlier column of the row learn it.
    fn learn(&mut self, c: u32, sym: u32) {
        if c as usize >= ROW_COLUMNS {
            return;
        }
        let scores = &mut self.score[c as usize * ROW_COLUMNS..][..ROW_COLUMNS];
        for (d, (s, &v)) in scores.iter_mut().zip(&self.cur).enumerate() {
            if v == 0 || d == c as usize {
                continue;
            }
            let i = pred_index(c, d as u32, v);
            let hit = self.pred[i] == sym;
            *s = *s - (*s >> 6) + if hit { 64 } else { 0 };
            self.pred[i] = sym;
        }
        self.cur[c as usize] = sym;
    }
}

impl ContextModel for Biff12Contexts {
    forward_family!(inner; selector_size, selector, apm_byte, visit_state, detected, positions_within);

    fn contexts(&self) -> usize {
        self.inner.contexts() + NEW
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let k = self.inner.contexts();
        self.inner.hashes(ctx, &mut out[..k]);
        self.partner_hashes(&mut out[k..]);
    }

    fn bit_inputs(&self) -> usize {
        self.inner.bit_inputs() + 1
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.inner.begin_byte(ctx);
        let i = &self.inner;
        // The value's low byte (the byte before the last) and high byte.
        self.value_byte = if i.cell && i.len >= 6 && i.offset >= 4 && i.col < ROW_COLUMNS as u32 {
            match i.len as i64 - i.offset {
                2 => 1,
                1 => 2 | (ctx.c4() & 0xFF) << 8,
                _ => 0,
            }
        } else {
            0
        };
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let n = self.inner.bit_inputs();
        self.inner.predict_bit(c0, i, &mut out[..n]);
        self.index = usize::MAX;
        out[n] = 0;
        if self.value_byte == 0 {
            return;
        }
        // Successors consistent with the bits so far, by their next bit.
        let high = self.value_byte & 2 != 0;
        let low = self.value_byte >> 8;
        let mut n01 = [0usize; 2];
        for &v in &self.open[self.inner.col as usize] {
            let v = u32::from(v);
            let b = if high {
                if v & 0xFF != low {
                    continue;
                }
                v >> 8
            } else {
                v & 0xFF
            };
            // `i`: the bit's position (7 first).
            if (b | 0x100) >> (i + 1) == c0 {
                n01[(b >> i & 1) as usize] += 1;
            }
        }
        if n01 == [0, 0] {
            return;
        }
        let hits = usize::from(self.hits[self.inner.col as usize]);
        let idx = ((hits << 6 | n01[0].min(7) << 3 | n01[1].min(7)) << 1 | usize::from(high)) << 3
            | i as usize;
        self.index = idx;
        out[n] = self.succ.stretched(idx);
    }

    fn update_bit(&mut self, bit: u32) {
        self.inner.update_bit(bit);
        if self.index != usize::MAX {
            self.succ.update(self.index, bit);
        }
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        let before = self.inner.offset;
        self.inner.observe(data, pos, byte);
        let i = &self.inner;
        if !i.cell {
            return;
        }
        let (row, col, offset) = (i.row, i.col, i.offset);
        let (last_row, last_col) = (i.last_row, i.last_col);
        if (before == 1 || before == 3) && row != self.cur_row {
            // The first cell of another row.
            self.cur_row = row;
            self.cur.fill(0);
            self.clear_partners();
        }
        if before == 3 && col != self.for_col {
            self.choose(col);
        } else if before >= 0 && offset == -4 {
            // The cell is complete: learn it, then choose the partners of
            // the expected next column (none in another row).
            let sym = self.inner.column_last(last_col);
            self.learn(last_col, sym);
            if self.inner.len >= 6 && (last_col as usize) < ROW_COLUMNS {
                let v = u16::from_le_bytes([data[pos - 1], byte]);
                self.succeed(last_col as usize, v);
            }
            let (erow, ecol) = self.inner.expected();
            if erow == last_row {
                self.choose(ecol);
            } else {
                self.clear_partners();
            }
        }
    }
}
