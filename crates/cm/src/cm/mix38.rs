//! CM revision 38 (doc/FORMAT.md 4.49.1): two more first-layer weight-set
//! selectors for the mixer of the configured families (a detected kind's
//! mixer is unchanged), after revision 30's:
//!
//! - [`SEL_C3`]: `hash2(c1 | c2 << 8 | c3 << 16, 0x380A) >> 16`, 65,536
//!   sets keyed by a hash of the last three bytes;
//! - [`SEL_C2C0`]: `(hash2(c1 | c2 << 8, 0x3801) >> 24) << 8 | c0`, 65,536
//!   sets keyed by 8 bits of a hash of the last two bytes with the partial
//!   byte `c0`.
//!
//! Both start as every set does (each weight 0.3) and learn at the mixer's
//! rates. The hashes depend only on whole bytes, so they are computed once
//! per byte ([`Cm::mix38_begin_byte`]). The model calls these helpers from
//! `install`, `begin_byte` and `predict_bit`.

use super::Cm;
use crate::models::hash2;

/// Weight sets of the three-byte selector.
pub(crate) const SEL_C3: usize = 1 << 16;
/// Weight sets of the two-byte selector with the partial byte.
pub(crate) const SEL_C2C0: usize = 1 << 16;
/// Salt of the three-byte selector's hash.
const SALT_C3: u32 = 0x380A;
/// Salt of the two-byte selector's hash.
const SALT_C2: u32 = 0x3801;

/// Revision 38's selectors' state: whether they are installed, and the
/// current byte's hashed parts.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Sel38 {
    /// The selectors are part of the mixer (revision 38, configured
    /// families).
    on: bool,
    /// `hash2(c1 | c2 << 8 | c3 << 16, SALT_C3) >> 16`.
    c3: usize,
    /// `(hash2(c1 | c2 << 8, SALT_C2) >> 24) << 8`.
    c2: usize,
    /// The mixer's index of the first of the two selectors.
    first: usize,
}

impl Cm {
    /// Appends the two selectors' sizes to `chosen` when the mixer being
    /// installed is the configured families' (`configured`) at revision 38.
    pub(super) fn mix38_install(&mut self, configured: bool, chosen: &mut Vec<usize>) {
        self.sel38 = Sel38::default();
        if configured && self.config.since(38) {
            self.sel38.first = chosen.len();
            chosen.extend_from_slice(&[SEL_C3, SEL_C2C0]);
            self.sel38.on = true;
        }
    }

    /// Hashes the byte's context (`c4`: the last four bytes, newest in the
    /// low byte).
    #[inline]
    pub(super) fn mix38_begin_byte(&mut self, c4: u32) {
        if self.sel38.on {
            let c3 = c4 & 0xFF_FFFF;
            let c2 = c4 & 0xFFFF;
            self.sel38.c3 = (hash2(c3, SALT_C3) >> 16) as usize;
            self.sel38.c2 = ((hash2(c2, SALT_C2) >> 24) << 8) as usize;
        }
    }

    /// Selects the two selectors' sets.
    #[inline]
    pub(super) fn mix38_select(&mut self, c0: u32) {
        if self.sel38.on {
            let k = self.sel38.first;
            self.mixer.select(k, self.sel38.c3);
            self.mixer.select(k + 1, self.sel38.c2 | c0 as usize);
        }
    }
}
