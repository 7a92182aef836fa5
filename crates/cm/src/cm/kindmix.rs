//! CM revision 12 (doc/FORMAT.md 4.23.1): the mixing of a detected data
//! kind's families. Up to revision 10 a block whose kind is detected
//! (image, bi-level, x86, 68000, spreadsheet, float, audio, JPEG) codes
//! without what the configured families' mixing gained from revision 5 on;
//! from revision 12 it gets confidence inputs and run inputs on its first
//! contexts and a final APM stage of its own ([`KindSse`]).
//!
//! Measured and left out (FORMAT 4.23.1): the final layer chosen by the
//! partial byte, rounded updates, revision 9's per-set rates and the
//! longest-order selector each made the kinds' files larger.
//!
//! The model calls these helpers from `install`, `code_byte`,
//! `predict_bit` and `update_bit` (one line each).

use super::Cm;
use crate::apm::Apm;
use crate::logistic::stretch;
use crate::models::detect::DataKind;
use crate::models::hash2;

/// Log2 of the hashed contexts of each of [`KindSse`]'s APMs (each
/// context has a row per partial byte).
pub(crate) const KIND_APM_BITS: u32 = 12;

/// How many APMs [`KindSse`] has.
const KIND_APMS: usize = 3;

/// Most confidence inputs a detected kind's mixer gets (its first
/// contexts, where the mixer has room).
const KIND_CONFIDENCE: usize = 4;

/// Whether a detected kind's first contexts get revision 8's run inputs
/// (doc/FORMAT.md 4.19.1): every kind but images, bi-level images and
/// audio, whose files they made larger (kodim23 +0.28%, pic +0.13%,
/// gnome-startup3.wav +0.03% on their first 256 KiB).
fn kind_runs(kind: &DataKind) -> bool {
    !matches!(
        kind,
        DataKind::Image(_) | DataKind::Bilevel(_) | DataKind::Audio(_)
    )
}

/// Bytes [`KindSse`] allocates (counted in `CmConfig::memory_bytes`).
pub(crate) const MEMORY: u64 = KIND_APMS as u64 * 2 * 33 * (256u64 << KIND_APM_BITS);

/// The final APM stage of a detected kind (revision 12): three APMs of
/// `2^KIND_APM_BITS` hashed contexts times the partial byte, on the last
/// two bytes, on the family's APM byte (or the last byte) with the byte
/// before, and on the last three bytes; each maps the stage's input, and
/// the output averages the input with the three.
#[derive(Debug, Clone)]
pub(crate) struct KindSse {
    apms: [Apm; KIND_APMS],
    /// This byte's context hashes.
    hashes: [u32; KIND_APMS],
}

impl KindSse {
    /// The stage with its APMs' `rate` (6; revision 40's x86 blocks:
    /// `kindmix40::X86_APM_RATE`).
    fn new(rate: u32) -> Self {
        KindSse {
            apms: std::array::from_fn(|_| Apm::new(256 << KIND_APM_BITS, rate)),
            hashes: [0; KIND_APMS],
        }
    }

    #[inline]
    fn row(h: u32, c0: u32) -> usize {
        ((hash2(h, 0x6A09_E667) >> (32 - KIND_APM_BITS)) << 8 | c0) as usize
    }

    /// Refines `p` (16-bit) for the partial byte `c0`.
    #[inline]
    fn refine(&mut self, p: u32, c0: u32) -> u32 {
        let d = stretch(p);
        let mut sum = p;
        for (a, &h) in self.apms.iter_mut().zip(&self.hashes) {
            sum += a.refine_stretched(d, Self::row(h, c0));
        }
        let n = KIND_APMS as u32 + 1;
        ((sum + n / 2) / n).clamp(1, 65535)
    }

    #[inline]
    fn update(&mut self, bit: u32) {
        for a in &mut self.apms {
            a.update(bit);
        }
    }
}

impl Cm {
    /// Revision 12: sets up a detected kind's (`configured` false) APM
    /// stage, fresh at each install. Called by `install` before the mixer
    /// is built.
    pub(super) fn kindmix_install(&mut self, configured: bool) {
        let rate = if self.kindmix40_on(configured) {
            super::kindmix40::X86_APM_RATE
        } else {
            6
        };
        self.kind_sse =
            (!configured && self.config.since(12)).then(|| Box::new(KindSse::new(rate)));
    }

    /// Revision 12: the contexts of a detected kind that get a confidence
    /// input (doc/FORMAT.md 4.16.1): the first [`KIND_CONFIDENCE`] of its
    /// `contexts`, at most `room`; `None` when not a revision-12 kind.
    pub(super) fn kindmix_confidence(&self, contexts: usize, room: usize) -> Option<Vec<usize>> {
        self.kind_sse
            .is_some()
            .then(|| (0..contexts.min(KIND_CONFIDENCE).min(room)).collect())
    }

    /// Revision 12: notes the detected `kind` before its families are
    /// installed.
    pub(super) fn kindmix_detected(&mut self, kind: &DataKind) {
        self.kind_runs = kind_runs(kind);
    }

    /// Revision 12: whether a detected kind's contexts get run inputs.
    pub(super) fn kindmix_runs(&self) -> bool {
        self.kind_runs && self.kind_sse.is_some()
    }

    /// Revision 12: a detected kind's mixer starts its confidence inputs
    /// at weight 0 and its run inputs at 2000 (called by `install` once
    /// the mixer is built).
    pub(super) fn kindmix_weights(&mut self) {
        if self.kind_sse.is_some() && !self.confidence.is_empty() {
            let first = self.mixer.inputs() - self.confidence.len() - self.run_inputs();
            self.mixer
                .set_initial_weights_from(first, super::CONFIDENCE_INITIAL_WEIGHT);
        }
        if self.kind_sse.is_some() && self.run_inputs() > 0 {
            let first = self.mixer.inputs() - self.run_inputs();
            self.mixer
                .set_initial_weights_from(first, super::REV4_INITIAL_WEIGHT);
        }
    }

    /// Revision 12: the APM stage's contexts for the byte (`c4`: the last
    /// four bytes; the family's APM byte, if any, is `apm_byte`).
    #[inline]
    pub(super) fn kindmix_begin_byte(&mut self, c4: u32) {
        if let Some(k) = self.kind_sse.as_mut() {
            let c1 = c4 & 0xFF;
            let c2 = c4 >> 8 & 0xFF;
            let o2 = hash2(c1 | 0x100, c2);
            let a = self.apm_byte.map_or(c1, |b| b | 0x200);
            k.hashes = [o2, hash2(a | 0x400, c2), hash2(o2, c4 >> 16 & 0xFF | 0x300)];
        }
    }

    /// Revision 12: refines `p` with a detected kind's APM stage (else
    /// returns it).
    #[inline]
    pub(super) fn kindmix_refine(&mut self, p: u32, c0: u32) -> u32 {
        match self.kind_sse.as_mut() {
            Some(k) => k.refine(p, c0),
            None => p,
        }
    }

    /// Trains what [`kindmix_refine`](Self::kindmix_refine) used.
    #[inline]
    pub(super) fn kindmix_update(&mut self, bit: u32) {
        if let Some(k) = self.kind_sse.as_mut() {
            k.update(bit);
        }
    }
}
