//! IBM hexadecimal floats of CM revision 10 (doc/FORMAT.md 4.21.4): a
//! family next to revision 4's float family for big-endian arrays of
//! 4-byte numbers that are IBM System/360 single-precision floats (sign,
//! 7-bit base-16 exponent biased by 64, 24-bit fraction whose first hex
//! digit is not zero), as in seismic traces (`calgary.geo`).
//!
//! The float detector (revision 2) finds such arrays but may place an
//! element's first byte on a constant byte (the fraction's last byte is
//! often 0): this family finds its own alignment from the bytes the
//! decoder has when it is installed ([`find_phase`]), decodes the last
//! elements as numbers, predicts the next one in the value domain (the
//! previous value, linear and quadratic extrapolation, a damped step and
//! the value two back), turns each prediction back into an IBM bit pattern
//! and gives the bytes those imply as expected-bit inputs, in a situation
//! of the byte's significance and how well the linear prediction did on
//! the last element; its contexts are the implied bytes with the element's
//! bytes coded so far, and the previous values' exponents. All arithmetic
//! is integer.

use super::expected::ExpectedBits;
use super::{ByteCtx, ContextModel, hash2};

/// Value predictions (per-bit inputs).
const PREDICTIONS: usize = 5;

/// Hashed contexts.
const CONTEXTS: usize = 5;

/// Buckets of the last element's linear-prediction error.
const ERRORS: usize = 16;

/// Elements the alignment test needs.
const MIN_ELEMENTS: u32 = 256;

/// Bytes the family allocates (its expected-bit table of `AdaptiveProbs`).
pub(crate) const MEMORY: u64 = (4 * ERRORS * 8 * PREDICTIONS * 4 * 4) as u64;

/// An IBM single-precision float's parts: negative, exponent (0..=127),
/// fraction (24 bits).
#[inline]
fn parts(v: u32) -> (bool, i32, u64) {
    (
        v >> 31 == 1,
        ((v >> 24) & 0x7F) as i32,
        u64::from(v & 0xFF_FFFF),
    )
}

/// `v` as a signed multiple of `16^(eref - 70)` (`eref` at least `v`'s
/// exponent).
#[inline]
fn fixed(v: u32, eref: i32) -> i64 {
    let (neg, e, f) = parts(v);
    let shift = 4 * (eref - e);
    let a = if shift >= 32 { 0 } else { (f >> shift) as i64 };
    if neg { -a } else { a }
}

/// The IBM pattern of `p` units of `16^(eref - 70)`, normalised (first
/// hex digit of the fraction not zero), the fraction truncated; exponents
/// beyond the range give the largest or zero.
#[inline]
fn pattern(p: i64, eref: i32) -> u32 {
    if p == 0 {
        return 0;
    }
    let sign = u32::from(p < 0) << 31;
    let mut a = p.unsigned_abs();
    let mut e = eref;
    while a >= 1 << 24 {
        a >>= 4;
        e += 1;
    }
    while a < 1 << 20 {
        a <<= 4;
        e -= 1;
    }
    if e < 0 {
        return 0;
    }
    if e > 127 {
        return sign | 0x7FFF_FFFF;
    }
    sign | (e as u32) << 24 | a as u32
}

/// `sum(c * v) / 2^d` of IBM patterns `vs` with integer weights `cs`, as a
/// pattern.
#[inline]
fn combine<const N: usize>(vs: [u32; N], cs: [i64; N], d: u32) -> u32 {
    let eref = vs.iter().map(|&v| parts(v).1).max().unwrap_or(0);
    let sum: i64 = vs.iter().zip(cs).map(|(&v, c)| c * fixed(v, eref)).sum();
    pattern(sum >> d, eref)
}

/// Exponents of the values the alignment test expects (magnitudes from
/// `16^-8` to `16^8`).
const EXPONENTS: std::ops::RangeInclusive<u8> = 56..=72;

