//! The match model: finds the longest earlier occurrence of the current
//! context and predicts the bit that followed it.
//!
//! A hash of the last `min_len` bytes indexes the position that followed their
//! previous occurrence; a candidate is verified backwards byte by byte, so its
//! length is exact. While the bits coded so far agree with the predicted byte,
//! the model predicts its next bit with a confidence learned per match-length
//! bucket and recent misses; on the first disagreement it stays silent until
//! the next byte. A mispredicted byte does not end the match: the model goes on
//! following the same pointer (its length counting from 0 again) until it has
//! missed `MAX_MISSES` times or a fresh lookup finds a verified match.
//!
//! The history is the whole block buffer. With several streams coded side by
//! side, only bytes that the decoder already has may be read: a [`Visibility`]
//! says which positions those are.

use crate::logistic::stretch;
use crate::prim::AdaptiveProbs;

/// Which positions of the block buffer are already known to the decoder.
pub trait Visibility {
    /// Whether byte `pos` is known.
    fn known(&self, pos: usize) -> bool;
}

/// One stream coded alone: everything before the current position is known.
#[derive(Debug, Clone, Copy)]
pub struct Sequential(pub usize);

impl Visibility for Sequential {
    #[inline]
    fn known(&self, pos: usize) -> bool {
        pos < self.0
    }
}

/// Longest match length counted.
const MAX_LEN: usize = 65_535;
/// Match-length buckets.
const BUCKETS: usize = 32;
/// Misses a match survives (recovering after each) before it is dropped.
const MAX_MISSES: u32 = 8;

fn bucket(len: usize) -> usize {
    if len < 16 {
        len
    } else {
        (12 + (usize::BITS - len.leading_zeros()) as usize).min(BUCKETS - 1)
    }
}

/// Per-stream match state.
#[derive(Debug, Clone, Default)]
pub struct MatchState {
    /// Position of the predicted byte.
    ptr: usize,
    /// Verified length of the match (0: none).
    len: usize,
    /// The predicted byte with a leading 1 (`0x100 | byte`), 0 when silent.
    expected: u32,
    /// Length bucket used for the current bit.
    idx: usize,
    /// Predicted bit for the current bit (valid when `idx` was set).
    predicted: u32,
    active: bool,
    /// Bytes mispredicted since the match was found (0 when none): after a
    /// miss the model keeps following the same pointer, with `len` counting
    /// again from 0, so a copy with a few changed bytes is not lost.
    misses: u32,
}

impl MatchState {
    /// Walks the state (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        crate::snapshot::visit_usize(v, &mut self.ptr);
        crate::snapshot::visit_usize(v, &mut self.len);
        crate::snapshot::visit_u32(v, &mut self.expected);
        crate::snapshot::visit_usize(v, &mut self.idx);
        crate::snapshot::visit_u32(v, &mut self.predicted);
        crate::snapshot::visit_bool(v, &mut self.active);
        crate::snapshot::visit_u32(v, &mut self.misses);
    }

    /// Whether the state can continue after `history` bytes: the pointer
    /// inside them, the length and misses in their ranges.
    pub(crate) fn within(&self, history: usize) -> bool {
        self.ptr < history.max(1)
            && self.len <= MAX_LEN
            && self.misses <= MAX_MISSES
            && self.idx < 4 * BUCKETS
            && self.predicted <= 1
    }

    /// The current match length (0 when there is none or it was broken in
    /// this byte).
    pub fn len(&self) -> usize {
        if self.expected != 0 { self.len } else { 0 }
    }

    /// Whether no match is active.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The predicted byte, when a match is active.
    pub fn expected_byte(&self) -> Option<u8> {
        (self.expected != 0).then_some(self.expected as u8)
    }
}

/// The match model's shared tables.
#[derive(Debug, Clone)]
pub struct MatchModel {
    table: Vec<u32>,
    mask: usize,
    min_len: usize,
    probs: AdaptiveProbs,
}

