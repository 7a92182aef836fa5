//! Spreadsheet column histograms and expected bytes of CM revision 32
//! (doc/FORMAT.md 4.43.3): the revision-12 family ([`Biff12Contexts`],
//! unchanged) plus per-bit inputs from how often each whole cell occurred
//! in the column being coded, and a last refinement of the model's
//! probability where the byte is all but known.
//!
//! A questionnaire's column holds a few answer codes with a skewed
//! distribution; the hashed contexts learn it bit by bit and drift with the
//! latest cells. This family keeps, per column, every distinct cell seen
//! (its record header and its payload after the row and column fields, as
//! one byte string: the cell's *string*) with a count. Each byte of the next
//! cell (its header, predicted for the expected column, and its payload
//! after the column field) is predicted from the strings of the column that
//! agree with the cell's bytes so far (the *candidates*): the counts of
//! those whose next bit is 0 and 1 give a frequency estimate, fed to the
//! mixer directly and through an adaptive table keyed by its ratio, its
//! weight and the position.
//!
//! The row and column fields of a cell in a full grid, and the bytes that
//! 15/16 of the candidates share, are all but certain, yet a mixer's output
//! cannot come closer to 0 or 1 than its learned rates allow. For those
//! bytes the family replaces the model's final probability, while the bits
//! so far agree with the *expected byte* (the expected cell's row or
//! column byte; the candidates' byte), by an adaptive probability keyed by
//! the field, a confidence bucket, the expected bit and the model's
//! probability in four buckets.
//!
//! Inputs, in order: [`INPUTS`] per-bit inputs after revision 12's
//! (the learned ratio, the frequency's stretch); no contexts are added.

use super::biff12::Biff12Contexts;
use super::forward_family;
use super::{ByteCtx, ContextModel};
use crate::logistic::stretch;
use crate::prim::AdaptiveProbs;

/// Columns that keep histograms.
const COLUMNS: usize = 512;
/// Bytes of a cell's string kept (header and payload from offset 4).
const KEEP: usize = 20;
/// Distinct strings kept per column.
const ENTRIES: usize = 512;
/// Per-bit inputs added to revision 12's.
const INPUTS: usize = 2;
/// Ratio buckets of the learned input (`n1 * 16 / n`, rounded: 0..=16).
const RATIOS: usize = 17;
/// Weight buckets of the learned input (`ilog2(n)`, at most 7).
const WEIGHTS: usize = 8;
/// Entries of the learned input's table: position in the string, weight,
/// ratio, bit position.
const TABLE: usize = KEEP * WEIGHTS * RATIOS * 8;

/// Weight of candidates (their counts' sum) from which the most counted
/// one's byte is expected, when it holds at least 15/16 of it.
const SURE_TOTAL: u64 = 16;
/// Field classes of the final refinement: string positions, then the
/// row and column fields' four bytes.
const CLASSES: usize = KEEP + 4;
/// Confidence buckets of the final refinement.
const CONFS: usize = 16;
/// Stretch buckets of the final refinement.
const LEVELS: usize = 4;
/// Entries of the final refinement's table: field class, confidence,
/// expected bit, stretch bucket of the model's probability.
const FINAL: usize = CLASSES * CONFS * 2 * LEVELS;

/// Bytes the family allocates on top of revision 12's: the strings and
/// counts of every column (at most), the candidate list and the table.
pub(crate) const MEMORY: u64 = (COLUMNS * ENTRIES * (KEEP + 4)) as u64
    + (ENTRIES * 4) as u64
    + (TABLE * 4) as u64
    + (FINAL * 4) as u64;

/// A distinct cell of a column.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The cell's string (header, then payload from offset 4), its length
    /// (at most [`KEEP`]) and how often it occurred.
    bytes: [u8; KEEP],
    len: u8,
    count: u32,
}

