//! The context-mixing model of `model_id` 3 (mix), CM version 1: many
//! context models, a match model and (optionally) a neural prediction,
//! mixed per bit.
//!
//! **Frozen.** Archives of format version 1 decode with this code forever:
//! nothing here, nor in the families and building blocks it uses
//! (`models/`, `matcher.rs`, `mixer2.rs`, `apm.rs`, `prim.rs`, `state.rs`,
//! `hashtable.rs`, `logistic_tables.rs`), may change a coded bit. New
//! behaviour is a new model (a new CM version in the mix parameters, or a new
//! `model_id` / format version), documented in doc/FORMAT.md.
//!
//! For every byte the model hashes the contexts of its families (orders 1 to
//! 7 and long orders, the current and previous word, image neighbours,
//! sparse byte pairs, the bytes one and two records above: [`families`]),
//! finds each context's nibble bucket in a shared [`NibbleTable`], and for
//! each bit turns every context's bit history into a probability with an
//! adaptive map per context. Those, an order-0 prediction, the match models'
//! predictions, the neural network's probability of the bit (when a 256-way
//! distribution is given) and a bias are mixed by a [`Mixer2`] whose weight
//! sets are chosen by the match state, the partial byte, the previous byte
//! and how many contexts have been seen before; two APMs refine the mix.
//!
//! All arithmetic is integer: encoder and decoder agree on every machine.
//!
//! Several streams may share one model (the neural engine codes its streams
//! side by side): statistics are shared, each stream keeps its own history
//! ([`CmStream`]) and the match model reads only bytes the decoder already has
//! ([`Visibility`]).

mod config;
mod ctxinputs;
mod imgmix36;
mod imgmix38;
mod kindmix;
mod kindmix36;
mod kindmix40;
mod mix28;
mod mix30;
mod mix34;
mod mix38;
mod mix42;
mod registry;
mod snapshot_walk;
mod stream;

pub use config::{CmConfig, revision_has};
pub(crate) use registry::{families, kind_families};
pub use stream::CmStream;

use crate::apm::ApmChain;
use crate::hashtable::NibbleTable;
use crate::logistic::stretch;
use crate::lstm::{LstmConfig, SerialInput};
use crate::matcher::{MatchModel, Visibility};
use crate::mixer2::{Mixer2, max_inputs};
use crate::models::detect::Detector;
use crate::models::text;
use crate::models::{ByteCtx, ContextModel, hash2};
use crate::prim::{AdaptiveProbs, StateMap};
use crate::runs::RunMap;
use crate::skip::Shortcut;
use crate::sse::{FinalByte, FinalSse, SseByte, TextSse};
use crate::state::STATES;
use sep_coder::{Coder, FreqTable};

/// Revision 4's extra mixer selector: the character classes
/// (`models/text.rs`, 4 bits each) of the last three bytes, with the bit
/// position.
const REV4_CLASS_SETS: usize = 16 * 16 * 16 * 8;

/// Revision 6's extra mixer selector (doc/FORMAT.md 4.17.2): the classes
/// of the last two bytes with the partial byte,
/// `(class(c1) * 16 + class(c2)) * 256 + c0`.
const REV6_CLASS_BYTE_SETS: usize = 16 * 16 * 256;

/// The adaptation shift of every APM: revision 4 adapts faster (6; 7
/// before it).
fn apm_rate(revision: u8) -> u32 {
    if revision >= 4 { 6 } else { 7 }
}

/// Revision 4's starting weight of every first-layer mixer input
/// (16384 = 1.0; doc/FORMAT.md 4.15.1).
const REV4_INITIAL_WEIGHT: i16 = 2000;

/// Revision 22 (doc/FORMAT.md 4.33.2): most further selectors a detected
/// kind's family offers.
const KIND_MORE_MAX: usize = 6;

/// The mixer inputs after the hashed contexts, in mixer order: an order-0
/// prediction, one per match model, the network's (if any), and a bias. The
/// mixer's size ([`count`](Self::count)) and the inputs set per bit
/// ([`Cm::set_direct_inputs`]) both follow this declaration.
#[derive(Debug, Clone, Copy)]
struct DirectInputs {
    matchers: usize,
    neural: bool,
    /// The serial network's inputs ([`Cm::with_lstm`]).
    serial: bool,
}

impl DirectInputs {
    /// Order-0, match models, network, serial network, bias.
    fn count(&self) -> usize {
        1 + self.matchers
            + usize::from(self.neural)
            + if self.serial { SerialInput::INPUTS } else { 0 }
            + 1
    }
}