impl MatchModel {
    /// Walks the hash table of positions and the hit statistics
    /// (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        v.u32s(&mut self.table);
        self.probs.visit(v);
    }

    /// Whether every position in the table is at most `history` (a
    /// restored prior's table refers to its history).
    pub(crate) fn positions_within(&self, history: usize) -> bool {
        self.table.iter().all(|&p| p as usize <= history)
    }

    /// A model with `2^bits` hash slots matching on `min_len` bytes.
    pub fn new(bits: u8, min_len: usize) -> Self {
        assert!((8..=30).contains(&bits) && min_len >= 1);
        let table = vec![0; 1 << bits];
        sep_kernels::advise_huge_pages(&table);
        MatchModel {
            table,
            mask: (1 << bits) - 1,
            min_len,
            probs: AdaptiveProbs::new(4 * BUCKETS, 1023),
        }
    }

    /// Bytes allocated.
    pub fn bytes(&self) -> usize {
        self.table.len() * 4
    }

    /// The hash slot of the `min_len` bytes `prefix` then `last`.
    #[inline]
    fn slot(&self, prefix: &[u8], last: u8) -> usize {
        let mut h: u32 = 0;
        for &b in prefix.iter().chain(std::iter::once(&last)) {
            h = (h ^ u32::from(b)).wrapping_mul(0x2F0F_3D25);
        }
        (h >> 8) as usize & self.mask
    }

    /// Starts loading the hash slot that [`begin_byte`](Self::begin_byte)
    /// of byte `pos + 1` will read if byte `pos` (being coded) turns out to
    /// be `next` (a cache hint: changes nothing).
    #[inline]
    pub fn prefetch_next(&self, data: &[u8], start: usize, pos: usize, next: u8) {
        if pos + 1 - start >= self.min_len {
            let slot = self.slot(&data[pos + 1 - self.min_len..pos], next);
            sep_kernels::prefetch(&self.table, slot);
        }
    }

    /// Prepares the prediction of byte `pos` of a stream that starts at
    /// `start`; `data[start..pos]` are known.
    pub fn begin_byte<V: Visibility>(
        &mut self,
        st: &mut MatchState,
        data: &[u8],
        start: usize,
        pos: usize,
        vis: &V,
    ) {
        // Follow the match through the byte just coded; after a miss, go on
        // following it (recovering) unless it has missed too often.
        if st.ptr > 0 {
            if pos > start && data[st.ptr] == data[pos - 1] {
                st.len = (st.len + 1).min(MAX_LEN);
                if st.len >= 16 {
                    st.misses = 0;
                }
            } else {
                st.len = 0;
                st.misses += 1;
            }
            st.ptr += 1;
            if st.misses > MAX_MISSES || st.ptr >= pos {
                st.ptr = 0;
                st.len = 0;
                st.misses = 0;
            }
        }
        if pos - start >= self.min_len {
            let slot = self.slot(&data[pos - self.min_len..pos - 1], data[pos - 1]);
            if st.len < self.min_len {
                let cand = self.table[slot] as usize;
                if cand != 0 {
                    let mut l = 0;
                    while l < MAX_LEN
                        && l < cand
                        && start + l < pos
                        && vis.known(cand - 1 - l)
                        && data[cand - 1 - l] == data[pos - 1 - l]
                    {
                        l += 1;
                    }
                    if l >= self.min_len {
                        st.len = l;
                        st.ptr = cand;
                        st.misses = 0;
                    }
                }
            }
            self.table[slot] = pos as u32;
        }
        st.expected = if st.ptr > 0 && vis.known(st.ptr) {
            0x100 | u32::from(data[st.ptr])
        } else {
            0
        };
        if st.expected == 0 {
            st.len = 0;
            st.ptr = 0;
            st.misses = 0;
        }
    }

    /// The input for the next bit, given the partial byte `c0` (leading 1)
    /// and the bit index `i` (7 = most significant): a stretched
    /// probability, 0 when silent.
    #[inline]
    pub fn input(&self, st: &mut MatchState, c0: u32, i: u32) -> i32 {
        st.active = st.expected != 0 && (st.expected >> (i + 1)) == c0;
        if !st.active {
            return 0;
        }
        st.idx = bucket(st.len) + BUCKETS * st.misses.min(3) as usize;
        st.predicted = (st.expected >> i) & 1;
        let s = stretch(self.probs.p(st.idx));
        if st.predicted == 1 { s } else { -s }
    }

    /// Learns the whole `byte` as [`input`](Self::input) and
    /// [`update`](Self::update) would bit by bit, without computing the
    /// inputs: revision 9's shortcut (doc/FORMAT.md 4.20.6) codes the byte
    /// without the per-bit models.
    pub(crate) fn learn_byte(&mut self, st: &mut MatchState, byte: u8) {
        let byte = u32::from(byte);
        for i in (0..8).rev() {
            let c0 = (byte | 0x100) >> (i + 1);
            st.active = st.expected != 0 && (st.expected >> (i + 1)) == c0;
            if !st.active {
                return;
            }
            st.idx = bucket(st.len) + BUCKETS * st.misses.min(3) as usize;
            st.predicted = (st.expected >> i) & 1;
            self.update(st, (byte >> i) & 1);
        }
    }

    /// Learns from the coded bit.
    #[inline]
    pub fn update(&mut self, st: &mut MatchState, bit: u32) {
        if st.active {
            self.probs.update(st.idx, u32::from(bit == st.predicted));
            if bit != st.predicted {
                st.expected = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_follows_repeats() {
        let text = b"abcdefgh-abcdefgh-abcdefgh";
        let mut m = MatchModel::new(12, 4);
        let mut st = MatchState::default();
        let mut lens = Vec::new();
        for pos in 0..text.len() {
            m.begin_byte(&mut st, text, 0, pos, &Sequential(pos));
            lens.push(st.len());
            if let Some(e) = st.expected_byte() {
                assert_eq!(e, text[pos], "wrong prediction at {pos}");
            }
        }
        // The second copy is found after its first 4 bytes, then followed.
        assert_eq!(lens[13], 4);
        assert_eq!(lens[17], 8);
        assert_eq!(lens[25], 16);
    }

    #[test]
    fn recovers_after_a_changed_byte() {
        // The copy differs in one byte ('X'); the model keeps predicting the
        // bytes after it from the same pointer instead of waiting for
        // `min_len` new bytes to find the copy again.
        let text = b"abcdefghijklmnop-abcdefgXijklmnop";
        let mut m = MatchModel::new(12, 4);
        let mut st = MatchState::default();
        let x = text.iter().rposition(|&b| b == b'X').unwrap();
        for pos in 0..text.len() {
            m.begin_byte(&mut st, text, 0, pos, &Sequential(pos));
            if pos > x {
                assert_eq!(st.expected_byte(), Some(text[pos]), "at {pos}");
            }
        }
        assert_eq!(st.misses, 1);
    }

    #[test]
    fn never_reads_unknown_positions() {
        struct Nothing;
        impl Visibility for Nothing {
            fn known(&self, _: usize) -> bool {
                false
            }
        }
        let text = b"xyzxyzxyzxyz";
        let mut m = MatchModel::new(10, 2);
        let mut st = MatchState::default();
        for pos in 0..text.len() {
            m.begin_byte(&mut st, text, 0, pos, &Nothing);
            assert!(st.is_empty());
        }
    }
}
