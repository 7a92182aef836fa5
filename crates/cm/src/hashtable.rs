//! Hashed context slots: for each (context, nibble so far) a 16-byte bucket
//! holding a check byte and the bit-history states of the 15 nodes of a
//! nibble's binary tree.
//!
//! Four buckets share a 64-byte cache line; a lookup probes the three buckets
//! of the line nearest the hash, returns the one whose check byte matches, or
//! claims the one holding the least evidence (the state of its first node),
//! cleared. A context therefore costs one cache miss per nibble.

use crate::state::STATES;

/// A table of `2^bits` bytes of nibble buckets.
#[derive(Debug, Clone)]
pub struct NibbleTable {
    t: Vec<u8>,
    /// Mask of bucket indices.
    mask: usize,
}

impl NibbleTable {
    /// Walks the table's bytes (a prior's snapshot, `snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        v.u8s(&mut self.t);
    }

    /// A table of `2^bits` bytes (`bits` in `10..=32`), all states fresh.
    pub fn new(bits: u8) -> Self {
        assert!((10..=32).contains(&bits), "NibbleTable: bits {bits}");
        let t = vec![0; 1 << bits];
        sep_kernels::advise_huge_pages(&t);
        NibbleTable {
            t,
            mask: (1 << (bits - 4)) - 1,
        }
    }

    /// Bytes allocated.
    pub fn bytes(&self) -> usize {
        self.t.len()
    }

    /// The bucket of context hash `h`: the byte offset of its node-1 state
    /// (node `k` of the nibble tree, `1..=15`, is at offset `+ k - 1`).
    #[inline]
    pub fn bucket(&mut self, h: u32) -> usize {
        let check = (h >> 24) as u8;
        let i = (h as usize) & self.mask;
        let mut best = i;
        let mut best_weight = u8::MAX;
        for probe in 0..3 {
            let b = i ^ probe;
            let at = b * 16;
            if self.t[at] == check {
                return at + 1;
            }
            let w = STATES.weight(self.t[at + 1]);
            if w < best_weight {
                best_weight = w;
                best = b;
            }
        }
        let at = best * 16;
        self.t[at..at + 16].fill(0);
        self.t[at] = check;
        at + 1
    }

    /// Starts loading the cache line of context hash `h`, so that several
    /// lookups' memory latencies overlap; returns a value to feed
    /// [`std::hint::black_box`] (the load must not be optimised away).
    #[inline]
    pub fn touch(&self, h: u32) -> u8 {
        self.t[((h as usize) & self.mask) * 16]
    }

    /// Starts loading the cache line of context hash `h` (a hint: changes
    /// nothing and does not wait), a nibble ahead of its
    /// [`bucket`](Self::bucket) lookup.
    #[inline]
    pub fn prefetch(&self, h: u32) {
        sep_kernels::prefetch(&self.t, ((h as usize) & self.mask) * 16);
    }

    /// The state at byte offset `i` (a bucket offset plus a node index - 1).
    #[inline]
    pub fn state(&self, i: usize) -> u8 {
        self.t[i]
    }

    /// Stores state `s` at `i`.
    #[inline]
    pub fn set(&mut self, i: usize, s: u8) {
        self.t[i] = s;
    }

    /// Moves the state at `i` after observing `bit`.
    #[inline]
    pub fn update(&mut self, i: usize, bit: u32) {
        self.t[i] = STATES.next(self.t[i], bit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_found_again_and_evict_the_weakest() {
        let mut t = NibbleTable::new(10);
        let claim = |t: &mut NibbleTable, h: u32, updates: usize| {
            let b = t.bucket(h);
            for _ in 0..updates {
                t.update(b, 1);
            }
            b
        };
        // Three contexts of one cache line, with 5, 3 and 1 observations.
        let a = claim(&mut t, 0xAB00_0001, 5);
        let b = claim(&mut t, 0xCD00_0001, 3);
        let c = claim(&mut t, 0xEF00_0001, 1);
        assert!(a != b && b != c && a != c);
        assert_eq!(t.bucket(0xAB00_0001), a, "same context, same bucket");
        // A fourth evicts the one with the least evidence (c), cleared.
        let d = t.bucket(0x1200_0001);
        assert_eq!(d, c);
        assert_eq!(t.state(d), 0);
        assert_eq!(t.bucket(0xAB00_0001), a);
        assert_eq!(t.bucket(0xCD00_0001), b);
        assert_eq!(STATES.counts(t.state(a)), (0, 5));
    }
}
