//! [`SeConfig`]: the semantics enhancement's hyperparameters and their limits
//! (their archive form is `sep::params`'s).

use crate::{Body, BodySpec, PacConfig, PatchTstConfig, TraceConfig};
use sep_nn::Rng;

/// How the patches are gated: doc/SEP-DESIGN.md section 4, step 3 (adaptive stride).
#[derive(Debug, Clone, Copy)]
pub enum Adaptive {
    /// No gate: every patch of the fixed stride is used.
    Off,
    /// The reference code's soft gate. A patch (or, with `per_element`, each value of
    /// each patch of each stream) is multiplied by `g = sigmoid((u - threshold) *
    /// slope)`, where `u = sigmoid(m)` of a learned score `m`, or `u = 1` for the forced
    /// patches (`n % keep_every == 0`; none when `keep_every` is 0). Nothing is skipped.
    Soft {
        /// One score per stream, patch and feature (the reference's SEP+TRACE and
        /// SEP+PatchTST) instead of one per patch (its SEP+PAC).
        per_element: bool,
        /// Patch `n` is forced on when `n % keep_every == 0` (0: no patch is forced).
        keep_every: u8,
        /// The gate's centre, in `(0, 1)` (0.5).
        threshold: f32,
        /// The gate's steepness, in `(0, 1000]` (10 or 64 in the reference).
        slope: f32,
    },
    /// The paper's hard threshold. Patch `n` has a learned score `m_n` (initially 1);
    /// it is kept when forced (`n % keep_every == 0`) or when `u_n = sigmoid(m_n) >=
    /// threshold`, and then weighted by `u_n` (forced patches by 1); the other patches
    /// are skipped: they cost nothing, forward or backward, and their scores get no
    /// gradient. `sparsity` adds `sparsity * u_n` per kept unforced patch to the loss,
    /// pushing scores down.
    Hard {
        /// Patch `n` is always kept when `n % keep_every == 0` (0: none).
        keep_every: u8,
        /// Scores below this gate value skip their patch, in `(0, 1)` (0.5).
        threshold: f32,
        /// L1 pressure on the kept gates, in `[0, 1]`.
        sparsity: f32,
    },
}

impl PartialEq for Adaptive {
    fn eq(&self, other: &Self) -> bool {
        self.code() == other.code() && self.fields() == other.fields()
    }
}

impl Eq for Adaptive {}

impl Adaptive {
    /// The `adaptive` byte: 0 off, 1 soft, 2 hard.
    pub fn code(&self) -> u8 {
        match self {
            Adaptive::Off => 0,
            Adaptive::Soft { .. } => 1,
            Adaptive::Hard { .. } => 2,
        }
    }

    /// The command-line name.
    pub fn name(&self) -> &'static str {
        match self {
            Adaptive::Off => "off",
            Adaptive::Soft { .. } => "soft",
            Adaptive::Hard { .. } => "hard",
        }
    }

    /// `(mask, keep_every, threshold bits, slope bits, sparsity bits)`: every
    /// value, for equality (floats compared by their bits).
    fn fields(&self) -> (u8, u8, u32, u32, u32) {
        match *self {
            Adaptive::Off => (0, 0, 0, 0, 0),
            Adaptive::Soft {
                per_element,
                keep_every,
                threshold,
                slope,
            } => (
                u8::from(per_element),
                keep_every,
                threshold.to_bits(),
                slope.to_bits(),
                0,
            ),
            Adaptive::Hard {
                keep_every,
                threshold,
                sparsity,
            } => (0, keep_every, threshold.to_bits(), 0, sparsity.to_bits()),
        }
    }

    /// Whether patch `n` is forced on.
    pub(crate) fn forced(&self, n: usize) -> bool {
        let k = match *self {
            Adaptive::Off => return true,
            Adaptive::Soft { keep_every, .. } | Adaptive::Hard { keep_every, .. } => keep_every,
        };
        k != 0 && n.is_multiple_of(usize::from(k))
    }
}

/// The backbone body behind the semantics enhancement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeBody {
    /// PAC's body ([`PacBody`]): the SE's `T` tokens, flattened, are its `L * E` features.
    Pac(PacConfig),
    /// TRACE's body ([`TraceBody`]): the SE's tokens are its `L / G` tokens of `G * E`.
    Trace(TraceConfig),
    /// PatchTST's body ([`PatchTstBody`]), likewise.
    PatchTst(PatchTstConfig),
}

