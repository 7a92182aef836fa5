//! Bit histories: a byte-sized state per context that remembers how many 0s
//! and 1s followed it, with old evidence discounted.
//!
//! A state stands for a pair of counts `(n0, n1)`. Observing bit `y`
//! increments `n_y` and, when the other count exceeds 2, shrinks it to
//! `(n + 1) / 2 + 1`, so a context that changes its mind forgets fast while one
//! that keeps predicting the same bit becomes confident. Counts are bounded so
//! that all reachable pairs fit in a byte: the table is built at compile time
//! by a breadth-first walk from `(0, 0)`, and is part of the archive format
//! (tests pin it).
//!
//! An adaptive map (see [`crate::AdaptiveProbs`]) turns a state into a
//! probability learned from the data; [`StateTable::prior`] gives its start.

/// Largest count of one bit when the other is `k` (index `k`, beyond the end: 2).
const BOUND: [u8; 7] = [62, 40, 14, 8, 6, 5, 4];

const fn bound(other: u8) -> u8 {
    if (other as usize) < BOUND.len() {
        BOUND[other as usize]
    } else {
        3
    }
}

const fn allowed(n0: u8, n1: u8) -> bool {
    n0 <= bound(n1) && n1 <= bound(n0)
}

/// The pair that follows `(n0, n1)` after bit `y` (before bounding to the table).
const fn step(n0: u8, n1: u8, y: u8) -> (u8, u8) {
    let (mut a, mut b) = if y == 1 { (n1, n0) } else { (n0, n1) };
    // a: count of the observed bit, b: the other.
    if b > 2 {
        b = b.div_ceil(2) + 1;
    }
    a += 1;
    while !allowed_pair(a, b) {
        if a > b { a -= 1 } else { b -= 1 }
    }
    if y == 1 { (b, a) } else { (a, b) }
}

const fn allowed_pair(a: u8, b: u8) -> bool {
    allowed(a, b)
}

/// Number of states.
pub const NUM_STATES: usize = StateTable::build().len;

/// The state machine: counts and transitions of every state.
#[derive(Debug)]
pub struct StateTable {
    n0: [u8; 256],
    n1: [u8; 256],
    next: [[u8; 2]; 256],
    len: usize,
}

/// The table, built at compile time.
pub static STATES: StateTable = StateTable::build();

impl StateTable {
    const fn build() -> StateTable {
        let mut t = StateTable {
            n0: [0; 256],
            n1: [0; 256],
            next: [[0; 2]; 256],
            len: 1,
        };
        // Breadth-first from (0, 0): state i is the i-th pair discovered.
        let mut i = 0;
        while i < t.len {
            let mut y = 0;
            while y < 2 {
                let (a, b) = step(t.n0[i], t.n1[i], y as u8);
                let mut j = 0;
                while j < t.len && !(t.n0[j] == a && t.n1[j] == b) {
                    j += 1;
                }
                if j == t.len {
                    assert!(t.len < 256, "state table overflows a byte");
                    t.n0[j] = a;
                    t.n1[j] = b;
                    t.len += 1;
                }
                t.next[i][y] = j as u8;
                y += 1;
            }
            i += 1;
        }
        t
    }

    /// The state after observing `bit` in state `s`.
    #[inline]
    pub fn next(&self, s: u8, bit: u32) -> u8 {
        self.next[usize::from(s)][bit as usize & 1]
    }

    /// `(n0, n1)` of state `s`.
    pub fn counts(&self, s: u8) -> (u8, u8) {
        (self.n0[s as usize], self.n1[s as usize])
    }

    /// Starting probability of a 1 (16-bit) for state `s`: `(n1 + 0.5) / (n + 1)`.
    pub fn prior(&self, s: u8) -> u32 {
        let (n0, n1) = (
            u32::from(self.n0[s as usize]),
            u32::from(self.n1[s as usize]),
        );
        ((2 * n1 + 1) * 65536 / (2 * (n0 + n1) + 2)).clamp(1, 65535)
    }

    /// A measure of how much evidence state `s` holds (`n0 + n1`), used to
    /// pick which bucket to evict.
    #[inline]
    pub fn weight(&self, s: u8) -> u8 {
        self.n0[s as usize] + self.n1[s as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_closed_and_fits_a_byte() {
        const { assert!(NUM_STATES <= 256) };
        for s in 0..NUM_STATES as u8 {
            for y in 0..2 {
                assert!((STATES.next(s, y) as usize) < NUM_STATES);
            }
        }
        assert_eq!(STATES.counts(0), (0, 0));
    }

    #[test]
    fn counts_follow_the_rule() {
        let mut s = 0u8;
        for k in 1..=70u8 {
            s = STATES.next(s, 1);
            assert_eq!(STATES.counts(s), (0, k.min(62)));
        }
        // A surprise discounts the long run.
        let s = STATES.next(s, 0);
        assert_eq!(STATES.counts(s), (1, 32));
        assert!(STATES.prior(s) > 60_000);
        assert_eq!(STATES.prior(0), 32768);
    }

    #[test]
    fn table_is_pinned() {
        // The table is part of the archive format.
        let mut h = 0u64;
        for s in 0..NUM_STATES as u8 {
            let (a, b) = STATES.counts(s);
            for v in [a, b, STATES.next(s, 0), STATES.next(s, 1)] {
                h = h
                    .wrapping_mul(0x100_0000_01B3)
                    .wrapping_add(u64::from(v) + 1);
            }
        }
        assert_eq!((NUM_STATES, h), (243, 0xed6c_dbc6_e3b4_e4c4));
    }
}
