//! Revision 9's shortcut for long predictable stretches (doc/FORMAT.md
//! 4.20.6): while a match model has followed a match for many bytes, the
//! next byte is first coded as one binary event, "the byte is the match's
//! expected byte", with this file's small adaptive model. When it is, the
//! byte costs that one event and the per-bit work of every context model,
//! mixer and APM is skipped; when it is not, the byte is coded as usual.
//!
//! Everything here is integer and depends only on bytes already coded, so
//! the decoder takes the same decisions as the encoder.

use crate::apm::Apm;
use crate::matcher::{MatchState, Visibility};
use crate::models::hash2;
use crate::prim::{AdaptiveProbs, Mixer};

/// The shortest match (bytes verified since its last miss) that triggers the
/// shortcut.
pub(crate) const MIN_LEN: usize = 6;

/// The least probability of "expected byte" (16 bits) at which the event is
/// coded; below it the byte takes the normal path and the model only learns.
pub(crate) const MIN_P: u32 = 65_000;

/// Length buckets: `min(floor(log2(len)), 15)`.
const LEN_BUCKETS: usize = 16;

/// Outcomes of the last triggers remembered (bit 0 the last, 1 a hit).
const HISTORY_MASK: u32 = 0xFF;

/// Values of the record context: none, or whether the bytes one record
/// above this one and the next are the expected byte.
const ABOVE: usize = 17;

/// The direct model's contexts: record context, length bucket, expected
/// byte, last three outcomes.
const DIRECT: usize = ABOVE * LEN_BUCKETS * 256 * 8;

/// The APM's contexts: record context, length bucket, last six outcomes.
const APM_CONTEXTS: usize = ABOVE * LEN_BUCKETS * 64;

/// log2 of the second model's entries.
const HASHED_BITS: u32 = 18;

/// The count limit of the direct model's probabilities.
const LIMIT: u32 = 255;

/// The mixer's learning rate.
const MIXER_RATE: i32 = 2;

/// The APMs' adaptation shift.
const APM_RATE: u32 = 6;

/// Bytes of tables (for `CmConfig::memory_bytes`).
pub(crate) const MEMORY: u64 =
    (DIRECT * 4 + (4 << HASHED_BITS) + 2 * LEN_BUCKETS * 8 + (APM_CONTEXTS + 16) * 33 * 2) as u64;

/// A trigger of the shortcut for the byte about to be coded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Trigger {
    /// The byte the match expects.
    pub expected: u8,
    /// The 16-bit probability that the byte is `expected`.
    pub p: u32,
    /// Whether the event is coded (`p >= MIN_P`).
    pub coded: bool,
}

/// The shortcut's model and counters.
#[derive(Debug, Clone)]
pub(crate) struct Shortcut {
    direct: AdaptiveProbs,
    hashed: AdaptiveProbs,
    mixer: Mixer<2>,
    apm: Apm,
    /// The exclusion APM: bit position and expected bit.
    excluded: Apm,
    /// The two models' entries of the current trigger.
    ctx: usize,
    ctx2: usize,
    /// Outcomes of the last triggers, the last in bit 0 (1: hit).
    history: u32,
    /// Bytes coded by the shortcut alone (a hit of a coded event).
    skipped: u64,
}

impl Default for Shortcut {
    fn default() -> Self {
        Shortcut {
            direct: AdaptiveProbs::new(DIRECT, LIMIT),
            hashed: AdaptiveProbs::new(1 << HASHED_BITS, LIMIT),
            mixer: Mixer::new(2 * LEN_BUCKETS, MIXER_RATE, 1 << 15),
            apm: Apm::new(APM_CONTEXTS, APM_RATE),
            excluded: Apm::new(16, APM_RATE),
            ctx: 0,
            ctx2: 0,
            history: 0,
            skipped: 0,
        }
    }
}

