//! Float-array contexts (CM revision 2) for headerless arrays of 4- or
//! 8-byte numbers (IEEE floats of either byte order, IBM floats, and other
//! sign-magnitude or two's-complement fixed-width values), found from
//! statistics of the block's first bytes ([`FloatInfo::detect`]).
//!
//! Every value is read as an integer bit pattern and mapped to an ordered
//! integer (sign-magnitude folded, so that `a < b` as numbers of one sign
//! means `a < b` as integers). The family predicts the value of the element
//! being coded from the previous two elements (the previous value, linear
//! extrapolation) and from the element one record back (the record above,
//! and the record above moved by the last step), and each context is the
//! byte a prediction implies for the byte being coded (for a big-endian
//! layout clamped to the range the already coded higher bytes allow), with
//! the byte's significance. Further contexts: the same byte of the previous
//! two values, the previous value's sign and exponent with the bytes of this
//! element coded so far. All arithmetic is integer.

use super::expected::ExpectedBits;
use super::{ByteCtx, ContextModel, hash2};

/// The layout of a float array in a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FloatInfo {
    /// Bytes per element (4 or 8).
    pub width: usize,
    /// Most significant byte first.
    pub big_endian: bool,
    /// Block position of an element's first byte, modulo `width`.
    pub offset: usize,
    /// Elements per record or row found by the detector (at least 2).
    pub lag: usize,
}

impl FloatInfo {
    /// The row or record length (elements) measured over the
    /// [`DETECT_LEN`] bytes before `end` (at least [`DETECT_LEN`]): the
    /// families re-measure it every [`RELAG`] bytes.
    pub(crate) fn lag_before(&self, data: &[u8], end: usize) -> usize {
        let FloatInfo {
            width,
            big_endian,
            offset,
            ..
        } = *self;
        let base = end - DETECT_LEN;
        let first = base + (offset + width - base % width) % width;
        let vals = values(&data[base..end], base, first, width, big_endian);
        best_lag(&vals, width)
    }
}

/// Bytes of the block's start that [`FloatInfo::detect`] looks at.
pub(crate) const DETECT_LEN: usize = 1 << 14;

/// The element ending at `at + width` read as an unsigned integer.
#[inline]
pub(crate) fn read(data: &[u8], at: usize, width: usize, big_endian: bool) -> u64 {
    let b = &data[at..at + width];
    if big_endian {
        b.iter().fold(0u64, |v, &x| v << 8 | u64::from(x))
    } else {
        b.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x))
    }
}

/// Leading bits two `width`-byte values share (0..=64 scaled to the width).
#[inline]
pub(crate) fn shared_bits(a: u64, b: u64, width: usize) -> u32 {
    let x = (a ^ b) << (64 - 8 * width);
    x.leading_zeros().min(8 * width as u32)
}

/// The lag in 2..=[`MAX_LAG`] at which the values of `vals` share the
/// most leading bits with the value that many before (the first such lag):
/// the row or record length. 2 when there are too few values.
pub(crate) fn best_lag(vals: &[u64], width: usize) -> usize {
    let mut best = (0u64, 2usize);
    for lag in 2..=MAX_LAG.min(vals.len() / 2) {
        let sum: u64 = (lag..vals.len())
            .map(|k| u64::from(shared_bits(vals[k], vals[k - lag], width)))
            .sum();
        let score = sum * 1024 / (vals.len() - lag) as u64;
        if score > best.0 {
            best = (score, lag);
        }
    }
    best.1
}

/// The longest row or record, in elements, that the family looks for.
const MAX_LAG: usize = 2048;

/// The elements of a width-`width` array in `data` whose first element
/// starts at block position `first` (`data` starts at block position
/// `base`).
pub(crate) fn values(
    data: &[u8],
    base: usize,
    first: usize,
    width: usize,
    big_endian: bool,
) -> Vec<u64> {
    let skip = first - base;
    (0..(data.len() - skip) / width)
        .map(|k| read(data, skip + k * width, width, big_endian))
        .collect()
}

/// Whether the byte statistics of the positions in an element look like
/// numbers laid out as `info`: the most significant byte (sign and
/// exponent) takes few values and some other position many, where in code
/// or text every position looks alike. The effective number of byte values
/// at a position is `n^2 / sum of squared counts`; the most significant
/// byte's must be at most a third of the largest.
fn phases_differ(data: &[u8], info: &FloatInfo) -> bool {
    let width = info.width;
    let mut eff = Vec::with_capacity(width);
    for phase in 0..width {
        let mut counts = [0u64; 256];
        let mut n = 0u64;
        for &b in data.iter().skip(phase).step_by(width) {
            counts[usize::from(b)] += 1;
            n += 1;
        }
        let squares: u64 = counts.iter().map(|c| c * c).sum();
        eff.push(n * n * 16 / squares.max(1));
    }
    let top = (info.offset + if info.big_endian { 0 } else { width - 1 }) % width;
    eff.iter().max().is_some_and(|&hi| 3 * eff[top] <= hi)
}

