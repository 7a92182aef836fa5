//! Float arrays at CM revision 18 (doc/FORMAT.md 4.29.3): predictions on
//! the values read as ordered integers, with the errors of the
//! neighbouring elements as contexts, for every detected float array.
//!
//! Each element (4 or 8 bytes, either byte order) is read as an *ordered
//! integer* (the magnitude, negated when the sign bit is set), in which
//! nearby numbers are nearby integers as long as they share the exponent.
//! From its neighbours W (the element before it), N and NW (one row or
//! record back; the row length is re-measured as in revision 4) the family makes five predictions: W, N + W - NW, N, the
//! median of N, W and N + W - NW, and N + W - NW plus a learned bias (the
//! mean error of that prediction in the same error context). The errors
//! of N + W - NW at W and N, bucketed by size and sign, are the *error
//! context*.
//!
//! Each prediction implies a byte for the byte being coded: in a
//! little-endian array the lower bytes of the element are already known,
//! so the implied byte is that of the number nearest to the prediction
//! whose lower bytes are the known ones (the carry the known bytes imply);
//! in a big-endian array, the prediction clamped to the numbers that start
//! with the known bytes. These bytes are expected-bit inputs, per byte
//! significance, field and activity; four hashed contexts hold them with
//! the error context, and one the element's bytes coded so far, in every
//! field (a value seen in another field of a record repeats).
//! All arithmetic is integer.

use super::expected::ExpectedBits;
use super::float::{DETECT_LEN, FloatInfo, RELAG, read};
use super::{ByteCtx, ContextModel, hash2};

/// Predictions (per-bit inputs).
const PREDICTIONS: usize = 5;

/// Hashed contexts.
const CONTEXTS: usize = 4;

/// Record fields told apart (later ones share the last).
const FIELDS: usize = 4;

/// Activity buckets.
const ACTIVITY: usize = 16;

/// Per-bit situations: byte significance (up to 8), field, activity.
const SITUATIONS: usize = 8 * FIELDS * ACTIVITY;

/// Error buckets (size and sign).
const ERRS: usize = 32;

/// Bias cells: the error buckets of W and N.
const BIAS_CELLS: usize = ERRS * ERRS;

/// Bytes the family allocates: the expected-bit table (4-byte entries),
/// the bias cells and the error ring (at most 2051 elements of 8 bytes).
pub(crate) const MEMORY: u64 =
    (SITUATIONS * 8 * PREDICTIONS * 4 * 4) as u64 + (BIAS_CELLS * 16) as u64 + 2051 * 8;

/// Byte `k` of the `width`-byte element at `here` (its bytes before
/// `here + k` known): its rank (0: the most significant), the shift that
/// brings it to the low byte, and the known bytes in place. Revisions 4, 18
/// and 44's float families (doc/FORMAT.md 4.29.3, 4.55.4).
#[inline]
pub(crate) fn known_part(
    data: &[u8],
    here: usize,
    k: usize,
    width: usize,
    big_endian: bool,
) -> (usize, u32, u64) {
    let rank = if big_endian { k } else { width - 1 - k };
    let shift = 8 * (width - 1 - rank) as u32;
    let mut known = 0u64;
    for j in 0..k {
        let r = if big_endian { j } else { width - 1 - j };
        known |= u64::from(data[here + j]) << (8 * (width - 1 - r));
    }
    (rank, shift, known)
}

/// The byte that the prediction `p` (a `width`-byte pattern) implies at
/// the rank and shift of [`known_part`], given the `known` bytes:
/// big-endian, `p` clamped to the values with those high bytes;
/// little-endian, the number nearest to `p` whose lower bytes are the
/// known ones.
pub(crate) fn implied_byte(
    p: u64,
    known: u64,
    rank: usize,
    shift: u32,
    width: usize,
    big_endian: bool,
) -> u32 {
    let v = if big_endian {
        if rank > 0 {
            let low = (1u64 << (shift + 8)) - 1;
            p.clamp(known, known | low)
        } else {
            p
        }
    } else if shift > 0 {
        // The number nearest to p whose lower bytes are known.
        let step = 1i128 << shift;
        let low = i128::from(p) & (step - 1);
        let at = i128::from(p) - low + i128::from(known);
        let top = 1i128 << (8 * width);
        [at, at + step, at - step]
            .into_iter()
            .filter(|&c| (0..top).contains(&c))
            .min_by_key(|&c| (c - i128::from(p)).unsigned_abs())
            .unwrap_or(at) as u64
    } else {
        p
    };
    ((v >> shift) & 0xFF) as u32
}

