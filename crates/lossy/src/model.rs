//! The model of the quantization codes: a context-mixing binary model whose
//! contexts are the codes of the point's neighbours in every dimension.
//!
//! A point's symbol is either a quantization code `q` (an integer) or an
//! escape (the value is stored exactly). It is binarised as: `q == 0`?,
//! escape?, the sign of `q`, the bit length of `|q|` in unary, and the bits of
//! `|q|` below its top bit. Every binary decision is predicted by five
//! adaptive tables (pairs of neighbour buckets, all four neighbours at a
//! coarser resolution, the decision alone), mixed by a gated logistic mixer
//! selected by the decision, all in integer arithmetic
//! ([`sep_cm::AdaptiveProbs`], [`sep_cm::Mixer`]). An escaped value is
//! coded as "the same bits as the previous escaped value", or its bits one by
//! one. Encoder and decoder run the same code through [`sep_coder::Coder`].

use crate::fast::{self, CdfCoder, Tables};
use sep_cm::{AdaptiveProbs, Mixer};
use sep_coder::Coder;

/// Bucket of a neighbour that is outside the array or not coded yet.
pub const UNKNOWN: u8 = 12;
/// Bucket of an escaped neighbour.
pub const ESCAPED: u8 = 11;
const NB: usize = 13;
const NODES: usize = 64;
/// Largest bit length of `|q|`: codes are below `2^MAX_BITS`.
pub const MAX_BITS: u32 = 24;
/// The model revisions a decoder knows (header byte `coder`, doc/FORMAT.md
/// section 10): 0 mixes every binary decision; 1 codes the bits of `|q|`
/// below the first one with one adaptive probability each (by bit length,
/// position and the bit before) and the escape flag only beside an escaped or
/// unknown neighbour (elsewhere an escape is a bit length above
/// [`MAX_BITS`]).
/// Revision 2, the fast setting, codes a code in `-15..=15` as one symbol of
/// an adaptive table chosen by the buckets of the first two neighbours
/// ([`fast`]); anything else is that table's symbol `OTHER` followed by the
/// escape flag and, for a code, the binarisation of revision 1 from the sign
/// on, every binary decision with one adaptive probability by node and the
/// same two buckets (no mixing).
/// Revision 3, the fast setting since stop 18, is revision 2 with wider
/// table symbols: `q = +-1..=7` exact, `8 <= |q| < 2048` as a class of half
/// an octave followed by the sign and the class's low bits as equally likely
/// bits ([`fast::symbol3_of`]), and the neighbours' buckets of [`bucket3`].
pub const REVISIONS: u8 = 4;
/// The revision of the fast setting until stop 17 (32-symbol tables of the
/// codes `-15..=15`).
pub const FAST: u8 = 2;
/// The revision of the fast setting: revision [`FAST`] with classes of
/// magnitudes up to 2047 in its tables.
pub const FAST2: u8 = 3;

/// Whether `revision` codes with adaptive symbol tables ([`FAST`] or
/// [`FAST2`]) instead of mixing.
#[inline]
pub fn tables(revision: u8) -> bool {
    revision == FAST || revision == FAST2
}

/// One coded symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Symbol {
    /// A quantization code.
    Code(i64),
    /// The value is stored exactly; its bit pattern.
    Escape(u64),
}

/// The bucket of a symbol, as its neighbours see it (`0..=11`).
#[inline]
pub fn bucket(s: Symbol) -> u8 {
    match s {
        Symbol::Escape(_) => ESCAPED,
        Symbol::Code(0) => 0,
        Symbol::Code(q) => {
            let m = q.unsigned_abs();
            let b = match m {
                1 => 1,
                2 => 3,
                3..=4 => 5,
                5..=8 => 7,
                _ => 9,
            };
            b + u8::from(q < 0)
        }
    }
}

/// The bucket of a symbol in revision [`FAST2`] (`0..=11`): 0 for 0, `1 +
/// neg` for `+-1`, `3 + neg` for `+-2`, then by magnitude alone: 5 for 3-4, 6
/// for 5-8, 7 for 9-16, 8 for 17-32, 9 for 33-64, 10 above, [`ESCAPED`].
#[inline]
pub fn bucket3(s: Symbol) -> u8 {
    match s {
        Symbol::Escape(_) => ESCAPED,
        Symbol::Code(q) => bucket3_of(q),
    }
}

/// [`bucket3`] of a code.
#[inline]
pub fn bucket3_of(q: i64) -> u8 {
    let m = q.unsigned_abs();
    match m {
        0 => 0,
        1 => 1 + u8::from(q < 0),
        2 => 3 + u8::from(q < 0),
        3..=4 => 5 + u8::from(q < 0),
        5..=8 => 7 + u8::from(q < 0),
        9..=32 => 9,
        _ => 10,
    }
}