/// The revision-32 BIFF family (revision 12's contexts and inputs +
/// [`INPUTS`]).
#[derive(Debug, Clone)]
pub(crate) struct Biff32Contexts {
    inner: Biff12Contexts,
    /// The current record's string so far.
    cur: [u8; KEEP],
    /// Per column, its distinct strings.
    columns: Vec<Vec<Entry>>,
    /// For the current byte: the column predicted from (`usize::MAX`:
    /// none), the string position `k`, and the candidates (indices of the
    /// column's strings that agree with the record's bytes so far).
    col: usize,
    k: usize,
    cands: Vec<u32>,
    /// The learned input's table and its index for the current bit
    /// (`usize::MAX`: none).
    table: AdaptiveProbs,
    index: usize,
    /// The current byte's expected value (bit 8 set; 0: none), its field
    /// class and confidence bucket; how many cells in a row had the row
    /// and column fields expected; the final refinement's table and its
    /// context for the current bit (`usize::MAX`: none).
    exp: u32,
    class: usize,
    conf: usize,
    rc_hits: u32,
    rc_ok: bool,
    fin: AdaptiveProbs,
    fin_ctx: usize,
    fin_idx: usize,
}

impl Biff32Contexts {
    /// Follows records from the payload of the BOF record (`ty`, `len`)
    /// starting at block position `start`.
    pub fn new(ty: u16, len: u16, start: usize) -> Self {
        Biff32Contexts {
            inner: Biff12Contexts::new(ty, len, start),
            cur: [0; KEEP],
            columns: vec![Vec::new(); COLUMNS],
            col: usize::MAX,
            k: 0,
            cands: Vec::with_capacity(ENTRIES),
            table: AdaptiveProbs::new(TABLE, 1023),
            index: usize::MAX,
            exp: 0,
            class: 0,
            conf: 0,
            rc_hits: 0,
            rc_ok: true,
            fin: AdaptiveProbs::new(FINAL, 60),
            fin_ctx: usize::MAX,
            fin_idx: usize::MAX,
        }
    }

    /// Counts the string `s` in column `c`.
    fn count(&mut self, c: usize, s: &[u8]) {
        let list = &mut self.columns[c];
        let mut bytes = [0; KEEP];
        bytes[..s.len()].copy_from_slice(s);
        let len = s.len() as u8;
        if let Some(e) = list.iter_mut().find(|e| e.len == len && e.bytes == bytes) {
            e.count = e.count.saturating_add(1);
            return;
        }
        let e = Entry {
            bytes,
            len,
            count: 1,
        };
        if list.len() < ENTRIES {
            list.push(e);
        } else {
            // The first of the least counted gives way.
            let mut low = 0;
            for (j, x) in list.iter().enumerate() {
                if x.count < list[low].count {
                    low = j;
                }
            }
            list[low] = e;
        }
    }
}

impl ContextModel for Biff32Contexts {
    forward_family!(inner; contexts, hashes, selector_size, selector, apm_byte, visit_state, detected, positions_within);

