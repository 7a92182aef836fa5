//! Experiment knobs ([`Knobs`]): another backbone, the semantics enhancement
//! on or off, its patch, stride, tokens and adaptive stride, applied to a
//! preset's network by [`NeuralConfig::with_knobs`].

use super::{
    Adaptive, BackboneConfig, NeuralConfig, PacConfig, PatchTstConfig, SeBody, SeConfig,
    TokenShape, TraceConfig,
};
use crate::preset::Preset;

/// A backbone family, for [`Knobs::backbone`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackboneKind {
    /// PAC (MLP).
    Pac,
    /// TRACE (linear attention).
    Trace,
    /// PatchTST (softmax attention, BatchNorm).
    PatchTst,
}

impl BackboneKind {
    /// Every kind, for listings.
    pub const ALL: [BackboneKind; 3] = [
        BackboneKind::Pac,
        BackboneKind::Trace,
        BackboneKind::PatchTst,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            BackboneKind::Pac => "pac",
            BackboneKind::Trace => "trace",
            BackboneKind::PatchTst => "patchtst",
        }
    }

    /// The kind with this command-line name.
    pub fn from_name(name: &str) -> Option<BackboneKind> {
        BackboneKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The kind of a backbone (of its body, behind the SE).
    pub fn of(b: &BackboneConfig) -> BackboneKind {
        match b {
            BackboneConfig::Pac(_)
            | BackboneConfig::Se(SeConfig {
                body: SeBody::Pac(_),
                ..
            }) => BackboneKind::Pac,
            BackboneConfig::Trace(_)
            | BackboneConfig::Se(SeConfig {
                body: SeBody::Trace(_),
                ..
            }) => BackboneKind::Trace,
            BackboneConfig::PatchTst(_)
            | BackboneConfig::Se(SeConfig {
                body: SeBody::PatchTst(_),
                ..
            }) => BackboneKind::PatchTst,
        }
    }

    /// The paper's size of this backbone, without SE.
    pub fn paper(self) -> BackboneConfig {
        match self {
            BackboneKind::Pac => BackboneConfig::Pac(PacConfig::PAPER),
            BackboneKind::Trace => BackboneConfig::Trace(TraceConfig::PAPER),
            BackboneKind::PatchTst => BackboneConfig::PatchTst(PatchTstConfig::PAPER),
        }
    }

    /// A size that runs at tens of KB/s on a CPU, without SE (PAC: the `default`
    /// preset's).
    pub fn cpu(self) -> BackboneConfig {
        match self {
            BackboneKind::Pac => NeuralConfig::preset(Preset::Default).backbone,
            BackboneKind::Trace => BackboneConfig::Trace(TraceConfig {
                shape: TokenShape {
                    context: 32,
                    embed: 16,
                    group: 4,
                    heads: 2,
                    ffn: 256,
                },
                passes: 2,
            }),
            BackboneKind::PatchTst => BackboneConfig::PatchTst(PatchTstConfig {
                shape: TokenShape {
                    context: 32,
                    embed: 16,
                    group: 4,
                    heads: 2,
                    ffn: 256,
                },
                layers: 1,
            }),
        }
    }
}

/// The adaptive-stride mode, for [`Knobs::adaptive`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdaptiveKind {
    /// Fixed stride.
    Off,
    /// The reference code's soft gate.
    Soft,
    /// The paper's hard threshold, skipping patches.
    Hard,
}

impl AdaptiveKind {
    /// Every kind.
    pub const ALL: [AdaptiveKind; 3] = [AdaptiveKind::Soft, AdaptiveKind::Hard, AdaptiveKind::Off];

