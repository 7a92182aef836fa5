//! CM revision 40 (doc/FORMAT.md 4.51.4): the learning rates of a detected
//! x86 block's mixing. Up to revision 38 a detected kind's first-layer
//! mixer learns at `6 + 10 * 16384 / (16384 + n)` (`n` the bytes coded in
//! the stream) with truncated updates and no per-set rates, its APM stage
//! (`kindmix.rs`) at rate 6 and revision 36's stage mix (`kindmix36.rs`)
//! at rate 2. Measured on exe.busybox.elf, that is too slow for code: from
//! revision 40 an x86 block's
//!
//! - first-layer mixer learns at `(X86_RATE_FLOOR + X86_RATE_EXTRA * 16384
//!   / (16384 + n) + X86_SET_BOOST * X86_SET_HALF / (X86_SET_HALF +
//!   count)) >> 2` (quarter units, revision 9's per-set rates with `count`
//!   the chosen set's updates so far), with rounded updates (as the
//!   configured families' mixer since revision 7); its final layer's rate
//!   stays 2;
//! - APM stage adapts at rate [`X86_APM_RATE`];
//! - revision 36 stage mix learns at rate [`X86_STAGE_LR`].
//!
//! Nothing else changes, and no state is added (the per-set counts are
//! the mixer's, as the configured families' since revision 9). The model
//! calls these helpers from `install`, `code_byte` and the APM and stage
//! mixers' installs (one line each).

use super::Cm;
use crate::models::detect::DataKind;

/// The first-layer rate's floor, in quarter units (12 of revision 38's
/// units; revision 38: 6).
const X86_RATE_FLOOR: i32 = 48;
/// Revision 46: the first-layer rate's floor for a resource fork (68000
/// code), in quarter units (revision 38's 6).
const M68K_RATE_FLOOR: i32 = 24;
/// The first-layer rate's extra part at the start of a stream, in quarter
/// units (10 of revision 38's, unchanged).
const X86_RATE_EXTRA: i32 = 40;
/// The per-set boost of a set trained least, in quarter units.
const X86_SET_BOOST: i32 = 32;
/// The updates after which a set's boost is halved.
const X86_SET_HALF: i32 = 1024;
/// Log2 of the rates' units (quarter units).
const X86_RATE_SHIFT: u32 = 2;
/// The APM stage's rate (revision 38: 6).
pub(super) const X86_APM_RATE: u32 = 5;
/// The stage mix's learning rate (revision 38: 2).
pub(super) const X86_STAGE_LR: i32 = 4;

impl Cm {
    /// Revision 40: notes whether the detected `kind` gets x86 rates
    /// (before its families are installed).
    pub(super) fn kindmix40_detected(&mut self, kind: &DataKind) {
        // Revision 46 (doc/FORMAT.md 4.57.3): a resource fork (68000 code)
        // too, with a lower first-layer floor.
        self.m68k_46 = self.config.since(46) && matches!(kind, DataKind::ResourceFork);
        self.x86_40 = self.config.since(40) && matches!(kind, DataKind::X86) || self.m68k_46;
    }

    /// Revision 40: whether the mixing being installed (`configured`
    /// false: a detected kind's) learns at x86 rates.
    #[inline]
    pub(super) fn kindmix40_on(&self, configured: bool) -> bool {
        !configured && self.x86_40
    }

    /// Revision 40: rounded updates and per-set rates for a detected x86
    /// block's mixer (called by `install` once the mixer is built).
    pub(super) fn kindmix40_mixer(&mut self, configured: bool) {
        if self.kindmix40_on(configured) {
            self.mixer.set_rounded(true);
            self.mixer
                .set_set_rates(X86_SET_BOOST, X86_SET_HALF, X86_RATE_SHIFT);
        } else {
            self.x86_40 = false;
        }
    }

    /// Revision 40: the first-layer rate of a detected x86 block's mixer
    /// after `n` bytes of the stream (`None`: not an x86 block at revision
    /// 40).
    #[inline]
    pub(super) fn kindmix40_rate(&self, n: i32) -> Option<i32> {
        self.x86_40.then(|| {
            let floor = if self.m68k_46 {
                M68K_RATE_FLOOR
            } else {
                X86_RATE_FLOOR
            };
            floor + X86_RATE_EXTRA * 16384 / (16384 + n)
        })
    }
}
