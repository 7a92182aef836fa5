//! CM revision 3: the lean context-mixing model of the `fast` preset
//! (doc/FORMAT.md section 4.14).
//!
//! Built for speed over the revision-0 model it replaces in `fast`: a fixed
//! set of contexts known at compile time, so every per-bit loop runs over
//! arrays of constant length, with no dynamic dispatch and no allocation
//! after [`FastCm::new`]. Per byte:
//!
//! * order 1, in a direct table of 2^16 bit-history states (previous byte
//!   times partial byte: no hashing, no collisions);
//! * orders 2, 3, 4 and 6 and the current word (letters, case-folded, with
//!   the previous byte), hashed to nibble buckets of the shared
//!   [`NibbleTable`] (check byte, 15 states, two lookups per byte and
//!   context, their cache lines loaded together before the first);
//! * one match model (the frozen [`MatchModel`] of revision 0);
//! * an order-0 adaptive probability;
//!
//! one adaptive map per context turns its state into a stretched
//! probability; a single-layer [`Mixer`] of [`INPUTS`] inputs, whose weight
//! set is chosen by the partial byte and the match length, mixes them; one
//! [`Apm`] on the partial byte and the match model's predicted bit refines
//! the mix, and the coded probability is `(mix + 3 apm) / 4`.
//!
//! Why these choices (measured with `examples/fast_bench.rs` and `perf`):
//! an APM on the previous byte, as revision 0 has, is a 4.3 MB table read
//! at a new row every bit, a cache miss that took 44% of the time on
//! kodim23; the partial byte with the match prediction (50 KB) costs 0.8%
//! in size for about a fifth less time. The rest of the time goes to the
//! hashed contexts' cache misses (two per context and byte, overlapped) and
//! the match model's table.
//!
//! All arithmetic is integer: encoder and decoder agree on every machine.
//! This file is normative for revision 3: once archives of it exist,
//! nothing here may change a coded bit.
//!
//! A prior (doc/FORMAT.md section 11) fixes the model after training on its
//! samples: [`FastCm::snapshot`] walks everything the model learned (its
//! state walk, below) and [`FastCm::restore`] rebuilds it, ready to code
//! the byte after the samples.

use crate::apm::Apm;
use crate::cm::CmConfig;
use crate::hashtable::NibbleTable;
use crate::logistic::stretch;
use crate::matcher::{MatchModel, MatchState, Sequential};
use crate::models::hash2;
use crate::prim::{AdaptiveProbs, Mixer, StateMap};
use crate::snapshot::{Train, Visitor};
use crate::state::STATES;
use sep_coder::Coder;

/// Hashed contexts: orders 2, 3, 4, 6 and the word.
const HASHED: usize = 5;
/// Contexts with a bit-history state: the hashed ones and order 1.
const CONTEXTS: usize = HASHED + 1;
/// Mixer inputs: one per context, order 0, the match model and a bias.
pub const INPUTS: usize = CONTEXTS + 3;
/// Match-length classes that select the mixer's weight set (with the
/// partial byte).
const MATCH_CLASSES: usize = 4;
/// APM contexts: the partial byte times the match model's predicted bit
/// (none, 0, 1).
const APM_ROWS: usize = 3 * 256;
/// Adaptation limit of the state maps.
const MAP_LIMIT: u32 = 1023;

/// The configuration revision 3 requires in every field but `table_bits`,
/// `match_bits` and `match_min` (doc/FORMAT.md section 4.14): what the
/// model does, in the terms of section 4.10.
pub(crate) const FIXED: CmConfig = CmConfig {
    orders: 0b0010_1111,
    word: true,
    sparse: false,
    record: false,
    long: 0,
    match_min: 0,
    match2_min: 0,
    table_bits: 0,
    match_bits: 0,
    selectors: 0b0011,
    apms: 1,
    image: false,
    revision: 3,
};

/// Whether `c`'s fixed fields are those of [`FIXED`].
pub(crate) fn fixed_fields_match(c: &CmConfig) -> bool {
    CmConfig {
        match_min: 0,
        table_bits: 0,
        match_bits: 0,
        ..*c
    } == FIXED
}