/// The element cursor of revisions 18 and 44's float families
/// (doc/FORMAT.md 4.29.3, 4.55.4): the element a byte belongs to, set up
/// once per element, the one before it learned when it is complete.
pub(crate) trait Elements {
    /// The array's layout.
    fn info(&self) -> FloatInfo;
    /// Elements per row or record (as last measured).
    fn lag(&self) -> usize;
    /// Block position of the current element's first byte
    /// (`usize::MAX` before the first).
    fn current(&self) -> usize;
    /// Learns the current element, which starts at `here` (all coded).
    fn learn(&mut self, data: &[u8], here: usize);
    /// Sets up the element at `here` (elements before `first` read as 0).
    fn enter(&mut self, data: &[u8], here: usize, first: usize);
}

/// For the byte at `pos` of the block starting at `start`: `None` when the
/// family is idle there (before the first element, or short records of
/// 4-byte numbers: lag 3 to 16, revisions 7 and 10's; lag 2 is the
/// measurement's floor), else the element's first byte and the byte's
/// index in it. When the byte starts a new element, the current one is
/// learned if it is the one just before, then the new one is set up.
pub(crate) fn locate<E: Elements>(
    fam: &mut E,
    data: &[u8],
    pos: usize,
    start: usize,
) -> Option<(usize, usize)> {
    let FloatInfo { width, offset, .. } = fam.info();
    let first = start + offset % width;
    if pos < first || (width == 4 && (3..=16).contains(&fam.lag())) {
        return None;
    }
    let k = (pos - first) % width;
    let here = pos - k;
    let cur = fam.current();
    if cur != here {
        if k == 0 && cur.checked_add(width) == Some(here) {
            fam.learn(data, cur);
        }
        fam.enter(data, here, first);
    }
    Some((here, k))
}

/// The element's value as an ordered integer.
#[inline]
fn ordered(v: u64, width: usize) -> i128 {
    let sign = 1u64 << (8 * width - 1);
    let mag = i128::from(v & (sign - 1));
    if v & sign != 0 { -mag } else { mag }
}

/// The bit pattern of an ordered integer (the magnitude saturated).
#[inline]
fn pattern(o: i128, width: usize) -> u64 {
    let sign = 1u64 << (8 * width - 1);
    let mag = o.unsigned_abs().min(u128::from(sign - 1)) as u64;
    if o < 0 { sign | mag } else { mag }
}

/// The error bucket of `e`: its bit length halved (at most 15) and its
/// sign.
#[inline]
fn bucket(e: i128) -> usize {
    let len = 128 - e.unsigned_abs().leading_zeros() as usize;
    ((len / 2).min(ERRS / 2 - 1) << 1) | usize::from(e < 0)
}

/// Revision 20 (doc/FORMAT.md 4.31.4): the family made its hashed contexts in
/// `begin_byte`, so they were one byte late (the model asks every family
/// for its hashes before it calls `begin_byte`): the contexts of a byte
/// were those made for the byte before it. From revision 20 the family
/// prepares the next byte when it observes the current one, so that its
/// hashes are the byte's own; `Ahead` says when to prepare (once per byte).
#[derive(Debug, Clone, Copy)]
struct Ahead {
    /// Whether the family prepares ahead (revision 20 on).
    on: bool,
    /// The block start seen at the last `begin_byte`.
    start: usize,
    /// The block start and position prepared last.
    ready: (usize, usize),
}

impl Ahead {
    /// For a family of revision 20 or later (`on`), or an earlier one.
    fn new(on: bool) -> Self {
        Ahead {
            on,
            start: 0,
            ready: (usize::MAX, usize::MAX),
        }
    }

    /// At `begin_byte` of the byte at `pos` of the block starting at
    /// `start`: whether the family must prepare it now.
    #[inline]
    fn begin(&mut self, start: usize, pos: usize) -> bool {
        if !self.on {
            return true;
        }
        self.start = start;
        let now = (start, pos);
        let prepare = self.ready != now;
        self.ready = now;
        prepare
    }

