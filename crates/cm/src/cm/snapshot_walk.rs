//! The model's side of a prior's snapshot (`crate::snapshot`, doc/FORMAT.md
//! section 11): the fixed order in which everything a [`Cm`] and its stream
//! have learned is walked, and the checks of a restored state.

use super::{Cm, CmStream};

impl Cm {
    /// Walks everything the model and stream `st` have learned, in the
    /// fixed order of a prior's snapshot (`snapshot.rs`); `walk` 1 adds
    /// revision 9's shortcut mixer (doc/FORMAT.md section 11).
    pub(crate) fn visit_state(
        &mut self,
        st: &mut CmStream,
        v: &mut dyn crate::snapshot::Visitor,
        walk: u8,
    ) {
        self.table.visit(v);
        for m in &mut self.maps {
            m.visit(v);
        }
        self.order0.visit(v);
        for m in [self.matcher.as_mut(), self.matcher2.as_mut()]
            .into_iter()
            .flatten()
        {
            m.visit(v);
        }
        self.mixer.visit(v);
        self.apms.visit(v);
        if let Some(s) = self.sse.as_mut() {
            s.visit(v);
        }
        if let Some(f) = self.final_sse.as_mut() {
            f.visit(v);
        }
        // Revision 34 (doc/FORMAT.md 4.45.1): its two mixers.
        if let Some(f) = self.final34.as_mut() {
            f.visit(v);
        }
        // Revision 36 (doc/FORMAT.md 4.47.2): a detected kind's mixers.
        if let Some(f) = self.final36.as_mut() {
            f.visit(v);
        }
        // Revision 36 (doc/FORMAT.md 4.47.1): a detected image's stage.
        if let Some(m) = self.img36.as_mut() {
            m.visit(v);
        }
        if let Some(r) = self.runs.as_mut() {
            r.visit(v);
        }
        // Revision 42 (doc/FORMAT.md 4.53.2): the run slots' mode.
        self.sel42.visit(v);
        for f in &mut self.families {
            f.visit_state(v);
        }
        if let Some(d) = self.detector.as_mut() {
            d.visit(v);
        }
        // Revision 9 (doc/FORMAT.md 4.20.6).
        if let Some(s) = self.skip.as_mut() {
            s.visit(v, walk);
        }
        st.visit(v);
    }

    /// Whether the model has switched to a detected kind's families.
    pub(crate) fn kind_detected(&self) -> bool {
        self.detector.as_ref().is_some_and(|d| d.found())
            || self.families.iter().any(|f| f.detected())
    }

    /// Checks a restored state: no detected kind, and every position it
    /// holds within the `history` bytes before the block.
    pub(crate) fn check_positions(&self, st: &CmStream, history: usize) -> Result<(), String> {
        if self.kind_detected() {
            return Err("snapshot: the state has a detected data kind".into());
        }
        let ok = st.within(history)
            && [self.matcher.as_ref(), self.matcher2.as_ref()]
                .into_iter()
                .flatten()
                .all(|m| m.positions_within(history))
            && self.families.iter().all(|f| f.positions_within(history))
            && self.detector.as_ref().is_none_or(|d| d.within(history));
        if ok {
            Ok(())
        } else {
            Err(format!(
                "snapshot: a position in the model state lies past the {history} bytes of history"
            ))
        }
    }
}