/// The phase (block position modulo 4, counted from `start`) at which
/// elements of `data[start..end]` read as normalised IBM floats: among
/// phases with at least [`MIN_ELEMENTS`] non-zero elements, of which at
/// least 95% have a first fraction digit that is not zero and at least
/// 90% an exponent in [`EXPONENTS`], the one with the most normalised
/// elements (the first of equals). `None`: no phase.
pub(crate) fn find_phase(data: &[u8], start: usize, end: usize) -> Option<usize> {
    let mut best: Option<(u32, usize)> = None;
    for phase in 0..4 {
        let (mut n, mut norm, mut typical) = (0u32, 0u32, 0u32);
        let mut at = start + phase;
        while at + 4 <= end {
            let b = &data[at..at + 4];
            if b != [0, 0, 0, 0] {
                n += 1;
                norm += u32::from(b[1] >> 4 != 0);
                typical += u32::from(EXPONENTS.contains(&(b[0] & 0x7F)));
            }
            at += 4;
        }
        if n >= MIN_ELEMENTS
            && norm * 20 >= n * 19
            && typical * 10 >= n * 9
            && best.is_none_or(|(m, _)| norm > m)
        {
            best = Some((norm, phase));
        }
    }
    best.map(|(_, p)| p)
}

/// What the family knows about the byte being coded.
struct Frame {
    /// Significance of the byte in its element (0: sign and exponent).
    rank: usize,
    /// Bit shift of the byte in the element.
    shift: u32,
    /// The element's bytes coded so far, bits in place.
    known: u32,
    /// The previous two elements.
    w: u32,
    ww: u32,
    /// The predicted patterns.
    p: [u32; PREDICTIONS],
}

/// The revision-10 IBM float family ([`CONTEXTS`] contexts,
/// [`PREDICTIONS`] per-bit inputs).
#[derive(Debug, Clone)]
pub(crate) struct Ibm10Contexts {
    /// The alignment: `Some(Some(phase))` found, `Some(None)` not IBM
    /// floats, `None` not looked yet.
    phase: Option<Option<usize>>,
    bits: ExpectedBits<PREDICTIONS>,
    /// The linear prediction of the element being coded and its first
    /// byte's position, and the error bucket of the last element.
    linear: u32,
    here: usize,
    error: usize,
}

impl Default for Ibm10Contexts {
    fn default() -> Self {
        Self::new()
    }
}

impl Ibm10Contexts {
    /// A family that finds its alignment at its first byte.
    pub fn new() -> Self {
        Ibm10Contexts {
            phase: None,
            bits: ExpectedBits::new(4 * ERRORS),
            linear: 0,
            here: usize::MAX,
            error: 0,
        }
    }

    /// The frame of the byte at `pos` (`None`: no IBM layout, or the
    /// element starts before the stream).
    fn frame(&self, data: &[u8], pos: usize, start: usize) -> Option<Frame> {
        let phase = self.phase.flatten()?;
        let first = start + phase;
        if pos < first {
            return None;
        }
        let rank = (pos - first) % 4;
        let here = pos - rank;
        let shift = 8 * (3 - rank) as u32;
        let mut known = 0u32;
        for j in 0..rank {
            known |= u32::from(data[here + j]) << (8 * (3 - j));
        }
        let value = |back: usize| -> u32 {
            match here.checked_sub(4 * back) {
                Some(at) if at >= first => {
                    u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
                }
                _ => 0,
            }
        };
        let (w, ww, www) = (value(1), value(2), value(3));
        let p = [
            w,
            combine([w, ww], [2, -1], 0),
            combine([w, ww, www], [3, -3, 1], 0),
            combine([w, ww], [3, -1], 1),
            ww,
        ];
        Some(Frame {
            rank,
            shift,
            known,
            w,
            ww,
            p,
        })
    }

    /// The byte that pattern `v` implies for the byte being coded: `v`
    /// clamped to the patterns that start with the known higher bytes.
    #[inline]
    fn implied(f: &Frame, v: u32) -> u32 {
        let v = if f.rank > 0 {
            let low = ((1u64 << (f.shift + 8)) - 1) as u32;
            v.clamp(f.known, f.known | low)
        } else {
            v
        };
        (v >> f.shift) & 0xFF
    }
}