    /// After the byte at `pos` is observed: the block start and position
    /// the family prepares now, if it prepares ahead.
    #[inline]
    fn next(&mut self, pos: usize) -> Option<(usize, usize)> {
        self.on.then(|| {
            self.ready = (self.start, pos + 1);
            self.ready
        })
    }
}

/// What the family knows about an element before its first byte.
#[derive(Debug, Clone, Copy, Default)]
struct Elem {
    /// Block position of its first byte.
    here: usize,
    /// Its field in its record (below [`FIELDS`]).
    field: usize,
    /// Predicted bit patterns.
    p: [u64; PREDICTIONS],
    /// N + W - NW as an ordered integer (its error is learned).
    base: i128,
    /// Error buckets of W and N (their bias cell).
    qw: usize,
    qn: usize,
    /// Activity bucket.
    act: usize,
    /// N's bit pattern.
    n: u64,
}

/// The revision-18 float family ([`CONTEXTS`] contexts, [`PREDICTIONS`]
/// per-bit inputs).
#[derive(Debug, Clone)]
pub(crate) struct Float18Contexts {
    info: FloatInfo,
    /// Elements per row or record (re-measured every [`RELAG`] bytes).
    lag: usize,
    bits: ExpectedBits<PREDICTIONS>,
    /// The element being coded.
    cur: Elem,
    /// Errors of N + W - NW of the last elements, by element number
    /// modulo the ring's length.
    errs: Vec<i128>,
    /// Per bias cell: the sum and count of the errors seen there.
    bias: Vec<(i64, i64)>,
    /// The per-byte contexts.
    hash: [u32; CONTEXTS],
    /// Whether the row length was measured once.
    measured: bool,
    /// Whether the family is idle for the byte (short records of 4-byte
    /// numbers).
    idle: bool,
    /// Revision 20: the contexts are the byte's own ([`Ahead`]).
    ahead: Ahead,
}

impl Float18Contexts {
    /// The family for an array laid out as `info`; `ahead`: revision 20's
    /// timely contexts ([`Ahead`]).
    pub fn new(info: FloatInfo, ahead: bool) -> Self {
        Float18Contexts {
            info,
            lag: info.lag.max(2),
            bits: ExpectedBits::new(SITUATIONS),
            cur: Elem {
                here: usize::MAX,
                ..Elem::default()
            },
            errs: vec![0; 2051],
            bias: vec![(0, 0); BIAS_CELLS],
            hash: [0; CONTEXTS],
            measured: false,
            idle: true,
            ahead: Ahead::new(ahead),
        }
    }

    /// The element number of the element starting at `here`.
    #[inline]
    fn number(&self, here: usize) -> usize {
        here / self.info.width
    }

    /// The error of N + W - NW stored for the element `back` elements
    /// before the one at `here` (0 before `first`).
    #[inline]
    fn err(&self, here: usize, back: usize, first: usize) -> i128 {
        let width = self.info.width;
        match here.checked_sub(back * width) {
            Some(at) if at >= first => self.errs[self.number(at) % self.errs.len()],
            _ => 0,
        }
    }

    /// The element whose first byte is at `here` (elements before `first`
    /// read as 0).
    fn elem(&self, data: &[u8], here: usize, first: usize) -> Elem {
        let FloatInfo {
            width, big_endian, ..
        } = self.info;
        let raw = |back: usize| -> u64 {
            match here.checked_sub(back * width) {
                Some(at) if at >= first => read(data, at, width, big_endian),
                _ => 0,
            }
        };
        let lag = self.lag;
        let v = |back: usize| ordered(raw(back), width);
        let (w, n, nw) = (v(1), v(lag), v(lag + 1));
        let base = n + w - nw;
        let med = if n.min(w) > base {
            n.min(w)
        } else if n.max(w) < base {
            n.max(w)
        } else {
            base
        };
        let (ew, en) = (self.err(here, 1, first), self.err(here, lag, first));
        let (qw, qn) = (bucket(ew), bucket(en));
        let (sum, count) = self.bias[qw * ERRS + qn];
        let fix = if count > 0 {
            i128::from(sum / count)
        } else {
            0
        };
        let act = ((qw >> 1) + (qn >> 1)).min(ACTIVITY - 1);
        let col = (here - first) / width % lag;
        Elem {
            here,
            field: if lag <= 64 { col.min(FIELDS - 1) } else { 0 },
            p: [w, base, n, med, base + fix].map(|o| pattern(o, width)),
            base,
            qw,
            qn,
            act,
            n: raw(lag),
        }
    }

