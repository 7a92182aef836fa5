//! Bi-level image contexts of CM revision 10 (doc/FORMAT.md 4.21.3): the
//! revision-7 bi-level family ([`Bilevel7Contexts`], unchanged and first)
//! plus [`TEMPLATES`] more per-pixel contexts (wider three-row templates, a
//! five-row one, a long left run of pixels, exact runs, a tall column),
//! each a table of adaptive probabilities read slow and fast; a second
//! mixer over the revision-7 family's per-bit inputs and the new tables,
//! its weight sets chosen by the twelve nearest pixels, by the runs and by
//! the bit position with the pixels above; and two APMs on that mixer's
//! output, keyed by eighteen nearest pixels and by the runs. Its two
//! outputs (the mix, the APMs' average) follow the revision-7 family's.

use super::bilevel7::{Bilevel7Contexts, q, span, transitions};
use super::forward_family;
use super::{ByteCtx, ContextModel, hash2};
use crate::apm::Apm;
use crate::mixer2::Mixer2;
use crate::prim::AdaptiveProbs;

/// Count limit of the fast-adapting tables.
const FAST_LIMIT: u32 = 4;
/// Index bits of each new table.
const TABLE_BITS: u32 = 20;
/// Rows above kept as windows.
const ROWS: usize = 5;
/// The new per-pixel contexts.
const TEMPLATES: usize = 6;
/// Per-bit inputs of the revision-7 family.
const INNER: usize = 14;
/// Inputs of the second mixer: the revision-7 family's, the new tables'
/// (slow and fast), a bias.
const MIX_INPUTS: usize = INNER + 2 * TEMPLATES + 1;
/// Per-bit inputs after the revision-7 family's: the second mixer and its
/// APM.
const OUTPUTS: usize = 2;
/// log2 of the APM's contexts.
const APM_BITS: u32 = 18;
/// The second mixer's starting first-layer weight (16384 = 1.0).
const INITIAL_WEIGHT: i16 = 1000;
/// log2 of the runs APM's contexts.
const RUNS_APM_BITS: u32 = 17;
/// The second mixer's weight sets per selector.
const SETS: [usize; 3] = [1 << 12, 8 * 8 * 8, 8 * 64];

/// Bytes the family allocates beyond the revision-7 family's.
pub(crate) const MEMORY: u64 = 2 * TEMPLATES as u64 * (4 << TABLE_BITS)
    + ((1 << 12) + 8 * 8 * 8 + 8 * 64) * 32 * 2
    + ((1 << APM_BITS) + (1 << RUNS_APM_BITS)) * 33 * 2;

/// The revision-10 bi-level family.
#[derive(Debug, Clone)]
pub(crate) struct Bilevel10Contexts {
    inner: Bilevel7Contexts,
    width: usize,
    /// Rows above as in the revision-7 family: bytes `above - 3 ..= above
    /// + 3` as 56 bits; the pixel straight above pixel `7 - i` of the byte
    /// is bit `24 + i`.
    rows: [u64; ROWS],
    /// The last 7 bytes of the stream, the last lowest.
    left: u64,
    tables: Vec<AdaptiveProbs>,
    fast: Vec<AdaptiveProbs>,
    index: [usize; TEMPLATES],
    mixer: Mixer2,
    apm: Apm,
    runs_apm: Apm,
}

impl Bilevel10Contexts {
    /// The family for rows of `width` bytes.
    pub fn new(width: usize) -> Self {
        let mut mixer = Mixer2::new(MIX_INPUTS, &SETS, 1, 10, 2);
        // Start near an average of the inputs, not their sum.
        mixer.set_initial_weights(INITIAL_WEIGHT);
        Bilevel10Contexts {
            inner: Bilevel7Contexts::new(width),
            width,
            rows: [0; ROWS],
            left: 0,
            tables: (0..TEMPLATES)
                .map(|_| AdaptiveProbs::new(1 << TABLE_BITS, 255))
                .collect(),
            fast: (0..TEMPLATES)
                .map(|_| AdaptiveProbs::new(1 << TABLE_BITS, FAST_LIMIT))
                .collect(),
            index: [0; TEMPLATES],
            mixer,
            apm: Apm::new(1 << APM_BITS, 7),
            runs_apm: Apm::new(1 << RUNS_APM_BITS, 7),
        }
    }
}

impl ContextModel for Bilevel10Contexts {
    forward_family!(inner; contexts, hashes, selector_size, selector, apm_byte, observe);