impl FloatInfo {
    /// Looks at the first [`DETECT_LEN`] bytes of a block for an array of
    /// 4- or 8-byte values: for each width, byte order and alignment, the
    /// mean number of leading bits that each element shares with the one
    /// before (or with the one `lag` elements before, lag 2..=16); the
    /// best layout wins if elements share at least 9 bits on average (16
    /// times that in sixteenths), fewer than 63/64 of neighbours are equal
    /// (not padding), and 8-byte elements only if they beat 4-byte ones by 2
    /// bits, and only if the byte positions of an element have different
    /// statistics ([`phases_differ`]). `None` for anything else.
    pub fn detect(data: &[u8]) -> Option<FloatInfo> {
        let data = &data[..data.len().min(DETECT_LEN)];
        let mut best: Option<(u32, FloatInfo)> = None;
        let mut best4 = 0u32;
        for width in [4usize, 8] {
            let n = data.len() / width;
            if n < 64 {
                continue;
            }
            for big_endian in [false, true] {
                for offset in 0..width {
                    let vals = values(data, 0, offset, width, big_endian);
                    let score = |lag: usize| -> (u32, usize) {
                        let mut sum = 0u64;
                        let mut equal = 0usize;
                        for k in lag..vals.len() {
                            sum += u64::from(shared_bits(vals[k], vals[k - lag], width));
                            equal += usize::from(vals[k] == vals[k - lag]);
                        }
                        let m = (vals.len() - lag).max(1) as u64;
                        (
                            (sum * 16 / m) as u32,
                            equal * 64 / (vals.len() - lag).max(1),
                        )
                    };
                    let (s1, eq1) = score(1);
                    if eq1 >= 63 {
                        continue;
                    }
                    let mut lag = 1;
                    let mut s = s1;
                    // Records: a field is closer to itself a record back.
                    for l in 2..=16 {
                        let (sl, _) = score(l);
                        if sl > s + 16 {
                            s = sl;
                            lag = l;
                        }
                    }
                    if width == 4 {
                        best4 = best4.max(s);
                    } else if s < best4 + 32 {
                        continue;
                    }
                    if s >= 9 * 16 && best.is_none_or(|(b, _)| s > b) {
                        best = Some((
                            s,
                            FloatInfo {
                                width,
                                big_endian,
                                offset,
                                lag,
                            },
                        ));
                    }
                }
            }
        }
        best.filter(|(_, info)| phases_differ(data, info))
            .map(|(_, info)| {
                let vals = values(data, 0, info.offset, info.width, info.big_endian);
                FloatInfo {
                    lag: if info.lag > 1 {
                        info.lag
                    } else {
                        best_lag(&vals, info.width)
                    },
                    ..info
                }
            })
    }
}

/// Number of value predictions.
const PREDICTIONS: usize = 4;

/// What the family knows about the element the next byte belongs to.
struct Frame {
    /// Significance of the byte: 0 the most significant.
    rank: usize,
    /// The bit shift of the byte in the element.
    shift: u32,
    /// The element's bytes coded so far (as bits in place).
    known: u64,
    /// The previous two values.
    v1: u64,
    v2: u64,
    /// The value one record back.
    vr: u64,
    /// Predicted bit patterns.
    p: [u64; PREDICTIONS],
    /// How far apart the previous two values are (bits they do not share).
    spread: u32,
    /// The element's field in its record (0 for rows longer than 64).
    col: u32,
}

/// The float family (8 contexts).
#[derive(Debug, Clone)]
pub(crate) struct FloatContexts {
    info: FloatInfo,
    /// Elements per row or record: the detector's, then re-measured every
    /// [`RELAG`] bytes over the last [`DETECT_LEN`].
    lag: usize,
    bits: ExpectedBits<PREDICTIONS>,
}

/// Bytes between two measurements of the row or record length.
pub(crate) const RELAG: usize = 1 << 16;

/// Spread buckets in selectors and per-bit situations.
const SPREADS: usize = 16;

impl FloatContexts {
    /// The family for an array laid out as `info`.
    pub fn new(info: FloatInfo) -> Self {
        FloatContexts {
            info,
            lag: info.lag.max(2),
            bits: ExpectedBits::new(8 * SPREADS),
        }
    }

