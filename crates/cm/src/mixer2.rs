//! A two-layer gated mixer: several weight sets, each chosen by its own
//! small context, mix the same inputs; a final mixer combines their outputs.
//!
//! Inputs are stretched probabilities (`-2047..=2047`, the logistic domain
//! in units of 1/256) held as `i16`; weights are `i16` with `16384` = 1.0. A
//! set's output is `sum(x * w) >> 14`, summed in blocks of 32 inputs: 32
//! inputs of magnitude 2047 times 32767 stay below 2^31, so each block's
//! `i32` sum cannot overflow, and the blocks (four at most) are added as
//! `i64`. A mixer of at most 32 inputs is one block, which is exactly the
//! `i32` sum of CM revisions 0 to 4; from revision 5 on a mixer may take 64
//! inputs, and from revision 8 on 128 ([`max_inputs`]). Training
//! adds `(x * e) >> 16` with saturation, where `e` is the error scaled by the
//! learning rate. The sums and the training step run in
//! `sep_kernels::dot_i16_sets` / `train_i16_sets` (AVX2 where the CPU has
//! it, else loops LLVM turns into SSE2's `pmaddwd`, `pmulhw` and `paddsw`):
//! all of it is integer, so every machine computes the same bits.
//!
//! Each first-layer set is trained on its own output's error and the final
//! layer on the final error, so every set learns to predict on its own.

use crate::logistic::squash;

/// Most inputs a mixer takes (from CM revision 8 on; see [`max_inputs`]).
pub const MAX_INPUTS: usize = 128;
/// Most first-layer selectors (8 up to CM revision 6, 12 up to revision
/// 36, 14 from revision 38: doc/FORMAT.md 4.49.1; the size of a few
/// arrays, no coded value depends on it).
const MAX_SETS: usize = 14;
/// Final-layer weights per set in a prior's snapshot, at least
/// (`MAX_SETS` was 8 up to CM revision 7).
const SNAPSHOT_SETS: usize = 8;
/// Inputs summed in one `i32` block.
const BLOCK: usize = 32;
const _: () = assert!(BLOCK == sep_kernels::MIX_BLOCK, "the kernels' block");

type Lane = [i16; MAX_INPUTS];

/// Most inputs the model's main mixer takes at CM revision `revision`: 32
/// up to revision 4, 64 from revision 5 on (doc/FORMAT.md 4.16), 128 in
/// the `max` line from revision 8 on (4.19.1; revision 7 keeps 64).
pub const fn max_inputs(revision: u8) -> usize {
    if crate::cm::revision_has(revision, 8) {
        MAX_INPUTS
    } else if revision >= 5 {
        2 * BLOCK
    } else {
        BLOCK
    }
}

/// Two-layer mixer of up to `MAX_INPUTS` (128) inputs.
#[derive(Debug, Clone)]
pub struct Mixer2 {
    n: usize,
    x: Lane,
    /// Blocks of [`BLOCK`] inputs: `ceil(n / 32)`, at least 1.
    blocks: usize,
    /// Every weight set of every selector, `blocks * BLOCK` weights each.
    w: Vec<i16>,
    /// First set of each selector and its number of sets.
    selectors: Vec<(usize, usize)>,
    chosen: [usize; MAX_SETS],
    /// Stretched output and probability of each first-layer set.
    out: [i16; MAX_SETS],
    pr1: [u32; MAX_SETS],
    fw: Vec<[i16; MAX_SETS]>,
    fset: usize,
    pr: u32,
    lr: i32,
    flr: i32,
    /// CM revision 8 (doc/FORMAT.md 4.19.1): first-layer updates are
    /// rounded to nearest rather than floored.
    rounded: bool,
    /// CM revision 9 (doc/FORMAT.md 4.20.1): each first-layer weight
    /// set's update count (saturating), for a rate that starts higher and
    /// decays per set; empty: off.
    counts: Vec<u16>,
    /// Revision 9: the extra rate of a fresh set and the count at which
    /// it has halved.
    boost: i32,
    half: i32,
    /// Revision 9: first-layer rates are in units of `2^-rate_shift`.
    rate_shift: u32,
}