    fn bit_inputs(&self) -> usize {
        INNER + OUTPUTS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.inner.begin_byte(ctx);
        for (k, r) in self.rows.iter_mut().enumerate() {
            *r = Bilevel7Contexts::row(ctx, ctx.pos.checked_sub((k + 1) * self.width));
        }
        self.left = u64::from(ctx.c8() & 0xFF_FFFF) << 32 | u64::from(ctx.c4());
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let (first, mine) = out.split_at_mut(INNER);
        self.inner.predict_bit(c0, i, first);
        let done = 7 - i;
        let left = self.left << done | u64::from(c0 ^ (1 << done));
        let b = 24 + i;
        let [r1, r2, r3, r4, r5] = self.rows;
        let l = |n: u32| left & ((1 << n) - 1);
        let colour = (left & 1) as u32;
        let lrun = if colour == 1 { !left } else { left }
            .trailing_zeros()
            .min(63);
        let (rn1, rp1) = transitions(r1, b);
        let (rn2, rp2) = transitions(r2, b);
        let up = ((r1 >> b) & 1) as u32;
        let ctxs: [(u32, u32); TEMPLATES] = [
            // Three rows, wide.
            (
                (l(12) | span(r1, b, 6) << 12) as u32,
                (span(r2, b, 5) | span(r3, b, 3) << 11) as u32,
            ),
            // Five rows, narrow, with the nearest left pixels.
            (
                (l(6) | span(r1, b, 2) << 6 | span(r2, b, 2) << 11) as u32,
                (span(r3, b, 2) | span(r4, b, 2) << 5 | span(r5, b, 2) << 10) as u32,
            ),
            // A long left run of pixels with the row above.
            (
                l(20) as u32,
                span(r1, b, 4) as u32 | (span(r2, b, 1) as u32) << 9,
            ),
            // Exact runs: the left run and the changes in two rows above.
            (
                lrun | colour << 6 | up << 7 | rn1 << 8 | rp1 << 13 | rn2 << 18 | rp2 << 23,
                (l(3) | span(r1, b, 1) << 3) as u32,
            ),
            // Two rows, very wide.
            (
                (l(8) | span(r1, b, 8) << 8) as u32,
                (span(r2, b, 4) | span(r3, b, 2) << 9) as u32,
            ),
            // A tall column of five rows, three wide.
            (
                (l(2) | span(r1, b, 1) << 2 | span(r2, b, 1) << 5 | span(r3, b, 1) << 8) as u32,
                (span(r4, b, 1) | span(r5, b, 1) << 3) as u32,
            ),
        ];
        for (t, &(a, c)) in ctxs.iter().enumerate() {
            self.index[t] = (hash2(a, c ^ (t as u32) << 28) >> (32 - TABLE_BITS)) as usize;
        }
        for (j, &x) in first.iter().enumerate() {
            self.mixer.set(j, x);
        }
        for (t, &idx) in self.index.iter().enumerate() {
            self.mixer.set(INNER + t, self.tables[t].stretched(idx));
            self.mixer
                .set(INNER + TEMPLATES + t, self.fast[t].stretched(idx));
        }
        self.mixer.set(MIX_INPUTS - 1, 256);
        let near = (l(4) | span(r1, b, 2) << 4 | span(r2, b, 1) << 9) as usize;
        self.mixer.select(0, near);
        self.mixer
            .select(1, (q(lrun) << 6 | q(rn1) << 3 | q(rp1)) as usize);
        self.mixer.select(
            2,
            (i << 6) as usize | (span(r1, b, 2) << 1 | span(r2, b, 0)) as usize,
        );
        self.mixer.select_final(0);
        let d = self.mixer.mix();
        mine[0] = d;
        let apm_ctx = (l(6) | span(r1, b, 3) << 6 | span(r2, b, 2) << 13) as usize;
        let p = self
            .apm
            .refine_stretched(d, apm_ctx & ((1 << APM_BITS) - 1));
        let runs = q(lrun) | q(rn1) << 3 | q(rp1) << 6 | q(rn2) << 9 | q(rp2) << 12;
        let pr = self
            .runs_apm
            .refine_stretched(d, (runs | up << 15 | colour << 16) as usize);
        mine[1] = crate::stretch(((p + pr) / 2).clamp(1, 65535));
    }

    fn update_bit(&mut self, bit: u32) {
        self.inner.update_bit(bit);
        for (t, &idx) in self.index.iter().enumerate() {
            self.tables[t].update(idx, bit);
            self.fast[t].update(idx, bit);
        }
        self.mixer.update(bit);
        self.apm.update(bit);
        self.runs_apm.update(bit);
    }
}
