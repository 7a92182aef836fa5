//! Unit-norm records of four floats at CM revision 24 (doc/FORMAT.md
//! 4.35.3): in an array of little-endian 4-byte floats whose records of
//! four elements have a sum of squares of 1 (unit quaternions, unit
//! vectors with a fourth component), the fourth element's magnitude
//! follows from the other three: `|w| = sqrt(1 - x^2 - y^2 - z^2)`.
//!
//! The family finds the record phase by itself: after every element it
//! checks whether the four elements ending there have a sum of squares
//! within 2^-16 of 1, and counts the hits per element number modulo 4; the
//! phase with the most hits (at least three quarters of its checks and 8)
//! ends the records. For the element that ends a record it computes the
//! square root in fixed point (exact integer arithmetic) and rounds it to
//! the float's bit pattern `P`. Each byte of the element then has an
//! implied byte: that of the magnitude nearest to `P` whose lower bytes are
//! the ones already coded (the carry they imply), with the sign of the
//! previous record's fourth element in the top byte. The implied byte is
//! an expected-bit input and, with the prediction's exponent and the
//! distance of the coded lower bytes from `P`, two hashed contexts; the
//! top byte's contexts also hold the previous records' signs. The family
//! is idle (zero inputs, constant contexts) for the other elements and
//! other arrays. All arithmetic is integer.

use super::expected::ExpectedBits;
use super::float::FloatInfo;
use super::{ByteCtx, ContextModel, hash2};
use crate::logistic::stretch;

/// Hashed contexts.
const CONTEXTS: usize = 2;

/// Expected-bit inputs (one more per-bit input: the error histogram's).
const PREDICTIONS: usize = 1;

/// Errors `-RANGE..RANGE` (in units of the last place) the histograms count.
const RANGE: i64 = 32;

/// Cells of one error histogram: the errors `-RANGE..RANGE` and one for the
/// errors outside.
const HIST_WIDTH: usize = 2 * RANGE as usize + 1;

/// Exponent classes with their own error histogram (later ones share the
/// last).
const HCLASS: usize = 4;

/// Exponent classes of the prediction.
const ECLASS: usize = 32;

/// Buckets of the coded lower bytes' distance from the prediction.
const DIST: usize = 16;

/// Per-bit situations: byte (4), exponent class, distance bucket.
const SITUATIONS: usize = 4 * ECLASS * DIST;

/// Bytes the family allocates: the expected-bit table (4-byte entries).
/// and the error histograms.
pub(crate) const MEMORY: u64 =
    (SITUATIONS * 8 * PREDICTIONS * 4 * 4) as u64 + (HCLASS * HIST_WIDTH * 4) as u64;

/// 1 in the fixed point of the squares (120 fractional bits).
const ONE: u128 = 1 << 120;

/// The square of the float with bit pattern `b` times 2^120 (`None` for
/// magnitudes of 2 and more, infinities and NaNs).
#[inline]
fn square(b: u32) -> Option<u128> {
    let e = (b >> 23) & 0xFF;
    if e > 127 {
        return None;
    }
    let (m, e) = if e == 0 {
        (u128::from(b & 0x7F_FFFF), 1)
    } else {
        (u128::from(b & 0x7F_FFFF | 0x80_0000), e)
    };
    // value = m * 2^(e - 150); value^2 * 2^120 = m^2 * 2^(2e - 180).
    let sq = m * m;
    let shift = 2 * e as i32 - 180;
    Some(if shift >= 0 {
        sq << shift
    } else if shift > -128 {
        sq >> (-shift)
    } else {
        0
    })
}

/// The sum of the squares of four (or three) floats times 2^120.
#[inline]
fn sum_squares(vals: &[u32]) -> Option<u128> {
    vals.iter().try_fold(0u128, |s, &b| Some(s + square(b)?))
}

/// The bit pattern (sign clear) of the float nearest to `s` * 2^-60.
#[inline]
fn float_bits(s: u64) -> u32 {
    if s == 0 {
        return 0;
    }
    let msb = 63 - s.leading_zeros() as i32;
    // value in [2^(msb-60), 2^(msb-59)): biased exponent msb - 60 + 127.
    let mut e = msb + 67;
    if e <= 0 {
        return 0;
    }
    let mut m = if msb >= 23 {
        let sh = msb - 23;
        let half = if sh > 0 { 1u64 << (sh - 1) } else { 0 };
        (s + half) >> sh
    } else {
        s << (23 - msb)
    };
    if m >= 1 << 24 {
        m >>= 1;
        e += 1;
    }
    ((e as u32) << 23) | (m as u32 & 0x7F_FFFF)
}

