//! The JPEG family of CM revision 36 (doc/FORMAT.md 4.47.4): revision 8's
//! family (`jpeg7.rs`, unchanged, its four outputs kept) plus contexts
//! from more neighbours, a mixer layer of its own over revision 8's
//! outputs and the new contexts with an APM keyed by the neighbours'
//! prediction, mixer selectors offered to the model, and two APMs on the
//! model's final probability.
//!
//! Everything new is declared here. When a code or a coefficient's extra
//! bits start (revision 5's `codes` count changes),
//! [`Jpeg36Contexts::contexts36`] computes [`CONTEXTS`] contexts from:
//! the co-located coefficient of the blocks above (`A`), left (`L`),
//! above-right (`R`: the column's stored block when the current block
//! starts, before it is overwritten) and above-left (`D`: the block that
//! was above the left neighbour when that one started), as a signed
//! prediction (at the DC the gradient `median(A, L, A + L - D)`) and a
//! magnitude; the neighbours' energy (sum of `|coef|`) before and from the
//! zigzag index on against this block's so far; the neighbours' last
//! nonzero index. Each context is hashed with the bit's position in the
//! code (revision 5's `bit_state`) into a table of adaptive probabilities
//! and bit histories; [`ContextModel::predict_bit`] writes revision 8's
//! four outputs, then this family's final mix and its APM's refinement.
//! The model's mixer gets three selectors from the family
//! (`kind_selector*`), and [`ContextModel::refine_final`] averages the
//! model's probability with two APMs keyed by the code state.

use super::jpeg::{Mode, UNZIGZAG, ZIGZAG, bucket};
use super::jpeg7::{Jpeg7Contexts, Slots, fine, mixer_sets};
use super::{ContextModel, forward_family, hash2};
use crate::apm::Apm;
use crate::logistic::stretch;
use crate::prim::Mixer;

/// Bits of the new contexts' table index.
const TABLE_BITS: u32 = 22;

/// New contexts per bit.
pub(crate) const CONTEXTS: usize = 7;

/// Revision 8's family's outputs per bit.
const INNER: usize = 4;

/// Inputs of the new mixers: revision 8's outputs, each new context's
/// adaptive probability and bit history's probability, and a bias.
const MIX_INPUTS: usize = INNER + 2 * CONTEXTS + 1;

/// Weight sets of the new mixers: (chroma, mode, zigzag index), (mode,
/// chroma, code prefix or extra bits), (mode, neighbours' magnitude,
/// nonzeros so far).
const MIX_SETS: [usize; 3] = [2 * 4 * 64, 4 * 2 * 512, 4 * 16 * 8];

/// Inputs of the final mixer: the new mixers and a bias.
const FINAL_INPUTS: usize = MIX_SETS.len() + 1;

/// Contexts of the APM.
const APM_BITS: u32 = 16;

/// Mixer inputs per bit: revision 8's, the final mix and the APM's.
const BIT_INPUTS: usize = INNER + 2;

/// Weight sets of the mixer selectors the family offers the model
/// (`kind_selector`, `kind_selector2`, `kind_selectors_more`): the third
/// and the second new mixers' selectors, then (mode, chroma, the signed
/// prediction); outside a scan each is the partial byte after those.
const SELECTORS: [usize; 3] = [MIX_SETS[2] + 256, MIX_SETS[1] + 256, 4 * 2 * 64 + 256];

/// The selectors past the first two.
const MORE: [usize; 1] = [SELECTORS[2]];

/// Count limit of a table entry's adaptation rate.
const LIMIT: u32 = 1023;

/// Bytes the family allocates on top of revisions 5 and 8's.
pub(crate) const MEMORY: u64 = (5 << TABLE_BITS)
    + ((MIX_SETS[0] + MIX_SETS[1] + MIX_SETS[2]) * MIX_INPUTS * 4) as u64
    + (MIX_SETS[0] * FINAL_INPUTS * 4) as u64
    + 3 * 2 * 33 * (1 << APM_BITS);