/// The context-mixing model: shared statistics for any number of streams.
#[derive(Debug, Clone)]
pub struct Cm {
    families: Vec<Box<dyn ContextModel>>,
    table: NibbleTable,
    maps: Vec<StateMap>,
    order0: AdaptiveProbs,
    matcher: Option<MatchModel>,
    matcher2: Option<MatchModel>,
    neural_input: bool,
    /// The serial network (doc/FORMAT.md section 4.12), if any.
    serial: Option<Box<SerialInput>>,
    mixer: Mixer2,
    apms: ApmChain,
    selectors: u8,
    direct: DirectInputs,
    config: CmConfig,
    /// The family whose selector replaces the previous byte's, with its
    /// size, and its context for the current byte.
    byte_selector: Option<(usize, usize)>,
    byte_selector_ctx: usize,
    /// Revision 16 (doc/FORMAT.md 4.27.2): the detected kind's family whose
    /// selector replaces the text selectors.
    kind_selector: Option<usize>,
    /// Revision 18 (doc/FORMAT.md 4.29.2): the family of the detected
    /// kind's second selector, if any.
    kind_selector2: Option<usize>,
    /// Revision 22 (doc/FORMAT.md 4.33.2): how many further selectors
    /// that family offers after its second.
    kind_more: usize,
    /// Families with per-bit inputs, and how many inputs they add in all.
    bit_families: Vec<usize>,
    bit_inputs: usize,
    /// The order-1 APM's context byte for this byte, if a family gives one.
    apm_byte: Option<u32>,
    /// Revision 1 without a network: watches the block's start for a header.
    detector: Option<Detector>,
    /// Revision 2: the APMs after the v1 chain, and what they see of the
    /// current byte.
    sse: Option<TextSse>,
    sse_byte: SseByte,
    /// Revision 2: one more mixer selector (the byte before the last),
    /// after the configured ones.
    extra_selectors: bool,
    /// Revision 4: the classes of the last three bytes (a mixer
    /// selector's context, `class(c1) * 256 + class(c2) * 16 + class(c3)`).
    classes: usize,
    /// Revision 5 and up (doc/FORMAT.md 4.16.1, 4.17.1): the hashed
    /// contexts that add a second, confidence input, after every other
    /// input.
    confidence: Vec<usize>,
    /// Revision 8: how many of the first contexts are order contexts (for
    /// the longest-order selector).
    order_contexts: usize,
    /// Revision 8: the final APM stage and what it sees of the byte.
    final_sse: Option<FinalSse>,
    final_byte: FinalByte,
    /// Revision 8: byte runs of the first configured contexts, whose
    /// inputs come last.
    runs: Option<RunMap>,
    /// Revisions 7 and 8 (4.18.1, 4.19.1): whether the text mixing changes
    /// apply: with the configured families only, not after a kind is
    /// detected.
    text_mix: bool,
    /// Revision 9 (doc/FORMAT.md 4.20.6): the shortcut for long
    /// predictable stretches (not with a neural input or serial network).
    skip: Option<Shortcut>,
    /// Revision 12 (doc/FORMAT.md 4.23.1): a detected kind's final APM
    /// stage (`kindmix.rs`); `None` otherwise.
    kind_sse: Option<Box<kindmix::KindSse>>,
    /// Revision 12 (4.23.1): whether the detected kind gets run inputs.
    kind_runs: bool,
    /// Revision 40 (doc/FORMAT.md 4.51.4): whether a detected x86 block's
    /// mixing learns at revision 40's rates (`kindmix40.rs`).
    x86_40: bool,
    /// Revision 46 (doc/FORMAT.md 4.57.3): the block being installed is a
    /// resource fork (68000 code), mixed at revision 40's x86 rates with
    /// the first-layer floor `kindmix40::M68K_RATE_FLOOR`.
    m68k_46: bool,
    /// Revision 12 (doc/FORMAT.md 4.23.3): second inputs of the hashed
    /// contexts, after the per-bit families' inputs.
    ctx12: Option<ctxinputs::CtxInputs>,
    /// Revision 28 (doc/FORMAT.md 4.39.2): what the two word-position
    /// selectors (`mix28.rs`) see of the byte.
    sel28: mix28::Sel28,
    /// Revision 30 (doc/FORMAT.md 4.41.1): the configured family that
    /// offers further selectors (`mix30.rs`), how many, and the mixer's
    /// index of the first.
    text_selector: Option<(usize, usize, usize)>,
    /// Revision 30 (4.41.1): the configured family that chooses the final
    /// layer's weight set.
    final_selector: Option<usize>,
    /// Revision 34 (doc/FORMAT.md 4.45.1): the second final layer and the
    /// learned mix of the refinement stages (`mix34.rs`).
    final34: Option<Box<mix34::Final34>>,
    /// Revision 36 (doc/FORMAT.md 4.47.2): a detected kind's two final
    /// mixers (`kindmix36.rs`).
    final36: Option<Box<kindmix36::Final36>>,
    /// Revision 38 (doc/FORMAT.md 4.49.1): the configured families' two
    /// more selectors (`mix38.rs`).
    sel38: mix38::Sel38,
    /// Revision 42 (doc/FORMAT.md 4.53.2): what the run inputs' slots
    /// carry (`mix42.rs`).
    sel42: mix42::Sel42,
    /// Revision 36 (doc/FORMAT.md 4.47.1): a detected image's layout and
    /// its mixing and refinement stage (`imgmix36.rs`).
    img36_info: Option<crate::models::image::ImageInfo>,
    img36: Option<Box<imgmix36::ImgMix36>>,
    hashes: Vec<u32>,
    buckets: Vec<usize>,
    nodes: Vec<usize>,
    states: Vec<u8>,
}

impl Cm {
    /// A fresh model for a block of `block_len` bytes; `neural_input`
    /// reserves a mixer input for a neural network's distribution (then every
    /// byte must come with one).
    ///
    /// Tables are the configured size, or smaller when the block cannot fill
    /// them: see [`CmConfig::effective_bits`].
    pub fn new(config: &CmConfig, neural_input: bool, block_len: usize) -> Self {
        config.validate().expect("valid CM configuration");
        let (table_bits, match_bits) = config.effective_bits(block_len);
        let direct = DirectInputs {
            matchers: usize::from(config.match_min > 0) + usize::from(config.match2_min > 0),
            neural: neural_input,
            serial: false,
        };
        let mut cm = Cm {
            families: Vec::new(),
            maps: Vec::new(),
            states: Vec::new(),
            hashes: Vec::new(),
            buckets: Vec::new(),
            nodes: Vec::new(),
            table: NibbleTable::new(table_bits),
            order0: AdaptiveProbs::new(256, 255),
            matcher: (config.match_min > 0)
                .then(|| MatchModel::new(match_bits, config.match_min.into())),
            matcher2: (config.match2_min > 0)
                .then(|| MatchModel::new(match_bits, config.match2_min.into())),
            neural_input,
            serial: None,
            mixer: Mixer2::new(1, &[1], 1, 6, 2),
            apms: ApmChain::with_rate(config.apms, apm_rate(config.revision)),
            selectors: config.selectors,
            direct,
            config: *config,
            byte_selector: None,
            byte_selector_ctx: 0,
            kind_selector: None,
            kind_selector2: None,
            kind_more: 0,
            bit_families: Vec::new(),
            bit_inputs: 0,
            apm_byte: None,
            detector: (config.revision >= 1 && !neural_input)
                .then(|| Detector::for_revision(config.revision)),
            sse: (config.revision >= 2).then(|| TextSse::with_rate(apm_rate(config.revision))),
            sse_byte: SseByte::default(),
            extra_selectors: config.revision >= 2,
            classes: 0,
            confidence: Vec::new(),
            order_contexts: 0,
            final_sse: None,
            final_byte: FinalByte::default(),
            runs: None,
            text_mix: false,
            skip: (config.since(9) && !neural_input).then(Shortcut::default),
            kind_sse: None,
            kind_runs: false,
            x86_40: false,
            m68k_46: false,
            ctx12: None,
            sel28: mix28::Sel28::default(),
            text_selector: None,
            sel38: mix38::Sel38::default(),
            sel42: mix42::Sel42::default(),
            final_selector: None,
            final34: None,
            final36: None,
            img36_info: None,
            img36: None,
        };
        if config.since(8) {
            cm.final_sse = Some(FinalSse::new(FINAL_APM_BITS, 6, FINAL_APM_KEEP));
        }
        // The families see the block's table size (revision 18's text
        // family sizes its direct tables by it; no other family reads it).
        let sized = CmConfig {
            table_bits,
            ..*config
        };
        cm.install(families(&sized), true);
        cm.rev4_initial_weights();
        cm
    }