    fn bit_inputs(&self) -> usize {
        self.inner.bit_inputs() + INPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.inner.begin_byte(ctx);
        let p = self.inner.cells();
        self.col = usize::MAX;
        self.cands.clear();
        self.exp = 0;
        if p.cell && (0..4).contains(&p.offset) {
            // The row and column fields: the expected cell's.
            let (erow, ecol) = p.expected();
            let f = if p.offset < 2 { erow } else { ecol };
            self.exp = 0x100 | (f >> (8 * (p.offset as u32 & 1)) & 0xFF);
            self.class = KEEP + p.offset as usize;
            self.conf = (32 - self.rc_hits.leading_zeros() as usize).min(CONFS - 1);
            return;
        }
        let (k, col) = if p.offset < 0 {
            ((p.offset + 4) as usize, p.expected().1)
        } else if p.cell && p.offset >= 4 {
            (p.offset as usize, p.col)
        } else {
            return;
        };
        if k >= KEEP || col as usize >= COLUMNS {
            return;
        }
        self.col = col as usize;
        self.k = k;
        let so_far = &self.cur[..k];
        for (j, e) in self.columns[col as usize].iter().enumerate() {
            // Header bytes and payload from offset 4 must agree.
            if usize::from(e.len) > k
                && e.bytes[..k.min(4)] == so_far[..k.min(4)]
                && (k <= 4 || e.bytes[4..k] == so_far[4..])
            {
                self.cands.push(j as u32);
            }
        }
        // The most counted candidate's byte (the first of equals).
        let list = &self.columns[col as usize];
        let (mut top, mut total) = (0u64, 0u64);
        for &j in &self.cands {
            let e = &list[j as usize];
            total += u64::from(e.count);
            if u64::from(e.count) > top {
                top = u64::from(e.count);
                self.exp = 0x100 | u32::from(e.bytes[k]);
            }
        }
        // The weight of the candidates with that byte; refined only where
        // they nearly all have it.
        let agree: u64 = self
            .cands
            .iter()
            .map(|&j| &list[j as usize])
            .filter(|e| 0x100 | u32::from(e.bytes[k]) == self.exp)
            .map(|e| u64::from(e.count))
            .sum();
        if total >= SURE_TOTAL && agree * 16 >= total * 15 {
            self.class = k;
            let share = ((agree * 7 + total / 2) / total) as usize;
            self.conf = share * 2 + 1;
        } else {
            self.exp = 0;
        }
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let n = self.inner.bit_inputs();
        self.inner.predict_bit(c0, i, &mut out[..n]);
        self.index = usize::MAX;
        self.fin_ctx = usize::MAX;
        if self.exp != 0 && (self.exp >> (i + 1)) == c0 {
            let bit = (self.exp >> i & 1) as usize;
            self.fin_ctx = ((self.class * CONFS + self.conf) * 2 + bit) * LEVELS;
        }
        out[n] = 0;
        out[n + 1] = 0;
        if self.col == usize::MAX || self.cands.is_empty() {
            return;
        }
        let list = &self.columns[self.col];
        let mut n01 = [0u64; 2];
        for &j in &self.cands {
            let e = &list[j as usize];
            let b = u32::from(e.bytes[self.k]);
            // `i`: the bit's position (7 first).
            if (b | 0x100) >> (i + 1) == c0 {
                n01[(b >> i & 1) as usize] += u64::from(e.count);
            }
        }
        let total = n01[0] + n01[1];
        if total == 0 {
            return;
        }
        let ratio = ((n01[1] * 32 + total) / (2 * total)) as usize;
        let weight = (63 - total.leading_zeros() as usize).min(WEIGHTS - 1);
        let idx = ((self.k * WEIGHTS + weight) * RATIOS + ratio) * 8 + i as usize;
        self.index = idx;
        out[n] = self.table.stretched(idx);
        let p = ((2 * n01[1] + 1) * 65536 / (2 * total + 2)) as u32;
        out[n + 1] = stretch(p.clamp(1, 65535));
    }

    fn update_bit(&mut self, bit: u32) {
        self.inner.update_bit(bit);
        if self.index != usize::MAX {
            self.table.update(self.index, bit);
        }
        if self.fin_idx != usize::MAX {
            self.fin.update(self.fin_idx, bit);
            self.fin_idx = usize::MAX;
        }
    }

    fn refine_final(&mut self, p: u32, _c0: u32) -> u32 {
        if self.fin_ctx == usize::MAX {
            return p;
        }
        // The model's probability in one of LEVELS stretch buckets.
        let s = stretch(p.clamp(1, 65535)) + 2048;
        let level = (s as usize * LEVELS) >> 12;
        self.fin_idx = self.fin_ctx + level.min(LEVELS - 1);
        self.fin.p(self.fin_idx).clamp(1, 65535)
    }

    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        let before = self.inner.cells().offset;
        if before < 0 {
            self.cur[(before + 4) as usize] = byte;
        } else if (4..KEEP as i64).contains(&before) {
            self.cur[before as usize] = byte;
        }
        let cells = self.inner.cells();
        if cells.cell && (0..4).contains(&before) && self.exp != 0 {
            self.rc_ok &= u32::from(byte) == self.exp & 0xFF;
        }
        self.inner.observe(data, pos, byte);
        let p = self.inner.cells();
        if before == 3 && p.cell {
            self.rc_hits = if self.rc_ok {
                self.rc_hits.saturating_add(1)
            } else {
                0
            };
            self.rc_ok = true;
        }
        if p.offset == -4 && before >= 0 && p.cell && (p.col as usize) < COLUMNS {
            // A cell is complete: count its string.
            let len = (p.len as usize).min(KEEP);
            let (c, s) = (p.col as usize, self.cur);
            self.count(c, &s[..len]);
        }
    }
}
