//! The fast setting's coding of small codes (model revision
//! [`FAST`](crate::model::FAST)): one symbol of an adaptive 32-symbol
//! distribution per point instead of a chain of binary decisions.
//!
//! Symbol 0 is `q = 0`, symbols `1..=30` are `q = +1, -1, +2, -2, ..., +15,
//! -15`, symbol 31 ([`OTHER`]) is anything else (a larger code or an escape,
//! then coded by the binary path of [`CodeModel`](crate::model::CodeModel)).
//! A distribution is a cumulative table `cdf[0..=32]` over [`ADAPT_TOTAL`];
//! symbol `s` owns `[cdf[s] + s, cdf[s + 1] + s + 1)` of the coder's total
//! `2^15`, so every symbol keeps a frequency of at least 1. After coding `s`,
//! every `cdf[i]` moves by `>> rate` (arithmetic shift of the difference)
//! towards `0` for `i <= s` and towards [`ADAPT_TOTAL`] for `i > s`, with
//! `rate` 4 for the first 16 symbols of a table, 5 up to 64, then 6. All
//! integer arithmetic.

use sep_coder::{Coder, Decoder, Encoder};

/// Symbols of a table.
pub const SYMBOLS: usize = 32;
/// The symbol of every code outside `-15..=15` and of escapes.
pub const OTHER: usize = SYMBOLS - 1;
/// Bits of the coder's total.
pub const TOTAL_BITS: u32 = 15;
/// The adaptive part of the total (the rest gives each symbol 1).
pub const ADAPT_TOTAL: i32 = (1 << TOTAL_BITS) - SYMBOLS as i32;

/// A coder that also codes a symbol of an adaptive table of [`SYMBOLS`].
pub trait CdfCoder: Coder {
    /// Codes `sym` (encoder; the decoder ignores it) with the table `cdf`
    /// and returns the symbol coded.
    fn code_cdf(&mut self, sym: usize, cdf: &[u16; SYMBOLS + 1]) -> usize;
    /// Codes the `bits` low bits of `v` as equally likely (encoder; the
    /// decoder ignores `v`) and returns them; `bits` in `1..=24`.
    fn code_raw(&mut self, v: u32, bits: u32) -> u32;
}

#[inline]
fn interval(sym: usize, cdf: &[u16; SYMBOLS + 1]) -> (u32, u32) {
    let lo = u32::from(cdf[sym]) + sym as u32;
    let hi = u32::from(cdf[sym + 1]) + sym as u32 + 1;
    (lo, hi - lo)
}

impl CdfCoder for Encoder {
    #[inline]
    fn code_cdf(&mut self, sym: usize, cdf: &[u16; SYMBOLS + 1]) -> usize {
        let (cum, freq) = interval(sym, cdf);
        self.encode(cum, freq, TOTAL_BITS);
        sym
    }

    #[inline]
    fn code_raw(&mut self, v: u32, bits: u32) -> u32 {
        let v = v & ((1 << bits) - 1);
        self.encode(v, 1, bits);
        v
    }
}

impl CdfCoder for Decoder<'_> {
    #[inline]
    fn code_cdf(&mut self, _sym: usize, cdf: &[u16; SYMBOLS + 1]) -> usize {
        let t = self.decode_target(TOTAL_BITS);
        // The symbol is the number of i in 1..SYMBOLS with cdf[i] + i <= t.
        // In 16-bit lanes so that it vectorises: `c + i < 2^15 + 32` and
        // `t < 2^15` fit a u16.
        let t = t as u16;
        let mut sym = 0u16;
        for (i, &c) in cdf[1..SYMBOLS].iter().enumerate() {
            sym += u16::from(c + (i as u16) < t);
        }
        let sym = usize::from(sym);
        let (cum, freq) = interval(sym, cdf);
        self.decode_update(cum, freq, TOTAL_BITS);
        sym
    }

    #[inline]
    fn code_raw(&mut self, _v: u32, bits: u32) -> u32 {
        let v = self.decode_target(bits);
        self.decode_update(v, 1, bits);
        v
    }
}

/// Adaptive tables of [`SYMBOLS`], one per context.
#[derive(Debug, Clone)]
pub struct Tables {
    cdf: Vec<[u16; SYMBOLS + 1]>,
    count: Vec<u8>,
}

impl Tables {
    /// `contexts` uniform tables.
    pub fn new(contexts: usize) -> Self {
        let mut t = [0u16; SYMBOLS + 1];
        for (i, c) in t.iter_mut().enumerate() {
            *c = (ADAPT_TOTAL as usize * i / SYMBOLS) as u16;
        }
        Tables {
            cdf: vec![t; contexts],
            count: vec![0; contexts],
        }
    }