/// Bit length of `v` (0 for 0).
#[inline]
fn bit_len(v: u64) -> usize {
    64 - v.leading_zeros() as usize
}

/// The revision-24 unit-norm record family.
#[derive(Debug, Clone)]
pub(crate) struct Float24Contexts {
    info: FloatInfo,
    bits: ExpectedBits<PREDICTIONS>,
    /// Per element number modulo 4: checks and hits of the unit norm.
    tries: [u32; 4],
    hits: [u32; 4],
    /// Block start seen at the last `begin_byte`.
    start: usize,
    /// Block start and position prepared last.
    ready: (usize, usize),
    /// Whether the byte prepared is one the family predicts.
    active: bool,
    /// Element start and prediction `P` (sign clear) of the element.
    elem: (usize, u32),
    /// Signs of the fourth elements of the last two records.
    signs: u32,
    hash: [u32; CONTEXTS],
    /// Per histogram class: the count of each error `-RANGE..RANGE`, then
    /// of the errors outside.
    hist: Vec<u32>,
    /// The histogram class of the element, and whether the byte is its
    /// lowest (the histogram input is on).
    hclass: usize,
    low: bool,
}

impl Float24Contexts {
    /// The family for an array laid out as `info`.
    pub fn new(info: FloatInfo) -> Self {
        Float24Contexts {
            info,
            bits: ExpectedBits::new(SITUATIONS),
            tries: [0; 4],
            hits: [0; 4],
            start: 0,
            ready: (usize::MAX, usize::MAX),
            active: false,
            elem: (usize::MAX, 0),
            signs: 0,
            hash: [0; CONTEXTS],
            hist: vec![0; HCLASS * HIST_WIDTH],
            hclass: 0,
            low: false,
        }
    }

    /// The histogram input for bit `i` of the element's lowest byte (`c0`
    /// the bits so far with a leading 1): the probability of a 1 among the
    /// errors whose lowest byte starts with the bits so far, the errors
    /// outside the range spread evenly over the 256 byte values.
    fn hist_input(&self, c0: u32, i: u32) -> i32 {
        let width = HIST_WIDTH;
        let h = &self.hist[self.hclass * width..(self.hclass + 1) * width];
        let coded = 7 - i;
        let prefix = c0 ^ (1 << coded);
        let out = u64::from(h[width - 1]) << i;
        let (mut s0, mut s1) = (out, out);
        let p = i64::from(self.elem.1);
        for (j, &n) in h[..width - 1].iter().enumerate() {
            let v = ((p + j as i64 - RANGE) & 0xFF) as u32;
            if v >> (8 - coded) == prefix {
                if (v >> i) & 1 == 1 {
                    s1 += u64::from(n) << 8;
                } else {
                    s0 += u64::from(n) << 8;
                }
            }
        }
        let p1 = ((s1 + 1) << 16) / (s0 + s1 + 2);
        stretch(p1.clamp(1, 65535) as u32)
    }

    /// Counts the error of the element at `here` (all of it coded).
    fn learn(&mut self, data: &[u8], here: usize) {
        let width = HIST_WIDTH;
        let actual = i64::from(Self::elem_at(data, here) & 0x7FFF_FFFF);
        let e = actual - i64::from(self.elem.1);
        let h = &mut self.hist[self.hclass * width..(self.hclass + 1) * width];
        let slot = if (-RANGE..RANGE).contains(&e) {
            (e + RANGE) as usize
        } else {
            width - 1
        };
        h[slot] += 1;
        if h[slot] >= 1 << 16 {
            h.iter_mut().for_each(|n| *n /= 2);
        }
    }

    /// Whether the family applies to arrays laid out as `info`.
    pub fn applies(info: &FloatInfo) -> bool {
        info.width == 4 && !info.big_endian
    }

    /// The element number modulo 4 that ends records, if the unit norm
    /// holds there.
    fn phase(&self) -> Option<usize> {
        let mut best = 0;
        for p in 1..4 {
            if self.hits[p] > self.hits[best] {
                best = p;
            }
        }
        (self.hits[best] >= 8 && self.hits[best] * 4 >= self.tries[best] * 3).then_some(best)
    }

    /// Reads the element starting at `at`.
    #[inline]
    fn elem_at(data: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
    }

    /// After the element ending at `end` (exclusive), element number `j`
    /// from `first`: checks the unit norm of the four elements ending there.
    fn check(&mut self, data: &[u8], end: usize, j: usize, first: usize) {
        if end < first + 16 {
            return;
        }
        let vals = [16, 12, 8, 4].map(|b| Self::elem_at(data, end - b));
        let p = j % 4;
        self.tries[p] += 1;
        if let Some(s) = sum_squares(&vals)
            && s.abs_diff(ONE) < ONE >> 16
        {
            self.hits[p] += 1;
        }
        if self.tries[p] >= 1 << 16 {
            self.tries[p] /= 2;
            self.hits[p] /= 2;
        }
    }

