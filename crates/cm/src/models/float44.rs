//! Float arrays at CM revision 44 (doc/FORMAT.md 4.55.4): a least-squares
//! predictor over a causal two-dimensional neighbourhood of the values
//! read as numbers (not as bit patterns), for the float arrays revision 18's
//! family follows (every width and byte order, not short records of
//! 4-byte numbers).
//!
//! For each element the twelve neighbours (W, N, NW, NE, WW, NN, NNE, NWW,
//! NEE, WWW, NNW, NNEE; the row length re-measured as revision 4's) are
//! put on one fixed-point scale: that of the largest exponent among them,
//! the hidden bit of that exponent at bit [`SCALE`] (a combination of
//! values is then a combination of integers, across exponents). An
//! integer OLS ([`super::ols`]) learns the element from them; its
//! prediction, the prediction plus the mean error in the context of the
//! neighbours' errors, and N + NE - NNE and W + NE - N, mapped back to
//! bit patterns, imply a byte each for the byte being coded (the number
//! nearest to the prediction with the bytes already coded, as revision
//! 18's family). They are expected-bit inputs by byte significance and
//! error size; four hashed contexts hold the implied bytes with the
//! errors of W and N. All arithmetic is integer.
//!
//! Revision 46 (doc/FORMAT.md 4.57.4): the family is not registered where
//! it would only cost (big-endian 4-byte numbers, short records of 4-byte
//! numbers at offset 0: [`Float44Contexts::applies46`]), and it re-finds
//! the elements' phase whenever it re-measures the row length (the
//! detector, which sees the block's first 16 KiB, can take numbers whose
//! low byte is 0 for numbers one byte later).

use super::expected::ExpectedBits;
use super::float::{DETECT_LEN, FloatInfo, RELAG, read, shared_bits, values};
use super::float18::{Elements, implied_byte, known_part, locate};
use super::ols::Ols;
use super::{ByteCtx, ContextModel, hash2};

/// Predictions (per-bit inputs).
const PREDICTIONS: usize = 4;

/// Hashed contexts.
const CONTEXTS: usize = 4;

/// Neighbours (OLS features).
const FEATURES: usize = 12;

/// Bit of the hidden bit of the neighbourhood's largest exponent.
const SCALE: u32 = 18;

/// OLS covariance decay (`2^-DECAY` per element) and solving period.
const DECAY: u32 = 10;
const EVERY: u32 = 16;

/// Error buckets (size and sign).
const ERRS: usize = 32;

/// Activity buckets.
const ACTIVITY: usize = 16;

/// Per-bit situations: byte significance (up to 8) and activity.
const SITUATIONS: usize = 8 * ACTIVITY;

/// Bias cells: the error buckets of W and N.
const BIAS_CELLS: usize = ERRS * ERRS;

/// Length of the error ring (elements).
const RING: usize = 4099;

/// Bytes the family allocates: the expected-bit table, the bias cells,
/// the error ring and the OLS state.
pub(crate) const MEMORY: u64 = (SITUATIONS * 8 * PREDICTIONS * 4 * 4) as u64
    + (BIAS_CELLS * 16) as u64
    + (RING * 8) as u64
    + (FEATURES * FEATURES * 8 * 2 + FEATURES * 16) as u64;

/// Neighbours as (rows back, columns back; negative: ahead).
const NEIGHBOURS: [(usize, isize); FEATURES] = [
    (0, 1),
    (1, 0),
    (1, 1),
    (1, -1),
    (0, 2),
    (2, 0),
    (2, -1),
    (1, 2),
    (1, -2),
    (0, 3),
    (2, 1),
    (2, -2),
];

/// The float format of a width.
#[derive(Debug, Clone, Copy)]
struct Numbers {
    bits: u32,
    mant: u32,
    emax: i32,
}

impl Numbers {
    fn new(width: usize) -> Self {
        if width == 8 {
            Numbers {
                bits: 64,
                mant: 52,
                emax: 2047,
            }
        } else {
            Numbers {
                bits: 32,
                mant: 23,
                emax: 255,
            }
        }
    }

    /// The exponent field of `v`, at least 1.
    #[inline]
    fn exp(&self, v: u64) -> i32 {
        (((v >> self.mant) as i32) & self.emax).max(1)
    }

