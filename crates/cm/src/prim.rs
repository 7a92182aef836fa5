//! Building blocks: adaptive probability tables, state maps and a logistic
//! mixer (the APM is in `apm.rs`).
//!
//! All state is integer and every update is a fixed integer formula, so
//! encoder and decoder stay in lock-step on any machine.

use crate::logistic::squash;
use crate::logistic_tables::STRETCH;

const FLIP: u32 = 1 << 31;

/// The bit `i` that an expected byte `e` (`256 + byte`, 0 for none)
/// predicts, when it agrees with the partial byte `c0` (the bits above `i`
/// with a leading 1); `None` when there is none or it disagrees.
#[inline]
pub(crate) fn expected_bit(e: u32, c0: u32, i: u32) -> Option<u32> {
    (e != 0 && e >> (i + 1) == c0).then_some(e >> i & 1)
}

/// `65536 * 2 / (2n + 3)`: the learning rate of a count `n` is `1/(n + 1.5)`.
static RECIPROCAL: [u32; 1024] = {
    let mut t = [0u32; 1024];
    let mut n = 0;
    while n < 1024 {
        t[n] = 131_072 / (2 * n as u32 + 3);
        n += 1;
    }
    t
};

/// A table of adaptive bit probabilities, each with its own count.
///
/// Entry layout (`u32`): the probability of a 1 in the top 22 bits, the
/// number of updates seen (saturating at `limit`) in the low 10 bits, all
/// stored XOR `0x8000_0000` so that a zeroed allocation (which the OS
/// provides lazily) means probability 1/2 and count 0. An update
/// moves the probability towards the observed bit by `1/(n + 1.5)`: a
/// fresh context learns as fast as a frequency count, an old one settles to a
/// slowly adapting average.
#[derive(Debug, Clone)]
pub struct AdaptiveProbs {
    t: Vec<u32>,
    limit: u32,
}

impl AdaptiveProbs {
    /// Walks the probabilities and counts (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        v.u32s(&mut self.t);
    }

    /// `size` entries at probability 1/2, with counts saturating at `limit`
    /// (`1..=1023`).
    pub fn new(size: usize, limit: u32) -> Self {
        assert!((1..=1023).contains(&limit));
        AdaptiveProbs {
            t: vec![0; size],
            limit,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// Whether the table has no entries.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// The 16-bit probability of a 1 at entry `i`.
    #[inline]
    pub fn p(&self, i: usize) -> u32 {
        (self.t[i] ^ FLIP) >> 16
    }

    /// `stretch` of the probability at entry `i` (cheaper than
    /// `stretch(self.p(i))`).
    #[inline]
    pub fn stretched(&self, i: usize) -> i32 {
        i32::from(STRETCH[((self.t[i] ^ FLIP) >> 20) as usize])
    }

    /// How many times entry `i` was updated (saturating at the limit).
    #[inline]
    pub fn count(&self, i: usize) -> u32 {
        self.t[i] & 1023
    }

    /// Starts loading entry `i`'s cache line (a hint: changes nothing), so
    /// that a later [`stretched`](Self::stretched) or
    /// [`update`](Self::update) of `i` does not wait for memory.
    #[inline]
    pub fn prefetch(&self, i: usize) {
        sep_kernels::prefetch(&self.t, i);
    }

    /// Learns `bit` at entry `i`.
    #[inline]
    pub fn update(&mut self, i: usize, bit: u32) {
        let e = self.t[i] ^ FLIP;
        let n = e & 1023;
        let p = (e >> 10) as i64;
        let target = i64::from(bit) << 22;
        let p = p + (((target - p) * i64::from(RECIPROCAL[n as usize])) >> 16);
        let n = n + u32::from(n < self.limit);
        self.t[i] = (((p as u32) << 10) | n) ^ FLIP;
    }
}

/// Adaptive probabilities indexed by a bit-history state: one per context
/// kind, learning what each state ([`crate::STATES`]) predicts in this data.
///
/// Same entry layout and update rule as [`AdaptiveProbs`]; every entry starts
/// at its state's prior `(n1 + 0.5) / (n + 1)` with a count of 0. Indexing
/// by a `u8` into 256 entries needs no bounds check.
#[derive(Debug, Clone)]
pub struct StateMap {
    t: Box<[u32; 256]>,
}

impl Default for StateMap {
    fn default() -> Self {
        let mut t = Box::new([0u32; 256]);
        for (s, e) in t.iter_mut().enumerate() {
            *e = (crate::state::STATES.prior(s as u8) << 16) ^ FLIP;
        }
        StateMap { t }
    }
}

impl StateMap {
    /// Walks the map (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        v.u32s(&mut self.t[..]);
    }

    /// The stretched probability of a 1 in state `s`.
    #[inline]
    pub fn stretched(&self, s: u8) -> i32 {
        i32::from(STRETCH[((self.t[usize::from(s)] ^ FLIP) >> 20) as usize])
    }

    /// The 16-bit probability of a 1 in state `s`.
    #[inline]
    pub fn p(&self, s: u8) -> u32 {
        (self.t[usize::from(s)] ^ FLIP) >> 16
    }

    /// Learns `bit` in state `s`; counts saturate at `limit` (`1..=1023`).
    #[inline]
    pub fn update(&mut self, s: u8, bit: u32, limit: u32) {
        let e = self.t[usize::from(s)] ^ FLIP;
        let n = e & 1023;
        let p = (e >> 10) as i64;
        let target = i64::from(bit) << 22;
        let p = p + (((target - p) * i64::from(RECIPROCAL[n as usize])) >> 16);
        let n = n + u32::from(n < limit);
        self.t[usize::from(s)] = (((p as u32) << 10) | n) ^ FLIP;
    }
}