impl SeBody {
    /// The body's configuration behind its [`BodySpec`]: the one place a body is
    /// registered.
    pub fn spec(&self) -> &dyn BodySpec {
        match self {
            SeBody::Pac(c) => c,
            SeBody::Trace(c) => c,
            SeBody::PatchTst(c) => c,
        }
    }

    /// The body's backbone id (doc/FORMAT.md): 1 PAC, 2 TRACE, 3 PatchTST.
    pub fn id(&self) -> u8 {
        self.spec().id()
    }

    fn validate(&self) -> Result<(), String> {
        self.spec().validate()
    }

    /// `(tokens, width)` the body reads; PAC reads one vector.
    pub fn input_shape(&self) -> (usize, usize) {
        self.spec().input_shape()
    }

    /// The body's forward multiply-adds per row.
    pub fn forward_macs(&self) -> u64 {
        self.spec().forward_macs()
    }

    /// Memory of the whole plain backbone (an upper bound for its body).
    pub fn memory_bytes(&self, streams: usize) -> u64 {
        self.spec().memory_bytes(streams)
    }

    /// Builds the body for up to `streams` streams, drawing from `rng`.
    pub fn build(&self, streams: usize, rng: &mut Rng) -> Box<dyn Body> {
        self.spec().build_body(streams, rng)
    }

    /// The backbone's name.
    pub fn name(&self) -> &'static str {
        self.spec().name()
    }

    fn describe(&self) -> String {
        self.spec().describe()
    }
}

/// Semantics-enhancement hyperparameters (doc/SEP-DESIGN.md section 4) with the body they feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeConfig {
    /// Context bytes `L` (64; 48 for SEP+PAC).
    pub context: u16,
    /// Patch window `P` in bytes (4; 16 for SEP+PAC).
    pub patch: u8,
    /// Stride `S` between patches, `1..=P` (1).
    pub stride: u8,
    /// Features per byte `D` (64; 16 for SEP+PAC).
    pub embed: u16,
    /// When set, half of `D` is sinusoidal position features and half is learned (the
    /// reference's SEP+TRACE); `D` must then be a multiple of 4.
    pub positions: bool,
    /// When set, the patch-axis map starts as a selection of the newest patches that
    /// do not overlap (token `t` = patch `N - 1 - (T - 1 - t) * ceil(P / S)`, weight 1,
    /// every other weight and the bias 0), so that the SE starts as its body would see
    /// the newest `T * P` bytes, and learns from there what older patches add. Off (the
    /// reference's random map), the map is drawn at random.
    pub newest_init: bool,
    /// Tokens `T` the patch axis is mapped to (1 for PAC, 4 for TRACE, 8 for PatchTST).
    pub tokens: u16,
    /// The adaptive stride.
    pub adaptive: Adaptive,
    /// The body; its input must be `T` tokens of `P * D` features.
    pub body: SeBody,
}

/// The largest `N * P * D` of the per-element soft mask (per stream).
pub const MAX_ELEMENT_MASK: usize = 1 << 16;

impl SeConfig {
    /// Number of patches `N = (L - P) / S + 1`.
    pub fn patches(&self) -> usize {
        (usize::from(self.context) - usize::from(self.patch)) / usize::from(self.stride) + 1
    }

    /// Bytes before the first patch, `o = (L - P) mod S`: patches are aligned to the
    /// newest byte, so the last patch always ends at it.
    pub fn offset(&self) -> usize {
        (usize::from(self.context) - usize::from(self.patch)) % usize::from(self.stride)
    }

    /// Features per token `F = P * D`.
    pub fn features(&self) -> usize {
        usize::from(self.patch) * usize::from(self.embed)
    }

