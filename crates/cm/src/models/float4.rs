//! Float-array contexts of CM revision 4 (doc/FORMAT.md 4.15.3): the
//! revision-2 float family ([`super::float`]) with predictions made in the
//! numbers' own domain, per record field.
//!
//! The layout comes from the same detector ([`FloatInfo`], with revision
//! 4's [`narrow`] for 4-byte records read as 8-byte pairs); the row or
//! record length (`lag`) is re-measured as in revision 2. For each element
//! the family reads its neighbours: W (the previous element), WW, N (one
//! row or record back), NW (N's predecessor), NE (N's successor) and NN
//! (two rows back). Linear predictions (2W-WW, N+W-NW, 2N-NN and
//! (N+W)/2+(NE-NW)/4) are computed on the values as IEEE numbers (sign,
//! exponent, mantissa; [`Numbers`]) in integer fixed point, aligned to the
//! largest exponent of the inputs, then turned back into a bit pattern.
//! For the last field of records of three or four fields, one more
//! prediction completes the record to a unit vector (quaternions, normals;
//! [`Float4Contexts::unit_norm`]). Each prediction implies a byte for the
//! byte being coded (per-bit inputs through [`ExpectedBits`], per byte
//! significance, spread of the last two values and record field); the
//! family remembers, per record field, how many leading bits each
//! prediction got right on recent elements and gives the best one's byte
//! to the order-1 APM.
//!
//! The eight contexts are revision 2's (with its two linear predictions
//! replaced by the float-domain ones), each with the record field, the
//! byte's significance and the element width. Contexts on exact neighbour
//! values (W; W, WW and WWW; WW; N; the best prediction's top bits) were
//! tried and cost bytes on the corpus's float files: left out.
//! All arithmetic is integer: encoder and decoder agree on every machine.

use super::expected::ExpectedBits;
use super::float::{DETECT_LEN, FloatInfo, RELAG, read, shared_bits};
use super::float18::known_part;
use super::{ByteCtx, ContextModel, hash2};

/// Number of value predictions (per-bit inputs).
const PREDICTIONS: usize = 7;

/// Number of hashed contexts.
const CONTEXTS: usize = 8;

/// Spread buckets in selectors and per-bit situations.
const SPREADS: usize = 16;

/// Record fields told apart (fields of longer records share the last).
const FIELDS: usize = 4;

/// Revision 4's second look at a layout [`FloatInfo::detect`] found in
/// `data` (the bytes it looked at): an 8-byte layout whose low 4-byte half
/// also starts with a byte of few values (a sign and exponent, as the
/// element's top byte) is records of 4-byte numbers read in pairs, and
/// becomes a 4-byte layout with twice the lag. The effective number of
/// values of a byte position is `n^2 / sum of squared counts` (as in the
/// revision-2 detector); "few" is at most a third of the largest of the
/// element's eight positions. Any other layout is returned as it is.
pub(crate) fn narrow(data: &[u8], info: FloatInfo) -> FloatInfo {
    if info.width != 8 {
        return info;
    }
    let eff: Vec<u64> = (0..8)
        .map(|phase| {
            let mut counts = [0u64; 256];
            let mut n = 0u64;
            for &b in data.iter().skip(phase).step_by(8) {
                counts[usize::from(b)] += 1;
                n += 1;
            }
            let squares: u64 = counts.iter().map(|c| c * c).sum();
            n * n * 16 / squares.max(1)
        })
        .collect();
    // The low half's top byte: element byte 3 (little-endian) or 7 (big).
    let k = if info.big_endian { 7 } else { 3 };
    let low_top = eff[(info.offset + k) % 8];
    let most = eff.iter().copied().max().unwrap_or(0);
    if 3 * low_top <= most {
        FloatInfo {
            width: 4,
            offset: info.offset % 4,
            lag: info.lag * 2,
            ..info
        }
    } else {
        info
    }
}

/// The IEEE layout of an element width: 4 bytes binary32, 8 bytes binary64.
#[derive(Debug, Clone, Copy)]
struct Numbers {
    /// Bits of an element.
    bits: u32,
    /// Mantissa bits (without the hidden one).
    mant: u32,
    /// The largest exponent field (all ones).
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