    /// `v` on the scale of exponent `eref` (its hidden bit at [`SCALE`]),
    /// truncated; values above the scale saturate near `2^(SCALE + 2)`.
    #[inline]
    fn scaled(&self, v: u64, eref: i32) -> i32 {
        let e = ((v >> self.mant) as i32) & self.emax;
        let f = v & ((1u64 << self.mant) - 1);
        let m = if e == 0 { f } else { f | 1u64 << self.mant };
        // Bits to shift m right: the exponent gap plus mant - SCALE.
        let shift = eref - e.max(1) + self.mant as i32 - SCALE as i32;
        let a = if shift >= 63 {
            0
        } else if shift >= 0 {
            (m >> shift) as i64
        } else {
            let up = (-shift).min(8) as u32;
            ((m << up) as i64).min(1 << (SCALE + 2))
        };
        let a = a.min(1 << (SCALE + 2)) as i32;
        if (v >> (self.bits - 1)) & 1 == 1 {
            -a
        } else {
            a
        }
    }

    /// The bit pattern of the scaled value `p` (on `eref`'s scale), the
    /// mantissa truncated.
    #[inline]
    fn pattern(&self, p: i64, eref: i32) -> u64 {
        if p == 0 {
            return 0;
        }
        let sign = u64::from(p < 0) << (self.bits - 1);
        let a = p.unsigned_abs();
        let n = 64 - a.leading_zeros() as i32;
        // The value is a * 2^(eref - bias - SCALE); as a mantissa of
        // mant + 1 bits at exponent e: e = eref + n - 1 - SCALE.
        let top = self.mant as i32 + 1;
        let e = eref + n - 1 - SCALE as i32;
        let mask = (1u64 << self.mant) - 1;
        if e < 1 {
            // Denormal: the value at exponent 1's scale.
            let s = SCALE as i32 - self.mant as i32 + 1 - eref;
            let m = if s >= 0 {
                a.checked_shr(s as u32).unwrap_or(0)
            } else {
                a << (-s).min(40)
            };
            return sign | (m & mask);
        }
        if e >= self.emax {
            return sign | ((self.emax as u64 - 1) << self.mant) | mask;
        }
        let m = if n > top {
            a >> (n - top)
        } else {
            a << (top - n)
        };
        sign | (e as u64) << self.mant | (m & mask)
    }
}

/// The error bucket of `e`: its bit length halved (at most 15) and its
/// sign.
#[inline]
fn bucket(e: i64) -> usize {
    let len = 64 - e.unsigned_abs().leading_zeros() as usize;
    ((len / 2).min(ERRS / 2 - 1) << 1) | usize::from(e < 0)
}

/// What the family knows about an element before its first byte.
#[derive(Debug, Clone, Copy, Default)]
struct Elem {
    /// Block position of its first byte.
    here: usize,
    /// The neighbourhood's scale.
    eref: i32,
    /// The neighbours on that scale.
    x: [i32; FEATURES],
    /// OLS prediction on that scale.
    ols: i64,
    /// Predicted bit patterns.
    p: [u64; PREDICTIONS],
    /// Error buckets of W and N.
    qw: usize,
    qn: usize,
    /// Activity bucket.
    act: usize,
}

/// The revision-44 float family ([`CONTEXTS`] contexts, [`PREDICTIONS`]
/// per-bit inputs).
#[derive(Debug, Clone)]
pub(crate) struct Float44Contexts {
    info: FloatInfo,
    num: Numbers,
    lag: usize,
    bits: ExpectedBits<PREDICTIONS>,
    ols: Ols,
    cur: Elem,
    /// OLS errors (relative to the scale: shifted to [`SCALE`] bits) of
    /// the last elements by element number modulo [`RING`].
    errs: Vec<i64>,
    bias: Vec<(i64, i64)>,
    hash: [u32; CONTEXTS],
    measured: bool,
    idle: bool,
    /// The block start seen at the last `begin_byte` and the (start,
    /// position) prepared last.
    start: usize,
    ready: (usize, usize),
    /// Revision 46: re-find the phase at each re-measurement.
    rephase: bool,
}

impl Float44Contexts {
    /// Revision 46 (doc/FORMAT.md 4.57.4): whether the family is
    /// registered for an array laid out as `info`. Not for big-endian
    /// 4-byte numbers (IBM floats as `calgary.geo`: revision 10's
    /// family's; the values read as IEEE numbers mislead) nor for short
    /// records of 4-byte numbers that start at the block's first byte
    /// (lag 3 to 16, offset 0: revisions 7, 10 and 26's families'; the
    /// family would stay idle and its contexts only cost). A record
    /// layout found at another offset is doubtful (a constant start
    /// looks like records at any phase): there the family stays, finds
    /// its own phase and row length ([`Self::with_phase`]) and is idle
    /// only while it measures short records.
    pub fn applies46(info: &FloatInfo) -> bool {
        !(info.width == 4
            && (info.big_endian || ((3..=16).contains(&info.lag) && info.offset == 0)))
    }