    /// Prepares the byte at `pos` of the block starting at `start`.
    fn prepare(&mut self, data: &[u8], pos: usize, start: usize) {
        self.active = false;
        self.low = false;
        self.hash = [0; CONTEXTS];
        let first = start + self.info.offset % 4;
        if pos < first + 12 {
            self.bits.begin([0; PREDICTIONS], 0);
            return;
        }
        let k = (pos - first) % 4;
        let here = pos - k;
        let j = (here - first) / 4;
        let Some(ph) = self.phase() else {
            self.bits.begin([0; PREDICTIONS], 0);
            return;
        };
        if j % 4 != ph {
            self.bits.begin([0; PREDICTIONS], 0);
            return;
        }
        if self.elem.0 != here {
            let vals = [12, 8, 4].map(|b| Self::elem_at(data, here - b));
            let p = match sum_squares(&vals) {
                Some(s) if s < ONE => float_bits((ONE - s).isqrt() as u64),
                Some(_) => 0,
                None => {
                    self.bits.begin([0; PREDICTIONS], 0);
                    return;
                }
            };
            self.elem = (here, p);
        }
        self.active = true;
        let p = self.elem.1;
        let mut known = 0u32;
        for i in 0..k {
            known |= u32::from(data[here + i]) << (8 * i);
        }
        let shift = 8 * k as u32;
        // The magnitude nearest to P whose lower k bytes are the known ones,
        // and the signed distance of the known bytes from P's.
        let (implied, dist) = if k == 0 {
            (p, 0usize)
        } else {
            let step = 1i64 << shift;
            let pl = i64::from(p);
            let low = pl & (step - 1);
            let mut d = i64::from(known) - low;
            if d >= step / 2 {
                d -= step;
            } else if d < -step / 2 {
                d += step;
            }
            let v = (pl + d).clamp(0, 0x7FFF_FFFF) as u32;
            (v, 1 + bit_len(d.unsigned_abs()).min(DIST - 2))
        };
        let sign = self.signs & 1;
        let mut byte = (implied >> shift) & 0xFF;
        if k == 3 {
            byte |= sign << 7;
        }
        let e = (p >> 23) as usize;
        let eclass = 127usize.saturating_sub(e).min(ECLASS - 1);
        self.hclass = eclass.min(HCLASS - 1);
        self.low = k == 0;
        self.bits.begin([byte], (k * ECLASS + eclass) * DIST + dist);
        let tag = (k as u32) << 12 | (eclass as u32) << 4 | dist as u32;
        let signs = if k == 3 { self.signs & 3 } else { 0 };
        self.hash = [
            hash2(hash2(byte, tag), 0xF24_0000),
            hash2(hash2(byte >> 2, tag ^ signs << 20), 0xF24_1000),
        ];
    }
}

impl ContextModel for Float24Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, _ctx: &ByteCtx<'_>, out: &mut [u32]) {
        out.copy_from_slice(&self.hash);
    }

    fn bit_inputs(&self) -> usize {
        PREDICTIONS + 1
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        self.start = ctx.st.start;
        if self.ready != (ctx.st.start, ctx.pos) {
            self.ready = (ctx.st.start, ctx.pos);
            self.prepare(ctx.data, ctx.pos, ctx.st.start);
        }
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        if self.active {
            self.bits.predict(c0, i, &mut out[..PREDICTIONS]);
            out[PREDICTIONS] = if self.low { self.hist_input(c0, i) } else { 0 };
        } else {
            out.fill(0);
        }
    }

    fn update_bit(&mut self, bit: u32) {
        if self.active {
            self.bits.update(bit);
        }
    }

    /// After an element's last byte: checks the unit norm there, and keeps
    /// the sign of a record's last element; then prepares the next byte.
    fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        let first = self.start + self.info.offset % 4;
        if pos >= first && (pos - first) % 4 == 3 {
            let j = (pos - first) / 4;
            self.check(data, pos + 1, j, first);
            if self.active && self.elem.0 + 3 == pos {
                self.learn(data, self.elem.0);
            }
            if self.phase() == Some(j % 4) {
                self.signs = (self.signs << 1 | u32::from(byte >> 7)) & 0xFF;
            }
        }
        self.ready = (self.start, pos + 1);
        self.prepare(data, pos + 1, self.start);
    }
}