/// Magnitude in 4 bits: `|v|`'s bit length, at most 15.
#[inline]
fn log_bucket(v: u32) -> u32 {
    (32 - v.leading_zeros()).min(15)
}

/// The median of three values.
#[inline]
fn median(a: i32, b: i32, c: i32) -> i32 {
    a.max(b).min(a.min(b).max(c))
}

/// The JPEG family of revision 36.
#[derive(Debug, Clone)]
pub(crate) struct Jpeg36Contexts {
    /// Revision 8's family (and through it revision 5's decoder).
    inner: Jpeg7Contexts,
    /// Revision 5's `codes` when the contexts were last computed.
    seen: u32,
    /// (block, MCU) of the block whose neighbours are loaded.
    at_block: (usize, usize),
    /// Per scan component and column: the block above when the block of
    /// that column last started (the above-left of the next column's).
    prev_above: Vec<Vec<[i16; 64]>>,
    /// The current block's above-right and above-left neighbours.
    right: [i32; 64],
    diag: [i32; 64],
    /// Sum of `|coef|` (AC) of the neighbours A, L and R at zigzag
    /// indexes `k` or later, and their last nonzero index.
    nbr_rest: [u32; 65],
    nbr_last: u32,
    ctx: [u32; CONTEXTS],
    slots: Slots<CONTEXTS>,
    mixers: Vec<Mixer<MIX_INPUTS>>,
    fin: Mixer<FINAL_INPUTS>,
    apm: Apm,
    apm_ctx: u32,
    /// The APMs on the model's final probability and their contexts for
    /// the current code (bit state added per bit).
    final_apms: [Apm; 2],
    final_ctx: [u32; 2],
    /// The offered selectors' sets for the current bit.
    sets: [usize; 3],
    /// Selectors of the third mixer and the fourth offered one for the
    /// current code.
    mag_set: usize,
    pred_set: usize,
    predicted: bool,
}

impl Jpeg36Contexts {
    /// The family right after a block's `FF D8 FF`.
    pub fn new() -> Self {
        Jpeg36Contexts {
            inner: Jpeg7Contexts::new(true),
            seen: 0,
            at_block: (usize::MAX, usize::MAX),
            prev_above: Vec::new(),
            right: [0; 64],
            diag: [0; 64],
            nbr_rest: [0; 65],
            nbr_last: 0,
            ctx: [0; CONTEXTS],
            slots: Slots::new(TABLE_BITS, LIMIT),
            mixers: MIX_SETS
                .iter()
                .map(|&n| Mixer::new(n, 3, 1 << 12))
                .collect(),
            fin: Mixer::new(MIX_SETS[0], 2, 65536 / MIX_SETS.len() as i32),
            apm: Apm::new(1 << APM_BITS, 7),
            apm_ctx: 0,
            final_apms: [Apm::new(1 << APM_BITS, 7), Apm::new(1 << APM_BITS, 7)],
            final_ctx: [0; 2],
            sets: [0; 3],
            mag_set: 0,
            pred_set: 0,
            predicted: false,
        }
    }

    /// Loads the above-right and above-left neighbours when a block starts.
    fn track_block(&mut self) {
        let b = &self.inner.base;
        if self.prev_above.len() != b.scan.len() {
            self.prev_above = b.scan.iter().map(|sc| vec![[0; 64]; sc.width]).collect();
            self.at_block = (usize::MAX, usize::MAX);
        }
        if (b.block, b.mcu) == self.at_block {
            return;
        }
        self.at_block = (b.block, b.mcu);
        let (s, col, has_above) = b.block_position();
        let sc = &b.scan[s];
        let pa = &mut self.prev_above[s];
        self.right = [0; 64];
        self.diag = [0; 64];
        if has_above && col + 1 < sc.rows.len() {
            for (d, &x) in self.right.iter_mut().zip(&sc.rows[col + 1]) {
                *d = i32::from(x);
            }
        }
        if col > 0 && col - 1 < pa.len() {
            for (d, &x) in self.diag.iter_mut().zip(&pa[col - 1]) {
                *d = i32::from(x);
            }
        }
        if col < pa.len() {
            for (d, &x) in pa[col].iter_mut().zip(&b.above) {
                *d = x.clamp(-32768, 32767) as i16;
            }
        }
        let mut sum = 0u32;
        self.nbr_last = 0;
        for k in (1..64).rev() {
            let (a, l, r) = (b.above[k], b.left[k], self.right[k]);
            sum += (a.unsigned_abs() + l.unsigned_abs() + r.unsigned_abs()).min(1 << 16);
            self.nbr_rest[k] = sum;
            if self.nbr_last == 0 && (a != 0 || l != 0 || r != 0) {
                self.nbr_last = k as u32;
            }
        }
        self.nbr_rest[0] = sum;
        self.nbr_rest[64] = 0;
    }