    /// Revision 4 starts every first-layer weight of the configured
    /// families' mixer at 2000 / 16384 (about 0.12) rather than 0.3: with
    /// more than twenty inputs the first bytes' mix is less overconfident.
    /// (A detected kind's mixer starts as in revision 2.)
    fn rev4_initial_weights(&mut self) {
        if self.text_mix && self.config.since(22) {
            // Revision 22 (4.33.3): the configured families' mixer starts
            // quieter.
            self.mixer.set_initial_weights(REV22_INITIAL_WEIGHT);
        } else if self.config.revision >= 4 {
            self.mixer.set_initial_weights(REV4_INITIAL_WEIGHT);
        }
        // A family's own start for its per-bit inputs (revision 18's text
        // family, 4.29.1; only families of revision 4 and later have one).
        let mut first = self.maps.len();
        for &k in &self.bit_families {
            let f = &self.families[k];
            let n = f.bit_inputs();
            if let Some(w) = f.initial_weight() {
                self.mixer.set_initial_weights_from(first, w);
                self.mixer
                    .set_initial_weights_from(first + n, REV4_INITIAL_WEIGHT);
            }
            first += n;
        }
        if let Some(c) = self.ctx12.as_ref() {
            let first = self.maps.len() + self.bit_inputs;
            self.mixer
                .set_initial_weights_from(first, ctxinputs::INITIAL_WEIGHT);
            self.mixer
                .set_initial_weights_from(first + c.len(), REV4_INITIAL_WEIGHT);
        }
        let runs = self.run_inputs();
        if !self.confidence.is_empty() || runs > 0 {
            let first = self.mixer.inputs() - self.confidence.len() - runs;
            self.mixer
                .set_initial_weights_from(first, CONFIDENCE_INITIAL_WEIGHT);
        }
        if runs > 0 {
            let first = self.mixer.inputs() - runs;
            self.mixer
                .set_initial_weights_from(first, REV4_INITIAL_WEIGHT);
        }
        // Revision 42 (4.53.2): the run slots' start in the current mode.
        self.mix42_weights();
    }

    /// Adds the serial network of doc/FORMAT.md section 4.12: an LSTM that
    /// reads the stream this model codes and adds two mixer inputs and a
    /// weight-set selector. For a model of one stream without a neural
    /// input (`config` must be valid).
    pub fn with_lstm(mut self, config: &LstmConfig) -> Self {
        assert!(
            !self.neural_input,
            "a serial network replaces the neural input"
        );
        self.serial = Some(Box::new(SerialInput::new(config)));
        self.direct.serial = true;
        self.skip = None;
        let families = std::mem::take(&mut self.families);
        // Called as the model is built, before any kind is detected.
        self.install(families, true);
        self.rev4_initial_weights();
        if self.serial.as_ref().is_some_and(|s| s.quiet_start()) {
            // Kind 4 (doc/FORMAT.md 4.13.3): the network's inputs, just
            // before the bias input, start with weight 0 in every set.
            let end = self.mixer.inputs() - self.confidence.len() - self.run_inputs() - 1;
            self.mixer
                .set_initial_weights_range(end - SerialInput::INPUTS..end, 0);
        }
        self
    }