    /// Bits of an element.
    fn bits_wide(&self) -> u32 {
        8 * self.info.width as u32
    }

    /// The bit pattern `v` as an ordered integer.
    fn ordered(&self, v: u64) -> i128 {
        let sign = 1u64 << (self.bits_wide() - 1);
        if v & sign != 0 {
            -i128::from(v & (sign - 1))
        } else {
            i128::from(v)
        }
    }

    /// The bit pattern of the ordered integer `o` (clamped to the width).
    fn pattern(&self, o: i128) -> u64 {
        let sign = 1u64 << (self.bits_wide() - 1);
        let max = i128::from(sign - 1);
        let o = o.clamp(-max, max);
        if o < 0 { sign | (-o) as u64 } else { o as u64 }
    }

    fn frame(&self, ctx: &ByteCtx<'_>) -> Frame {
        let FloatInfo {
            width,
            big_endian,
            offset,
            ..
        } = self.info;
        let (data, pos) = (ctx.data, ctx.pos);
        let k = (pos + width - offset % width) % width;
        let here = pos - k;
        let rank = if big_endian { k } else { width - 1 - k };
        let shift = 8 * (width - 1 - rank) as u32;
        let value = |back: usize| -> u64 {
            match here.checked_sub(back * width) {
                Some(at) if at >= ctx.st.start => read(data, at, width, big_endian),
                _ => 0,
            }
        };
        let lag = self.lag;
        let (v1, v2, vr, vr1) = (value(1), value(2), value(lag), value(lag + 1));
        let (o1, o2, or, or1) = (
            self.ordered(v1),
            self.ordered(v2),
            self.ordered(vr),
            self.ordered(vr1),
        );
        let p = [
            v1,
            self.pattern(2 * o1 - o2),
            vr,
            self.pattern(or + o1 - or1),
        ];
        // The bytes of this element coded so far.
        let mut known = 0u64;
        for j in 0..k {
            let r = if big_endian { j } else { width - 1 - j };
            let s = 8 * (width - 1 - r) as u32;
            known |= u64::from(data[here + j]) << s;
        }
        Frame {
            rank,
            shift,
            known,
            v1,
            v2,
            vr,
            p,
            spread: 64 - shared_bits(v1, v2, width),
            col: if lag <= 64 {
                ((here - offset % width) / width % lag) as u32
            } else {
                0
            },
        }
    }

    /// The byte that the predicted pattern `v` implies for the byte being
    /// coded: with the higher bytes known (big-endian), `v` clamped to the
    /// patterns that start with them.
    fn implied(&self, f: &Frame, v: u64) -> u32 {
        let v = if self.info.big_endian && f.rank > 0 {
            // Rank > 0: the byte's shift is at most 48, the known bytes lie
            // above it.
            let low_bits = (1u64 << (f.shift + 8)) - 1;
            v.clamp(f.known, f.known | low_bits)
        } else {
            v
        };
        ((v >> f.shift) & 0xFF) as u32
    }

    /// The per-bit situation and selector context: the byte's significance
    /// and the spread of the last two values.
    fn situation(&self, f: &Frame) -> usize {
        let w = self.bits_wide();
        let spread = (f.spread.min(w) * (SPREADS as u32 - 1) / w) as usize;
        f.rank * SPREADS + spread
    }
}

impl ContextModel for FloatContexts {
    fn contexts(&self) -> usize {
        8
    }