    /// Revision 46: the family re-finds the elements' phase whenever it
    /// re-measures the row length (`rephase`).
    pub fn with_phase(info: FloatInfo, rephase: bool) -> Self {
        Float44Contexts {
            rephase,
            info,
            num: Numbers::new(info.width),
            lag: info.lag.max(2),
            bits: ExpectedBits::new(SITUATIONS),
            ols: Ols::new(FEATURES, &[FEATURES], DECAY, EVERY, 0),
            cur: Elem {
                here: usize::MAX,
                ..Elem::default()
            },
            errs: vec![0; RING],
            bias: vec![(0, 0); BIAS_CELLS],
            hash: [0; CONTEXTS],
            measured: false,
            idle: true,
            start: 0,
            ready: (usize::MAX, usize::MAX),
        }
    }

    #[inline]
    fn number(&self, here: usize) -> usize {
        here / self.info.width
    }

    /// The OLS error stored for the element `back` elements before `here`.
    #[inline]
    fn err(&self, here: usize, back: usize, first: usize) -> i64 {
        match here.checked_sub(back * self.info.width) {
            Some(at) if at >= first => self.errs[self.number(at) % RING],
            _ => 0,
        }
    }

    fn elem(&self, data: &[u8], here: usize, first: usize) -> Elem {
        let FloatInfo {
            width, big_endian, ..
        } = self.info;
        let lag = self.lag as isize;
        let raw = |(r, c): (usize, isize)| -> u64 {
            let back = r as isize * lag + c;
            if back <= 0 {
                return 0;
            }
            match here.checked_sub(back as usize * width) {
                Some(at) if at >= first => read(data, at, width, big_endian),
                _ => 0,
            }
        };
        let vals = NEIGHBOURS.map(raw);
        let eref = vals.iter().map(|&v| self.num.exp(v)).max().unwrap_or(1);
        let x = vals.map(|v| self.num.scaled(v, eref));
        let ols = i64::from(self.ols.predict(0, &x));
        let (ew, en) = (self.err(here, 1, first), self.err(here, self.lag, first));
        let (qw, qn) = (bucket(ew), bucket(en));
        let (sum, count) = self.bias[qw * ERRS + qn];
        let fix = if count > 0 { sum / count } else { 0 };
        let act = ((qw >> 1) + (qn >> 1)).min(ACTIVITY - 1);
        let (w, n, ne, nne) = (
            i64::from(x[0]),
            i64::from(x[1]),
            i64::from(x[3]),
            i64::from(x[6]),
        );
        let p = [ols, ols + fix, n + ne - nne, w + ne - n].map(|v| self.num.pattern(v, eref));
        Elem {
            here,
            eref,
            x,
            ols,
            p,
            qw,
            qn,
            act,
        }
    }

    /// Revision 46: the phase (the offset of an element's first byte from
    /// the block start, modulo the width) of the
    /// elements over the [`DETECT_LEN`] bytes before `end`: of the phases
    /// where at most an eighth of the elements are tiny nonzero numbers
    /// (exponent field 0 or 1: the bytes of two numbers read as one, the
    /// top byte a low byte of zeros), the one whose neighbours share the
    /// most leading bits; the current one when none qualifies.
    fn phase(&self, data: &[u8], end: usize) -> usize {
        let FloatInfo {
            width, big_endian, ..
        } = self.info;
        let base = end - DETECT_LEN;
        let mut best = (0u64, self.info.offset);
        for o in 0..width {
            // Elements start where (position - block start) % width == o.
            let first = base + (self.start % width + o + width - base % width) % width;
            let vals = values(&data[base..end], base, first, width, big_endian);
            let tiny = vals
                .iter()
                .filter(|&&v| v << (65 - self.num.bits) != 0 && self.num.exp(v) <= 1)
                .count();
            if tiny * 8 > vals.len() {
                continue;
            }
            let sum: u64 = vals
                .windows(2)
                .map(|w| u64::from(shared_bits(w[1], w[0], width)))
                .sum();
            if sum > best.0 {
                best = (sum, o);
            }
        }
        best.1
    }