    /// Makes `families` the model's hashed contexts, with fresh state maps
    /// and a fresh mixer sized for them (the context table, order-0, match
    /// models and APMs keep what they learned). `configured`: the
    /// configuration's own families (not a detected kind's).
    fn install(&mut self, families: Vec<Box<dyn ContextModel>>, configured: bool) {
        let contexts: usize = families.iter().map(|f| f.contexts()).sum();
        // A detected kind's families may leave no room for the serial
        // network's inputs (the mixer takes `max_inputs(revision)`): the
        // network is then dropped for the rest of the block (doc/FORMAT.md
        // 4.13).
        let bit_inputs: usize = families.iter().map(|f| f.bit_inputs()).sum();
        let most = max_inputs(self.config.revision);
        if self.direct.serial && contexts + bit_inputs + self.direct.count() > most {
            self.direct.serial = false;
            self.serial = None;
        }
        self.byte_selector = families
            .iter()
            .position(|f| f.selector_size() > 0)
            .map(|k| (k, families[k].selector_size()));
        let previous_byte = self.byte_selector.map_or(256, |(_, n)| n);
        let sizes = [1 + 2 * 32, 256, previous_byte, (contexts + 1) * 8];
        let mut chosen: Vec<usize> = (0..4)
            .filter(|k| self.selectors & (1 << k) != 0)
            .map(|k| sizes[k])
            .chain(
                self.serial
                    .as_ref()
                    .filter(|s| self.direct.serial && s.has_selector())
                    .map(|_| SerialInput::SELECTOR),
            )
            .collect();
        self.kind_selector = (!configured && self.config.since(16))
            .then(|| families.iter().position(|f| f.kind_selector_size() > 0))
            .flatten();
        self.kind_selector2 = self
            .kind_selector
            .filter(|&k| self.config.since(18) && families[k].kind_selector2_size() > 0);
        if let Some(k) = self.kind_selector {
            chosen.push(families[k].kind_selector_size());
            if self.kind_selector2.is_some() {
                chosen.push(families[k].kind_selector2_size());
            }
            // Revision 22 (4.33.2): its further selectors.
            let more = families[k].kind_selectors_more();
            self.kind_more = if self.kind_selector2.is_some() && self.config.since(22) {
                more.len().min(KIND_MORE_MAX)
            } else {
                0
            };
            chosen.extend_from_slice(&more[..self.kind_more]);
        } else {
            self.kind_more = 0;
            if self.extra_selectors {
                chosen.push(256);
            }
            if self.config.revision >= 4 {
                chosen.push(REV4_CLASS_SETS);
            }
            if self.config.since(6) {
                chosen.push(REV6_CLASS_BYTE_SETS);
            }
        }
        self.text_mix = configured && self.config.since(7);
        self.kindmix_install(configured);
        if !configured {
            // A detected kind codes without the final APM stage.
            self.final_sse = None;
        }
        if self.text_mix && self.config.since(8) {
            chosen.push(REV8_LONGEST_SETS);
        }
        // Revision 28 (4.39.2): the word-position selectors.
        chosen.extend_from_slice(self.mix28_sets());
        // Revision 30 (4.41.1): a configured family's selectors.
        self.mix30_install(&families, configured, &mut chosen);
        // Revision 38 (4.49.1): two more selectors.
        self.mix38_install(configured, &mut chosen);
        self.order_contexts = families
            .first()
            .map_or(0, |f| f.contexts())
            .min(REV8_LONGEST_ORDERS);
        self.bit_families = (0..families.len())
            .filter(|&k| families[k].bit_inputs() > 0)
            .collect();
        self.bit_inputs = bit_inputs;
        let others = contexts + self.bit_inputs + self.direct.count();
        // The configured families are the order contexts, then (with
        // `word`, from revision 2 on) the text family: `registry.rs`.
        let text_first = (configured && self.config.word && self.config.revision >= 2)
            .then(|| families.first().map_or(0, |f| f.contexts()));
        // Revision 38 (4.49.2): a detected 24/32-bit image's first 28 contexts.
        self.confidence = self
            .imgmix38_confidence(configured, contexts, most - others.min(most))
            .or_else(|| self.kindmix_confidence(contexts, most - others.min(most)))
            .unwrap_or_else(|| {
                confidence_contexts(
                    self.config.revision,
                    configured,
                    contexts,
                    text_first,
                    most - others.min(most),
                )
            });
        let used = others + self.confidence.len();
        let runs = if (configured || self.kindmix_runs()) && self.config.since(8) {
            REV8_RUNS.min(contexts).min(most - used.min(most))
        } else {
            0
        };
        self.runs = (runs > 0).then(|| RunMap::new(RUN_BITS, runs));
        // Revision 42 (4.53.2): the run slots' inputs chosen by a measure.
        self.mix42_install(configured, contexts);
        let inputs = used + runs;
        self.ctx12 = (configured && self.config.since(12))
            .then(|| ctxinputs::CtxInputs::new(contexts, most - inputs.min(most)))
            .flatten();
        let inputs = inputs + self.ctx12.as_ref().map_or(0, |c| c.len());
        assert!(
            inputs <= most,
            "CM revision {}: {inputs} mixer inputs, at most {most}",
            self.config.revision
        );
        // Revision 7 (4.18.1): the final layer's set by partial byte, and
        // rounded first-layer updates.
        // Revision 30 (4.41.1): a configured family's final sets.
        let final_sets = match self.mix30_final(&families, configured) {
            Some(n) => n,
            None if self.text_mix => 256,
            None => 8,
        };
        // Revision 36 (4.47.1): an image's by channel and bit.
        let final_sets = self.imgmix36_final_sets(final_sets, configured);
        self.mixer = Mixer2::new(inputs, &chosen, final_sets, 6, 2);
        self.mixer.set_rounded(self.text_mix);
        if self.text_mix && self.config.since(9) {
            // Revision 9 (4.20.1): rates in quarter units, higher for the
            // sets trained least.
            self.mixer
                .set_set_rates(REV9_SET_BOOST, REV9_SET_HALF, REV9_RATE_SHIFT);
        }
        // Revision 40 (4.51.4): an x86 block's rounded, per-set rates.
        self.kindmix40_mixer(configured);
        self.kindmix_weights();
        self.mix34_install(configured);
        self.imgmix36_install(configured);
        self.families = families;
        self.maps = (0..contexts).map(|_| StateMap::default()).collect();
        self.states = vec![0; contexts];
        self.hashes = vec![0; contexts];
        self.buckets = vec![0; contexts];
        self.nodes = vec![0; contexts];
    }

    /// Every family's context hashes for the byte at `pos`.
    fn context_hashes(&mut self, st: &CmStream, data: &[u8], pos: usize, vis: &dyn Visibility) {
        let ctx = ByteCtx { data, pos, st, vis };
        let mut out = &mut self.hashes[..];
        for f in &self.families {
            let (mine, rest) = out.split_at_mut(f.contexts());
            f.hashes(&ctx, mine);
            out = rest;
        }
        if let Some((k, _)) = self.byte_selector {
            self.byte_selector_ctx = self.families[k].selector(&ctx);
        }
        for &k in &self.bit_families {
            self.families[k].begin_byte(&ctx);
        }
        self.apm_byte = self.families.iter().find_map(|f| f.apm_byte(&ctx));
    }

    /// Sets the families' per-bit inputs, after the hashed contexts' ones.
    #[inline]
    fn set_bit_inputs(&mut self, c0: u32, i: u32) {
        let mut input = self.maps.len();
        let mut buf = [0i32; 16];
        for &k in &self.bit_families {
            let f = &mut self.families[k];
            let n = f.bit_inputs();
            f.predict_bit(c0, i, &mut buf[..n]);
            for &x in &buf[..n] {
                self.mixer.set(input, x);
                input += 1;
            }
        }
    }

    /// Loads every context's cache line at once: the misses overlap instead
    /// of queueing behind each lookup's compare and branch.
    #[inline]
    fn touch_all(&self, nibble: Option<u32>) {
        let mut acc = 0u8;
        for &h in &self.hashes {
            acc ^= self.table.touch(nibble.map_or(h, |c0| hash2(h, c0)));
        }
        std::hint::black_box(acc);
    }