    /// The exponent field of `v`, at least 1 (denormals and zero share the
    /// smallest normal exponent's scale).
    #[inline]
    fn exp(&self, v: u64) -> i32 {
        (((v >> self.mant) as i32) & self.emax).max(1)
    }

    /// `v` as a signed multiple of 2^(eref - bias - mant); `eref` is at
    /// least `v`'s exponent ([`exp`](Self::exp)).
    #[inline]
    fn fixed(&self, v: u64, eref: i32) -> i64 {
        let e = ((v >> self.mant) as i32) & self.emax;
        let f = v & ((1u64 << self.mant) - 1);
        let m = if e == 0 { f } else { f | 1u64 << self.mant };
        let shift = eref - e.max(1);
        let a = if shift >= 63 { 0 } else { (m >> shift) as i64 };
        if (v >> (self.bits - 1)) & 1 == 1 {
            -a
        } else {
            a
        }
    }

    /// The bit pattern of the fixed-point value `p` (units of
    /// 2^(eref - bias - mant)), the mantissa truncated; beyond the largest
    /// finite number it is that number.
    #[inline]
    fn pattern(&self, p: i64, eref: i32) -> u64 {
        if p == 0 {
            return 0;
        }
        let sign = u64::from(p < 0) << (self.bits - 1);
        let a = p.unsigned_abs();
        let n = 64 - a.leading_zeros() as i32;
        let top = self.mant as i32 + 1;
        let e = eref + n - top;
        let mask = (1u64 << self.mant) - 1;
        if e < 1 {
            // Denormal: the mantissa at exponent 1 (eref >= 1, e < 1).
            return sign | (a << (eref - 1)) & mask;
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

    /// The combination `sum(c * v) / 2^d` of values `vs` with integer
    /// weights `cs`, as a bit pattern.
    #[inline]
    fn combine<const N: usize>(&self, vs: [u64; N], cs: [i64; N], d: u32) -> u64 {
        let eref = vs.iter().map(|&v| self.exp(v)).max().unwrap_or(1);
        let sum: i64 = vs
            .iter()
            .zip(cs)
            .map(|(&v, c)| c * self.fixed(v, eref))
            .sum();
        self.pattern(sum >> d, eref)
    }
}

/// What the family knows about an element before its first byte.
#[derive(Debug, Clone, Default)]
struct Elem {
    /// Block position of the element's first byte.
    here: usize,
    /// The element's field in its record (below [`FIELDS`]).
    field: usize,
    /// The field's number in its record (0 for rows longer than 64).
    col: u32,
    /// W, WW, N.
    w: u64,
    ww: u64,
    n: u64,
    /// Predicted bit patterns.
    p: [u64; PREDICTIONS],
    /// Bits W and WW do not share.
    spread: u32,
    /// The prediction with the best recent record in this field.
    best: usize,
}

/// The revision-4 float family ([`CONTEXTS`] contexts, [`PREDICTIONS`]
/// per-bit inputs).
#[derive(Debug, Clone)]
pub(crate) struct Float4Contexts {
    info: FloatInfo,
    num: Numbers,
    /// Elements per row or record (re-measured every [`RELAG`] bytes).
    lag: usize,
    bits: ExpectedBits<PREDICTIONS>,
    /// The next element, computed when the previous one ended.
    next: Option<Elem>,
    /// The element being coded (its predictions are scored when it ends).
    cur: Elem,
    /// Per field and prediction: a decaying sum of the leading bits the
    /// prediction shared with the coded value (16ths).
    score: [[u32; PREDICTIONS]; FIELDS],
}

impl Float4Contexts {
    /// The family for an array laid out as `info`.
    pub fn new(info: FloatInfo) -> Self {
        Float4Contexts {
            info,
            num: Numbers::new(info.width),
            lag: info.lag.max(2),
            bits: ExpectedBits::new(8 * SPREADS * FIELDS),
            next: None,
            cur: Elem::default(),
            score: [[0; PREDICTIONS]; FIELDS],
        }
    }

    /// The position of the byte at `pos` in its element (0 first in the
    /// block) and the element's first byte.
    #[inline]
    fn place(&self, pos: usize) -> (usize, usize) {
        let FloatInfo { width, offset, .. } = self.info;
        let k = (pos + width - offset % width) % width;
        (k, pos - k)
    }

    /// For the last field of records of 3 or 4 fields: the magnitude that
    /// makes the record a unit vector, sqrt(1 - sum of the other fields'
    /// squares), with the sign of the field one record back. `None` when
    /// the record is not last-field, a field is 2 or more in magnitude, or
    /// the record starts before `start`.
    fn unit_norm(&self, data: &[u8], here: usize, start: usize) -> Option<u64> {
        let FloatInfo {
            width,
            big_endian,
            offset,
            ..
        } = self.info;
        let lag = self.lag;
        if !(3..=4).contains(&lag) || (here - offset % width) / width % lag != lag - 1 {
            return None;
        }
        let first = here
            .checked_sub((lag - 1) * width)
            .filter(|&f| f >= start)?;
        let num = &self.num;
        let bias = num.emax / 2;
        // Fields as multiples of 2^-60 (|x| < 2 fits in 61 bits).
        let mut sum = 0u128;
        for j in 0..lag - 1 {
            let v = read(data, first + j * width, width, big_endian);
            let e = ((v >> num.mant) as i32) & num.emax;
            if e > bias {
                return None;
            }
            let f = v & ((1u64 << num.mant) - 1);
            let m = if e == 0 { f } else { f | 1u64 << num.mant };
            let shift = e.max(1) - bias - num.mant as i32 + 60;
            let a = if shift >= 0 {
                m << shift
            } else if shift > -64 {
                m >> -shift
            } else {
                0
            };
            sum += u128::from(a) * u128::from(a);
        }
        let rest = (1u128 << 120).saturating_sub(sum);
        let root = rest.isqrt() as i64;
        let above = here.checked_sub(lag * width).filter(|&a| a >= start)?;
        let negative = (read(data, above, width, big_endian) >> (num.bits - 1)) & 1 == 1;
        // 2^-60 units: eref - bias - mant = -60.
        let eref = bias + num.mant as i32 - 60;
        Some(num.pattern(if negative { -root } else { root }, eref))
    }

    /// The element whose first byte is at `here` (`start`: the stream's
    /// start; elements before it read as 0).
    fn elem(&self, data: &[u8], here: usize, start: usize) -> Elem {
        let FloatInfo {
            width,
            big_endian,
            offset,
            ..
        } = self.info;
        let value = |back: usize| -> u64 {
            match here.checked_sub(back * width) {
                Some(at) if at >= start => read(data, at, width, big_endian),
                _ => 0,
            }
        };
        let lag = self.lag;
        let (w, ww) = (value(1), value(2));
        let (n, nw, nn) = (value(lag), value(lag + 1), value(2 * lag));
        let ne = if lag > 1 { value(lag - 1) } else { n };
        let num = &self.num;
        let p = [
            w,
            n,
            num.combine([w, ww], [2, -1], 0),
            num.combine([n, w, nw], [1, 1, -1], 0),
            num.combine([n, nn], [2, -1], 0),
            num.combine([n, w, ne, nw], [2, 2, 1, -1], 2),
            self.unit_norm(data, here, start).unwrap_or(ww),
        ];
        let col = if lag <= 64 {
            ((here - offset % width) / width % lag) as u32
        } else {
            0
        };
        let field = (col as usize).min(FIELDS - 1);
        let sc = &self.score[field];
        let best = (0..PREDICTIONS).fold(0, |b, k| if sc[k] > sc[b] { k } else { b });
        Elem {
            here,
            field,
            col,
            w,
            ww,
            n,
            p,
            spread: 64 - shared_bits(w, ww, width),
            best,
        }
    }

    /// The element of the byte at `ctx.pos`: the one computed ahead when
    /// it matches, else computed now.
    #[inline]
    fn with_elem<R>(&self, ctx: &ByteCtx<'_>, f: impl FnOnce(&Elem) -> R) -> R {
        let (_, here) = self.place(ctx.pos);
        match &self.next {
            Some(e) if e.here == here && ctx.st.start == 0 => f(e),
            _ => f(&self.elem(ctx.data, here, ctx.st.start)),
        }
    }

    /// The byte's significance (0 most significant), its bit shift in the
    /// element and the element's bytes coded so far (bits in place).
    #[inline]
    fn byte_place(&self, data: &[u8], pos: usize) -> (usize, u32, u64) {
        let FloatInfo {
            width, big_endian, ..
        } = self.info;
        let (k, here) = self.place(pos);
        known_part(data, here, k, width, big_endian)
    }

    /// The byte that the predicted pattern `v` implies for the byte at
    /// `shift` (rank `rank`): for a big-endian layout, `v` clamped to the
    /// patterns that start with the known higher bytes.
    #[inline]
    fn implied(&self, rank: usize, shift: u32, known: u64, v: u64) -> u32 {
        let v = if self.info.big_endian && rank > 0 {
            let low_bits = (1u64 << (shift + 8)) - 1;
            v.clamp(known, known | low_bits)
        } else {
            v
        };
        ((v >> shift) & 0xFF) as u32
    }

    /// The per-bit situation and selector context: the byte's significance,
    /// the spread of the last two values and the field.
    #[inline]
    fn situation(&self, e: &Elem, rank: usize) -> usize {
        let w = self.num.bits;
        let spread = (e.spread.min(w) * (SPREADS as u32 - 1) / w) as usize;
        (rank * SPREADS + spread) * FIELDS + e.field
    }
}

impl ContextModel for Float4Contexts {
    fn contexts(&self) -> usize {
        CONTEXTS
    }

    fn selector_size(&self) -> usize {
        8 * 8 * SPREADS * FIELDS
    }

    fn selector(&self, ctx: &ByteCtx<'_>) -> usize {
        let (rank, _, _) = self.byte_place(ctx.data, ctx.pos);
        self.with_elem(ctx, |e| self.situation(e, rank))
    }

    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]) {
        let (rank, shift, known) = self.byte_place(ctx.data, ctx.pos);
        self.with_elem(ctx, |f| {
            let e = f.p.map(|v| self.implied(rank, shift, known, v));
            let tag = f.col << 12 | (rank as u32) << 4 | self.info.width as u32;
            let byte = |v: u64| ((v >> shift) & 0xFF) as u32;
            let top = (f.w >> (self.num.bits - 12)) as u32;
            let known = (known ^ known >> 32) as u32;
            out[0] = hash2(e[0], tag);
            out[1] = hash2(e[2], tag | 1 << 8);
            out[2] = hash2(hash2(e[1], e[3]), tag | 2 << 8);
            out[3] = hash2(hash2(byte(f.w), byte(f.ww)), tag | 3 << 8);
            out[4] = hash2(hash2(top, known), tag | 4 << 8);
            out[5] = hash2(hash2(known, byte(f.w)), tag | 5 << 8);
            out[6] = hash2(hash2(e[3], byte(f.n)), tag | 6 << 8);
            out[7] = hash2(hash2(e[2], f.spread), tag | 7 << 8);
            for h in out.iter_mut() {
                *h = hash2(*h, 0xF104);
            }
        })
    }

