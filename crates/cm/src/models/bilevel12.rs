//! Bi-level image contexts of CM revision 12 (doc/FORMAT.md 4.23.6): the
//! revision-10 bi-level family ([`Bilevel10Contexts`], unchanged) plus
//! [`TEMPLATES`] more per-pixel contexts (the lengths of the last two runs
//! of the row and the next two changes in the row above, a diamond over
//! four rows, a column eight rows tall, sparse far pixels, the run shape
//! above, and three templates of the earlier families again), each read
//! three ways: a slow and a fast table of adaptive probabilities and a
//! bit history through a state map; a third mixer over the revision-10
//! family's per-bit inputs and all of those, with weight sets chosen by
//! other contexts than the earlier mixers'; two APMs on its output keyed
//! by the widest template's entry and by the runs. The family gives the
//! model's mixer the revision-7 family's first twelve inputs, the
//! revision-10 family's two outputs and its own two, and has the last word
//! on the model's final probability ([`ContextModel::refine_final`]): a
//! small mixer of that probability, its own two outputs and the
//! revision-10 family's two, averaged with that probability.

use super::bilevel7::{Bilevel7Contexts, q, span, transitions};
use super::bilevel10::Bilevel10Contexts;
use super::forward_family;
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::Apm;
use crate::mixer2::Mixer2;
use crate::prim::{AdaptiveProbs, StateMap};
use crate::state::STATES;

/// Count limit of the fast-adapting tables.
const FAST_LIMIT: u32 = 5;
/// Index bits of each new table.
const TABLE_BITS: u32 = 20;
/// Rows above kept as windows.
const ROWS: usize = 8;
/// The new per-pixel contexts.
const TEMPLATES: usize = 8;
/// The widest template, whose entry keys a selector and an APM.
const W: usize = TEMPLATES - 1;
/// Per-bit inputs of the revision-10 family.
const INNER: usize = 16;
/// Of those, the ones passed on to the model's mixer: the revision-7
/// family's first 12 (its mixer and APM, 12 and 13, only feed ours) and
/// the revision-10 family's two.
const PASSED: usize = 14;
/// Inputs of the third mixer: the revision-10 family's, the new tables'
/// (slow, fast and through the bit history), a bias.
const MIX_INPUTS: usize = INNER + 3 * TEMPLATES + 1;
/// Count limit of the bit-history states' maps.
const STATE_LIMIT: u32 = 1023;
/// The third mixer's weight sets per selector.
const SETS: [usize; 3] = [1 << 10, 8 * 8 * 8, 32 * 8];
/// The third mixer's starting first-layer weight (16384 = 1.0) and rate.
const INITIAL_WEIGHT: i16 = 1000;
const RATE: i32 = 14;
/// The final stage's weight sets per selector, starting weight and rate.
const LAST_SETS: [usize; 2] = [256, 64];
const LAST_WEIGHT: i16 = 5461;
const LAST_RATE: i32 = 12;
/// log2 of the APMs' contexts.
const SSE_BITS: u32 = 16;

/// Bytes the family allocates beyond the revision-10 family's.
pub(crate) const MEMORY: u64 = 9 * TEMPLATES as u64 * (1 << TABLE_BITS)
    + TEMPLATES as u64 * 256 * 4
    + ((1 << 10) + 8 * 8 * 8 + 32 * 8) * 64 * 2
    + (256 + 64) * 32 * 2
    + 2 * (1 << SSE_BITS) * 33 * 2
    + (ROWS * 8) as u64;

/// The revision-12 bi-level family.
#[derive(Debug, Clone)]
pub(crate) struct Bilevel12Contexts {
    inner: Bilevel10Contexts,
    width: usize,
    /// Rows above as in the revision-7 family (56 bits around the byte).
    rows: [u64; ROWS],
    /// The last 7 bytes of the stream, the last lowest.
    left: u64,
    tables: Vec<AdaptiveProbs>,
    fast: Vec<AdaptiveProbs>,
    /// Per template entry its bit history (a state of [`STATES`]), and
    /// per template the map of states.
    states: Vec<Vec<u8>>,
    maps: Vec<StateMap>,
    state: [u8; TEMPLATES],
    index: [usize; TEMPLATES],
    mixer: Mixer2,
    sse: Apm,
    runs_sse: Apm,
    /// The final stage: a mixer of the model's final probability, the
    /// family's two outputs and the revision-10 family's two; those four
    /// for this bit, and whether the stage ran for it.
    last: Mixer2,
    own: [i32; 4],
    pending: bool,
}

