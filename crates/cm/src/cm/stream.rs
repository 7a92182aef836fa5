//! One stream's history: what the model remembers about the bytes a stream
//! has coded (several streams may share one model).

use crate::matcher::MatchState;
use crate::models::record::RecordState;
use crate::models::word::WordState;

/// One stream's history.
#[derive(Debug, Clone)]
pub struct CmStream {
    /// Block position of the stream's first byte.
    pub(crate) start: usize,
    /// The last four bytes (last byte lowest) and the four before them.
    pub(crate) c4: u32,
    pub(crate) c8: u32,
    /// The word family's history.
    pub(crate) words: WordState,
    /// The match models' states.
    pub(crate) matcher: MatchState,
    pub(crate) matcher2: MatchState,
    /// The record family's detector.
    pub(crate) record: RecordState,
}

impl CmStream {
    /// The history of a stream whose first byte is at `start` in the block.
    pub fn new(start: usize) -> Self {
        CmStream {
            start,
            c4: 0,
            c8: 0,
            words: WordState::default(),
            matcher: MatchState::default(),
            matcher2: MatchState::default(),
            record: RecordState::default(),
        }
    }

    /// Walks the history (`snapshot.rs`).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        crate::snapshot::visit_usize(v, &mut self.start);
        let mut w = [
            self.c4,
            self.c8,
            self.words.word,
            self.words.word_prev,
            self.words.word_prev2,
            self.words.col,
        ];
        v.u32s(&mut w);
        [
            self.c4,
            self.c8,
            self.words.word,
            self.words.word_prev,
            self.words.word_prev2,
            self.words.col,
        ] = w;
        self.matcher.visit(v);
        self.matcher2.visit(v);
        self.record.visit(v);
    }

    /// Whether the history can continue after `history` bytes.
    pub(crate) fn within(&self, history: usize) -> bool {
        self.start == 0
            && self.words.col as usize <= history
            && self.matcher.within(history)
            && self.matcher2.within(history)
            && self.record.within(history)
    }

    /// The detected record length (0: none).
    pub fn record_len(&self) -> u32 {
        self.record.len
    }

    /// Sees `byte`, just coded at block position `pos` (`data` holds it).
    pub(crate) fn observe(&mut self, data: &[u8], pos: usize, byte: u8) {
        self.record.update_runs(data, self.start, pos, byte);
        self.c8 = (self.c8 << 8) | (self.c4 >> 24);
        self.c4 = (self.c4 << 8) | u32::from(byte);
        self.words.observe(byte);
        self.record.observe(byte, self.start, pos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_records() {
        let mut st = CmStream::new(0);
        let mut x = 12345u32;
        let mut data = vec![0u8; 3000];
        for pos in 0..3000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            // Random bytes, except a marker field at the start of 37-byte records.
            let b = if pos % 37 == 0 {
                7
            } else {
                (x >> 24) as u8 | 8
            };
            data[pos] = b;
            st.observe(&data, pos, b);
        }
        assert_eq!(st.record_len(), 37);
    }
}