impl Mixer2 {
    /// Walks the weights (`snapshot.rs`); the rates are set per byte or fixed.
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        for lane in self.w.chunks_exact_mut(self.blocks * BLOCK) {
            v.i16s(lane);
        }
        // The final layer's first 8 weights of each set (all there were
        // before revision 8) keep priors' snapshot shape; more only when
        // there are more selectors.
        let k = self.selectors.len().max(SNAPSHOT_SETS);
        for lane in &mut self.fw {
            v.i16s(&mut lane[..k]);
        }
        // Revision 9's per-set update counts (none before).
        v.u16s(&mut self.counts);
    }

    /// A mixer of `n` inputs; `selector_sizes[k]` is the number of weight
    /// sets of selector `k` (at most 14 selectors); the final layer has
    /// `final_sets` weight sets. `lr` and `final_lr` are learning rates
    /// (about 1..=8).
    pub fn new(
        n: usize,
        selector_sizes: &[usize],
        final_sets: usize,
        lr: i32,
        final_lr: i32,
    ) -> Self {
        assert!(
            n <= MAX_INPUTS && (1..=MAX_SETS).contains(&selector_sizes.len()),
            "Mixer2: {n} inputs, {} selectors",
            selector_sizes.len()
        );
        let mut selectors = Vec::with_capacity(selector_sizes.len());
        let mut total = 0;
        for &size in selector_sizes {
            selectors.push((total, size.max(1)));
            total += size.max(1);
        }
        let k = selector_sizes.len();
        let blocks = n.div_ceil(BLOCK).max(1);
        let mut lane = vec![0i16; blocks * BLOCK];
        // Each input starts at weight 0.3 (16384 = 1.0).
        lane[..n].fill((16384 * 3 / 10) as i16);
        let mut flane = [0i16; MAX_SETS];
        flane[..k].fill((16384 / k) as i16);
        // Every weight set a copy of `lane` (what `lane.repeat(total)`
        // gives), written into memory advised huge pages first: several
        // MiB of sets then fault in a few times, not once per 4 KiB page.
        let mut w = vec![0i16; lane.len() * total];
        sep_kernels::advise_huge_pages(&w);
        for set in w.chunks_exact_mut(lane.len()) {
            set.copy_from_slice(&lane);
        }
        Mixer2 {
            n,
            x: [0; MAX_INPUTS],
            blocks,
            w,
            selectors,
            chosen: [0; MAX_SETS],
            out: [0; MAX_SETS],
            pr1: [32768; MAX_SETS],
            fw: vec![flane; final_sets.max(1)],
            fset: 0,
            pr: 32768,
            lr,
            flr: final_lr,
            rounded: false,
            counts: Vec::new(),
            boost: 0,
            half: 1,
            rate_shift: 0,
        }
    }

    /// Sets the learning rates of the first layer and of the final layer
    /// (as [`new`](Self::new)'s `lr` and `final_lr`), for a schedule.
    pub fn set_rates(&mut self, lr: i32, final_lr: i32) {
        self.lr = lr;
        self.flr = final_lr;
    }

    /// Sets every first-layer weight to `w` (16384 = 1.0) in place of the
    /// 0.3 that [`new`](Self::new) starts with.
    pub fn set_initial_weights(&mut self, w: i16) {
        let n = self.n;
        for lane in self.w.chunks_exact_mut(self.blocks * BLOCK) {
            lane[..n].fill(w);
        }
    }

    /// Sets the first-layer weights of inputs `first..` to `w` in every
    /// weight set (after [`set_initial_weights`](Self::set_initial_weights)).
    pub fn set_initial_weights_from(&mut self, first: usize, w: i16) {
        let n = self.n;
        for lane in self.w.chunks_exact_mut(self.blocks * BLOCK) {
            lane[first.min(n)..n].fill(w);
        }
    }

    /// Sets the first-layer weights of inputs `range` to `w` in every
    /// weight set.
    pub fn set_initial_weights_range(&mut self, range: std::ops::Range<usize>, w: i16) {
        let n = self.n;
        for lane in self.w.chunks_exact_mut(self.blocks * BLOCK) {
            lane[range.start.min(n)..range.end.min(n)].fill(w);
        }
    }

    /// Rounds first-layer weight updates to nearest (`((x * e) + 2^15) >>
    /// 16`) instead of flooring them, from now on (CM revision 8).
    pub fn set_rounded(&mut self, rounded: bool) {
        self.rounded = rounded;
    }

    /// CM revision 9 (doc/FORMAT.md 4.20.1): from now on a first-layer
    /// set that has been trained `n` times trains with rate `(lr + boost *
    /// half / (half + n)) >> rate_shift` applied to the error (`n`
    /// saturates at 65535), so rarely chosen sets learn fast, and the
    /// rates (this one's and [`set_rates`](Self::set_rates)' `lr`) are in
    /// units of `2^-rate_shift`.
    pub fn set_set_rates(&mut self, boost: i32, half: i32, rate_shift: u32) {
        self.rate_shift = rate_shift;
        let total = self.selectors.last().map_or(0, |&(b, n)| b + n);
        self.counts = vec![0; total];
        self.boost = boost;
        self.half = half.max(1);
    }

    /// Number of inputs.
    pub fn inputs(&self) -> usize {
        self.n
    }

    /// The input lane, for writing inputs directly (each in `-2047..=2047`;
    /// entries past [`inputs`](Self::inputs) must stay 0).
    #[inline]
    pub fn lane(&mut self) -> &mut [i16; MAX_INPUTS] {
        &mut self.x
    }

    /// Sets input `i` (a stretched probability, clamped to `-2047..=2047`).
    #[inline]
    pub fn set(&mut self, i: usize, x: i32) {
        debug_assert!(i < self.n, "Mixer2: input {i} of {}", self.n);
        self.x[i] = x.clamp(-2047, 2047) as i16;
    }

    /// Chooses weight set `ctx` (below its size) for selector `k`.
    #[inline]
    pub fn select(&mut self, k: usize, ctx: usize) {
        let (base, size) = self.selectors[k];
        debug_assert!(ctx < size, "Mixer2: selector {k} context {ctx} >= {size}");
        self.chosen[k] = base + ctx.min(size - 1);
    }

    /// Chooses the final layer's weight set.
    #[inline]
    pub fn select_final(&mut self, ctx: usize) {
        self.fset = ctx.min(self.fw.len() - 1);
    }

    /// Mixes the inputs; returns the stretched result (`-2047..=2047`) and
    /// remembers its probability ([`last`](Self::last)).
    #[inline]
    pub fn mix(&mut self) -> i32 {
        let k = self.selectors.len();
        let stride = self.blocks * BLOCK;
        let mut sums = [0i64; MAX_SETS];
        sep_kernels::dot_i16_sets(
            &self.x[..stride],
            &self.w,
            &self.chosen[..k],
            &mut sums[..k],
        );
        for (j, &sum) in sums[..k].iter().enumerate() {
            let d = (sum >> 14).clamp(-2047, 2047) as i32;
            self.out[j] = d as i16;
            self.pr1[j] = squash(d);
        }
        let fw = &self.fw[self.fset];
        let dot: i32 = self.out[..k]
            .iter()
            .zip(&fw[..k])
            .map(|(&o, &w)| i32::from(o) * i32::from(w))
            .sum();
        let d = (dot >> 14).clamp(-2047, 2047);
        self.pr = squash(d);
        d
    }

    /// The stretched outputs of the first-layer sets in the last mix, one
    /// per selector (CM revision 34's second final layer reads them).
    #[inline]
    pub(crate) fn set_outputs(&self) -> &[i16] {
        &self.out[..self.selectors.len()]
    }

    /// The probability of the last mix.
    #[inline]
    pub fn last(&self) -> u32 {
        self.pr
    }

    /// Trains every weight used by the last mix on `bit`.
    #[inline]
    pub fn update(&mut self, bit: u32) {
        let target = (bit as i32) << 16;
        let k = self.selectors.len();
        let stride = self.blocks * BLOCK;
        let mut errs = [0i16; MAX_SETS];
        for (j, err) in errs[..k].iter_mut().enumerate() {
            let lr = match self.counts.get_mut(self.chosen[j]) {
                Some(c) => {
                    let n = i32::from(*c);
                    *c = c.saturating_add(1);
                    self.lr + self.boost * self.half / (self.half + n)
                }
                None => self.lr,
            };
            *err = ((((target - self.pr1[j] as i32) >> 4) * lr) >> self.rate_shift)
                .clamp(-32767, 32767) as i16;
        }
        sep_kernels::train_i16_sets(
            &self.x[..stride],
            &mut self.w,
            &self.chosen[..k],
            &errs[..k],
            self.rounded,
        );
        let e = (((target - self.pr as i32) >> 4) * self.flr).clamp(-32767, 32767);
        let fw = &mut self.fw[self.fset];
        for (w, &o) in fw[..k].iter_mut().zip(&self.out[..k]) {
            let dw = (i32::from(o) * e) >> 16;
            *w = (i32::from(*w) + dw).clamp(-32768, 32767) as i16;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_which_input_to_trust_per_context() {
        let mut m = Mixer2::new(2, &[2], 1, 6, 2);
        let mut state = 1u32;
        let mut late_cost = 0.0;
        for i in 0..40_000 {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let bit = (state >> 16) & 1;
            let ctx = ((state >> 20) & 1) as usize;
            // In context 0 input 0 is right, in context 1 input 1 is.
            let good = if bit == 1 { 1800 } else { -1800 };
            let noise = ((state >> 3) & 1023) as i32 - 512;
            let (a, b) = if ctx == 0 {
                (good, noise)
            } else {
                (noise, good)
            };
            m.set(0, a);
            m.set(1, b);
            m.select(0, ctx);
            m.select_final(0);
            m.mix();
            let p = m.last();
            if i >= 39_000 {
                let q = if bit == 1 { p } else { 65536 - p };
                late_cost += -(f64::from(q) / 65536.0).log2();
            }
            m.update(bit);
        }
        assert!(late_cost / 1000.0 < 0.1, "{}", late_cost / 1000.0);
    }

    #[test]
    fn a_wide_mixer_learns_from_its_second_block() {
        // 64 inputs: only input 50 (in the second block of 32) is right.
        let mut m = Mixer2::new(64, &[1], 1, 6, 2);
        let mut state = 7u32;
        let mut late_cost = 0.0;
        for i in 0..20_000 {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let bit = (state >> 16) & 1;
            for k in 0..64 {
                let noise = ((state >> (k % 13)) & 511) as i32 - 256;
                m.set(
                    k,
                    if k == 50 {
                        (2 * bit as i32 - 1) * 1500
                    } else {
                        noise
                    },
                );
            }
            m.select(0, 0);
            m.select_final(0);
            m.mix();
            let p = m.last();
            if i >= 19_000 {
                let q = if bit == 1 { p } else { 65536 - p };
                late_cost += -(f64::from(q) / 65536.0).log2();
            }
            m.update(bit);
        }
        assert!(late_cost / 1000.0 < 0.2, "{}", late_cost / 1000.0);
        assert_eq!(max_inputs(4), 32);
        assert_eq!(max_inputs(5), 64);
    }

    #[test]
    fn extreme_inputs_and_weights_do_not_overflow() {
        let mut m = Mixer2::new(MAX_INPUTS, &[1, 1], 1, 8, 8);
        for step in 0..10_000 {
            for i in 0..MAX_INPUTS {
                m.set(i, if (i + step) % 2 == 0 { 5000 } else { -5000 });
            }
            m.select(0, 0);
            m.select(1, 0);
            m.select_final(0);
            let d = m.mix();
            assert!((-2047..=2047).contains(&d));
            m.update((step % 3 == 0) as u32);
        }
    }
}