    fn bit_inputs(&self) -> usize {
        PREDICTIONS
    }

    /// The byte the best recent prediction implies.
    fn apm_byte(&self, ctx: &ByteCtx<'_>) -> Option<u32> {
        let (rank, shift, known) = self.byte_place(ctx.data, ctx.pos);
        Some(self.with_elem(ctx, |e| self.implied(rank, shift, known, e.p[e.best])))
    }

    fn begin_byte(&mut self, ctx: &ByteCtx<'_>) {
        let (rank, shift, known) = self.byte_place(ctx.data, ctx.pos);
        let (expected, situation, cur) = self.with_elem(ctx, |e| {
            (
                e.p.map(|v| self.implied(rank, shift, known, v)),
                self.situation(e, rank),
                (self.cur.here != e.here).then(|| e.clone()),
            )
        });
        if let Some(c) = cur {
            self.cur = c;
        }
        self.bits.begin(expected, situation);
    }

    fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        self.bits.predict(c0, i, out);
    }

    fn update_bit(&mut self, bit: u32) {
        self.bits.update(bit);
    }

    /// Scores the predictions when an element ends and computes the next
    /// element; every [`RELAG`] bytes, re-measures the row or record
    /// length over the last [`DETECT_LEN`] bytes.
    fn observe(&mut self, data: &[u8], pos: usize, _byte: u8) {
        let FloatInfo {
            width, big_endian, ..
        } = self.info;
        let end = pos + 1;
        if end.is_multiple_of(RELAG) && end >= DETECT_LEN {
            self.lag = self.info.lag_before(data, end);
        }
        let (k, here) = self.place(end);
        if k != 0 || here < width {
            return;
        }
        let done = here - width;
        if self.cur.here == done {
            let v = read(data, done, width, big_endian);
            let sc = &mut self.score[self.cur.field];
            for (s, &p) in sc.iter_mut().zip(&self.cur.p) {
                *s = *s - (*s >> 4) + shared_bits(v, p, width);
            }
        }
        if here + width <= data.len() {
            self.next = Some(self.elem(data, here, 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_round_trips_and_combines_like_floats() {
        let n = Numbers::new(4);
        for x in [1.0f32, -2.5, 1e-3, 3.4e38, -7.25e-39, 0.0] {
            let v = u64::from(x.to_bits());
            let e = n.exp(v);
            assert_eq!(n.pattern(n.fixed(v, e), e), v, "{x}");
        }
        let f = |x: f32| u64::from(x.to_bits());
        // 2 * 3 - 1.5 = 4.5; 1000 + 2 - 1 = 1001; (N+W)/2 + (NE-NW)/4.
        assert_eq!(n.combine([f(3.0), f(1.5)], [2, -1], 0), f(4.5));
        assert_eq!(
            n.combine([f(1000.0), f(2.0), f(1.0)], [1, 1, -1], 0),
            f(1001.0)
        );
        assert_eq!(
            n.combine([f(8.0), f(4.0), f(2.0), f(6.0)], [2, 2, 1, -1], 2),
            f(5.0)
        );
        assert_eq!(n.combine([f(-3.0), f(-1.0)], [2, -1], 0), f(-5.0));
        let d = Numbers::new(8);
        let g = |x: f64| x.to_bits();
        assert_eq!(d.combine([g(0.25), g(-0.5)], [2, -1], 0), g(1.0));
        // Overflow saturates at the largest finite number.
        assert_eq!(
            n.combine([f(f32::MAX), f(-f32::MAX)], [2, -1], 0),
            f(f32::MAX)
        );
    }

    #[test]
    fn records_of_4_byte_numbers_read_in_pairs_are_narrowed() {
        // Unit quaternions (0, sin a, 0, cos a): the detector pairs them
        // into 8-byte elements; narrow reads them as 4-byte fields again.
        let mut q = Vec::new();
        for k in 0..(DETECT_LEN / 16) {
            let a = (k % 97) as f32 * 0.061;
            for x in [0.0f32, a.sin(), 0.0, a.cos()] {
                q.extend(x.to_bits().to_le_bytes());
            }
        }
        let found = FloatInfo::detect(&q).unwrap();
        let got = narrow(&q, found);
        assert_eq!((got.width, got.offset, got.big_endian), (4, 0, false));
        assert_eq!(got.lag % 4, 0, "{found:?} -> {got:?}");
        // Real 8-byte numbers stay 8 bytes wide.
        let mut f64s = Vec::new();
        for k in 0..DETECT_LEN / 8 {
            f64s.extend((20.0f64 + (k as f64 * 0.01).sin()).to_bits().to_le_bytes());
        }
        let found = FloatInfo::detect(&f64s).unwrap();
        assert_eq!(found.width, 8);
        assert_eq!(narrow(&f64s, found), found);
    }

    #[test]
    fn the_last_field_of_a_unit_record_is_predicted() {
        let info = FloatInfo {
            width: 4,
            big_endian: false,
            offset: 0,
            lag: 4,
        };
        let f = Float4Contexts::new(info);
        let mut data = Vec::new();
        for a in [0.3f32, 1.1] {
            for x in [0.0f32, a.sin(), 0.0, a.cos()] {
                data.extend(x.to_bits().to_le_bytes());
            }
        }
        // The second record's last field (byte 28), the sign of the first.
        let p = f.unit_norm(&data, 28, 0).unwrap();
        let want = 1.1f32.cos().to_bits();
        assert!((i64::from(want) - p as i64).abs() <= 2, "{p:x} vs {want:x}");
        // Not the last field, or no record above: no prediction.
        assert_eq!(f.unit_norm(&data, 24, 0), None);
        assert_eq!(f.unit_norm(&data, 12, 0), None);
    }
}
