//! CM revision 36 (doc/FORMAT.md 4.47.2): revision 34's two final mixers
//! (`mix34.rs`, FORMAT 4.45.1) for a detected kind's families, the second
//! final layer's weight set chosen by the kind's own state for the byte
//! (its family's byte selector: the place in the instruction for x86 and
//! 68000 code, in the sample for audio, in the value for floats) instead
//! of the previous byte.
//!
//! Every detected kind gets them but images (`imgmix36.rs` is theirs),
//! JPEG (its own model) and spreadsheets (kennedy.xls +2.5%: its coded
//! size is small and the mixers' weight sets do not learn in time).
//!
//! Measured and left out (FORMAT 4.47.2): the kind's APMs keyed by its
//! state, the three APMs as separate inputs of the stage mix, the stage
//! mix's sets by the kind's state, the second layer's sets by the
//! previous byte (as revision 34's).
//!
//! The model calls these helpers from `end_byte` (after a kind's
//! families are installed), `code_byte`, `predict_bit` and `update_bit`
//! (one line each).

use super::Cm;
use super::mix34::{MAXN, Small, layer2_step, stage_mix};
use crate::models::detect::DataKind;

/// The stage mix's inputs: the mixer's output, three stages and a bias.
const STAGE_INPUTS: usize = 5;
/// The stage mix's weight sets: the partial byte (256) times 3 match
/// states.
const STAGE_SETS: usize = 256 * 3;
/// The stage mix's learning rate.
const STAGE_LR: i32 = 2;
/// The stage mix's starting weight of each stage (a quarter).
const STAGE_W0: i32 = 65536 / 4;

/// The second final layer's learning rate (twice revision 34's).
const L2_LR: i32 = 2;
/// The second final layer's weight sets without a byte selector: the
/// previous byte times the bit position.
const L2_BYTE_SETS: usize = 256 * 8;

/// Most weight sets of the second final layer: the largest byte selector
/// of a kind's family at revision 36 (x86's and the floats', 4096).
const L2_MAX_SETS: usize = 4096;

/// Bytes [`Final36`] allocates at most (counted in
/// `CmConfig::memory_bytes`).
pub(crate) const MEMORY: u64 = ((STAGE_SETS + L2_MAX_SETS) * MAXN * 4) as u64;

/// Whether a detected `kind` gets revision 36's mixers.
fn applies(kind: &DataKind) -> bool {
    !matches!(
        kind,
        DataKind::Image(_) | DataKind::Jpeg | DataKind::Biff(..)
    )
}

/// Revision 36's two mixers of a detected kind.
#[derive(Debug, Clone)]
pub(crate) struct Final36 {
    /// The learned mix of the refinement stages.
    stages: Small,
    /// The second final layer over the main mixer's set outputs.
    layer2: Small,
    /// The second layer's context for this byte: the kind's byte
    /// selector's context, or the previous byte without one.
    state: usize,
}

impl Final36 {
    /// Walks both mixers' weights (the stage mix first) in a prior's
    /// snapshot (doc/FORMAT.md section 11).
    pub(crate) fn visit(&mut self, v: &mut dyn crate::snapshot::Visitor) {
        self.stages.visit(v);
        self.layer2.visit(v);
    }
}

impl Cm {
    /// Revision 36: sets up a detected `kind`'s mixers once its families
    /// are installed (none before revision 36 or for the kinds
    /// [`applies`] leaves out, or a main mixer of more than 15 sets).
    pub(super) fn kindmix36_install(&mut self, kind: &DataKind) {
        let sets = self.mixer.set_outputs().len();
        // Revision 40 (4.51.4): an x86 block's stage mix learns faster.
        let stage_lr = if self.x86_40 {
            super::kindmix40::X86_STAGE_LR
        } else {
            STAGE_LR
        };
        self.final36 = (self.config.since(36) && applies(kind) && sets < MAXN).then(|| {
            let l2_sets = self.byte_selector.map_or(L2_BYTE_SETS, |(_, n)| n.max(8));
            Box::new(Final36 {
                stages: Small::new(STAGE_INPUTS, STAGE_SETS, stage_lr, STAGE_W0),
                layer2: Small::new(sets + 1, l2_sets, L2_LR, 65536 / sets as i32),
                state: 0,
            })
        });
    }

    /// Revision 36: notes the second layer's context for the byte (after
    /// the families' contexts are hashed; `c1` the previous byte).
    #[inline]
    pub(super) fn kindmix36_begin_byte(&mut self, c1: u32) {
        if let Some(f) = self.final36.as_mut() {
            f.state = match self.byte_selector {
                Some(_) => self.byte_selector_ctx,
                None => c1 as usize,
            };
        }
    }

    /// Revision 36: the second final layer over the main mixer's set
    /// outputs for bit `i`, averaged with the main mixer's stretched `d`
    /// (as revision 34's, `mix34_layer2`); `d` and `pm` unchanged without
    /// revision 36's mixers.
    #[inline]
    pub(super) fn kindmix36_layer2(&mut self, d: i32, pm: u32, i: u32) -> (i32, u32) {
        let Some(f) = self.final36.as_mut() else {
            return (d, pm);
        };
        let set = f.state << 3 | i as usize;
        layer2_step(&mut f.layer2, self.mixer.set_outputs(), d, set)
    }

    /// Revision 36: the stage mix (as revision 34's, `mix34_refine`) of
    /// the mixer's stretched `d` and the stages' outputs `stages` (the v1
    /// pair's, revision 2's stage's and the kind's APM stage's), averaged
    /// with the last; the last stage's output without revision 36's
    /// mixers.
    #[inline]
    pub(super) fn kindmix36_refine(&mut self, d: i32, stages: [u32; 3], c0: u32, i: u32) -> u32 {
        let p = stages[2];
        let Some(f) = self.final36.as_mut() else {
            return p;
        };
        stage_mix(&mut f.stages, self.sse_byte.expected, d, stages, c0, i)
    }

    /// Revision 36: trains both mixers on `bit`.
    #[inline]
    pub(super) fn kindmix36_update(&mut self, bit: u32) {
        if let Some(f) = self.final36.as_mut() {
            f.stages.update(bit);
            f.layer2.update(bit);
        }
    }
}