    /// The kind's name (`off`, `soft`, `hard`).
    pub fn name(self) -> &'static str {
        match self {
            AdaptiveKind::Off => "off",
            AdaptiveKind::Soft => "soft",
            AdaptiveKind::Hard => "hard",
        }
    }

    /// The kind with this name.
    pub fn from_name(name: &str) -> Option<AdaptiveKind> {
        AdaptiveKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The gate of this kind for `s`: its current one if of this kind, else the
    /// reference's soft gate for its body (per patch, keep every 8th, slope 10 for PAC;
    /// per element, keep every `P`-th, slope 64 for TRACE and 10 for PatchTST), or a
    /// hard gate keeping every `P`-th patch (so the stride grows to at most `P`).
    pub fn default_for(self, s: &SeConfig) -> Adaptive {
        match (self, s.adaptive) {
            (AdaptiveKind::Off, _) => Adaptive::Off,
            (AdaptiveKind::Soft, a @ Adaptive::Soft { .. }) => a,
            (AdaptiveKind::Hard, a @ Adaptive::Hard { .. }) => a,
            (AdaptiveKind::Soft, _) => match s.body {
                SeBody::Pac(_) => Adaptive::Soft {
                    per_element: false,
                    keep_every: 8,
                    threshold: 0.5,
                    slope: 10.0,
                },
                SeBody::Trace(_) | SeBody::PatchTst(_) => Adaptive::Soft {
                    per_element: true,
                    keep_every: s.patch,
                    threshold: 0.5,
                    slope: if matches!(s.body, SeBody::Trace(_)) {
                        64.0
                    } else {
                        10.0
                    },
                },
            },
            (AdaptiveKind::Hard, _) => Adaptive::Hard {
                keep_every: s.patch,
                threshold: 0.5,
                sparsity: 0.0,
            },
        }
    }
}

/// Experiment knobs applied to a preset by [`NeuralConfig::with_knobs`]; `None` keeps
/// the preset's choice.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Knobs {
    /// Another backbone family.
    pub backbone: Option<BackboneKind>,
    /// Semantics enhancement on or off.
    pub se: Option<bool>,
    /// SE patch window `P` (the per-byte width changes so that `P * D` stays).
    pub patch: Option<u8>,
    /// SE stride `S`.
    pub stride: Option<u8>,
    /// SE adaptive stride.
    pub adaptive: Option<AdaptiveKind>,
    /// SE tokens `T` (the body follows).
    pub tokens: Option<u16>,
    /// The hard gate's sparsity pressure.
    pub sparsity: Option<f32>,
    /// SE map initialisation: the newest non-overlapping patches (`true`) or random
    /// as the reference (`false`); see [`SeConfig::newest_init`].
    pub newest_init: Option<bool>,
    /// Context bytes `L`.
    pub context: Option<u16>,
}

/// Why [`NeuralConfig::with_knobs`] refused a set of knobs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{why}", knob.map_or(String::new(), |k| format!("{}: ", k.name())))]
pub struct KnobError {
    /// The knob that made the network invalid, when one did, so that a caller
    /// can name its own way of setting it (the `sep` command names its flag).
    pub knob: Option<Knob>,
    /// What is wrong.
    pub why: String,
}

/// A field of [`Knobs`], as [`KnobError`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Knob {
    /// [`Knobs::context`].
    Context,
    /// [`Knobs::patch`].
    Patch,
    /// [`Knobs::tokens`].
    Tokens,
    /// [`Knobs::sparsity`].
    Sparsity,
    /// One of the SE's knobs without the SE.
    SeKnobs,
}

impl Knob {
    /// The field's name.
    pub fn name(self) -> &'static str {
        match self {
            Knob::Context => "context",
            Knob::Patch => "patch",
            Knob::Tokens => "tokens",
            Knob::Sparsity => "sparsity",
            Knob::SeKnobs => "patch, stride, adaptive, tokens, sparsity, newest_init",
        }
    }
}

impl KnobError {
    fn of(knob: Knob, why: impl Into<String>) -> Self {
        KnobError {
            knob: Some(knob),
            why: why.into(),
        }
    }
}