    /// The contexts of the code or extra bits that start now.
    fn contexts36(&mut self) {
        let b = &self.inner.base;
        let s = b.scan_component();
        let fc = b.scan[s].frame;
        let k = b.k.min(63);
        let mode = b.mode as u32;
        let chroma = u32::from(fc > 0);
        let kk = (mode << 1 | chroma) << 6 | k as u32;
        let size = if matches!(b.mode, Mode::DcExtra | Mode::AcExtra) {
            b.size
        } else {
            0
        };
        let (a, l, r, d) = (b.above[k], b.left[k], self.right[k], self.diag[k]);
        // Signed prediction: at the DC the gradient of the neighbours' DCs
        // less the DC prediction; elsewhere a weighted mean of the
        // co-located coefficients.
        let pred = if k == 0 {
            median(a, l, a + l - d) - b.scan[s].dc_pred
        } else {
            (2 * a + 2 * l + r + d) / 6
        };
        let mag = 2 * (a.unsigned_abs() + l.unsigned_abs()) + r.unsigned_abs() + d.unsigned_abs();
        let mag = log_bucket(mag);
        let nz = b.nz.min(15);
        // This block's energy so far against the neighbours' before `k`.
        let done = log_bucket(b.abs_sum);
        let nbr_done = log_bucket((self.nbr_rest[1] - self.nbr_rest[k.max(1)]) / 3);
        let rest = log_bucket(self.nbr_rest[k.max(1)] / 3);
        let z = usize::from(ZIGZAG[k]);
        let (row, col) = (z / 8, z % 8);
        // This block's coefficients at the same row and column next to
        // this position (natural order), decoded when earlier in zigzag.
        let up = if row > 0 {
            b.coef[usize::from(UNZIGZAG[z - 8])]
        } else {
            0
        };
        let lf = if col > 0 {
            b.coef[usize::from(UNZIGZAG[z - 1])]
        } else {
            0
        };
        let run = (b.k - b.last_nz.min(b.k)).min(15) as u32;
        let mc = mode << 1 | chroma;
        let band = (row + col) as u32;
        let vals = [
            hash2(kk, fine(pred) << 4 | nz.min(7)),
            hash2(kk, done << 8 | nbr_done << 4 | rest),
            hash2(kk, self.nbr_last << 8 | run << 4 | nz.min(7)),
            hash2(kk, fine(pred) << 10 | bucket(up) << 5 | bucket(lf)),
            hash2(mc, fine(pred) << 8 | mag << 4 | rest),
            hash2(mc, fine(pred) << 8 | done << 4 | nbr_done),
            hash2(mc, band << 12 | fine(pred) << 4 | rest),
        ];
        for (j, (c, v)) in self.ctx.iter_mut().zip(vals).enumerate() {
            *c = hash2(hash2(v, size), j as u32 + 0x3600);
        }
        self.apm_ctx = hash2(kk, fine(pred) << 4 | size);
        self.final_ctx = [
            hash2(kk, size << 8 | 0x36),
            hash2(mode << 1 | chroma, fine(pred) << 8 | mag << 4 | size),
        ];
        self.pred_set = (mode as usize * 2 + chroma as usize) * 64 + fine(pred) as usize;
        self.mag_set = (mode as usize * 16 + mag as usize) * 8 + nz.min(7) as usize;
    }
}