#[inline]
fn coarse(b: u8) -> usize {
    [0, 1, 1, 2, 2, 3, 3, 4, 4, 4, 4, 5, 5][usize::from(b)]
}

/// The adaptive model of the codes of one array.
#[derive(Debug, Clone)]
pub struct CodeModel {
    t1: AdaptiveProbs,
    t2: AdaptiveProbs,
    t3: AdaptiveProbs,
    t4: AdaptiveProbs,
    t5: AdaptiveProbs,
    mixer: Mixer<6>,
    esc_same: AdaptiveProbs,
    esc_bits: AdaptiveProbs,
    /// Revision 1: the bits of `|q|` below the first, by bit length and
    /// position, without mixing.
    low: AdaptiveProbs,
    /// Revision 2: the tables of small codes, by the first two neighbours.
    small: Tables,
    last_escape: u64,
    ctx: [u8; 4],
    level: usize,
    /// The context's part of the indices of `t1..t4` (set per symbol).
    base: [usize; 4],
    value_bits: u32,
    revision: u8,
}

impl CodeModel {
    /// A fresh model of revision 0 for values of `value_bits` (32 or 64)
    /// bits.
    pub fn new(value_bits: u32) -> Self {
        Self::with_revision(value_bits, 0)
    }

    /// A fresh model of `revision` ([`REVISIONS`]) for values of
    /// `value_bits` (32 or 64) bits.
    pub fn with_revision(value_bits: u32, revision: u8) -> Self {
        // The fast revision uses t1 alone.
        let mixed = |n: usize| if tables(revision) { 1 } else { n };
        let mut m = CodeModel {
            t1: AdaptiveProbs::new(NODES * NB * NB, 255),
            t2: AdaptiveProbs::new(mixed(NODES * NB * NB), 255),
            t3: AdaptiveProbs::new(mixed(NODES * NB * NB * 4), 255),
            t4: AdaptiveProbs::new(mixed(NODES * 6 * 6 * 6 * 6), 255),
            t5: AdaptiveProbs::new(mixed(NODES), 255),
            mixer: Mixer::new(mixed(NODES), 6, 1 << 14),
            esc_same: AdaptiveProbs::new(2 * NB, 255),
            esc_bits: AdaptiveProbs::new(2 * 4096 + 64, 255),
            low: AdaptiveProbs::new(64 * 32, 255),
            small: Tables::new(if tables(revision) { NB * NB } else { 1 }),
            last_escape: 0,
            ctx: [UNKNOWN; 4],
            level: 0,
            base: [0; 4],
            value_bits,
            revision,
        };
        m.set_context([UNKNOWN; 4], 0);
        m
    }

    /// Sets the buckets of the next point's four neighbours and its level
    /// (`0..4`).
    #[inline]
    pub fn set_context(&mut self, ctx: [u8; 4], level: usize) {
        self.ctx = ctx;
        self.level = level.min(3);
        let [n0, n1, n2, n3] = ctx.map(usize::from);
        if tables(self.revision) {
            self.base[0] = n0 * NB + n1;
            return;
        }
        self.base = [
            n0 * NB + n1,
            n2 * NB + n3,
            (n0 * NB + n2) * 4 + self.level,
            coarse(ctx[0]) * 216 + coarse(ctx[1]) * 36 + coarse(ctx[2]) * 6 + coarse(ctx[3]),
        ];
    }

    #[inline]
    fn bit<C: Coder>(&mut self, c: &mut C, node: usize, bit: u32) -> u32 {
        let i1 = node * NB * NB + self.base[0];
        if tables(self.revision) {
            let bit = c.code_bit(bit, self.t1.p(i1).clamp(32, 65536 - 32));
            self.t1.update(i1, bit);
            return bit;
        }
        let i2 = node * NB * NB + self.base[1];
        let i3 = node * NB * NB * 4 + self.base[2];
        let i4 = node * 1296 + self.base[3];
        let x = [
            self.t1.stretched(i1),
            self.t2.stretched(i2),
            self.t3.stretched(i3),
            self.t4.stretched(i4),
            self.t5.stretched(node),
            256,
        ];
        self.mixer.mix(x, node);
        let p = self.mixer.last().clamp(32, 65536 - 32);
        let bit = c.code_bit(bit, p);
        self.t1.update(i1, bit);
        self.t2.update(i2, bit);
        self.t3.update(i3, bit);
        self.t4.update(i4, bit);
        self.t5.update(node, bit);
        self.mixer.update(bit);
        bit
    }