impl From<String> for KnobError {
    fn from(why: String) -> Self {
        KnobError { knob: None, why }
    }
}

/// The SE in front of `b`'s body, as the paper pairs them: for PAC (`L`, `E`), `3L`
/// bytes, patches of `L` bytes x `E` features, one token (the preset's PAC body);
/// for TRACE (`L`, `E`, `G`, `tk` tokens), `L` bytes, patches of `G` x `E` with
/// positions, `tk / 4` tokens; for PatchTST, likewise without positions and `tk / 2`
/// tokens; the reference's soft gates ([`AdaptiveKind::default_for`]).
pub(super) fn se_on(b: &BackboneConfig) -> Result<BackboneConfig, String> {
    let mut s = match *b {
        BackboneConfig::Se(s) => return Ok(BackboneConfig::Se(s)),
        BackboneConfig::Pac(p) => SeConfig {
            context: 3 * p.context,
            patch: u8::try_from(p.context).map_err(|_| "PAC context too large for SE")?,
            stride: 1,
            embed: p.embed,
            positions: false,
            newest_init: false,
            tokens: 1,
            adaptive: Adaptive::Off,
            body: SeBody::Pac(p),
        },
        BackboneConfig::Trace(t) => {
            let tokens = (t.tokens() / 4).max(1) as u16;
            token_se(&t.shape, tokens, true, SeBody::Trace(t.with_tokens(tokens)))
        }
        BackboneConfig::PatchTst(t) => {
            let tokens = (t.tokens() / 2).max(2) as u16;
            token_se(
                &t.shape,
                tokens,
                false,
                SeBody::PatchTst(t.with_tokens(tokens)),
            )
        }
    };
    s.adaptive = AdaptiveKind::Soft.default_for(&s);
    s.validate()?;
    Ok(BackboneConfig::Se(s))
}

/// The SE in front of a token body (TRACE or PatchTST) of `shape`: the same context,
/// patches of one token's bytes and features, `tokens` tokens for `body`.
fn token_se(shape: &TokenShape, tokens: u16, positions: bool, body: SeBody) -> SeConfig {
    SeConfig {
        context: shape.context,
        patch: shape.group,
        stride: 1,
        embed: shape.embed,
        positions,
        newest_init: false,
        tokens,
        adaptive: Adaptive::Off,
        body,
    }
}

/// The SE variant measured best on a CPU for each body (README, "Semantics
/// enhancement on a CPU"): for PAC and TRACE the map starts from the newest patches
/// and no gate (the reference's random map and soft gate lose 3% and 12% of the
/// ratio there); PatchTST keeps the reference's random map and per-element gate.
fn cpu_se(b: &mut BackboneConfig) {
    if let BackboneConfig::Se(s) = b
        && !matches!(s.body, SeBody::PatchTst(_))
    {
        s.newest_init = true;
        s.adaptive = Adaptive::Off;
    }
}

/// The plain backbone behind an SE: PAC's body with its own front end; TRACE and
/// PatchTST bodies over the SE's context (`L / G` tokens).
fn se_off(b: &BackboneConfig) -> BackboneConfig {
    match *b {
        BackboneConfig::Se(s) => match s.body {
            SeBody::Pac(p) => BackboneConfig::Pac(p),
            SeBody::Trace(t) => BackboneConfig::Trace(t.with_context(s.context)),
            SeBody::PatchTst(t) => BackboneConfig::PatchTst(t.with_context(s.context)),
        },
        ref other => other.clone(),
    }
}

/// The body with `tokens` tokens (token bodies) or unchanged (PAC).
fn resize_body(body: SeBody, tokens: u16) -> Result<SeBody, KnobError> {
    Ok(match body {
        SeBody::Pac(_) => {
            return Err(KnobError::of(
                Knob::Tokens,
                "an SE in front of PAC makes one token",
            ));
        }
        SeBody::Trace(t) => SeBody::Trace(t.with_tokens(tokens)),
        SeBody::PatchTst(t) => SeBody::PatchTst(t.with_tokens(tokens)),
    })
}