    /// Cache hints a bit ahead (they change no value): starts loading what
    /// bit `i - 1` will read whichever way bit `i` (partial byte `c0`)
    /// goes: the APM rows of both possible partial bytes, what the per-bit
    /// families will read ([`ContextModel::prefetch_bit`]), and before the
    /// last bit of the first nibble every context's bucket line of both
    /// possible nibbles. `c1` and `h2` as for [`predict_bit`](Self::predict_bit).
    #[inline]
    fn prefetch_next_bit(&self, c0: u32, i: u32, c1: u32, h2: usize) {
        if i == 0 {
            return;
        }
        for next in [c0 << 1, c0 << 1 | 1] {
            self.prefetch_apms(next, i - 1, c1, h2);
            for &k in &self.bit_families {
                self.families[k].prefetch_bit(next, i - 1);
            }
            if i == 4 {
                for &h in &self.hashes {
                    self.table.prefetch(hash2(h, next));
                }
            }
        }
    }

    /// Before the last bit of byte `pos` (partial byte `c0`): starts
    /// loading the match models' hash slots of the next byte for both
    /// values the byte can take (a cache hint: changes nothing).
    #[inline]
    fn prefetch_next_match(&self, data: &[u8], start: usize, pos: usize, c0: u32) {
        for m in [self.matcher.as_ref(), self.matcher2.as_ref()]
            .into_iter()
            .flatten()
        {
            m.prefetch_next(data, start, pos, (c0 << 1) as u8);
            m.prefetch_next(data, start, pos, (c0 << 1 | 1) as u8);
        }
    }

    /// Starts loading the APM rows that bit `i` (partial byte `c0`) will
    /// read (a cache hint: changes nothing).
    #[inline]
    fn prefetch_apms(&self, c0: u32, i: u32, c1: u32, h2: usize) {
        self.apms.prefetch(c0, self.apm_byte.unwrap_or(c1), h2);
        if let Some(f) = self.final_sse.as_ref() {
            f.prefetch(&self.final_byte, c0);
        }
        if let Some(sse) = self.sse.as_ref() {
            sse.prefetch(&self.sse_byte, c0, i);
        }
    }

    /// Finds every context's bucket for the nibble that starts now (`c0`:
    /// the partial byte, `None` at the byte's start).
    #[inline]
    fn find_buckets(&mut self, nibble: Option<u32>) {
        self.touch_all(nibble);
        for (b, &h) in self.buckets.iter_mut().zip(&self.hashes) {
            *b = self.table.bucket(nibble.map_or(h, |c0| hash2(h, c0)));
        }
    }

    /// Sets the inputs of [`DirectInputs`] for bit `i` (partial byte `c0`)
    /// after the hashed contexts' ones; returns the match selector's context.
    #[inline]
    fn set_direct_inputs(
        &mut self,
        st: &mut CmStream,
        c0: u32,
        i: u32,
        neural: Option<&FreqTable>,
    ) -> (usize, usize) {
        let mut input =
            self.maps.len() + self.bit_inputs + self.ctx12.as_ref().map_or(0, |c| c.len());
        self.mixer.set(input, stretch(self.order0.p(c0 as usize)));
        input += 1;
        let mut match_sel = 0;
        for (m, ms) in [
            (self.matcher.as_ref(), &mut st.matcher),
            (self.matcher2.as_ref(), &mut st.matcher2),
        ] {
            if let Some(m) = m {
                let x = m.input(ms, c0, i);
                self.mixer.set(input, x);
                input += 1;
                if x != 0 && match_sel == 0 {
                    match_sel = 1 + (ms.len().min(31) << 1) + usize::from(x > 0);
                }
            }
        }
        if let Some(table) = neural {
            self.mixer.set(input, neural_input(table, c0, i));
            input += 1;
        }
        let mut serial_sel = 0;
        if let Some(s) = self.serial.as_mut() {
            let mut x = [0; SerialInput::INPUTS];
            serial_sel = s.inputs(c0, i, &mut x);
            for x in x {
                self.mixer.set(input, x);
                input += 1;
            }
        }
        self.mixer.set(input, 256);
        debug_assert_eq!(
            input + 1 + self.confidence.len() + self.run_inputs(),
            self.mixer.inputs(),
            "declared inputs"
        );
        (match_sel, serial_sel)
    }

    /// Sets the confidence inputs (doc/FORMAT.md 4.16.1), after every other
    /// input: for each chosen context, its state map's stretched
    /// probability if its bit history is deterministic, else 0.
    #[inline]
    fn set_confidence_inputs(&mut self) {
        let first = self.mixer.inputs() - self.confidence.len() - self.run_inputs();
        for k in 0..self.confidence.len() {
            let s = self.states[self.confidence[k]];
            let x = confidence_input(&self.maps[self.confidence[k]], s);
            self.mixer.set(first + k, x);
        }
    }

