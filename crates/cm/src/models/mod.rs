//! Hashed-context model families, one file each.
//!
//! A family is a [`ContextModel`]: it declares how many contexts it adds (each
//! context is one mixer input, through a state map over the bit history that
//! the shared [`NibbleTable`](crate::NibbleTable) keeps for it) and computes
//! their hashes once per byte, in the same place. Adding a family is one new
//! file here plus one registration line where a model assembles its
//! families (`cm/mod.rs` for the frozen v1 model).
//!
//! Families that keep per-stream history (the word and record families)
//! define that history next to their contexts; [`CmStream`] holds one of each.

use crate::cm::CmStream;
use crate::matcher::Visibility;

pub(crate) mod audio;
pub(crate) mod audio14;
pub(crate) mod audio38;
pub(crate) mod audio4;
pub(crate) mod biff;
pub(crate) mod biff12;
pub(crate) mod biff32;
pub(crate) mod biff7;
pub(crate) mod bilevel;
pub(crate) mod bilevel10;
pub(crate) mod bilevel12;
pub(crate) mod bilevel4;
pub(crate) mod bilevel7;
pub(crate) mod detect;
pub(crate) mod elf7;
pub(crate) mod expected;
pub(crate) mod float;
pub(crate) mod float10;
pub(crate) mod float18;
pub(crate) mod float24;
pub(crate) mod float26;
pub(crate) mod float4;
pub(crate) mod float44;
pub(crate) mod float7;
pub(crate) mod ibm10;
pub(crate) mod image;
pub(crate) mod image10;
pub(crate) mod image14;
pub(crate) mod image16;
pub(crate) mod image18;
pub(crate) mod image22;
pub(crate) mod image32;
pub(crate) mod image40;
pub(crate) mod image42;
pub(crate) mod image44;
pub(crate) mod image7;
pub(crate) mod indirect;
pub(crate) mod jpeg;
pub(crate) mod jpeg36;
pub(crate) mod jpeg7;
pub(crate) mod line40;
pub(crate) mod m68k;
pub(crate) mod m68k12;
pub(crate) mod m68k34;
pub(crate) mod m68k46;
pub(crate) mod m68k5;
pub(crate) mod m68k7;
pub(crate) mod matchctx;
pub(crate) mod ols;
pub(crate) mod order;
pub(crate) mod pixel;
pub(crate) mod pixel2;
pub(crate) mod pixel4;
pub(crate) mod record;
pub(crate) mod small44;
pub(crate) mod small46;
pub(crate) mod sparse;
pub(crate) mod text;
pub(crate) mod text16;
pub(crate) mod text20;
pub(crate) mod text22;
pub(crate) mod text30;
pub(crate) mod text32;
pub(crate) mod wiki44;
pub(crate) mod word;
pub(crate) mod words8;
pub(crate) mod x86;
pub(crate) mod x86_10;
pub(crate) mod x86_14;
pub(crate) mod x86_16;
pub(crate) mod x86_30;
pub(crate) mod x86_32;
pub(crate) mod x86_4;
pub(crate) mod x86_42;
pub(crate) mod x86_5;
pub(crate) mod x86_7;

/// What a family sees of the byte about to be coded.
pub(crate) struct ByteCtx<'a> {
    /// The block buffer (only bytes the decoder has may be read: see `vis`).
    pub data: &'a [u8],
    /// Block position of the byte about to be coded.
    pub pos: usize,
    /// The coding stream's history.
    pub st: &'a CmStream,
    /// Which positions the decoder already has.
    pub vis: &'a dyn Visibility,
}

impl ByteCtx<'_> {
    /// The last four bytes of the stream, the last one lowest.
    #[inline]
    pub fn c4(&self) -> u32 {
        self.st.c4
    }

    /// The four bytes before [`c4`](Self::c4).
    #[inline]
    pub fn c8(&self) -> u32 {
        self.st.c8
    }
}

/// A model that contributes inputs to the mixer through hashed contexts.
pub(crate) trait ContextModel: std::fmt::Debug + Send + Sync + CloneFamily {
    /// How many contexts (and so mixer inputs) the family adds.
    fn contexts(&self) -> usize;

