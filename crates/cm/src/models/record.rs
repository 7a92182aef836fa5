//! Record contexts: for data made of fixed-length records (tables, arrays
//! of structures), the bytes one and two records above, with the record
//! length detected from the data.

use super::{ByteCtx, ContextModel, hash2};

/// A stream's record-length detector and how long the data has repeated
/// the records above.
#[derive(Debug, Clone)]
pub(crate) struct RecordState {
    /// Last position (1-based, relative to the stream start) of each byte
    /// value, and the distance to the one before.
    last_pos: Vec<u32>,
    last_dist: Vec<u32>,
    cand: u32,
    count: u32,
    /// The detected record length (0: none).
    pub len: u32,
    /// Bytes in a row equal to the byte one and two records back.
    pub run: [u32; 2],
}

impl Default for RecordState {
    fn default() -> Self {
        RecordState {
            last_pos: vec![0; 256],
            last_dist: vec![0; 256],
            cand: 0,
            count: 0,
            len: 0,
            run: [0; 2],
        }
    }
}

impl RecordState {
    /// Walks the detector's state (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        v.u32s(&mut self.last_pos);
        v.u32s(&mut self.last_dist);
        crate::snapshot::visit_u32(v, &mut self.cand);
        crate::snapshot::visit_u32(v, &mut self.count);
        crate::snapshot::visit_u32(v, &mut self.len);
        v.u32s(&mut self.run);
    }

    /// Whether the positions and counts fit in `history` bytes.
    pub(crate) fn within(&self, history: usize) -> bool {
        let h = history as u64 + 1;
        self.last_pos.iter().all(|&p| u64::from(p) <= h)
            && [self.count, self.run[0], self.run[1]]
                .iter()
                .all(|&c| u64::from(c) <= h)
    }

    /// Updates the runs for `byte` just coded at block position `pos` of a
    /// stream starting at `start` (before [`observe`](Self::observe)).
    #[inline]
    pub fn update_runs(&mut self, data: &[u8], start: usize, pos: usize, byte: u8) {
        let r = self.len as usize;
        for k in 0..2 {
            let back = (k + 1) * r;
            self.run[k] = if r > 0 && pos >= start + back && data[pos - back] == byte {
                self.run[k] + 1
            } else {
                0
            };
        }
    }

    /// Sees `byte` at block position `pos` of a stream starting at `start`.
    /// A distance seen twice in a row for the same byte value votes for a
    /// record length; a steady vote wins.
    #[inline]
    pub fn observe(&mut self, byte: u8, start: usize, pos: usize) {
        let rel = (pos - start + 1) as u32;
        let b = usize::from(byte);
        if self.last_pos[b] != 0 {
            let d = rel - self.last_pos[b];
            if d == self.last_dist[b] && d > 1 {
                if d == self.cand {
                    self.count += 1;
                    if self.count >= 8 {
                        self.len = d;
                    }
                } else if self.count > 0 {
                    self.count -= 1;
                } else {
                    self.cand = d;
                }
            }
            self.last_dist[b] = d;
        }
        self.last_pos[b] = rel;
    }
}

/// The record family (four contexts).
#[derive(Debug, Clone)]
pub(crate) struct RecordContexts;

impl ContextModel for RecordContexts {
    fn contexts(&self) -> usize {
        4
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let (st, data, pos) = (ctx.st, ctx.data, ctx.pos);
        let rec = &st.record;
        let r = rec.len as usize;
        let at = |back: usize| -> u32 {
            if r > 0 && pos >= st.start + back {
                u32::from(data[pos - back])
            } else {
                0x100
            }
        };
        // How long the data has repeated the record(s) above: a record that
        // began as a copy tends to stay one.
        let run = |k: usize| rec.run[k].min(12);
        let c1 = ctx.c4() & 0xFF;
        let r32 = r as u32;
        out[0] = hash2(at(r), r32 << 9 | run(0) << 4);
        out[1] = hash2(hash2(at(r), at(2 * r)), r32 | run(1) << 24);
        out[2] = hash2(hash2(at(r), c1), r32 | 1 << 31);
        // The current record's bytes so far, with the column: records that
        // start alike end alike.
        let col = if r > 0 { (pos - st.start) % r } else { 0 };
        let mut h = hash2(col as u32, r32 | 1 << 30);
        if r > 0 && r <= 64 {
            for &b in &data[pos - col..pos] {
                h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
            }
        }
        out[3] = h;
        for (h, j) in out.iter_mut().zip(0u32..) {
            *h = hash2(*h, 0x400 + j);
        }
    }
}