/// Bytes of memory [`FastCm::new`] allocates with these table sizes.
pub(crate) fn memory_bytes(table_bits: u8, match_bits: u8) -> u64 {
    (1u64 << table_bits)
        + (4u64 << match_bits)
        + 65536
        + (APM_ROWS * 33 * 2) as u64
        + (256 * MATCH_CLASSES * INPUTS * 4) as u64
        + (CONTEXTS * 1024 + 256 * 4) as u64
}

/// The revision-3 model of one block, coded as one stream from its first
/// byte.
#[derive(Debug)]
pub struct FastCm {
    table: NibbleTable,
    order1: Vec<u8>,
    maps: [StateMap; CONTEXTS],
    order0: AdaptiveProbs,
    matcher: MatchModel,
    matched: MatchState,
    mixer: Mixer<INPUTS>,
    apm: Apm,
    hashes: [u32; HASHED],
    buckets: [usize; HASHED],
    /// The last 8 bytes, newest in the low byte of `c4`.
    c4: u32,
    c8: u32,
    /// Hash of the current word's letters (0 between words).
    word: u32,
}

impl FastCm {
    /// A fresh model for a block of `block_len` bytes (tables capped as by
    /// [`CmConfig::effective_bits`]). `config` must be a valid revision-3
    /// configuration.
    pub fn new(config: &CmConfig, block_len: usize) -> Self {
        assert!(
            config.revision == 3 && config.validate().is_ok(),
            "a valid revision-3 configuration"
        );
        let (table_bits, match_bits) = config.effective_bits(block_len);
        FastCm {
            table: NibbleTable::new(table_bits),
            order1: vec![0; 1 << 16],
            maps: std::array::from_fn(|_| StateMap::default()),
            order0: AdaptiveProbs::new(256, 255),
            matcher: MatchModel::new(match_bits, config.match_min.into()),
            matched: MatchState::default(),
            mixer: Mixer::new(256 * MATCH_CLASSES, 6, 1 << 14),
            apm: Apm::new(APM_ROWS, 7),
            hashes: [0; HASHED],
            buckets: [0; HASHED],
            c4: 0,
            c8: 0,
            word: 0,
        }
    }

    /// The table keys of the hashed contexts for the nibble that starts now
    /// (`None` at the byte's start, else the partial byte); loads their
    /// cache lines, so that the misses overlap one another and whatever
    /// work comes before [`find_buckets`](Self::find_buckets).
    #[inline]
    fn touch_keys(&self, nibble: Option<u32>) -> [u32; HASHED] {
        let keys = self.hashes.map(|h| nibble.map_or(h, |c0| hash2(h, c0)));
        let mut acc = 0u8;
        for &k in &keys {
            acc ^= self.table.touch(k);
        }
        std::hint::black_box(acc);
        keys
    }

    /// Finds (or claims) every hashed context's bucket for `keys`.
    #[inline]
    fn find_buckets(&mut self, keys: [u32; HASHED]) {
        for (b, &k) in self.buckets.iter_mut().zip(&keys) {
            *b = self.table.bucket(k);
        }
    }