/// A gated linear mixer of `N` inputs in the logistic domain, trained online
/// to minimise coding cost.
///
/// Inputs are stretched probabilities (`-2047..=2047`); one weight vector per
/// selectable context; weights are 16.16 fixed point. The output is
/// `squash(sum(w * x) >> 16)`.
#[derive(Debug, Clone)]
pub struct Mixer<const N: usize> {
    weights: Vec<[i32; N]>,
    x: [i32; N],
    set: usize,
    pr: u32,
    lr: i32,
}

impl<const N: usize> Mixer<N> {
    /// Walks the weights as u32 (a prior's snapshot at walk 1,
    /// `snapshot.rs`; doc/FORMAT.md section 11).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        let mut flat: Vec<u32> = self.weights.iter().flatten().map(|&w| w as u32).collect();
        v.u32s(&mut flat);
        for (w, &x) in self.weights.iter_mut().flatten().zip(&flat) {
            *w = x as i32;
        }
    }

    /// A mixer with `contexts` weight sets, learning rate `lr` (about
    /// 2..=16), weights starting at `init` (16.16 fixed point).
    pub fn new(contexts: usize, lr: i32, init: i32) -> Self {
        Mixer {
            weights: vec![[init; N]; contexts.max(1)],
            x: [0; N],
            set: 0,
            pr: 32768,
            lr,
        }
    }

    /// Mixes `x` with the weight set `ctx`; returns the mix in the stretch
    /// domain (`-2047..=2047`) and remembers its probability
    /// ([`last`](Self::last)) for [`update`](Self::update). Feeding the
    /// stretched value to [`Apm::refine_stretched`](crate::Apm::refine_stretched) saves a squash/stretch
    /// round trip on the critical path.
    #[inline]
    pub fn mix(&mut self, x: [i32; N], ctx: usize) -> i32 {
        self.x = x;
        self.set = ctx;
        let w = &self.weights[ctx];
        let dot: i64 = w
            .iter()
            .zip(&x)
            .map(|(&w, &x)| i64::from(w) * i64::from(x))
            .sum();
        let d = (dot >> 16).clamp(-2047, 2047) as i32;
        self.pr = squash(d);
        d
    }

    /// The probability of the last mix.
    #[inline]
    pub fn last(&self) -> u32 {
        self.pr
    }

    /// Trains the weights used by the last mix on the coded `bit`.
    #[inline]
    pub fn update(&mut self, bit: u32) {
        let err = ((((bit as i32) << 16) - self.pr as i32) * self.lr) >> 4;
        let w = &mut self.weights[self.set];
        for (w, &x) in w.iter_mut().zip(&self.x) {
            *w = w.wrapping_add((x * err) >> 14);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adaptive_probs_learn_and_count() {
        let mut t = AdaptiveProbs::new(4, 30);
        assert_eq!(t.p(0), 32768);
        for _ in 0..50 {
            t.update(0, 1);
            t.update(1, 0);
        }
        assert!(t.p(0) > 64000, "{}", t.p(0));
        assert!(t.p(1) < 1500, "{}", t.p(1));
        assert_eq!(t.count(0), 30);
        // First update of a fresh entry moves it by 2/3 of the way.
        t.update(2, 1);
        assert_eq!(t.p(2), 32768 + 32768 * 2 / 3);
    }

    #[test]
    fn mixer_learns_to_trust_the_good_input() {
        let mut m = Mixer::<2>::new(1, 6, 1 << 14);
        let mut state = 1u32;
        let mut cost_late = 0.0;
        for i in 0..20_000 {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let bit = (state >> 16) & 1;
            // Input 0 knows the bit with confidence, input 1 is noise.
            m.mix(
                [
                    if bit == 1 { 1500 } else { -1500 },
                    ((state >> 3) & 1023) as i32 - 512,
                ],
                0,
            );
            let p = m.last();
            if i >= 19_000 {
                let q = if bit == 1 { p } else { 65536 - p };
                cost_late += -(f64::from(q) / 65536.0).log2();
            }
            m.update(bit);
        }
        assert!(cost_late / 1000.0 < 0.05, "{}", cost_late / 1000.0);
    }
}