    /// Codes one symbol (the encoder's `s`; the decoder's argument is
    /// ignored) and returns the symbol coded.
    pub fn code<C: CdfCoder>(&mut self, c: &mut C, s: Symbol) -> Symbol {
        let is_zero = u32::from(s == Symbol::Code(0));
        let explicit = if self.revision == FAST2 {
            let ctx = self.base[0];
            let (q, sym) = match s {
                Symbol::Code(q) => (q, fast::symbol3_of(q)),
                Symbol::Escape(_) => (0, fast::OTHER),
            };
            let got = self.small.code(c, ctx, sym);
            if got < fast::CLASS_FIRST {
                return Symbol::Code(fast::code_of(got));
            }
            if got < fast::OTHER {
                return Symbol::Code(Self::code_class(c, got, q));
            }
            true
        } else if self.revision == FAST {
            let sym = match s {
                Symbol::Code(q) => fast::symbol_of(q),
                Symbol::Escape(_) => fast::OTHER,
            };
            let ctx = self.base[0];
            let got = self.small.code(c, ctx, sym);
            if got != fast::OTHER {
                return Symbol::Code(fast::code_of(got));
            }
            true
        } else {
            if self.bit(c, 0, is_zero) == 1 {
                return Symbol::Code(0);
            }
            // Revision 1 codes the escape flag only beside an escaped or
            // unknown neighbour; elsewhere an escape is a bit length above
            // MAX_BITS.
            self.revision == 0 || self.ctx.iter().any(|&b| b == ESCAPED || b == UNKNOWN)
        };
        self.code_tail(c, s, explicit)
    }

    /// The fast revision's table symbol of a point whose first two
    /// neighbours' buckets are `n0` and `n1` (`sym` as [`fast::symbol_of`],
    /// [`fast::OTHER`] for anything else; the decoder's is ignored): codes
    /// it and returns the symbol coded. After [`fast::OTHER`] the caller
    /// calls [`code_after_other`](Self::code_after_other). The same bits as
    /// [`code`](Self::code) of revision [`FAST`].
    #[inline]
    pub fn code_small<C: CdfCoder>(&mut self, c: &mut C, n0: u8, n1: u8, sym: usize) -> usize {
        debug_assert_eq!(self.revision, FAST);
        let ctx = usize::from(n0) * NB + usize::from(n1);
        self.small.code(c, ctx, sym)
    }

    /// Revision [`FAST2`]: the sign and low bits of a code of class symbol
    /// `s` (the encoder's `q` is of that class; the decoder's is ignored),
    /// `bits + 1` equally likely bits with the sign (1 negative) on top;
    /// returns the code.
    #[inline]
    fn code_class<C: CdfCoder>(c: &mut C, s: usize, q: i64) -> i64 {
        let (lo, bits) = fast::class3(s);
        let low = (q.unsigned_abs().wrapping_sub(lo) as u32) & ((1 << bits) - 1);
        let got = c.code_raw(u32::from(q < 0) << bits | low, bits + 1);
        let m = (lo + u64::from(got & ((1 << bits) - 1))) as i64;
        if got >> bits == 1 { -m } else { m }
    }

    /// Revision [`FAST2`]'s table symbol and class bits of a point whose
    /// first two neighbours' buckets are `n0` and `n1`: the encoder's `q`
    /// must have `|q| <` [`fast::CLASS_LIMIT`] (the decoder's is ignored).
    /// Returns the code, or `None` after [`fast::OTHER`] (decoder only; the
    /// caller then calls [`code_after_other`](Self::code_after_other)). The
    /// same bits as [`code`](Self::code) of revision [`FAST2`].
    #[inline]
    pub fn code_small3<C: CdfCoder>(&mut self, c: &mut C, n0: u8, n1: u8, q: i64) -> Option<i64> {
        debug_assert_eq!(self.revision, FAST2);
        let ctx = usize::from(n0) * NB + usize::from(n1);
        let got = self.small.code(c, ctx, fast::symbol3_of(q));
        if got < fast::CLASS_FIRST {
            Some(fast::code_of(got))
        } else if got < fast::OTHER {
            Some(Self::code_class(c, got, q))
        } else {
            None
        }
    }

    /// The rest of a fast-revision symbol after [`code_small`](Self::code_small)
    /// coded [`fast::OTHER`] with the same `n0`, `n1`: the escape flag and
    /// the code or the escaped value.
    pub fn code_after_other<C: CdfCoder>(
        &mut self,
        c: &mut C,
        n0: u8,
        n1: u8,
        s: Symbol,
    ) -> Symbol {
        debug_assert!(tables(self.revision));
        self.set_context([n0, n1, UNKNOWN, UNKNOWN], 0);
        self.code_tail(c, s, true)
    }

