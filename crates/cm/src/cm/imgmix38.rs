//! CM revision 38 (doc/FORMAT.md 4.49.2): the main mixer's inputs for a
//! detected image of 3 or 4 bytes per pixel (`DataKind::Image`, the
//! families of revision 32 and revision 36's mixing, 4.43.4 and 4.47.1).
//!
//! Up to revision 36 a detected kind's mixer gets a confidence input
//! (doc/FORMAT.md 4.16.1: the context's stretched probability while its
//! bit history is deterministic, else 0; weight starting at 0) for its
//! first four hashed contexts only (revision 12, 4.23.1), and an image's
//! families give 72 inputs of the mixer's 128. From revision 38 the first
//! 28 hashed contexts of such an image get one (of 47 at `max`'s
//! settings: 96 inputs in all, the three blocks of 32 the mixer already
//! sums, so no more CPU or memory): whether an image context has only
//! ever seen one value of the bit is worth a weight of its own. All 47
//! (115 inputs, a fourth block) gained less and cost 14% more CPU.
//!
//! Revision 38's other image change is in the registry
//! (`Image14Contexts::with_revision38_last_mixer`: the revision-14
//! family's last mixer rounded and slower).
//!
//! Measured and left out (FORMAT 4.49.2): count limits of the image
//! families' adaptive probabilities, rounded updates and per-set rates of
//! the main mixer and of the revision-8 and revision-10 families' mixers,
//! the main mixer's rate schedule, APM rates, the linear second inputs of
//! revision 12 (4.23.3) and run inputs for an image's contexts.
//!
//! The model calls this from `install` (one line).

use super::Cm;

/// How many of a detected image's first hashed contexts get a confidence
/// input (revision 12 gives a kind's first 4): 28 fills the 96 inputs
/// (three blocks of 32) that the mixer's sums and updates cover anyway
/// at `max`'s settings (68 others).
const CONFIDENCE: usize = 28;

/// Revision 40 (doc/FORMAT.md 4.51.3): with revision 40's image family
/// (`models/image40.rs`, six more per-bit inputs) only the first 16
/// contexts get a confidence input (28 - 12; 28 - 8 and 28 - 16 coded
/// kodim23's first rows worse).
const CONFIDENCE40: usize = 16;

impl Cm {
    /// Revision 38: the hashed contexts of a detected 24/32-bit image that
    /// get a confidence input: its first [`CONFIDENCE`] `contexts`, at
    /// most `room`;
    /// `None` for every other block (the configured families or another
    /// kind, or before revision 38). Called by `install` once
    /// `imgmix36_detected` has noted the kind; `configured`: installing the
    /// configuration's own families.
    pub(super) fn imgmix38_confidence(
        &self,
        configured: bool,
        contexts: usize,
        room: usize,
    ) -> Option<Vec<usize>> {
        (!configured && self.img36_info.is_some() && self.config.since(38)).then(|| {
            // Revision 40 (4.51.3): the first 16 (with image40's six more inputs).
            let most = if self.config.since(40) {
                CONFIDENCE40
            } else {
                CONFIDENCE
            };
            (0..contexts.min(most).min(room)).collect()
        })
    }
}