impl ContextModel for Ibm10Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let Some(f) = self.frame(ctx.data, ctx.pos, ctx.st.start) else {
            out.fill(0);
            return;
        };
        let e = f.p.map(|v| Self::implied(&f, v));
        let tag = (f.rank as u32) << 8 | 0x1B_0000;
        let byte = |v: u32| (v >> f.shift) & 0xFF;
        let exp = |v: u32| v >> 24;
        out[0] = hash2(hash2(e[1], f.known), tag);
        out[1] = hash2(hash2(e[0], e[2]), tag | 1);
        out[2] = hash2(hash2(exp(f.w) | exp(f.ww) << 8, f.known), tag | 2);
        out[3] = hash2(hash2(byte(f.w), f.known), tag | 3);
        out[4] = hash2(hash2(e[3], self.error as u32), tag | 4);
        for h in out.iter_mut() {
            *h = hash2(*h, 0x1B10);
        }
    }

    fn bit_inputs(&self) -> usize {
        PREDICTIONS
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let (data, pos, start) = (ctx.data, ctx.pos, ctx.st.start);
        if self.phase.is_none() {
            self.phase = Some(find_phase(data, start, pos));
        }
        match self.frame(data, pos, start) {
            Some(f) => {
                let here = pos - f.rank;
                if here != self.here {
                    // The element before this one is complete: how many
                    // leading bits the linear prediction got right.
                    if self.here != usize::MAX && here == self.here + 4 {
                        let shared = (self.linear ^ f.w).leading_zeros() as usize;
                        self.error = (shared / 2).min(ERRORS - 1);
                    }
                    self.here = here;
                    self.linear = f.p[1];
                }
                let expected = f.p.map(|v| Self::implied(&f, v));
                self.bits.begin(expected, f.rank * ERRORS + self.error);
            }
            None => self.bits.begin([0; PREDICTIONS], 0),
        }
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        if self.phase.flatten().is_some() {
            self.bits.predict(c0, i, out);
        } else {
            out.fill(0);
        }
    }

    fn update_bit(&mut self, bit: u32) {
        if self.phase.flatten().is_some() {
            self.bits.update(bit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x` as an IBM single-precision pattern (test helper, not integer
    /// arithmetic).
    fn ibm(x: f64) -> u32 {
        if x == 0.0 {
            return 0;
        }
        let sign = u32::from(x < 0.0) << 31;
        let mut a = x.abs();
        let mut e = 64;
        while a >= 1.0 {
            a /= 16.0;
            e += 1;
        }
        while a < 1.0 / 16.0 {
            a *= 16.0;
            e -= 1;
        }
        sign | (e as u32) << 24 | (a * 16_777_216.0) as u32
    }

    #[test]
    fn combines_ibm_values() {
        // 2 * 3.0 - 1.0 = 5.0; 3 * 10 - 3 * 20 + 40 = 10.
        assert_eq!(combine([ibm(3.0), ibm(1.0)], [2, -1], 0), ibm(5.0));
        assert_eq!(
            combine([ibm(10.0), ibm(20.0), ibm(40.0)], [3, -3, 1], 0),
            ibm(10.0)
        );
        assert_eq!(combine([ibm(-2.5), ibm(0.5)], [1, 1], 0), ibm(-2.0));
        assert_eq!(combine([ibm(1.0), ibm(1.0)], [1, -1], 0), 0);
    }

    #[test]
    fn finds_the_phase_of_ibm_floats() {
        // Two header bytes, then IBM floats whose last byte is zero.
        let mut data = vec![0x40u8, 0x40];
        for k in 0..600 {
            let v = ibm(100.0 * (f64::from(k) * 0.1).sin() + 0.5) & 0xFFFF_FF00;
            data.extend(v.to_be_bytes());
        }
        assert_eq!(find_phase(&data, 0, data.len()), Some(2));
        // Text is not IBM floats.
        let text = b"the quick brown fox jumps over the lazy dog; ".repeat(60);
        assert_eq!(find_phase(&text, 0, text.len()), None);
    }
}
