//! Per-bit mixer inputs from expected bytes: a family that predicts a
//! numeric value (an audio sample, a pixel) turns each prediction into the
//! byte it implies, and for each bit this input says how often, in the
//! family's current situation, the bit is a 1 given whether the bits so far
//! agree with that byte (then: its next bit) or on which side of it they
//! left. Unlike a hashed context of the byte, this generalises across byte
//! values, so it learns within a few hundred bytes.

use crate::prim::AdaptiveProbs;

/// Expected-byte inputs for `K` predictions.
#[derive(Debug, Clone)]
pub(crate) struct ExpectedBits<const K: usize> {
    expected: [u32; K],
    probs: AdaptiveProbs,
    base: usize,
    index: [usize; K],
    situations: usize,
}

impl<const K: usize> ExpectedBits<K> {
    /// Inputs for bytes in one of `situations` situations.
    pub fn new(situations: usize) -> Self {
        Self::with_limit(situations, 255)
    }

    /// Inputs whose probabilities' counts saturate at `limit` (`new`:
    /// 255; a higher limit adapts more slowly and averages over more).
    pub fn with_limit(situations: usize, limit: u32) -> Self {
        ExpectedBits {
            expected: [0; K],
            probs: AdaptiveProbs::new(situations * 8 * K * 4, limit),
            base: 0,
            index: [0; K],
            situations,
        }
    }

    /// Starts a byte whose predictions imply `expected` (low 8 bits used),
    /// in situation `situation` (below the constructor's count).
    #[inline]
    pub fn begin(&mut self, expected: [u32; K], situation: usize) {
        debug_assert!(situation < self.situations);
        self.expected = expected.map(|e| e & 0xFF);
        self.base = situation * 8;
    }

    /// The inputs for bit `i`, `c0` the bits so far with a leading 1.
    #[inline]
    pub fn predict(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        let prefix = c0 ^ (1 << (7 - i));
        for (k, (o, &e)) in out.iter_mut().zip(&self.expected).enumerate() {
            let want = e >> (i + 1);
            let state = if prefix == want {
                (e >> i) & 1
            } else if prefix > want {
                2
            } else {
                3
            } as usize;
            let idx = ((self.base + i as usize) * K + k) * 4 + state;
            self.index[k] = idx;
            *o = self.probs.stretched(idx);
        }
    }

    /// Learns the coded bit.
    #[inline]
    pub fn update(&mut self, bit: u32) {
        for &idx in &self.index {
            self.probs.update(idx, bit);
        }
    }

    /// Walks the learned probabilities for a prior's snapshot
    /// (`snapshot.rs`); the expected bytes are set again by the next
    /// [`begin`](Self::begin).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.probs.visit(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_that_the_expected_byte_comes() {
        let mut e = ExpectedBits::<1>::new(1);
        let mut out = [0i32; 1];
        for round in 0..200u32 {
            let byte = (round * 37) as u8;
            e.begin([u32::from(byte)], 0);
            let mut c0 = 1u32;
            for i in (0..8).rev() {
                let bit = u32::from(byte >> i) & 1;
                e.predict(c0, i, &mut out);
                if round > 100 {
                    assert!(if bit == 1 {
                        out[0] > 500
                    } else {
                        out[0] < -500
                    });
                }
                e.update(bit);
                c0 = c0 << 1 | bit;
            }
        }
    }
}