    /// Codes `sym` in context `ctx` and learns it; returns the symbol coded.
    #[inline]
    pub fn code<C: CdfCoder>(&mut self, c: &mut C, ctx: usize, sym: usize) -> usize {
        let s = c.code_cdf(sym, &self.cdf[ctx]);
        let n = self.count[ctx];
        let rate = if n < 16 {
            4
        } else if n < 64 {
            5
        } else {
            6
        };
        self.count[ctx] = n.saturating_add(1);
        // All 32 entries after `cdf[0]` in 16-bit lanes, so that the loop
        // vectorises: entries stay within `0..=ADAPT_TOTAL` (< 2^15), so
        // `target - x` fits an i16 and the result is the i32 formula's;
        // `cdf[SYMBOLS]` is `ADAPT_TOTAL` with target `ADAPT_TOTAL` and stays.
        let t: &mut [u16; SYMBOLS] = (&mut self.cdf[ctx][1..])
            .try_into()
            .expect("SYMBOLS entries after cdf[0]");
        let s = s as u16;
        for (i, v) in t.iter_mut().enumerate() {
            let x = *v as i16;
            let target = ADAPT_TOTAL as i16 & -i16::from(i as u16 >= s);
            *v = x.wrapping_add(target.wrapping_sub(x) >> rate) as u16;
        }
        usize::from(s)
    }
}

/// The symbol of code `q` (or [`OTHER`]).
#[inline]
pub fn symbol_of(q: i64) -> usize {
    match q {
        0 => 0,
        1..=15 => 2 * q as usize - 1,
        -15..=-1 => 2 * q.unsigned_abs() as usize,
        _ => OTHER,
    }
}

/// The code of a symbol below [`OTHER`].
#[inline]
pub fn code_of(s: usize) -> i64 {
    let m = s.div_ceil(2) as i64;
    if s % 2 == 1 { m } else { -m }
}

/// Revision 3 ([`FAST2`](crate::model::FAST2)): the first symbol of a class
/// of magnitudes; below it, symbols `1..=14` are `q = +1, -1, ..., +7, -7`.
pub const CLASS_FIRST: usize = 15;
/// Revision 3: codes with `|q|` below this have a table symbol other than
/// [`OTHER`].
pub const CLASS_LIMIT: u64 = 2048;

/// Revision 3's table symbol of code `q`: 0 for 0, `2|q| - 1` or `2|q|` for
/// `q = +-1..=7`, and for `8 <= |q| < 2048` with bit length `k` the class
/// [`CLASS_FIRST`]` + 2 (k - 4) + b`, `b` the bit of `|q|` below its top bit
/// (half octaves: 8-11, 12-15, 16-23, ...); [`OTHER`] for anything else.
#[inline]
pub fn symbol3_of(q: i64) -> usize {
    let m = q.unsigned_abs();
    if m < 8 {
        return if q > 0 {
            2 * m as usize - 1
        } else {
            2 * m as usize
        };
    }
    if m >= CLASS_LIMIT {
        return OTHER;
    }
    let k = 64 - m.leading_zeros() as usize;
    CLASS_FIRST + 2 * (k - 4) + ((m >> (k - 2)) & 1) as usize
}

/// Revision 3: for a class symbol `s` (`CLASS_FIRST..OTHER`), the smallest
/// `|q|` of its class and the number of low bits of `|q|` below the class's
/// top two bits (`2..=9`). A code of the class is coded as the symbol then
/// `bits + 1` equally likely bits: the sign (1 negative) above the low bits.
#[inline]
pub fn class3(s: usize) -> (u64, u32) {
    let j = s - CLASS_FIRST;
    let bits = (j / 2 + 2) as u32;
    ((2 | (j & 1) as u64) << bits, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_map_both_ways_and_tables_round_trip() {
        for q in -15..=15 {
            assert_eq!(code_of(symbol_of(q)), q);
        }
        assert_eq!(symbol_of(16), OTHER);
        assert_eq!(symbol_of(-16), OTHER);
        // Revision 3: every class symbol's codes map back to it, in order.
        let mut next = 8u64;
        for s in CLASS_FIRST..OTHER {
            let (lo, bits) = class3(s);
            assert_eq!(lo, next, "class {s}");
            for m in [lo, lo + (1 << bits) - 1] {
                assert_eq!(symbol3_of(m as i64), s);
                assert_eq!(symbol3_of(-(m as i64)), s);
            }
            next = lo + (1 << bits);
        }
        assert_eq!(next, CLASS_LIMIT);
        assert_eq!(symbol3_of(2048), OTHER);
        for q in -7..=7 {
            assert_eq!(code_of(symbol3_of(q)), q);
        }
        let syms: Vec<usize> = (0..5000u32)
            .map(|i| ((i.wrapping_mul(2_654_435_761) >> 7) % 97) as usize % SYMBOLS)
            .map(|s| if s > 8 { s % 3 } else { s })
            .collect();
        let mut t = Tables::new(2);
        let mut enc = Encoder::new();
        for (i, &s) in syms.iter().enumerate() {
            assert_eq!(t.code(&mut enc, i % 2, s), s);
        }
        let bytes = enc.finish();
        // Skewed symbols cost well under 5 bits each.
        assert!(bytes.len() < syms.len() * 3 / 8, "{}", bytes.len());
        let mut t = Tables::new(2);
        let mut dec = Decoder::new(&bytes);
        for (i, &s) in syms.iter().enumerate() {
            assert_eq!(t.code(&mut dec, i % 2, 0), s, "symbol {i}");
        }
        // Monotone tables: every symbol keeps a frequency of at least 1.
        for cdf in &t.cdf {
            assert!(cdf.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