    /// The probability that bit `i` is 1 (`c0`: the partial byte, `nib`: its
    /// position in the nibble's bucket, `c1`: the previous byte, `h2`: a hash
    /// of the last two bytes).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn predict_bit(
        &mut self,
        st: &mut CmStream,
        c0: u32,
        nib: usize,
        i: u32,
        c1: u32,
        h2: usize,
        neural: Option<&FreqTable>,
    ) -> u32 {
        let mut hits = 0;
        let lane = self.mixer.lane();
        for ((((x, map), &b), node), state) in lane
            .iter_mut()
            .zip(&self.maps)
            .zip(&self.buckets)
            .zip(self.nodes.iter_mut())
            .zip(self.states.iter_mut())
        {
            *node = b + nib - 1;
            let s = self.table.state(*node);
            *state = s;
            hits += usize::from(s != 0);
            *x = map.stretched(s) as i16;
        }
        if self.bit_inputs > 0 {
            self.set_bit_inputs(c0, i);
        }
        if let Some(c) = self.ctx12.as_ref() {
            let first = self.maps.len() + self.bit_inputs;
            c.set_inputs(&self.maps, &self.states, &mut self.mixer, first);
        }
        let (match_sel, serial_sel) = self.set_direct_inputs(st, c0, i, neural);
        if !self.confidence.is_empty() {
            self.set_confidence_inputs();
        }
        if let Some(r) = self.runs.as_mut() {
            let mut buf = [0i32; REV8_RUNS];
            let n = r.contexts();
            r.inputs(c0, i, &mut buf[..n]);
            let first = self.mixer.inputs() - n;
            for (k, &x) in buf[..n].iter().enumerate() {
                self.mixer.set(first + k, x);
            }
        }
        // Revision 42 (4.53.2): or more confidence inputs in those slots.
        self.mix42_inputs();
        let third = match self.byte_selector {
            Some(_) => self.byte_selector_ctx * 8 + i as usize,
            None => c1 as usize,
        };
        let contexts = [match_sel, c0 as usize, third, hits * 8 + i as usize];
        let mut k = 0;
        for (j, &ctx) in contexts.iter().enumerate() {
            if self.selectors & (1 << j) != 0 {
                self.mixer.select(k, ctx);
                k += 1;
            }
        }
        // In the order `install` chose them: the serial network's, then
        // revision 2's byte before the last.
        if self.serial.as_ref().is_some_and(|s| s.has_selector()) {
            self.mixer.select(k, serial_sel);
            k += 1;
        }
        if let Some(f) = self.kind_selector {
            // Revision 16 (4.27.2): the kind's selector.
            self.mixer.select(k, self.families[f].kind_selector(c0, i));
            k += 1;
            if self.kind_selector2.is_some() {
                // Revision 18 (4.29.2): the kind's second selector.
                self.mixer.select(k, self.families[f].kind_selector2(c0, i));
                k += 1;
            }
            if self.kind_more > 0 {
                // Revision 22 (4.33.2): the kind's further selectors.
                let mut ctx = [0usize; KIND_MORE_MAX];
                let ctx = &mut ctx[..self.kind_more];
                self.families[f].kind_selectors_more_ctx(c0, i, ctx);
                for &c in ctx.iter() {
                    self.mixer.select(k, c);
                    k += 1;
                }
            }
        } else {
            if self.extra_selectors {
                self.mixer.select(k, self.sse_byte.c2 as usize);
                k += 1;
            }
            if self.config.revision >= 4 {
                self.mixer.select(k, self.classes * 8 + i as usize);
                k += 1;
            }
            if self.config.since(6) {
                // The classes of the last two bytes with the partial byte.
                self.mixer.select(k, (self.classes >> 4) << 8 | c0 as usize);
                k += 1;
            }
        }
        if self.text_mix && self.config.since(8) {
            // The longest order context seen, with the partial byte.
            let longest = self.states[..self.order_contexts]
                .iter()
                .rposition(|&s| s != 0)
                .map_or(0, |j| j + 1);
            self.mixer.select(k, longest << 8 | c0 as usize);
            k += 1;
        }
        self.mix28_select(k, c0, i);
        self.mix30_select(c0, i);
        self.mix38_select(c0);
        if self.text_mix {
            let set = match self.final_selector {
                Some(f) => self.families[f].final_selector(c0),
                None => c0 as usize,
            };
            self.mixer.select_final(set);
        } else {
            // Revision 36 (4.47.1): an image's by channel and bit.
            self.mixer.select_final(self.imgmix36_final(i));
        }
        let d = self.mixer.mix();
        let pm = self.mixer.last();
        // Revision 34 (4.45.1): a second final layer.
        let (d, pm) = self.mix34_layer2(d, pm, i, c1);
        let (d, pm) = self.kindmix36_layer2(d, pm, i);
        // Revision 36 (4.47.1): a detected image's second final layer.
        let (d, pm) = self.imgmix36_layer2(d, pm, c0, i);
        let pa = self.apms.refine(pm, d, c0, self.apm_byte.unwrap_or(c1), h2);
        let ps = match self.sse.as_mut() {
            Some(sse) => sse.refine(pa, &self.sse_byte, c0, i),
            None => pa,
        };
        let p = match self.final_sse.as_mut() {
            Some(f) if self.text_mix => f.refine(ps, &self.final_byte, c0),
            _ => self.kindmix_refine(ps, c0),
        };
        // Revision 34 (4.45.1): the learned mix of the stages.
        let p = self.mix34_refine(d, [pa, ps, p], c0, i);
        let p = self.kindmix36_refine(d, [pa, ps, p], c0, i);
        if !self.config.since(12) {
            return p;
        }
        // Revision 12: the families' last refinement (identity but for the
        // bi-level family, doc/FORMAT.md 4.23.6).
        let families = &mut self.families;
        let p = self
            .bit_families
            .iter()
            .fold(p, |p, &k| families[k].refine_final(p, c0));
        // Revision 36 (4.47.1): a detected image's refinement.
        self.imgmix36_refine(p, c0)
    }

    /// Trains everything [`predict_bit`](Self::predict_bit) used on `bit`.
    #[inline]
    fn update_bit(&mut self, st: &mut CmStream, c0: u32, bit: u32) {
        for ((map, &node), &s) in self.maps.iter_mut().zip(&self.nodes).zip(&self.states) {
            map.update(s, bit, 1023);
            self.table.set(node, STATES.next(s, bit));
        }
        for &k in &self.bit_families {
            self.families[k].update_bit(bit);
        }
        self.order0.update(c0 as usize, bit);
        if let Some(m) = self.matcher.as_mut() {
            m.update(&mut st.matcher, bit);
        }
        if let Some(m) = self.matcher2.as_mut() {
            m.update(&mut st.matcher2, bit);
        }
        if let Some(s) = self.serial.as_mut() {
            s.update_bit(bit);
        }
        self.mixer.update(bit);
        self.apms.update(bit);
        if let Some(sse) = self.sse.as_mut() {
            sse.update(bit);
        }
        if let Some(f) = self.final_sse.as_mut()
            && self.text_mix
        {
            f.update(bit);
        }
        self.kindmix_update(bit);
        self.mix34_update(bit);
        self.kindmix36_update(bit);
        self.imgmix36_update(bit);
        if let Some(r) = self.runs.as_mut() {
            r.update(bit);
        }
    }

    /// How many run inputs the mixer has (revision 8).
    #[inline]
    fn run_inputs(&self) -> usize {
        self.runs.as_ref().map_or(0, |r| r.contexts())
    }

    /// Codes (or decodes) the byte at `pos` of the stream with history `st`,
    /// writes it to `data[pos]` and returns it. `neural` is the network's
    /// distribution for this byte (required iff the model was built with a
    /// neural input).
    pub fn code_byte<C: Coder, V: Visibility>(
        &mut self,
        coder: &mut C,
        st: &mut CmStream,
        data: &mut [u8],
        pos: usize,
        vis: &V,
        neural: Option<&FreqTable>,
    ) -> u8 {
        debug_assert_eq!(neural.is_some(), self.neural_input, "neural input mismatch");
        // Revision 4's match contexts hash the match model's expected
        // byte: the match models look for this byte's match first.
        let early = self.config.revision >= 4;
        if !early {
            self.context_hashes(st, data, pos, vis);
        }
        if let Some(m) = self.matcher.as_mut() {
            m.begin_byte(&mut st.matcher, data, st.start, pos, vis);
        }
        if let Some(m) = self.matcher2.as_mut() {
            m.begin_byte(&mut st.matcher2, data, st.start, pos, vis);
        }
        // Revision 9 (doc/FORMAT.md 4.20.6): in a long match, first the
        // event "the byte is the expected one"; a hit skips the bits.
        let trigger = self.skip.as_mut().and_then(|s| {
            s.trigger(
                self.matcher.is_some().then_some(&st.matcher),
                self.matcher2.is_some().then_some(&st.matcher2),
                data,
                pos,
                vis,
                st.record.len as usize,
            )
        });
        let mut excluded = None;
        if let Some(t) = trigger
            && t.coded
        {
            let hit = coder.code_bit(u32::from(data[pos] == t.expected), t.p) == 1;
            if let Some(s) = self.skip.as_mut() {
                s.update(hit, true);
            }
            if hit {
                return self.skip_byte(st, data, pos, vis, t.expected);
            }
            excluded = Some(t.expected);
        }
        if early {
            self.context_hashes(st, data, pos, vis);
        }
        if let Some(r) = self.runs.as_mut() {
            r.begin_byte(&self.hashes);
        }
        let byte = u32::from(data[pos]);
        let c1 = st.c4 & 0xFF;
        let c2 = (st.c4 >> 8) & 0xFF;
        if self.sse.is_some() {
            // Revision 2 learns faster at the start of a stream: the
            // first layer's rate decays from 16 towards 6 (11 at 16 KiB).
            let n = (pos - st.start).min(1 << 30) as i32;
            if self.text_mix && self.config.since(9) {
                // Revision 9 (4.20.1): a lower floor, in quarter units;
                // revision 22 (4.33.3): a smaller extra rate at the start.
                let extra = if self.config.since(22) {
                    REV22_RATE_EXTRA
                } else {
                    REV9_RATE_EXTRA
                };
                self.mixer
                    .set_rates(REV9_RATE_FLOOR + extra * 16384 / (16384 + n), 2);
            } else if let Some(lr) = self.kindmix40_rate(n) {
                // Revision 40 (4.51.4): an x86 block's rate.
                self.mixer.set_rates(lr, 2);
            } else {
                self.mixer.set_rates(6 + 10 * 16384 / (16384 + n), 2);
            }
            let m = &st.matcher;
            self.sse_byte = SseByte {
                word: hash2(st.words.word, c1),
                expected: m.expected_byte().map_or(0, |b| 0x100 | u32::from(b)),
                len: m.len().min(15) as u32,
                c2,
            };
        }
        let h2 = (hash2(c1, c2 | 0x1_0000) >> 24) as usize;
        if self.final_sse.is_some() {
            let c3 = (st.c4 >> 16) & 0xFF;
            let o2 = hash2(c1 | 0x200, c2);
            self.final_byte = FinalByte {
                hashes: [o2, hash2(o2, c3 | 0x300), hash2(st.words.word ^ 0x400, c1)],
            };
        }
        self.kindmix_begin_byte(st.c4);
        self.kindmix36_begin_byte(c1);
        self.imgmix36_begin_byte(st, data, pos, vis);
        self.mix28_begin_byte(st);
        self.mix38_begin_byte(st.c4);
        // The first bit's APM rows load while the buckets are found.
        self.prefetch_apms(1, 7, c1, h2);
        self.find_buckets(None);
        if let Some(s) = self.serial.as_mut() {
            s.begin_byte();
        }
        if self.config.revision >= 4 {
            let class = |b: u32| text::class(b as u8) as usize;
            self.classes = class(c1) << 8 | class(c2) << 4 | class(st.c4 >> 16);
        }
        let mut c0 = 1u32;
        let mut nib = 1usize;
        for i in (0..8).rev() {
            if i == 3 {
                self.find_buckets(Some(c0));
                nib = 1;
            }
            self.prefetch_next_bit(c0, i, c1, h2);
            if i == 0 {
                self.prefetch_next_match(data, st.start, pos, c0);
            }
            let p = self.predict_bit(st, c0, nib, i, c1, h2, neural);
            let bit = match (excluded, self.skip.as_mut()) {
                // Revision 9 (4.20.6): the byte is not `e`; while its bits
                // are `e`'s, the exclusion APM refines, and the last bit is
                // the other one.
                (Some(e), Some(s)) if (u32::from(e) | 0x100) >> (i + 1) == c0 => {
                    if i == 0 {
                        u32::from(e & 1 == 0)
                    } else {
                        let bit = coder.code_bit((byte >> i) & 1, s.exclude(p, i, e));
                        s.exclude_update(bit);
                        bit
                    }
                }
                _ => coder.code_bit((byte >> i) & 1, p),
            };
            self.update_bit(st, c0, bit);
            c0 = (c0 << 1) | bit;
            nib = (nib << 1) | bit as usize;
        }
        let b = (c0 & 0xFF) as u8;
        data[pos] = b;
        if let Some(t) = trigger
            && !t.coded
            && let Some(s) = self.skip.as_mut()
        {
            s.update(b == t.expected, false);
        }
        if let Some(r) = self.runs.as_mut() {
            r.end_byte(b);
        }
        if let Some(s) = self.serial.as_mut() {
            s.end_byte(b);
        }
        self.end_byte(st, data, pos, b)
    }
}