    fn selector_size(&self) -> usize {
        8 * 8 * SPREADS
    }

    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        self.situation(&self.frame(ctx))
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let f = self.frame(ctx);
        let e = f.p.map(|v| self.implied(&f, v));
        let tag = f.col << 12 | (f.rank as u32) << 4 | self.info.width as u32;
        let byte = |v: u64| ((v >> f.shift) & 0xFF) as u32;
        // Sign and exponent (and a little mantissa) of the previous value.
        let top = (f.v1 >> (self.bits_wide() - 12)) as u32;
        let known = (f.known ^ f.known >> 32) as u32;
        out[0] = hash2(e[0], tag);
        out[1] = hash2(e[1], tag | 1 << 8);
        out[2] = hash2(hash2(e[2], e[3]), tag | 2 << 8);
        out[3] = hash2(hash2(byte(f.v1), byte(f.v2)), tag | 3 << 8);
        out[4] = hash2(hash2(top, known), tag | 4 << 8);
        out[5] = hash2(hash2(known, byte(f.v1)), tag | 5 << 8);
        out[6] = hash2(hash2(e[1], byte(f.vr)), tag | 6 << 8);
        out[7] = hash2(hash2(e[3], f.spread), tag | 7 << 8);
        for h in out.iter_mut() {
            *h = hash2(*h, 0xF10A7);
        }
    }

    fn bit_inputs(&self) -> usize {
        PREDICTIONS
    }

    /// The byte the linear extrapolation implies.
    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        let f = self.frame(ctx);
        Some(self.implied(&f, f.p[1]))
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let f = self.frame(ctx);
        let e = f.p.map(|v| self.implied(&f, v));
        let situation = self.situation(&f);
        self.bits.begin(e, situation);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.bits.predict(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.bits.update(bit);
    }

    /// Every [`RELAG`] bytes, the row or record length over the last
    /// [`DETECT_LEN`] bytes.
    fn observe(&mut self, data: &[u8], pos: usize, _byte: u8) {
        let end = pos + 1;
        if !end.is_multiple_of(RELAG) || end < DETECT_LEN {
            return;
        }
        self.lag = self.info.lag_before(data, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth f32 series, little-endian, after `pad` bytes.
    fn series(pad: usize, n: usize, big_endian: bool) -> Vec<u8> {
        let mut d = vec![7u8; pad];
        for k in 0..n {
            // An integer-made smooth float: 1000 + k * 0.37, as bits.
            let v = (1000.0f32 + k as f32 * 0.37).to_bits();
            d.extend(if big_endian {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            });
        }
        d
    }

    #[test]
    fn detects_float_arrays_and_their_layout() {
        let got = FloatInfo::detect(&series(0, 5000, false)).unwrap();
        assert_eq!((got.width, got.big_endian, got.offset), (4, false, 0));
        let got = FloatInfo::detect(&series(3, 5000, true)).unwrap();
        assert_eq!((got.width, got.big_endian, got.offset), (4, true, 3));
        let mut f64s = Vec::new();
        for k in 0..3000 {
            f64s.extend((20.0f64 + (k as f64 * 0.01).sin()).to_bits().to_le_bytes());
        }
        let got = FloatInfo::detect(&f64s).unwrap();
        assert_eq!((got.width, got.big_endian, got.offset), (8, false, 0));
        // Records of four fields: the field one record back is closer.
        let mut rec = Vec::new();
        for k in 0..2000 {
            for field in [1.0f32, -300.0, 7e6, 0.001] {
                rec.extend((field * (1.0 + k as f32 * 1e-4)).to_bits().to_le_bytes());
            }
        }
        let got = FloatInfo::detect(&rec).unwrap();
        assert_eq!((got.width, got.lag), (4, 4));
    }

    #[test]
    fn text_zeros_and_noise_are_not_floats() {
        let text: Vec<u8> = b"All arithmetic is integer. "
            .iter()
            .cycle()
            .take(DETECT_LEN)
            .copied()
            .collect();
        assert_eq!(FloatInfo::detect(&text), None);
        assert_eq!(FloatInfo::detect(&[0u8; DETECT_LEN]), None);
        let mut x = 1u32;
        let noise: Vec<u8> = (0..DETECT_LEN)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        assert_eq!(FloatInfo::detect(&noise), None);
        assert_eq!(FloatInfo::detect(&[1, 2, 3]), None);
        // 4-byte words whose neighbours share their top bits but whose byte
        // positions look alike (like code): no.
        let mut words = Vec::new();
        let mut x = 5u32;
        for _ in 0..DETECT_LEN / 4 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let b = (x & 0x0F) as u8 | 0x40;
            words.extend([b, b ^ 1, b ^ 2, b ^ 3]);
        }
        let le = FloatInfo {
            width: 4,
            big_endian: false,
            offset: 0,
            lag: 2,
        };
        assert!(!phases_differ(&words, &le));
        assert!(phases_differ(&series(0, 4096, false), &le));
    }

    #[test]
    fn ordered_integers_round_trip_through_patterns() {
        let f = FloatContexts::new(FloatInfo {
            width: 4,
            big_endian: false,
            offset: 0,
            lag: 1,
        });
        for v in [0u64, 1, 0x3F80_0000, 0xBF80_0000, 0x8000_0001, 0x7FFF_FFFF] {
            assert_eq!(f.pattern(f.ordered(v)), v);
        }
        // Negative zero is zero.
        assert_eq!(f.pattern(f.ordered(0x8000_0000)), 0);
        // -1.0 < 1.0 and -2.0 < -1.0 as ordered integers.
        assert!(f.ordered(0xBF80_0000) < f.ordered(0x3F80_0000));
        assert!(f.ordered(0xC000_0000) < f.ordered(0xBF80_0000));
        // Extrapolation saturates instead of wrapping.
        assert_eq!(f.pattern(i128::from(u64::MAX)), 0x7FFF_FFFF);
    }
}
