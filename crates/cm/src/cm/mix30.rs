//! CM revision 30 (doc/FORMAT.md 4.41.1): mixer weight-set selectors that
//! a configured family offers ([`ContextModel::text_selectors`]), after
//! revision 28's, and the final layer's sets it chooses
//! ([`ContextModel::final_selector`]): the revision-30 text family's
//! region selector and final sets (`models/text30.rs`).
//!
//! The model calls these helpers from `install` and `predict_bit`.

use super::Cm;
use crate::models::ContextModel;

/// Most selectors a configured family may offer.
pub(crate) const MORE_MAX: usize = 4;

impl Cm {
    /// Revision 30: the family that offers the selectors, how many it
    /// offers (the configured families of a revision-30 model) and the
    /// index of the first, for `install`; their sizes are appended to
    /// `chosen`.
    pub(super) fn mix30_install(
        &mut self,
        families: &[Box<dyn ContextModel>],
        configured: bool,
        chosen: &mut Vec<usize>,
    ) {
        self.text_selector = None;
        if !(configured && self.config.since(30)) {
            return;
        }
        if let Some(k) = families.iter().position(|f| !f.text_selectors().is_empty()) {
            let sizes = families[k].text_selectors();
            let n = sizes.len().min(MORE_MAX);
            self.text_selector = Some((k, n, chosen.len()));
            chosen.extend_from_slice(&sizes[..n]);
        }
    }

    /// Revision 30: the family that chooses the configured families'
    /// final-layer weight set (a revision-30 model's text family), and how
    /// many sets it has (`None`: no such family).
    pub(super) fn mix30_final(
        &mut self,
        families: &[Box<dyn ContextModel>],
        configured: bool,
    ) -> Option<usize> {
        self.final_selector = (configured && self.config.since(30))
            .then(|| families.iter().position(|f| f.final_selector_size() > 0))
            .flatten();
        self.final_selector
            .map(|k| families[k].final_selector_size())
    }

    /// Revision 30: selects the family's sets (from the selector index
    /// noted at `install` on).
    #[inline]
    pub(super) fn mix30_select(&mut self, c0: u32, i: u32) {
        if let Some((f, n, k)) = self.text_selector {
            let mut ctx = [0usize; MORE_MAX];
            let ctx = &mut ctx[..n];
            self.families[f].text_selectors_ctx(c0, i, ctx);
            for (j, &c) in ctx.iter().enumerate() {
                self.mixer.select(k + j, c);
            }
        }
    }
}