impl Cm {
    /// Revision 9 (doc/FORMAT.md 4.20.6): the byte at `pos` is `b`, coded
    /// by the shortcut alone. Only what tracks the stream byte by byte sees
    /// it: the per-bit families' byte state, the stream's history, every
    /// family's `observe` and the detector; no context is looked up or
    /// trained.
    fn skip_byte<V: Visibility>(
        &mut self,
        st: &mut CmStream,
        data: &mut [u8],
        pos: usize,
        vis: &V,
        b: u8,
    ) -> u8 {
        if !self.bit_families.is_empty() {
            let ctx = ByteCtx { data, pos, st, vis };
            for &k in &self.bit_families {
                self.families[k].begin_byte(&ctx);
            }
        }
        data[pos] = b;
        if let Some(m) = self.matcher.as_mut() {
            m.learn_byte(&mut st.matcher, b);
        }
        if let Some(m) = self.matcher2.as_mut() {
            m.learn_byte(&mut st.matcher2, b);
        }
        self.end_byte(st, data, pos, b)
    }

    /// What every coded byte `b` at `pos` ends with, coded bit by bit or by
    /// revision 9's shortcut: the stream's history, every family's
    /// `observe`, and the detector, which may install a kind's families.
    fn end_byte(&mut self, st: &mut CmStream, data: &[u8], pos: usize, b: u8) -> u8 {
        self.mix42_end_byte(b);
        st.observe(data, pos, b);
        for f in &mut self.families {
            f.observe(data, pos, b);
        }
        if let Some(d) = self.detector.as_mut()
            && let Some(kind) = d.observe(pos, b).or_else(|| {
                (st.start == 0)
                    .then(|| {
                        d.observe_statistics(pos, b, st.record.len)
                            .or_else(|| d.observe_floats(data, pos))
                    })
                    .flatten()
            })
        {
            self.kindmix_detected(&kind);
            self.kindmix40_detected(&kind);
            self.imgmix36_detected(&kind);
            self.install(kind_families(kind, &self.config), false);
            self.kindmix36_install(&kind);
        }
        b
    }