impl Default for Jpeg36Contexts {
    fn default() -> Self {
        Self::new()
    }
}

impl ContextModel for Jpeg36Contexts {
    forward_family!(inner; contexts, hashes, selector_size, selector, begin_byte, observe);

    fn bit_inputs(&self) -> usize {
        BIT_INPUTS
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let mut o7 = [0i32; INNER];
        self.inner.predict_bit(c0, i, &mut o7);
        self.predicted = self.inner.base.predicted;
        if !self.predicted {
            out.fill(0);
            // Outside a scan the offered selectors follow the partial byte.
            for (set, &n) in self.sets.iter_mut().zip(&SELECTORS) {
                *set = n - 256 + c0 as usize;
            }
            return;
        }
        self.track_block();
        if self.seen != self.inner.base.codes {
            self.seen = self.inner.base.codes;
            self.contexts36();
        }
        let b = &self.inner.base;
        let hs = b.bit_state();
        let mut x = [0i32; MIX_INPUTS];
        x[..INNER].copy_from_slice(&o7);
        self.slots.inputs(&self.ctx, hs, &mut x[INNER..]);
        x[MIX_INPUTS - 1] = 256;
        let [s0, s1] = mixer_sets(b);
        let sets = [s0, s1, self.mag_set];
        self.sets = [sets[2], sets[1], self.pred_set];
        let mut f = [0i32; FINAL_INPUTS];
        for (j, (m, &set)) in self.mixers.iter_mut().zip(&sets).enumerate() {
            f[j] = m.mix(x, set);
        }
        f[FINAL_INPUTS - 1] = 256;
        let d = self.fin.mix(f, sets[0]);
        let mask = (1 << APM_BITS) - 1;
        let p = self
            .apm
            .refine_stretched(d, hash2(self.apm_ctx, hs) as usize & mask);
        out[..INNER].copy_from_slice(&o7);
        out[INNER] = d;
        out[INNER + 1] = stretch(p.clamp(1, 65535));
    }

    fn kind_selector_size(&self) -> usize {
        SELECTORS[0]
    }

    fn kind_selector(&self, _c0: u32, _i: u32) -> usize {
        self.sets[0]
    }

    fn kind_selector2_size(&self) -> usize {
        SELECTORS[1]
    }

    fn kind_selector2(&self, _c0: u32, _i: u32) -> usize {
        self.sets[1]
    }

    fn kind_selectors_more(&self) -> &[usize] {
        &MORE
    }

    fn kind_selectors_more_ctx(&self, _c0: u32, _i: u32, out: &mut [usize]) {
        out.copy_from_slice(&self.sets[2..2 + out.len()]);
    }

    fn refine_final(&mut self, p: u32, _c0: u32) -> u32 {
        if !self.predicted {
            return p;
        }
        let hs = self.inner.base.bit_state();
        let mask = (1 << APM_BITS) - 1;
        let d = stretch(p.clamp(1, 65535));
        let a =
            self.final_apms[0].refine_stretched(d, hash2(self.final_ctx[0], hs) as usize & mask);
        let b =
            self.final_apms[1].refine_stretched(d, hash2(self.final_ctx[1], hs) as usize & mask);
        ((p + 3 * ((a + b) / 2) + 2) / 4).clamp(1, 65535)
    }

    fn update_bit(&mut self, bit: u32) {
        if self.predicted {
            for a in &mut self.final_apms {
                a.update(bit);
            }
            self.slots.update(bit);
            for m in &mut self.mixers {
                m.update(bit);
            }
            self.fin.update(bit);
            self.apm.update(bit);
            self.predicted = false;
        }
        self.inner.update_bit(bit);
    }

    fn detected(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_buckets() {
        assert_eq!(median(1, 5, 3), 3);
        assert_eq!(median(5, 1, 9), 5);
        assert_eq!(median(-2, -7, -9), -7);
        assert_eq!(log_bucket(0), 0);
        assert_eq!(log_bucket(1), 1);
        assert_eq!(log_bucket(1 << 20), 15);
    }
}
