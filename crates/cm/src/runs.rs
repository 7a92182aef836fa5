//! Byte runs per context (CM revision 8, doc/FORMAT.md 4.19.1): for some
//! of the model's hashed contexts, the last byte seen in that context and
//! how many times in a row it was seen there. While the byte being coded
//! still agrees with that byte, each such context adds a mixer input that
//! predicts its next bit, as strongly as an adaptive probability of the
//! run's length says.
//!
//! One table of `2^bits` `u32` slots serves all contexts: a slot holds an
//! 8-bit check, the byte and the run length (capped at 255), and is
//! overwritten by a different context that hashes to it.

use crate::logistic::stretch;
use crate::models::hash2;
use crate::prim::{AdaptiveProbs, expected_bit};

/// Run-length buckets per context in the probability table.
const LENGTHS: usize = 16;

/// The run map of a set of contexts.
#[derive(Debug, Clone)]
pub(crate) struct RunMap {
    t: Vec<u32>,
    bits: u32,
    /// Per context: the slot and check of this byte's context.
    slots: Vec<(usize, u32)>,
    /// Per context: the expected byte with a leading 1 (0: none) and its
    /// run-length bucket.
    expected: Vec<(u32, usize)>,
    /// Probability that the expected bit is right, per context and
    /// run-length bucket.
    probs: AdaptiveProbs,
    /// Per context: the probability entry used for this bit and the bit
    /// predicted (`usize::MAX`: none).
    used: Vec<(usize, u32)>,
}

/// The run-length bucket of a run of `n` (`1..=255`).
#[inline]
fn bucket(n: u32) -> usize {
    match n {
        0..=11 => n as usize,
        12..=15 => 12,
        16..=31 => 13,
        32..=63 => 14,
        _ => 15,
    }
}

impl RunMap {
    /// Walks the table and probabilities (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        v.u32s(&mut self.t);
        self.probs.visit(v);
    }

    /// Bytes a map of `2^bits` slots allocates.
    pub(crate) const fn memory(bits: u32) -> u64 {
        4u64 << bits
    }

    /// A map of `2^bits` slots for `contexts` contexts.
    pub fn new(bits: u32, contexts: usize) -> Self {
        RunMap {
            t: vec![0; 1 << bits],
            bits,
            slots: vec![(0, 0); contexts],
            expected: vec![(0, 0); contexts],
            probs: AdaptiveProbs::new(contexts * LENGTHS, 255),
            used: vec![(usize::MAX, 0); contexts],
        }
    }

    /// How many contexts (mixer inputs).
    pub fn contexts(&self) -> usize {
        self.slots.len()
    }

    /// Looks up the contexts of the byte to come (`hashes`: the first
    /// [`contexts`](Self::contexts) hashed contexts' hashes).
    #[inline]
    pub fn begin_byte(&mut self, hashes: &[u32]) {
        for (k, &h) in hashes.iter().take(self.slots.len()).enumerate() {
            let h = hash2(h, 0x7F4A_7C15 ^ k as u32);
            let slot = (h >> (32 - self.bits)) as usize;
            let check = h & 0xFF;
            self.slots[k] = (slot, check);
            let e = self.t[slot];
            self.expected[k] = if e != 0 && e >> 24 == check {
                (0x100 | (e >> 8 & 0xFF), bucket(e & 0xFF))
            } else {
                (0, 0)
            };
        }
    }

    /// Sets the inputs for bit `i` (partial byte `c0`) into `out`.
    #[inline]
    pub fn inputs(&mut self, c0: u32, i: u32, out: &mut [i32]) {
        for (k, ((x, &(e, n)), used)) in out
            .iter_mut()
            .zip(&self.expected)
            .zip(self.used.iter_mut())
            .enumerate()
        {
            if let Some(bit) = expected_bit(e, c0, i) {
                let j = k * LENGTHS + n;
                let s = stretch(self.probs.p(j).max(1));
                *x = if bit == 1 { s } else { -s };
                *used = (j, bit);
            } else {
                *x = 0;
                *used = (usize::MAX, 0);
            }
        }
    }

    /// Trains the probabilities used on `bit`.
    #[inline]
    pub fn update(&mut self, bit: u32) {
        for &(j, b) in &self.used {
            if j != usize::MAX {
                self.probs.update(j, u32::from(b == bit));
            }
        }
    }

    /// Records `byte`, just coded, in every context's slot.
    #[inline]
    pub fn end_byte(&mut self, byte: u8) {
        let b = u32::from(byte);
        for &(slot, check) in &self.slots {
            let e = self.t[slot];
            self.t[slot] = if e != 0 && e >> 24 == check && (e >> 8 & 0xFF) == b {
                e + u32::from(e & 0xFF < 255)
            } else {
                check << 24 | b << 8 | 1
            };
        }
    }
}