impl Bilevel12Contexts {
    /// The family for rows of `width` bytes.
    pub fn new(width: usize) -> Self {
        let mut mixer = Mixer2::new(MIX_INPUTS, &SETS, 1, RATE, 2);
        mixer.set_initial_weights(INITIAL_WEIGHT);
        let mut last = Mixer2::new(6, &LAST_SETS, 1, LAST_RATE, 2);
        last.set_initial_weights(LAST_WEIGHT);
        Bilevel12Contexts {
            inner: Bilevel10Contexts::new(width),
            width,
            rows: [0; ROWS],
            left: 0,
            tables: (0..TEMPLATES)
                .map(|_| AdaptiveProbs::new(1 << TABLE_BITS, 255))
                .collect(),
            fast: (0..TEMPLATES)
                .map(|_| AdaptiveProbs::new(1 << TABLE_BITS, FAST_LIMIT))
                .collect(),
            states: vec![vec![0; 1 << TABLE_BITS]; TEMPLATES],
            maps: vec![StateMap::default(); TEMPLATES],
            state: [0; TEMPLATES],
            index: [0; TEMPLATES],
            mixer,
            sse: Apm::new(1 << SSE_BITS, 7),
            runs_sse: Apm::new(1 << SSE_BITS, 7),
            last,
            own: [0; 4],
            pending: false,
        }
    }
}

/// Length of the run of `x`'s lowest bit's colour from bit 0 up (at most
/// 63).
#[inline]
fn run(x: u64) -> u32 {
    if x & 1 == 1 { !x } else { x }.trailing_zeros().min(63)
}

/// Distances from bit `b` of window `r` to the first and second change of
/// colour to its right (lower bits), each capped at 31 (the second is at
/// least the first).
#[inline]
fn next_two(r: u64, b: u32) -> (u32, u32) {
    // Bit 63 of `below` is the pixel; the lower bits are its right side.
    let below = r << (63 - b);
    let first = if below >> 63 == 1 { !below } else { below }
        .leading_zeros()
        .min(31);
    let rest = below << first;
    let second = if rest >> 63 == 1 { !rest } else { rest }
        .leading_zeros()
        .min(31);
    (first, (first + second).min(31))
}

impl ContextModel for Bilevel12Contexts {
    forward_family!(inner; contexts, hashes, selector_size, selector, apm_byte, observe);