    /// Writes the hash of each of the family's contexts for the byte at
    /// `ctx.pos` to `out` (`out.len() == self.contexts()`). The model asks
    /// every family for its hashes before it calls `begin_byte` for the
    /// byte: hashes a family makes in `begin_byte` reach the next byte
    /// (revisions 10 and 18's float families, doc/FORMAT.md 4.31.4; make
    /// them here or in `observe` of the byte before).
    fn hashes(&self, ctx: &ByteCtx<'_>, out: &mut [u32]);

    /// Weight sets of the mixer selector this family offers in place of the
    /// previous byte (0: none). The first family that offers one supplies it.
    fn selector_size(&self) -> usize {
        0
    }

    /// The byte-level context of that selector for the byte at `ctx.pos`
    /// (below [`selector_size`](Self::selector_size) / 8; the bit position
    /// is added to it).
    fn selector(&self, _ctx: &ByteCtx<'_>) -> usize {
        0
    }

    /// A byte that replaces the previous byte as the order-1 APM's context
    /// for the byte at `ctx.pos` (`None`: keep the previous byte). The first
    /// family that gives one supplies it.
    fn apm_byte(&self, _ctx: &ByteCtx<'_>) -> Option<u32> {
        None
    }

    /// Revision 16 (doc/FORMAT.md 4.27.2): weight sets of a mixer selector
    /// that a detected kind's family offers in place of the text
    /// selectors (0: none). The first family that offers one supplies it.
    fn kind_selector_size(&self) -> usize {
        0
    }

    /// That selector's context for bit `i` (`c0` the bits so far with a
    /// leading 1), below [`kind_selector_size`](Self::kind_selector_size).
    fn kind_selector(&self, _c0: u32, _i: u32) -> usize {
        0
    }

    /// Revision 18 (doc/FORMAT.md 4.29.2): weight sets of a second mixer
    /// selector offered by the family that offers the kind selector (0:
    /// none), taken after it.
    fn kind_selector2_size(&self) -> usize {
        0
    }

    /// That selector's context for bit `i` (`c0` the bits so far with a
    /// leading 1), below [`kind_selector2_size`](Self::kind_selector2_size).
    fn kind_selector2(&self, _c0: u32, _i: u32) -> usize {
        0
    }

    /// Revision 22 (doc/FORMAT.md 4.33.2): weight sets of further mixer
    /// selectors offered by the family that offers the second one, taken
    /// after it in this order (empty: none).
    fn kind_selectors_more(&self) -> &[usize] {
        &[]
    }

    /// Their contexts for bit `i` (`c0` the bits so far with a leading 1),
    /// in that order (`out.len() == self.kind_selectors_more().len()`).
    fn kind_selectors_more_ctx(&self, _c0: u32, _i: u32, _out: &mut [usize]) {}

    /// Revision 30 (doc/FORMAT.md 4.41.1): weight sets of mixer selectors
    /// a configured family offers after revision 28's (empty: none). The
    /// first family that offers any supplies them.
    fn text_selectors(&self) -> &[usize] {
        &[]
    }

    /// Their contexts for bit `i` (`c0` the bits so far with a leading 1),
    /// in that order (`out.len() == self.text_selectors().len()`).
    fn text_selectors_ctx(&self, _c0: u32, _i: u32, _out: &mut [usize]) {}

    /// Revision 30 (doc/FORMAT.md 4.41.1): weight sets of the configured
    /// families' final mixer layer that a family offers in place of the
    /// 256 by partial byte (0: none; the first family that offers them
    /// supplies them).
    fn final_selector_size(&self) -> usize {
        0
    }

    /// The final layer's set for partial byte `c0` (below
    /// [`final_selector_size`](Self::final_selector_size)).
    fn final_selector(&self, c0: u32) -> usize {
        c0 as usize
    }

    /// Mixer inputs this family computes per bit, after every family's
    /// hashed contexts (0: none; then the three methods below are unused).
    fn bit_inputs(&self) -> usize {
        0
    }

    /// The first-layer weight the family's per-bit inputs start with in
    /// every weight set of the configured families' mixer (`None`: the
    /// revision's default, as every input). Read once, when the mixer is
    /// built; a detected kind's mixer starts as in revision 2.
    fn initial_weight(&self) -> Option<i16> {
        None
    }

    /// Prepares the per-bit inputs for the byte at `ctx.pos`.
    fn begin_byte(&mut self, _ctx: &ByteCtx<'_>) {}

    /// Writes the per-bit inputs (stretched probabilities of a 1) for bit
    /// `i` of the byte, `c0` the bits so far with a leading 1
    /// (`out.len() == self.bit_inputs()`).
    fn predict_bit(&mut self, _c0: u32, _i: u32, _out: &mut [i32]) {}

    /// Learns the coded bit after [`predict_bit`](Self::predict_bit).
    fn update_bit(&mut self, _bit: u32) {}

    /// A cache hint a bit ahead: starts loading what
    /// [`predict_bit`](Self::predict_bit)`(c0, i)` and
    /// [`refine_final`](Self::refine_final) will read, before bit `i + 1`
    /// is known to have made the partial byte `c0`. It must change no
    /// value: the model calls it for both partial bytes bit `i` can follow.
    fn prefetch_bit(&self, _c0: u32, _i: u32) {}

    /// Revision 12 (doc/FORMAT.md 4.23.6): refines the model's
    /// final 16-bit probability `p` of a 1 for the bit after
    /// [`predict_bit`](Self::predict_bit) (`c0` the bits so far with a
    /// leading 1); learns in [`update_bit`](Self::update_bit). Families
    /// with per-bit inputs are asked in order; the default keeps `p`.
    fn refine_final(&mut self, p: u32, _c0: u32) -> u32 {
        p
    }

    /// Sees the byte just coded at `pos` (the block's bytes before it are in
    /// `data`). Families that keep block-level state override this.
    fn observe(&mut self, _data: &[u8], _pos: usize, _byte: u8) {}

    /// Walks the family's learned state for a prior's snapshot
    /// (`snapshot.rs`); families without state walk nothing.
    fn visit_state(&mut self, _v: &mut dyn crate::snapshot::Visitor) {}

    /// Whether the family has switched to a special layout (a header found):
    /// such a state is not a prior.
    fn detected(&self) -> bool {
        false
    }

    /// Whether the positions the family keeps lie within `history` bytes.
    fn positions_within(&self, _history: usize) -> bool {
        true
    }
}

/// Inside `impl ContextModel for W`, forwards each named method of
/// [`ContextModel`] to the wrapped family in field `$f`, unchanged: a family
/// that wraps an earlier revision's (image14, jpeg7, bilevel10...) writes
/// only the methods it changes.
macro_rules! forward_family {
    ($f:ident; $($m:ident),+ $(,)?) => { $( forward_family!(@ $f $m); )+ };
    (@ $f:ident contexts) => {
        fn contexts(&self) -> usize { self.$f.contexts() }
    };
    (@ $f:ident hashes) => {
        fn hashes(&self, ctx: &$crate::models::ByteCtx<'_>, out: &mut [u32]) { self.$f.hashes(ctx, out) }
    };
    (@ $f:ident selector_size) => {
        fn selector_size(&self) -> usize { self.$f.selector_size() }
    };
    (@ $f:ident selector) => {
        fn selector(&self, ctx: &$crate::models::ByteCtx<'_>) -> usize { self.$f.selector(ctx) }
    };
    (@ $f:ident apm_byte) => {
        fn apm_byte(&self, ctx: &$crate::models::ByteCtx<'_>) -> Option<u32> { self.$f.apm_byte(ctx) }
    };
    (@ $f:ident kind_selector_size) => {
        fn kind_selector_size(&self) -> usize { self.$f.kind_selector_size() }
    };
    (@ $f:ident kind_selector) => {
        fn kind_selector(&self, c0: u32, i: u32) -> usize { self.$f.kind_selector(c0, i) }
    };
    (@ $f:ident kind_selector2_size) => {
        fn kind_selector2_size(&self) -> usize { self.$f.kind_selector2_size() }
    };
    (@ $f:ident kind_selector2) => {
        fn kind_selector2(&self, c0: u32, i: u32) -> usize { self.$f.kind_selector2(c0, i) }
    };
    (@ $f:ident predict_bit) => {
        fn predict_bit(&mut self, c0: u32, i: u32, out: &mut [i32]) { self.$f.predict_bit(c0, i, out) }
    };
    (@ $f:ident prefetch_bit) => {
        fn prefetch_bit(&self, c0: u32, i: u32) { self.$f.prefetch_bit(c0, i) }
    };
    (@ $f:ident bit_inputs) => {
        fn bit_inputs(&self) -> usize { self.$f.bit_inputs() }
    };
    (@ $f:ident initial_weight) => {
        fn initial_weight(&self) -> Option<i16> { self.$f.initial_weight() }
    };
    (@ $f:ident begin_byte) => {
        fn begin_byte(&mut self, ctx: &$crate::models::ByteCtx<'_>) { self.$f.begin_byte(ctx) }
    };
    (@ $f:ident observe) => {
        fn observe(&mut self, data: &[u8], pos: usize, byte: u8) { self.$f.observe(data, pos, byte) }
    };
    (@ $f:ident visit_state) => {
        fn visit_state(&mut self, v: &mut dyn $crate::snapshot::Visitor) { self.$f.visit_state(v) }
    };
    (@ $f:ident detected) => {
        fn detected(&self) -> bool { self.$f.detected() }
    };
    (@ $f:ident positions_within) => {
        fn positions_within(&self, history: usize) -> bool { self.$f.positions_within(history) }
    };
}
pub(crate) use forward_family;

/// Cloning a boxed family (a model restored from a prior is cloned for
/// every block, `snapshot.rs`); every `Clone` family has it.
pub(crate) trait CloneFamily {
    /// A boxed copy.
    fn clone_box(&self) -> Box<dyn ContextModel>;
}

impl<T: ContextModel + Clone + 'static> CloneFamily for T {
    fn clone_box(&self) -> Box<dyn ContextModel> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn ContextModel> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The hash of two words that every family builds its contexts from.
#[inline]
pub(crate) fn hash2(a: u32, b: u32) -> u32 {
    let h = a.wrapping_mul(0x9E37_79B1) ^ b.wrapping_mul(0x85EB_CA77).rotate_left(15);
    (h ^ (h >> 15)).wrapping_mul(0xC2B2_AE3D) ^ (h >> 13)
}

/// Puts `t` first in `list` (a recency list, the newest first): moved
/// there if `list` holds it, else pushed in with the oldest dropped.
pub(crate) fn move_to_front(list: &mut [u32], t: u32) {
    let k = list.iter().position(|&x| x == t).unwrap_or(list.len() - 1);
    list[..=k].rotate_right(1);
    list[0] = t;
}