    /// Bytes that revision 9's shortcut (doc/FORMAT.md 4.20.6) coded alone,
    /// skipping the per-bit models, since the model was built.
    pub fn skipped_bytes(&self) -> u64 {
        self.skip.as_ref().map_or(0, Shortcut::skipped)
    }
}

/// Revision 8 (doc/FORMAT.md 4.19.1): how many of the first configured
/// contexts get a run input, and log2 of the run map's slots.
const REV8_RUNS: usize = 12;
pub(crate) const RUN_BITS: u32 = 22;

/// Revision 9 (doc/FORMAT.md 4.20.1): the first-layer rate of the
/// configured families' mixer after `n` bytes is `(FLOOR + EXTRA * 16384 /
/// (16384 + n) + BOOST * HALF / (HALF + count)) / 2^SHIFT`, `count` the
/// chosen set's updates so far.
const REV9_RATE_FLOOR: i32 = 8;
const REV9_RATE_EXTRA: i32 = 40;
const REV9_SET_BOOST: i32 = 32;
const REV9_SET_HALF: i32 = 256;
const REV9_RATE_SHIFT: u32 = 2;

/// Revision 22 (doc/FORMAT.md 4.33.3): the configured families' mixer
/// starts every first-layer weight that revision 4 starts at 2000 at this
/// instead (16384 = 1.0), and its first-layer rate's extra part at the
/// start of a stream is this (revision 9: [`REV9_RATE_EXTRA`]).
const REV22_INITIAL_WEIGHT: i16 = 500;
const REV22_RATE_EXTRA: i32 = 20;

/// Revision 8: the longest-order selector looks at this many order
/// contexts; its sets are `(orders + 1) * 256`.
const REV8_LONGEST_ORDERS: usize = 8;
const REV8_LONGEST_SETS: usize = (REV8_LONGEST_ORDERS + 1) * 256;

/// Revision 8: log2 of the final APM stage's hashed contexts, and the
/// weight of its input in its output's average.
pub(crate) const FINAL_APM_BITS: u32 = 10;
const FINAL_APM_KEEP: u32 = 1;

/// Revision 5 and up: the first-layer weight a confidence input starts
/// with (doc/FORMAT.md 4.16.1).
const CONFIDENCE_INITIAL_WEIGHT: i16 = 0;

/// The hashed contexts (indices into the mixer's inputs) that get a
/// confidence input at `revision` (doc/FORMAT.md 4.16.1, 4.17.1), in
/// input order, at most `room`: none before revision 5 or for a detected
/// kind's families (`configured` false); revision 5 the first order
/// context (order 1 of the presets) and the text family's first context
/// (`text`: its first index, if installed); revision 6 the first two
/// order contexts and all of the text family's.
fn confidence_contexts(
    revision: u8,
    configured: bool,
    contexts: usize,
    text: Option<usize>,
    room: usize,
) -> Vec<usize> {
    if revision < 5 || !configured || contexts == 0 {
        return Vec::new();
    }
    let orders = if config::revision_has(revision, 6) {
        2
    } else {
        1
    };
    let texts = if config::revision_has(revision, 6) {
        text::TEXT_CONTEXTS
    } else {
        1
    };
    let (order_end, text) = text.map_or((contexts, 0..0), |t| (t, t..t + texts));
    (0..orders.min(order_end))
        .chain(text)
        .filter(|&j| j < contexts)
        .take(room)
        .collect()
}

/// A context's confidence input (doc/FORMAT.md 4.16.1) in state `s`: its
/// stretched probability when its bit history is deterministic (only
/// zeros or only ones seen, at least one bit), else 0.
#[inline]
fn confidence_input(map: &StateMap, s: u8) -> i32 {
    if s == 0 {
        return 0;
    }
    let (n0, n1) = STATES.counts(s);
    if n0 == 0 || n1 == 0 {
        map.stretched(s)
    } else {
        0
    }
}

/// The neural distribution's probability that bit `i` of the byte is 1,
/// given the bits so far (`c0`, leading 1), stretched. Integer throughout:
/// the masses are differences of the quantised cumulative frequencies.
#[inline]
pub(crate) fn neural_input(table: &FreqTable, c0: u32, i: u32) -> i32 {
    let depth = 7 - i;
    let prefix = c0 ^ (1 << depth);
    let lo = prefix << (i + 1);
    let mid = lo + (1 << i);
    let hi = lo + (2 << i);
    let (c_lo, c_mid, c_hi) = (
        table.cum(lo as usize),
        table.cum(mid as usize),
        table.cum(hi as usize),
    );
    let m0 = u64::from(c_mid - c_lo);
    let m1 = u64::from(c_hi - c_mid);
    let p = ((m1 << 16) / (m0 + m1).max(1)).clamp(1, 65535) as u32;
    stretch(p)
}

#[cfg(test)]
mod tests;