/// Sets the context bytes of a backbone (the SE's for an SE).
fn set_context(b: &mut BackboneConfig, l: u16) -> Result<(), String> {
    match b {
        BackboneConfig::Pac(p) => p.context = l,
        BackboneConfig::Trace(t) => t.shape.context = l,
        BackboneConfig::PatchTst(t) => t.shape.context = l,
        BackboneConfig::Se(s) => s.context = l,
    }
    b.validate()
}

impl NeuralConfig {
    /// This configuration changed by experiment knobs (the command line's `--backbone`,
    /// `--se`, `--patch`, `--stride`, `--adaptive`). `preset` is the one `self` came
    /// from: a backbone switched with [`Knobs::backbone`] takes the paper's sizes after a
    /// paper preset and the CPU sizes of [`BackboneKind::cpu`] otherwise; `--se on`
    /// adds the paper's SE after a paper preset, and after a CPU preset the
    /// variant measured best there (PAC and TRACE: newest-patch map, no gate; PatchTST:
    /// as the paper). The other knobs then change that SE.
    pub fn with_knobs(&self, preset: Preset, knobs: &Knobs) -> Result<NeuralConfig, KnobError> {
        let mut c = self.clone();
        let kind = BackboneKind::of(&c.backbone);
        let se = matches!(c.backbone, BackboneConfig::Se(_));
        if let Some(k) = knobs.backbone.filter(|&k| k != kind) {
            let plain = if preset.is_paper() {
                k.paper()
            } else {
                k.cpu()
            };
            c.backbone = if se { se_on(&plain)? } else { plain };
        }
        match knobs.se {
            Some(true) if !matches!(c.backbone, BackboneConfig::Se(_)) => {
                c.backbone = se_on(&c.backbone)?;
                if !preset.is_paper() {
                    cpu_se(&mut c.backbone);
                }
            }
            Some(false) => c.backbone = se_off(&c.backbone),
            _ => {}
        }
        let se_knob = knobs.patch.is_some()
            || knobs.stride.is_some()
            || knobs.adaptive.is_some()
            || knobs.tokens.is_some()
            || knobs.sparsity.is_some()
            || knobs.newest_init.is_some();
        if se_knob {
            let BackboneConfig::Se(s) = &mut c.backbone else {
                return Err(KnobError::of(
                    Knob::SeKnobs,
                    "apply with the semantics enhancement (se on)",
                ));
            };
            if let Some(p) = knobs.patch {
                let f = s.features();
                if p == 0 || !f.is_multiple_of(usize::from(p)) {
                    return Err(KnobError::of(
                        Knob::Patch,
                        format!("{p} must divide the token width {f} (patch x embed)"),
                    ));
                }
                s.embed = (f / usize::from(p)) as u16;
                s.patch = p;
                s.stride = s.stride.min(p);
            }
            if let Some(st) = knobs.stride {
                s.stride = st;
            }
            if let Some(t) = knobs.tokens {
                s.tokens = t;
                s.body = resize_body(s.body, t)?;
            }
            if let Some(a) = knobs.adaptive {
                s.adaptive = a.default_for(s);
            }
            if let Some(v) = knobs.newest_init {
                s.newest_init = v;
            }
            if let Some(v) = knobs.sparsity {
                let Adaptive::Hard { sparsity, .. } = &mut s.adaptive else {
                    return Err(KnobError::of(
                        Knob::Sparsity,
                        "applies to the hard adaptive stride",
                    ));
                };
                *sparsity = v;
            }
            s.validate()?;
        }
        if let Some(l) = knobs.context {
            set_context(&mut c.backbone, l).map_err(|why| KnobError::of(Knob::Context, why))?;
        }
        c.backbone.validate()?;
        Ok(c)
    }
}