impl Shortcut {
    /// Walks the learned state (`snapshot.rs`); walk 1 (doc/FORMAT.md
    /// section 11) adds the mixer's weights, which walk 0 leaves fresh.
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor, walk: u8) {
        self.direct.visit(v);
        self.hashed.visit(v);
        self.apm.visit(v);
        self.excluded.visit(v);
        crate::snapshot::visit_u32(v, &mut self.history);
        if walk >= 1 {
            self.mixer.visit(v);
        }
    }

    /// Bytes coded by the shortcut alone so far.
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Whether the byte at `pos` triggers the shortcut, given the match
    /// models' states after their `begin_byte` (`first`: the configured
    /// match model, `second`: the long one, if any; the first whose match is
    /// at least [`MIN_LEN`] long gives the expected byte) and the stream's
    /// detected record length `record` (0: none).
    pub(crate) fn trigger<V: Visibility>(
        &mut self,
        first: Option<&MatchState>,
        second: Option<&MatchState>,
        data: &[u8],
        pos: usize,
        vis: &V,
        record: usize,
    ) -> Option<Trigger> {
        let min_len = MIN_LEN;
        let m = [first, second]
            .into_iter()
            .flatten()
            .find(|m| m.len() >= min_len)?;
        let expected = m.expected_byte()?;
        let len = m.len();
        let bucket = ((usize::BITS - 1 - len.leading_zeros()) as usize).min(LEN_BUCKETS - 1);
        // The bytes one record above this one and the next: do they agree
        // with the expectation?
        let above = if record >= 2 && pos > 2 * record && vis.known(pos - 2 * record - 1) {
            let same = |q: usize| usize::from(data[q] == expected);
            1 + same(pos - record)
                + 2 * same(pos + 1 - record)
                + 4 * same(pos - 1 - record)
                + 8 * same(pos - 2 * record)
        } else {
            0
        };
        let h = self.history as usize;
        self.ctx = ((above * LEN_BUCKETS + bucket) << 8 | usize::from(expected)) << 3 | (h & 7);
        // The second model: the bytes around the one above and two above
        // themselves (0 without a record), with the expected byte and the
        // last eight outcomes.
        let near = if above > 0 {
            u32::from_le_bytes([
                data[pos - 1 - record],
                data[pos - record],
                data[pos + 1 - record],
                data[pos - 2 * record],
            ])
        } else {
            0
        };
        let key = hash2(
            hash2(near, u32::from(expected) << 8 | (h as u32 & 0xFF)),
            bucket as u32,
        );
        self.ctx2 = (key >> (32 - HASHED_BITS)) as usize;
        let x = [
            self.direct.stretched(self.ctx),
            self.hashed.stretched(self.ctx2),
        ];
        let d = self
            .mixer
            .mix(x, usize::from(above > 0) * LEN_BUCKETS + bucket);
        let pm = self.mixer.last();
        let pa = self
            .apm
            .refine_stretched(d, (above * LEN_BUCKETS + bucket) << 6 | (h & 63));
        let p = ((pm + 3 * pa) >> 2).clamp(1, 65535);
        Some(Trigger {
            expected,
            p,
            coded: p >= MIN_P,
        })
    }

    /// After a coded miss of expected byte `e` (so the byte is not `e`),
    /// while the bits so far are `e`'s: the probability `p` of a 1 for bit
    /// `i` refined by the exclusion APM (context: `i` and `e`'s bit), which
    /// learns how much of the model's mass on `e`'s bit belonged to `e`.
    pub(crate) fn exclude(&mut self, p: u32, i: u32, e: u8) -> u32 {
        let ctx = (i as usize) << 1 | usize::from(e >> i & 1);
        self.excluded.refine(p, ctx).clamp(1, 65535)
    }

    /// Trains the exclusion APM on the bit coded after [`exclude`](Self::exclude).
    pub(crate) fn exclude_update(&mut self, bit: u32) {
        self.excluded.update(bit);
    }

    /// Learns the outcome of the last trigger (`hit`: the byte was the
    /// expected one); `coded`: the event was coded, so a hit skipped the
    /// byte.
    pub(crate) fn update(&mut self, hit: bool, coded: bool) {
        let bit = u32::from(hit);
        self.direct.update(self.ctx, bit);
        self.hashed.update(self.ctx2, bit);
        self.mixer.update(bit);
        self.apm.update(bit);
        self.history = (self.history << 1 | bit) & HISTORY_MASK;
        if hit && coded {
            self.skipped += 1;
        }
    }
}