    /// Learns the error of the element that starts at `here` (all of it
    /// coded).
    fn learn(&mut self, data: &[u8], here: usize) {
        let FloatInfo {
            width, big_endian, ..
        } = self.info;
        let x = ordered(read(data, here, width, big_endian), width);
        let e = x - self.cur.base;
        let slot = self.number(here) % self.errs.len();
        self.errs[slot] = e;
        let cell = &mut self.bias[self.cur.qw * ERRS + self.cur.qn];
        let clamped = e.clamp(-(1 << 40), 1 << 40) as i64;
        cell.0 += clamped;
        cell.1 += 1;
        if cell.1 >= 256 {
            cell.0 /= 2;
            cell.1 /= 2;
        }
    }
}

impl Elements for Float18Contexts {
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
        Float18Contexts::learn(self, data, here);
    }

    fn enter(&mut self, data: &[u8], here: usize, first: usize) {
        self.cur = self.elem(data, here, first);
    }
}

impl ContextModel for Float18Contexts {
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
        if self.ahead.begin(ctx.st.start, ctx.pos) {
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

    /// At the first byte it sees and every [`RELAG`] bytes, measures the
    /// row or record length over the last [`DETECT_LEN`] bytes (as
    /// revision 4's family); from revision 20 then prepares the next byte.
    fn observe(&mut self, data: &[u8], pos: usize, _byte: u8) {
        let end = pos + 1;
        if (end.is_multiple_of(RELAG) || !self.measured) && end >= DETECT_LEN {
            self.measured = true;
            self.lag = self.info.lag_before(data, end);
        }
        if let Some((start, next)) = self.ahead.next(pos) {
            self.prepare(data, next, start);
        }
    }
}

impl Float18Contexts {
    /// The byte at `pos` of the block starting at `start`: its element,
    /// expected bytes and contexts.
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
        let situation = ((rank.min(7) * FIELDS + e.field) * ACTIVITY) + e.act;
        self.bits.begin(x, situation);
        let tag = ((rank as u32) << 4 | e.field as u32) << 8 | width as u32;
        let byte = |v: u64| ((v >> shift) & 0xFF) as u32;
        let q = (e.qw * ERRS + e.qn) as u32;
        let folded = (known ^ known >> 32) as u32;
        self.hash = [
            hash2(hash2(x[4], q), tag | 0x18_0000),
            hash2(hash2(x[1] | x[0] << 8, e.act as u32), tag | 0x18_1000),
            hash2(hash2(folded, rank as u32), 0x18_2000 | width as u32),
            hash2(hash2(x[3] | byte(e.n) << 8, e.qn as u32), tag | 0x18_3000),
        ]
        .map(|h| hash2(h, 0xF118));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// From revision 20 the hashes the model reads before `begin_byte` are
    /// the byte's own: those revision 18's family makes in `begin_byte`.
    #[test]
    fn revision_20_hashes_are_the_bytes_own() {
        let info = FloatInfo {
            width: 4,
            big_endian: false,
            offset: 0,
            lag: 40,
        };
        let data: Vec<u8> = (0..4000u32)
            .flat_map(|k| (100.0 + (k as f32 * 0.1).sin() * 20.0).to_le_bytes())
            .collect();
        let st = crate::cm::CmStream::new(0);
        let vis = crate::matcher::Sequential(data.len());
        let mut late = Float18Contexts::new(info, false);
        let mut now = Float18Contexts::new(info, true);
        let (mut own, mut read, mut before) =
            ([0u32; CONTEXTS], [0u32; CONTEXTS], [0u32; CONTEXTS]);
        let mut differed = 0;
        for pos in 0..data.len() {
            let ctx = ByteCtx {
                data: &data,
                pos,
                st: &st,
                vis: &vis,
            };
            // What the model reads: before begin_byte.
            now.hashes(&ctx, &mut read);
            late.hashes(&ctx, &mut before);
            now.begin_byte(&ctx);
            late.begin_byte(&ctx);
            // What the byte's own are: made in begin_byte.
            late.hashes(&ctx, &mut own);
            if pos > 0 {
                assert_eq!(read, own, "byte {pos}");
                differed += usize::from(before != own);
            }
            now.observe(&data, pos, data[pos]);
            late.observe(&data, pos, data[pos]);
        }
        assert!(differed > 3000, "{differed}");
    }
}