    /// Learns the element at `here` (all coded).
    fn learn(&mut self, data: &[u8], here: usize) {
        let FloatInfo {
            width, big_endian, ..
        } = self.info;
        let v = read(data, here, width, big_endian);
        let s = self.num.scaled(v, self.cur.eref);
        self.ols.update(&self.cur.x, s);
        let e = i64::from(s) - self.cur.ols;
        let slot = self.number(here) % RING;
        self.errs[slot] = e;
        let cell = &mut self.bias[self.cur.qw * ERRS + self.cur.qn];
        cell.0 += e.clamp(-(1 << 24), 1 << 24);
        cell.1 += 1;
        if cell.1 >= 256 {
            cell.0 /= 2;
            cell.1 /= 2;
        }
    }

    /// The byte at `pos` of the block starting at `start`.
    fn prepare(&mut self, data: &[u8], pos: usize, start: usize) {
        let FloatInfo {
            width, big_endian, ..
        } = self.info;
        let located = locate(self, data, pos, start);
        self.idle = located.is_none();
        let Some((here, k)) = located else {
            self.hash = [0; CONTEXTS];
            self.bits.begin([0; PREDICTIONS], 0);
            return;
        };
        let e = self.cur;
        let (rank, shift, known) = known_part(data, here, k, width, big_endian);
        let implied = |p: u64| implied_byte(p, known, rank, shift, width, big_endian);
        let x = e.p.map(implied);
        self.bits.begin(x, rank.min(7) * ACTIVITY + e.act);
        let tag = (rank as u32) << 8 | width as u32;
        let q = (e.qw * ERRS + e.qn) as u32;
        self.hash = [
            hash2(hash2(x[0], q), tag | 0x44_0000),
            hash2(hash2(x[1] | x[0] << 8, e.act as u32), tag | 0x44_1000),
            hash2(hash2(x[2] | x[3] << 8, e.qn as u32), tag | 0x44_2000),
            hash2(hash2(x[0] | x[2] << 8, x[3]), tag | 0x44_3000),
        ]
        .map(|h| hash2(h, 0xF144));
    }
}

impl Elements for Float44Contexts {
    fn info(&self) -> FloatInfo {
        self.info
    }

    fn lag(&self) -> usize {
        self.lag
    }

    fn current(&self) -> usize {
        self.cur.here
    }

    fn learn(&mut self, data: &[u8], here: usize) {
        Float44Contexts::learn(self, data, here);
    }

    fn enter(&mut self, data: &[u8], here: usize, first: usize) {
        self.cur = self.elem(data, here, first);
    }
}

impl ContextModel for Float44Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, out: &mut [u32]) {
        out.copy_from_slice(&self.hash);
    }

    fn bit_inputs(&self) -> usize {
        PREDICTIONS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.start = ctx.st.start;
        let now = (ctx.st.start, ctx.pos);
        if self.ready != now {
            self.ready = now;
            self.prepare(ctx.data, ctx.pos, ctx.st.start);
        }
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        if self.idle {
            out.fill(0);
        } else {
            self.bits.predict(c0, i, out);
        }
    }

    fn update_bit(&mut self, bit: u32) {
        if !self.idle {
            self.bits.update(bit);
        }
    }

    /// Re-measures the row length as revision 18's family, then prepares
    /// the next byte (its hashes are read before its `begin_byte`).
    fn observe(&mut self, data: &[u8], pos: usize, _byte: u8) {
        let end = pos + 1;
        if (end.is_multiple_of(RELAG) || !self.measured) && end >= DETECT_LEN {
            self.measured = true;
            if self.rephase {
                self.info.offset = self.phase(data, end);
            }
            self.lag = self.info.lag_before(data, end);
        }
        self.ready = (self.start, pos + 1);
        self.prepare(data, pos + 1, self.start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scaled_values_map_back_to_their_patterns() {
        for width in [4usize, 8] {
            let num = Numbers::new(width);
            for &f in &[1.0f64, 2804.0, -3802.25, 61.0625, 0.001, -1e-30] {
                let v = if width == 4 {
                    u64::from((f as f32).to_bits())
                } else {
                    f.to_bits()
                };
                let e = num.exp(v);
                let s = num.scaled(v, e);
                let back = num.pattern(i64::from(s), e);
                // Exact up to the bits below the scale.
                let drop = num.mant.saturating_sub(SCALE);
                assert_eq!(back >> drop, v >> drop, "{f} width {width}");
            }
        }
    }
}