    /// Codes (or decodes) `data[pos]`, the next byte of the block `data`
    /// (bytes `0..pos` already coded), writes it there and returns it.
    pub fn code_byte<C: Coder>(&mut self, coder: &mut C, data: &mut [u8], pos: usize) -> u8 {
        let (c4, c8) = (self.c4, self.c8);
        self.hashes = [
            hash2(c4 & 0xFFFF, 2),
            hash2(c4 & 0xFF_FFFF, 3),
            hash2(c4, 4),
            hash2(hash2(c4, 6), c8 & 0xFFFF),
            hash2(self.word, 0x100 + (c4 & 0xFF)),
        ];
        let keys = self.touch_keys(None);
        self.matcher
            .begin_byte(&mut self.matched, data, 0, pos, &Sequential(pos));
        self.find_buckets(keys);
        let len = self.matched.len();
        let class = if len == 0 {
            0
        } else if len < 16 {
            1
        } else if len < 32 {
            2
        } else {
            3
        };
        let byte = u32::from(data[pos]);
        let c1 = (c4 & 0xFF) as usize;
        let mut c0 = 1u32;
        let mut nib = 1usize;
        let mut nodes = [0usize; HASHED];
        let mut states = [0u8; CONTEXTS];
        // Each bit's APM row is far from the last one: its load starts as
        // soon as the row is known, and overlaps the work before its use.
        for i in (0..8).rev() {
            if i == 3 {
                let keys = self.touch_keys(Some(c0));
                self.find_buckets(keys);
                nib = 1;
            }
            let mut x = [0i32; INPUTS];
            for j in 0..HASHED {
                nodes[j] = self.buckets[j] + nib - 1;
                states[j] = self.table.state(nodes[j]);
            }
            let o1 = (c1 << 8) | c0 as usize;
            states[HASHED] = self.order1[o1];
            for j in 0..CONTEXTS {
                x[j] = self.maps[j].stretched(states[j]);
            }
            x[CONTEXTS] = stretch(self.order0.p(c0 as usize));
            x[CONTEXTS + 1] = self.matcher.input(&mut self.matched, c0, i);
            x[CONTEXTS + 2] = 256;
            let d = self.mixer.mix(x, class * 256 + c0 as usize);
            let pm = self.mixer.last();
            let pa = self.apm.refine_stretched(
                d,
                (x[CONTEXTS + 1].signum() + 1) as usize * 256 + c0 as usize,
            );
            let p = ((pm + 3 * pa) >> 2).clamp(1, 65535);
            let bit = coder.code_bit((byte >> i) & 1, p);
            for j in 0..HASHED {
                self.maps[j].update(states[j], bit, MAP_LIMIT);
                self.table.set(nodes[j], STATES.next(states[j], bit));
            }
            self.maps[HASHED].update(states[HASHED], bit, MAP_LIMIT);
            self.order1[o1] = STATES.next(states[HASHED], bit);
            self.order0.update(c0 as usize, bit);
            self.matcher.update(&mut self.matched, bit);
            self.mixer.update(bit);
            self.apm.update(bit);
            c0 = (c0 << 1) | bit;
            nib = (nib << 1) | bit as usize;
        }
        let b = (c0 & 0xFF) as u8;
        data[pos] = b;
        self.c8 = (self.c8 << 8) | (self.c4 >> 24);
        self.c4 = (self.c4 << 8) | u32::from(b);
        if b.is_ascii_alphabetic() || b >= 0x80 {
            self.word = (self.word ^ u32::from(b.to_ascii_lowercase()))
                .wrapping_mul(0x2C9F_3C51)
                .wrapping_add(1);
        } else {
            self.word = 0;
        }
        b
    }
}

/// The state walk of revision 3 (doc/FORMAT.md section 11, walk 0): the
/// nibble table's bytes, the order-1 states, the six state maps (hashed
/// contexts in order, then order 1), order 0, the match model's table and
/// hit statistics, its match state, the mixer's weights, the APM, then the
/// last bytes `c4`, `c8` and the word hash. Per-bit working values (hashes
/// and buckets of the byte, mixer inputs, the APM's index) are not walked:
/// the model sets them before it reads them.
impl FastCm {
    fn visit_state(&mut self, v: &mut dyn Visitor) {
        self.table.visit(v);
        v.u8s(&mut self.order1);
        for m in &mut self.maps {
            m.visit(v);
        }
        self.order0.visit(v);
        self.matcher.visit(v);
        self.matched.visit(v);
        self.mixer.visit(v);
        self.apm.visit(v);
        let mut last = [self.c4, self.c8, self.word];
        v.u32s(&mut last);
        [self.c4, self.c8, self.word] = last;
    }

    /// The model a prior fixes: `config` (a valid revision-3
    /// configuration) with tables of exactly its `table_bits` and
    /// `match_bits`, whatever the length of the block it codes.
    pub fn for_prior(config: &CmConfig) -> FastCm {
        FastCm::new(config, 1 << 30)
    }

    /// Bytes of the state walk of the model [`for_prior`](Self::for_prior)
    /// builds for `config` (what a snapshot's runs must cover).
    pub fn state_len(config: &CmConfig) -> u64 {
        let mut m = FastCm::for_prior(config);
        crate::snapshot::walk_len(|v| m.visit_state(v))
    }