    fn bit_inputs(&self) -> usize {
        PASSED + 2
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.inner.begin_byte(ctx);
        for (k, r) in self.rows.iter_mut().enumerate() {
            *r = Bilevel7Contexts::row(ctx, ctx.pos.checked_sub((k + 1) * self.width));
        }
        self.left = u64::from(ctx.c8() & 0xFF_FFFF) << 32 | u64::from(ctx.c4());
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let mut all = [0i32; INNER];
        self.inner.predict_bit(c0, i, &mut all);
        out[..12].copy_from_slice(&all[..12]);
        out[12..PASSED].copy_from_slice(&all[14..INNER]);
        let done = 7 - i;
        let left = self.left << done | u64::from(c0 ^ (1 << done));
        let b = 24 + i;
        let r = self.rows;
        let l = |n: u32| left & ((1 << n) - 1);
        let px = |k: usize, d: i32| ((r[k] >> (b as i32 + d)) & 1) as u32;
        let colour = (left & 1) as u32;
        let lrun = run(left);
        // The run before the current one in this row.
        let prun = if lrun < 56 { run(left >> lrun) } else { 63 };
        let (n1, n2) = next_two(r[0], b);
        let (rn1, rp1) = transitions(r[0], b);
        let up = px(0, 0);
        let mut column = 0u32;
        for k in 0..ROWS {
            column |= px(k, 0) << k;
        }
        let ctxs: [(u32, u32); TEMPLATES] = [
            // Runs: the last two of this row, the next two changes above.
            (
                lrun.min(31) | prun.min(31) << 5 | colour << 10 | up << 11 | n1 << 12 | n2 << 17,
                rp1 | ((l(2) | span(r[0], b, 1) << 2) as u32) << 5,
            ),
            // A diamond over four rows.
            (
                (l(5) | span(r[0], b, 4) << 5 | span(r[1], b, 3) << 14) as u32,
                (span(r[2], b, 2) | span(r[3], b, 1) << 5) as u32,
            ),
            // A column eight rows tall, with the nearest pixels.
            (
                column | ((l(3) | span(r[0], b, 1) << 3) as u32) << 8,
                (px(0, -2) | px(0, 2) << 1 | px(1, -1) << 2 | px(1, 1) << 3) | 1 << 8,
            ),
            // Sparse far pixels: every other pixel, two rows, wide.
            (
                (l(2) | ((left >> 2) & 0x5555) << 2 | span(r[0], b, 1) << 18) as u32,
                ((r[0] >> (b - 12)) & 0x0155_5555) as u32 ^ (span(r[1], b, 2) as u32) << 26,
            ),
            // The row above's run shape with the left pixels.
            (
                (l(8) | u64::from(rn1.min(15)) << 8 | u64::from(rp1.min(15)) << 12) as u32,
                n2 | up << 5 | (span(r[1], b, 1) as u32) << 6 | 2 << 12,
            ),
            // JBIG2-like 16 pixels (the revision-7 family's first).
            (
                (l(4) | span(r[0], b, 2) << 4 | span(r[1], b, 1) << 9) as u32,
                px(0, 3) | px(0, -3) << 1 | px(1, 2) << 2 | px(1, -2) << 3 | 4 << 12,
            ),
            // Three rows, wide (the revision-10 family's first).
            (
                (l(12) | span(r[0], b, 6) << 12) as u32,
                (span(r[1], b, 5) | span(r[2], b, 3) << 11) as u32 | 5 << 28,
            ),
            // Three rows, tall and wide: 7, 11, 9 and 5 pixels.
            (
                (l(7) | span(r[0], b, 5) << 7) as u32,
                (span(r[1], b, 4) | span(r[2], b, 2) << 9) as u32 | 3 << 28,
            ),
        ];
        for (t, &(a, c)) in ctxs.iter().enumerate() {
            self.index[t] = (hash2(a, c ^ (t as u32 + 8) << 27) >> (32 - TABLE_BITS)) as usize;
        }
        for (j, &x) in all.iter().enumerate() {
            self.mixer.set(j, x);
        }
        for (t, &idx) in self.index.iter().enumerate() {
            self.mixer.set(INNER + t, self.tables[t].stretched(idx));
            self.mixer
                .set(INNER + TEMPLATES + t, self.fast[t].stretched(idx));
            let st = self.states[t][idx];
            self.state[t] = st;
            self.mixer
                .set(INNER + 2 * TEMPLATES + t, self.maps[t].stretched(st));
        }
        self.mixer.set(MIX_INPUTS - 1, 256);
        self.mixer.select(
            0,
            (l(3) | span(r[0], b, 1) << 3 | span(r[1], b, 1) << 6 | u64::from(px(2, 0)) << 9)
                as usize,
        );
        self.mixer
            .select(1, (q(prun) << 6 | q(n1) << 3 | q(n2 - n1)) as usize);
        let w = self.index[W];
        let count = self.tables[W].count(w).min(31) as usize;
        self.mixer.select(2, count << 3 | i as usize);
        self.mixer.select_final(0);
        let d = self.mixer.mix();
        out[PASSED] = d;
        // APMs keyed by the widest template's probability and count with
        // the nearest pixels, and by the runs.
        let pq = (self.tables[W].p(w) >> 11) as usize;
        let cq = q(self.tables[W].count(w).min(63)) as usize;
        let near = (l(3) | span(r[0], b, 1) << 3 | span(r[1], b, 0) << 6) as usize;
        let p1 = self.sse.refine_stretched(d, pq << 10 | cq << 7 | near);
        let runs = q(lrun) | q(prun) << 3 | q(n1) << 6 | q(rp1) << 9 | up << 12 | colour << 13;
        let p2 = self.runs_sse.refine_stretched(d, runs as usize);
        out[PASSED + 1] = crate::stretch(((p1 + p2) / 2).clamp(1, 65535));
        self.own = [out[PASSED], out[PASSED + 1], all[14], all[15]];
        self.last.select(0, near << 1);
        self.last.select(1, (q(lrun) << 3 | q(n1)) as usize);
        self.last.select_final(0);
    }

    fn update_bit(&mut self, bit: u32) {
        self.inner.update_bit(bit);
        for (t, &idx) in self.index.iter().enumerate() {
            self.tables[t].update(idx, bit);
            self.fast[t].update(idx, bit);
            let st = self.state[t];
            self.maps[t].update(st, bit, STATE_LIMIT);
            self.states[t][idx] = STATES.next(st, bit);
        }
        self.mixer.update(bit);
        self.sse.update(bit);
        self.runs_sse.update(bit);
        if self.pending {
            self.last.update(bit);
            self.pending = false;
        }
    }

    fn refine_final(&mut self, p: u32, _c0: u32) -> u32 {
        self.last.set(0, crate::stretch(p.clamp(1, 65535)));
        self.last.set(1, self.own[0]);
        self.last.set(2, self.own[1]);
        self.last.set(3, self.own[2]);
        self.last.set(4, self.own[3]);
        self.last.set(5, 256);
        self.pending = true;
        let d = self.last.mix();
        ((crate::squash(d) + p) / 2).clamp(1, 65535)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_next_two_changes() {
        // Bits 8 to 10 are 1, bits 3 to 7 are 0, bit 2 is 1.
        let r = 0b111_0000_0100u64;
        assert_eq!(next_two(r, 10), (3, 8));
        assert_eq!(next_two(0, 30), (31, 31));
        assert_eq!(run(0b0111), 3);
        assert_eq!(run(0b1000), 3);
    }
}