    /// Everything after the first decision (revisions 0 and 1) or the table
    /// symbol (revision 2): `explicit` says whether the escape flag is coded.
    fn code_tail<C: CdfCoder>(&mut self, c: &mut C, s: Symbol, explicit: bool) -> Symbol {
        let is_escape = u32::from(matches!(s, Symbol::Escape(_)));
        if explicit && self.bit(c, 1, is_escape) == 1 {
            let bits = match s {
                Symbol::Escape(b) => b,
                Symbol::Code(_) => 0,
            };
            return Symbol::Escape(self.code_escape(c, bits));
        }
        let q = match s {
            Symbol::Code(q) => q,
            Symbol::Escape(_) => 0,
        };
        let neg = self.bit(c, 2, u32::from(q < 0));
        let m = q.unsigned_abs().max(1);
        let nbits = if explicit || is_escape == 0 {
            64 - m.leading_zeros()
        } else {
            MAX_BITS + 1
        };
        // Unary bit length: "longer than k" for k = 1, 2, ...
        let last = if explicit { MAX_BITS } else { MAX_BITS + 1 };
        let mut k = 1;
        while k < last {
            let more = u32::from(nbits > k);
            if self.bit(c, 3 + k as usize, more) == 0 {
                break;
            }
            k += 1;
        }
        if k > MAX_BITS {
            let bits = match s {
                Symbol::Escape(b) => b,
                Symbol::Code(_) => 0,
            };
            return Symbol::Escape(self.code_escape(c, bits));
        }
        let mut v: u64 = 1;
        for j in 0..k - 1 {
            let pos = k - 2 - j;
            let b = ((m >> pos) & 1) as u32;
            let bit = if j == 0 {
                self.bit(c, 30 + k as usize, b)
            } else if self.revision >= 1 {
                let i = k as usize * 32 + (j as usize).min(15) * 2 + (v & 1) as usize;
                let b = c.code_bit(b, self.low.p(i).clamp(32, 65536 - 32));
                self.low.update(i, b);
                b
            } else {
                self.bit(c, 56 + (j as usize).min(7), b)
            };
            v = (v << 1) | u64::from(bit);
        }
        let v = v as i64;
        Symbol::Code(if neg == 1 { -v } else { v })
    }

    fn code_escape<C: Coder>(&mut self, c: &mut C, bits: u64) -> u64 {
        let i = usize::from(self.ctx[0]) + if self.ctx[1] == ESCAPED { NB } else { 0 };
        let same = c.code_bit(
            u32::from(bits == self.last_escape),
            self.esc_same.p(i).clamp(32, 65536 - 32),
        );
        self.esc_same.update(i, same);
        if same == 1 {
            return self.last_escape;
        }
        let n = self.value_bits;
        let mut v = 0u64;
        let mut node = 1usize;
        for k in 0..n {
            let b = ((bits >> (n - 1 - k)) & 1) as u32;
            let i = if k < 12 { node } else { 2 * 4096 + k as usize };
            let b = c.code_bit(b, self.esc_bits.p(i).clamp(32, 65536 - 32));
            self.esc_bits.update(i, b);
            if k < 12 {
                node = node * 2 + b as usize;
            }
            v = (v << 1) | u64::from(b);
        }
        self.last_escape = v;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_round_trip() {
        let syms: Vec<Symbol> = [
            0i64,
            1,
            -1,
            2,
            7,
            -8,
            9,
            1000,
            -65535,
            (1 << 24) - 1,
            -(1 << 23),
            8,
            -11,
            12,
            2047,
            -2047,
            2048,
            -1500,
        ]
        .iter()
        .map(|&q| Symbol::Code(q))
        .chain([
            Symbol::Escape(0x7fc0_0000),
            Symbol::Escape(0x7fc0_0000),
            Symbol::Escape(5),
            Symbol::Code(3),
            Symbol::Code(-2),
            Symbol::Code(1),
            Symbol::Escape(0x4049_0fdb),
        ])
        .collect();
        // Odd symbols see no escaped or unknown neighbour: revision 1 codes
        // their escapes as a bit length above MAX_BITS.
        let ctx = |i: usize| {
            let prev = bucket(syms[i.saturating_sub(1)]);
            if i % 2 == 1 && prev != ESCAPED {
                [prev, 0, 0, 1]
            } else {
                [prev, UNKNOWN, 0, 1]
            }
        };
        for revision in 0..REVISIONS {
            let mut m = CodeModel::with_revision(32, revision);
            let mut enc = sep_coder::Encoder::new();
            for (i, &s) in syms.iter().enumerate() {
                m.set_context(ctx(i), i % 4);
                assert_eq!(m.code(&mut enc, s), s);
            }
            let bytes = enc.finish();
            let mut m = CodeModel::with_revision(32, revision);
            let mut dec = sep_coder::Decoder::new(&bytes);
            for (i, &s) in syms.iter().enumerate() {
                m.set_context(ctx(i), i % 4);
                assert_eq!(
                    m.code(&mut dec, Symbol::Code(0)),
                    s,
                    "revision {revision} symbol {i}"
                );
            }
        }
    }
}