    /// Trains the model of `config` on `history` (coded as one stream from
    /// position 0) and returns its snapshot: the XOR of its state walk with
    /// a fresh model's, zero runs elided (as [`crate::Cm::snapshot`]).
    pub fn snapshot(config: &CmConfig, history: &[u8]) -> Vec<u8> {
        let mut m = FastCm::for_prior(config);
        let mut data = history.to_vec();
        for pos in 0..data.len() {
            m.code_byte(&mut Train, &mut data, pos);
        }
        let mut fresh = FastCm::for_prior(config);
        crate::snapshot::delta_of(|v| m.visit_state(v), |v| fresh.visit_state(v))
    }

    /// The model of `config` after the training a snapshot records, ready
    /// to code the byte after `history_len` bytes of history. The
    /// snapshot's runs are checked against `state_len` first, `state_len`
    /// against the model built, then every restored position (the match
    /// table's and the match state's) against the history.
    pub fn restore(
        config: &CmConfig,
        snapshot: &[u8],
        state_len: u64,
        history_len: usize,
    ) -> Result<FastCm, String> {
        if config.revision != 3 || config.validate().is_err() {
            return Err("snapshot: not a valid CM revision 3 configuration".into());
        }
        let mut m = FastCm::for_prior(config);
        crate::snapshot::apply_delta(snapshot, state_len, |v| m.visit_state(v))?;
        if m.matcher.positions_within(history_len) && m.matched.within(history_len) {
            Ok(m)
        } else {
            Err(format!(
                "snapshot: a position in the model state lies past the {history_len} bytes of history"
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sep_coder::{Decoder, Encoder};

    fn config() -> CmConfig {
        CmConfig {
            match_min: 6,
            table_bits: 20,
            match_bits: 16,
            ..FIXED
        }
    }

    fn round_trip(data: &[u8]) -> usize {
        let mut enc = Encoder::new();
        let mut m = FastCm::new(&config(), data.len());
        let mut buf = data.to_vec();
        for (pos, &b) in data.iter().enumerate() {
            assert_eq!(m.code_byte(&mut enc, &mut buf, pos), b);
        }
        assert_eq!(buf, data, "the encoder leaves the data as it is");
        let bytes = enc.finish();
        let mut out = vec![0u8; data.len()];
        let mut dec = Decoder::new(&bytes);
        let mut m = FastCm::new(&config(), data.len());
        for pos in 0..out.len() {
            m.code_byte(&mut dec, &mut out, pos);
        }
        assert_eq!(out, data);
        bytes.len()
    }

    #[test]
    fn round_trips_text_and_noise() {
        let text = include_bytes!("../../../samples/alice29.txt");
        let n = round_trip(&text[..60_000]);
        // Text: well under 2.5 bits per byte even on 60 KB.
        assert!(n * 8 < 60_000 * 5 / 2, "{n} bytes");
        let mut s = 7u32;
        let noise: Vec<u8> = (0..5000)
            .map(|_| {
                s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (s >> 16) as u8
            })
            .collect();
        let n = round_trip(&noise);
        assert!(n < 5000 + 5000 / 50, "noise costs at most 2% more: {n}");
        round_trip(&[]);
        round_trip(&[42]);
    }

    #[test]
    fn long_repeats_cost_little() {
        let unit: Vec<u8> = (0..3000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let data: Vec<u8> = unit.iter().cycle().take(30_000).copied().collect();
        let n = round_trip(&data);
        assert!(n < 3000 + 600, "{n} bytes for 3000 novel ones");
    }

    #[test]
    fn only_the_fast_fields_are_accepted() {
        assert!(config().validate().is_ok());
        assert!(fixed_fields_match(&config()));
        let bad = CmConfig {
            sparse: true,
            ..config()
        };
        assert!(!fixed_fields_match(&bad));
        assert!(bad.validate().unwrap_err().contains("revision 3"));
        let bad = CmConfig {
            match_min: 0,
            ..config()
        };
        assert!(bad.validate().unwrap_err().contains("match_min"));
    }
}
