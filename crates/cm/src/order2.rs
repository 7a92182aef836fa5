//! The order-2 context-mixing model (`--model order2`): fast, and an input
//! for richer models.
//!
//! Per bit it looks up three adaptive probabilities, for the contexts
//! "partial byte" (order 0), "previous byte + partial byte" (order 1) and
//! "hash of the two previous bytes + partial byte" (order 2), mixes them in
//! the logistic domain with weights chosen by the partial byte, and refines
//! the mix with an APM on the partial byte. (A second APM keyed by the
//! previous byte gained 0.7% on the bench set for 12% more time.)
//!
//! The order-2 table is hashed in slots of 16 entries, one slot per
//! (context, nibble so far), so the four bits of a nibble touch one cache
//! line.

use crate::apm::Apm;
use crate::prim::{AdaptiveProbs, Mixer};
use sep_coder::Coder;

/// Hyperparameters of [`Order2`], stored in the archive header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order2Params {
    /// log2 of the number of entries in the order-2 table (4 bytes each).
    pub table_bits: u8,
}

impl Order2Params {
    /// Smallest accepted `table_bits`.
    pub const MIN_TABLE_BITS: u8 = 12;
    /// Largest accepted `table_bits` (1 GiB table).
    pub const MAX_TABLE_BITS: u8 = 28;

    /// Bytes of memory the model allocates.
    pub fn memory_bytes(&self) -> u64 {
        let tables = (1u64 << self.table_bits) + 256 + (256 * O1_SLOTS * 16) as u64;
        4 * tables + 2 * 33 * 256 + 4 * (INPUTS as u64) * 256
    }

    /// The parameters the encoder picks for a block of `len` bytes: a table
    /// no larger than the block can fill (a small input then touches, and
    /// pays page faults for, little memory), at most 2^22 entries.
    pub fn for_block_len(len: u64) -> Self {
        let need = 64 - len.max(1).leading_zeros() as u8 + 2;
        Order2Params {
            table_bits: need.clamp(16, 22),
        }
    }
}

impl Default for Order2Params {
    fn default() -> Self {
        Order2Params { table_bits: 22 }
    }
}

const INPUTS: usize = 4;

/// The order-2 model. Create one per independent block.
#[derive(Debug, Clone)]
pub struct Order2 {
    o0: AdaptiveProbs,
    o1: AdaptiveProbs,
    o2: AdaptiveProbs,
    o2_mask: usize,
    mixer: Mixer<INPUTS>,
    apm0: Apm,
    c1: u32,
    c2: u32,
}

#[inline]
fn slot_hash(ctx: u32, nibble: u32) -> u32 {
    (ctx.wrapping_mul(0x9E37_79B1) ^ nibble.wrapping_mul(0x85EB_CA6B))
        .rotate_left(13)
        .wrapping_mul(0xC2B2_AE35)
}

impl Order2 {
    /// A fresh model (all probabilities 1/2).
    pub fn new(params: &Order2Params) -> Self {
        let bits = params
            .table_bits
            .clamp(Order2Params::MIN_TABLE_BITS, Order2Params::MAX_TABLE_BITS);
        Order2 {
            o0: AdaptiveProbs::new(256, 60),
            o1: AdaptiveProbs::new(256 * O1_SLOTS * 16, 250),
            o2: AdaptiveProbs::new(1 << bits, 1023),
            o2_mask: (1 << bits) - 1,
            mixer: Mixer::new(256, 6, 1 << 14),
            apm0: Apm::new(256, 7),
            c1: 0,
            c2: 0,
        }
    }

    /// Codes (or decodes) every byte of `data` in order through `coder`.
    ///
    /// With an encoder, `data` is the input; with a decoder, `data` is
    /// overwritten with the decoded bytes. The same code runs both ways.
    pub fn code<C: Coder>(&mut self, coder: &mut C, data: &mut [u8]) {
        for b in data.iter_mut() {
            *b = self.code_byte(coder, *b);
        }
    }

    /// Codes one byte, most significant bit first, and returns it.
    #[inline]
    pub fn code_byte<C: Coder>(&mut self, coder: &mut C, byte: u8) -> u8 {
        let byte = u32::from(byte);
        let ctx2 = (self.c2 << 8) | self.c1;
        // Each table is used in slots of 16 entries (one cache line): one
        // slot per context for the first nibble, one per (context, first
        // nibble) for the second; `nib` walks the slot (1, 1b, 1bb, 1bbb).
        let mut slot1 = (self.c1 as usize) * O1_SLOTS * 16;
        let mut slot2 = (slot_hash(ctx2, 0) as usize) & self.o2_mask & !15;
        let mut c0 = 1u32; // the bits seen so far, after a leading 1
        let mut nib = 1usize;
        for i in (0..8).rev() {
            if i == 3 {
                slot1 += (c0 as usize - 15) * 16;
                slot2 = (slot_hash(ctx2, c0) as usize) & self.o2_mask & !15;
                nib = 1;
            }
            let i0 = c0 as usize;
            let i1 = slot1 + nib;
            let i2 = slot2 + nib;
            let x = [
                self.o0.stretched(i0),
                self.o1.stretched(i1),
                self.o2.stretched(i2),
                256,
            ];
            let d = self.mixer.mix(x, c0 as usize);
            let pa = self.apm0.refine_stretched(d, c0 as usize);
            // Both terms are in 1..=65535, so the average is too.
            let p = (self.mixer.last() + pa * 3 + 2) >> 2;

            let bit = coder.code_bit((byte >> i) & 1, p);

            self.o0.update(i0, bit);
            self.o1.update(i1, bit);
            self.o2.update(i2, bit);
            self.mixer.update(bit);
            self.apm0.update(bit);
            c0 = (c0 << 1) | bit;
            nib = (nib << 1) | bit as usize;
        }
        let b = c0 & 0xFF;
        self.c2 = self.c1;
        self.c1 = b;
        b as u8
    }
}

/// Slots per order-1 context: one for the first nibble, sixteen for the second.
const O1_SLOTS: usize = 17;

#[cfg(test)]
mod tests {
    use super::*;
    use sep_coder::{Decoder, Encoder};

    fn round_trip(data: &[u8]) -> usize {
        let params = Order2Params { table_bits: 16 };
        let mut enc = Encoder::new();
        let mut buf = data.to_vec();
        Order2::new(&params).code(&mut enc, &mut buf);
        assert_eq!(buf, data);
        let bytes = enc.finish();
        let mut out = vec![0u8; data.len()];
        Order2::new(&params).code(&mut Decoder::new(&bytes), &mut out);
        assert_eq!(out, data);
        bytes.len()
    }

    #[test]
    fn round_trips_and_compresses() {
        assert_eq!(round_trip(&[]), 0);
        round_trip(&[0]);
        round_trip(&[255; 1000]);
        let text: Vec<u8> = b"the quick brown fox jumps over the lazy dog. "
            .iter()
            .cycle()
            .take(20_000)
            .copied()
            .collect();
        let n = round_trip(&text);
        assert!(n < 1500, "{n}");
        let mut state = 7u64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                (state >> 56) as u8
            })
            .collect();
        let n = round_trip(&noise);
        // Learning noise costs a little; the container stores such blocks raw.
        assert!(n < 100_500, "random data grew to {n}");
    }
}
