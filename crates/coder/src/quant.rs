//! The one function that turns 256 `f32` probabilities into integer
//! frequencies.
//!
//! Encoder and decoder call [`quantize`] on bit-identical `f32` inputs, and
//! after its first step (an exact scaling by a power of two and a truncation)
//! it works only on integers, so its output is identical everywhere.
//!
//! Guarantees: every symbol gets a frequency of at least 1, and the
//! frequencies sum to exactly [`FREQ_TOTAL`] = `2^24`, whatever the input
//! (NaN, infinities, negatives, all zeros, or a sum far from 1).

/// Table totals are `2^FREQ_BITS`.
pub const FREQ_BITS: u32 = 24;
/// The exact sum of every [`FreqTable`]'s frequencies.
pub const FREQ_TOTAL: u32 = 1 << FREQ_BITS;

/// A 256-symbol frequency table, kept as cumulative frequencies.
///
/// `cum[s]` is the sum of the frequencies of symbols `0..s`; `cum[256]` is
/// [`FREQ_TOTAL`].
#[derive(Clone, PartialEq, Eq)]
pub struct FreqTable {
    cum: [u32; 257],
}

impl Default for FreqTable {
    /// The uniform table.
    fn default() -> Self {
        let mut cum = [0u32; 257];
        for (s, c) in cum.iter_mut().enumerate() {
            *c = (s as u32) << (FREQ_BITS - 8);
        }
        FreqTable { cum }
    }
}

impl std::fmt::Debug for FreqTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries((0..256).map(|s| self.freq(s)))
            .finish()
    }
}

impl FreqTable {
    /// Builds a table from frequencies that are all at least 1 and sum to
    /// [`FREQ_TOTAL`]; returns `None` otherwise.
    pub fn from_freqs(freqs: &[u32; 256]) -> Option<Self> {
        let mut cum = [0u32; 257];
        let mut total = 0u64;
        for (s, &f) in freqs.iter().enumerate() {
            if f == 0 {
                return None;
            }
            cum[s] = total as u32;
            total += u64::from(f);
            if total > u64::from(FREQ_TOTAL) {
                return None;
            }
        }
        cum[256] = total as u32;
        (total == u64::from(FREQ_TOTAL)).then_some(FreqTable { cum })
    }

    /// Cumulative frequency of symbols `0..s` (`s` in `0..=256`; `cum(256)`
    /// is [`FREQ_TOTAL`]).
    #[inline]
    pub fn cum(&self, s: usize) -> u32 {
        self.cum[s]
    }

    /// Frequency of symbol `s`.
    #[inline]
    pub fn freq(&self, s: u32) -> u32 {
        self.cum[s as usize + 1] - self.cum[s as usize]
    }

    /// `(cumulative frequency, frequency)` of symbol `s`.
    #[inline]
    pub fn interval(&self, s: u32) -> (u32, u32) {
        let s = s as usize;
        (self.cum[s], self.cum[s + 1] - self.cum[s])
    }

    /// The symbol whose interval holds `target` (`target < FREQ_TOTAL`).
    #[inline]
    pub fn find(&self, target: u32) -> u32 {
        // Branch-free binary search for the last s with cum[s] <= target;
        // cum[0] = 0 <= target always.
        let mut s = 0usize;
        let mut step = 128;
        while step > 0 {
            if self.cum[s + step] <= target {
                s += step;
            }
            step >>= 1;
        }
        s as u32
    }
}

/// `x` truncated to an integer, for `x` in `[0, 2^24]` (or `-0.0`), with float and
/// bit operations only: unlike `x as u32` (a saturating conversion, which compilers do
/// not vectorise on x86-64) this loop vectorises, and it is exact on that range
/// (checked for every `f32` in `[0, 1]` times `2^24`).
#[inline(always)]
fn truncate(x: f32) -> u32 {
    const TWO_23: f32 = 8_388_608.0;
    const TWO_23_BITS: u32 = 0x4b00_0000;
    // Below 2^23: y = round(x) + 2^23 (round to nearest, exact sum), minus 1 if that
    // rounded up; y is in [2^23, 2^24), where the low mantissa bits are the integer.
    let y = x + TWO_23;
    let y = if y - TWO_23 > x { y - 1.0 } else { y };
    // From 2^23 on, x is an integer already: 2^23 + m has mantissa bits m.
    if x < TWO_23 {
        y.to_bits() - TWO_23_BITS
    } else {
        x.to_bits() - TWO_23_BITS + (1 << 23)
    }
}

/// Turns 256 probabilities into a frequency table (see the module docs).
///
/// Steps, each exact:
/// 1. `w[s] = trunc(clamp(p[s], 0, 1) * 2^24)`; NaN and negatives give 0.
/// 2. `W = sum w`. If `W = 0`, the table is uniform.
/// 3. `f[s] = 1 + floor(w[s] * inv / 2^32)` with
///    `inv = floor((2^24 - 256) * 2^32 / W)`, so `sum f <= 2^24`.
/// 4. The shortfall `2^24 - sum f` goes to the symbol with the largest `f`
///    (the lowest index among equals).
pub fn quantize(probs: &[f32; 256], table: &mut FreqTable) {
    // Written as independent passes of simple integer and float operations so that
    // the compiler vectorises them (even for baseline x86-64); each pass is exact, so
    // the output is that of the step-by-step definition above.
    let mut w = [0u32; 256];
    for (ws, &p) in w.iter_mut().zip(probs) {
        // Not `clamp`: `max` maps NaN to 0 (as `p > 0.0` in step 1 does), `clamp`
        // would keep it. Negatives become (signed) zero.
        #[allow(clippy::manual_clamp)]
        let x = p.max(0.0).min(1.0) * FREQ_TOTAL as f32;
        *ws = truncate(x);
    }
    let total: u64 = w.iter().map(|&x| u64::from(x)).sum();
    if total == 0 {
        *table = FreqTable::default();
        return;
    }
    let spare = u64::from(FREQ_TOTAL) - 256;
    // inv < 2^56; with inv = hi 2^32 + lo, floor(w inv / 2^32) = w hi + floor(w lo / 2^32)
    // exactly, and both products fit in 64 bits (w <= 2^24).
    let inv = (spare << 32) / total;
    let (hi, lo) = (u64::from((inv >> 32) as u32), u64::from(inv as u32));
    let mut freqs = [0u32; 256];
    for (f, &ws) in freqs.iter_mut().zip(&w) {
        // 32 x 32 -> 64-bit products (what SIMD multiplies offer).
        let ws = u64::from(ws);
        *f = 1 + (ws * hi + ((ws * lo) >> 32)) as u32;
    }
    let sum: u32 = freqs.iter().sum();
    let best_f = freqs.iter().copied().max().unwrap_or(0);
    // The lowest index among the largest.
    let best = freqs.iter().position(|&f| f == best_f).unwrap_or(0);
    freqs[best] += FREQ_TOTAL - sum;
    let mut acc = 0u32;
    for (c, f) in table.cum.iter_mut().zip(&freqs) {
        *c = acc;
        acc += f;
    }
    table.cum[256] = acc;
    debug_assert_eq!(acc, FREQ_TOTAL);
}