    /// Checks the limits of doc/FORMAT.md.
    pub fn validate(&self) -> Result<(), String> {
        let (l, p, s, d, t) = (
            usize::from(self.context),
            usize::from(self.patch),
            usize::from(self.stride),
            usize::from(self.embed),
            usize::from(self.tokens),
        );
        if !(1..=256).contains(&l) {
            return Err(format!("SE context {l} outside 1..=256"));
        }
        if !(1..=l).contains(&p) {
            return Err(format!("SE patch {p} outside 1..=context ({l})"));
        }
        if !(1..=p).contains(&s) {
            return Err(format!("SE stride {s} outside 1..=patch ({p})"));
        }
        if !(1..=256).contains(&d) || p * d > 4096 {
            return Err(format!(
                "SE embed {d}: must be in 1..=256 with patch x embed <= 4096"
            ));
        }
        if self.positions && !d.is_multiple_of(4) {
            return Err(format!(
                "SE embed {d} must be a multiple of 4 with position features"
            ));
        }
        if !(1..=256).contains(&t) {
            return Err(format!("SE tokens {t} outside 1..=256"));
        }
        match self.adaptive {
            Adaptive::Off => {}
            Adaptive::Soft {
                per_element,
                threshold,
                slope,
                ..
            } => {
                check_threshold(threshold)?;
                if !(slope > 0.0 && slope <= 1000.0) {
                    return Err(format!("SE slope {slope} outside (0, 1000]"));
                }
                if per_element && self.patches() * self.features() > MAX_ELEMENT_MASK {
                    return Err(format!(
                        "SE per-element mask of {} patches x {} features exceeds {MAX_ELEMENT_MASK} per stream",
                        self.patches(),
                        self.features()
                    ));
                }
            }
            Adaptive::Hard {
                threshold,
                sparsity,
                ..
            } => {
                check_threshold(threshold)?;
                if !(0.0..=1.0).contains(&sparsity) {
                    return Err(format!("SE sparsity {sparsity} outside [0, 1]"));
                }
            }
        }
        self.body.validate()?;
        let (bt, bw) = self.body.input_shape();
        let f = self.features();
        let fits = match self.body {
            SeBody::Pac(_) => t * f == bw,
            _ => t == bt && f == bw,
        };
        if !fits {
            return Err(format!(
                "SE makes {t} tokens of {f} (patch x embed) but the {} body reads {bt} of {bw}",
                self.body.name()
            ));
        }
        Ok(())
    }

    /// Forward multiply-adds per predicted byte with every patch kept (the patch map and
    /// the body).
    pub fn forward_macs(&self) -> u64 {
        (usize::from(self.tokens) * self.patches() * self.features()) as u64
            + self.body.forward_macs()
    }

    /// Bytes of parameters and activations for `streams` streams.
    pub fn memory_bytes(&self, streams: usize) -> u64 {
        let (l, d, n, t, f, s) = (
            u64::from(self.context),
            u64::from(self.embed),
            self.patches() as u64,
            u64::from(self.tokens),
            self.features() as u64,
            streams as u64,
        );
        let mask = match self.adaptive {
            Adaptive::Soft {
                per_element: true, ..
            } => s * n * f * (4 + 2),
            _ => n * 4,
        };
        let params = 4 * (128 * d + t * n + t) + mask;
        let acts = s * (6 * l * d + 2 * n * f + 4 * t * f);
        4 * (params + acts) + self.body.memory_bytes(streams)
    }

    /// One line for listings.
    pub fn describe(&self) -> String {
        let gate = match self.adaptive {
            Adaptive::Off => "adaptive off".to_string(),
            Adaptive::Soft {
                per_element,
                keep_every,
                threshold,
                slope,
            } => format!(
                "adaptive soft (mask per {}, keep every {keep_every}, threshold {threshold}, slope {slope})",
                if per_element { "element" } else { "patch" }
            ),
            Adaptive::Hard {
                keep_every,
                threshold,
                sparsity,
            } => format!(
                "adaptive hard (keep every {keep_every}, threshold {threshold}, sparsity {sparsity})"
            ),
        };
        format!(
            "se (context {}, patch {}, stride {}, embed {}{}{}, {} patches -> {} tokens of {}, {gate}) + {}",
            self.context,
            self.patch,
            self.stride,
            self.embed,
            if self.positions {
                " with positions"
            } else {
                ""
            },
            if self.newest_init {
                ", newest-patch init"
            } else {
                ""
            },
            self.patches(),
            self.tokens,
            self.features(),
            self.body.describe()
        )
    }
}

impl crate::BackboneSpec for SeConfig {
    fn id(&self) -> u8 {
        4
    }

    fn name(&self) -> &'static str {
        "se"
    }

    fn context(&self) -> usize {
        self.context.into()
    }

    fn validate(&self) -> Result<(), String> {
        SeConfig::validate(self)
    }

    fn memory_bytes(&self, streams: usize) -> u64 {
        SeConfig::memory_bytes(self, streams)
    }

    fn forward_macs(&self) -> u64 {
        SeConfig::forward_macs(self)
    }

    fn describe(&self) -> String {
        SeConfig::describe(self)
    }

    fn build(&self, streams: usize, seed: u64) -> Box<dyn crate::Backbone> {
        Box::new(crate::Se::new(self, streams, seed))
    }
}

fn check_threshold(threshold: f32) -> Result<(), String> {
    if threshold > 0.0 && threshold < 1.0 {
        Ok(())
    } else {
        Err(format!("SE threshold {threshold} outside (0, 1)"))
    }
}
