//! CM revision 42 (doc/FORMAT.md 4.53.2): the configured families' mixer
//! chooses what its last inputs carry by a measure of the bytes coded so
//! far. Those inputs are revision 8's run inputs (4.19.1, one per first
//! configured context, [`REV8_RUNS`](super::REV8_RUNS) of them); in *more
//! confidence* mode they carry instead the 4.16.1 confidence inputs of the
//! first contexts that have none yet, in context order.
//!
//! The measure, over every byte of the block coded so far (`n` of them,
//! bytes coded by revision 9's shortcut included): `high`, the bytes
//! `>= 0x80`; `ctl`, the bytes below 0x20 other than tab, newline and
//! carriage return; `markup`, the bytes `[`, `|` and `{`. At the block's
//! start the mode is *more confidence*; after every [`PERIOD`] bytes the
//! mode becomes *runs* if `high`, `ctl` or `markup`, times [`SHARE`], is
//! above `n`, else *more confidence*. When the mode changes, those inputs'
//! first-layer weights in every weight set restart at the mode's initial
//! weight (0 for confidence inputs, revision 4's 2000 for run inputs).
//!
//! All of this applies only with a context table of at least
//! 2^[`MIN_TABLE_BITS`] bytes (the block's, after `effective_bits`); with
//! a smaller one the slots always carry the run inputs.
//!
//! The run map is looked up and trained in both modes, so switching back
//! finds it as revision 40 would. The model calls these helpers from
//! `install`, `rev4_initial_weights`, `predict_bit` and `end_byte`.

use super::{CONFIDENCE_INITIAL_WEIGHT, Cm, REV4_INITIAL_WEIGHT, confidence_input};

/// Bytes between two decisions of the mode.
pub(crate) const PERIOD: u32 = 1024;
/// A count times this above the bytes coded chooses the run inputs.
pub(crate) const SHARE: u32 = 64;
/// The smallest context table (log2 of its bytes, after
/// `CmConfig::effective_bits`) with which the choice applies: with the
/// tests' 2^18-byte table more confidence inputs cost 2% on real code.
pub(crate) const MIN_TABLE_BITS: u32 = 22;

/// Revision 42's input choice: whether it applies, the mode, the
/// contexts of the confidence inputs and the byte counts.
#[derive(Debug, Clone, Default)]
pub(super) struct Sel42 {
    /// The choice applies (revision 42, configured families, run inputs).
    on: bool,
    /// The run inputs' slots carry confidence inputs.
    conf: bool,
    /// The contexts whose confidence inputs those slots carry.
    more: Vec<usize>,
    /// Bytes coded, bytes `>= 0x80`, control bytes and markup bytes.
    counts: [u32; 4],
}

impl Sel42 {
    /// Walks the mode and counts (`snapshot.rs`; nothing when off).
    pub(super) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        if self.on {
            crate::snapshot::visit_bool(v, &mut self.conf);
            v.u32s(&mut self.counts);
        }
    }

    /// The mode the counts choose.
    fn wants_conf(&self) -> bool {
        let [n, high, ctl, markup] = self.counts;
        [high, ctl, markup]
            .iter()
            .all(|&c| u64::from(c) * u64::from(SHARE) <= u64::from(n))
    }
}

impl Cm {
    /// Sets the choice up for the mixer just installed (`contexts` hashed
    /// contexts; the confidence and run inputs already chosen).
    pub(super) fn mix42_install(&mut self, configured: bool, contexts: usize) {
        let runs = self.run_inputs();
        let on = configured
            && self.config.since(42)
            && runs > 0
            && self.table.bytes() >= 1 << MIN_TABLE_BITS;
        if !on {
            self.sel42 = Sel42::default();
            return;
        }
        let more: Vec<usize> = (0..contexts)
            .filter(|j| !self.confidence.contains(j))
            .take(runs)
            .collect();
        if more.len() < runs {
            self.sel42 = Sel42::default();
            return;
        }
        self.sel42 = Sel42 {
            on,
            conf: true,
            more,
            counts: [0; 4],
        };
    }

    /// After `rev4_initial_weights`: the slots start as their mode's inputs.
    pub(super) fn mix42_weights(&mut self) {
        if self.sel42.on {
            self.mix42_reset_weights();
        }
    }

    /// Restarts the run slots' weights at the current mode's start.
    fn mix42_reset_weights(&mut self) {
        let n = self.run_inputs();
        let end = self.mixer.inputs();
        let w = if self.sel42.conf {
            CONFIDENCE_INITIAL_WEIGHT
        } else {
            REV4_INITIAL_WEIGHT
        };
        self.mixer.set_initial_weights_range(end - n..end, w);
    }

    /// In *more confidence* mode, overwrites the run slots' inputs with the
    /// confidence inputs of the chosen contexts (this bit's states).
    #[inline]
    pub(super) fn mix42_inputs(&mut self) {
        if self.sel42.on && self.sel42.conf {
            let first = self.mixer.inputs() - self.sel42.more.len();
            for (k, &j) in self.sel42.more.iter().enumerate() {
                let x = confidence_input(&self.maps[j], self.states[j]);
                self.mixer.set(first + k, x);
            }
        }
    }

    /// Counts byte `b` and decides the mode every [`PERIOD`] bytes.
    #[inline]
    pub(super) fn mix42_end_byte(&mut self, b: u8) {
        if !self.sel42.on {
            return;
        }
        let c = &mut self.sel42.counts;
        c[0] = c[0].saturating_add(1);
        c[1] += u32::from(b >= 0x80);
        c[2] += u32::from(b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'));
        c[3] += u32::from(matches!(b, b'[' | b'|' | b'{'));
        if c[0].is_multiple_of(PERIOD) {
            let conf = self.sel42.wants_conf();
            if conf != self.sel42.conf {
                self.sel42.conf = conf;
                self.mix42_reset_weights();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measure_chooses_runs_for_high_control_or_markup_bytes() {
        let mut s = Sel42 {
            counts: [6400, 100, 100, 100],
            ..Sel42::default()
        };
        assert!(s.wants_conf());
        for k in 1..4 {
            s.counts = [6400, 100, 100, 100];
            s.counts[k] = 101;
            assert!(!s.wants_conf(), "{k}");
        }
    }
}
