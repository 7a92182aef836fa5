//! The neural model (`model_id` 2, doc/FORMAT.md sections 4.3-4.8): its
//! configuration and the types that build one.
//!
//! [`NeuralConfig`] is everything that defines a network of an archive: the
//! backbone ([`BackboneConfig`]: [`PacConfig`], [`TraceConfig`],
//! [`PatchTstConfig`], or a semantics enhancement [`SeConfig`] in front of a
//! body [`SeBody`]), the number of streams a block is cut into, and the
//! optimiser ([`AdamConfig`]). [`NeuralConfig::preset`] gives the network of a
//! [`Preset`], among them the paper's six (PAC, TRACE and
//! PatchTST, each without and with the semantics enhancement); [`Knobs`]
//! change a preset for experiments: another backbone ([`BackboneKind`]), SE on
//! or off, the patch, the stride and the adaptive stride ([`AdaptiveKind`],
//! [`Adaptive`]), applied by [`NeuralConfig::with_knobs`].
//!
//! ```
//! use sep::neural::{Knobs, NeuralConfig, BackboneKind};
//! let pac = NeuralConfig::preset(sep::Preset::Fast);
//! let trace = pac
//!     .with_knobs(sep::Preset::Fast, &Knobs {
//!         backbone: Some(BackboneKind::Trace),
//!         ..Knobs::default()
//!     })
//!     .expect("a valid combination");
//! assert_eq!(BackboneKind::of(&trace.backbone), BackboneKind::Trace);
//! let options = sep::Options {
//!     model: sep::Model::Neural(trace),
//!     ..sep::Options::default()
//! };
//! # let _ = options;
//! ```

use crate::preset::Preset;
pub use sep_model::{
    Adaptive, BackboneConfig, PacConfig, PatchTstConfig, SeBody, SeConfig, TraceConfig,
};
pub use sep_nn::AdamConfig;

/// A backbone family, for [`Knobs::backbone`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
                context: 32,
                embed: 16,
                group: 4,
                heads: 2,
                ffn: 256,
                passes: 2,
            }),
            BackboneKind::PatchTst => BackboneConfig::PatchTst(PatchTstConfig {
                context: 32,
                embed: 16,
                group: 4,
                heads: 2,
                ffn: 256,
                layers: 1,
            }),
        }
    }
}

/// The adaptive-stride mode, for [`Knobs::adaptive`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdaptiveKind {
    /// Fixed stride.
    Off,
    /// The reference code's soft gate.
    Soft,
    /// The paper's hard threshold, skipping patches.
    Hard,
}

impl AdaptiveKind {
    /// The kind with this command-line name (`off`, `soft`, `hard`).
    pub fn from_name(name: &str) -> Option<AdaptiveKind> {
        match name {
            "off" => Some(AdaptiveKind::Off),
            "soft" => Some(AdaptiveKind::Soft),
            "hard" => Some(AdaptiveKind::Hard),
            _ => None,
        }
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

/// The SE in front of `b`'s body, as the paper pairs them: for PAC (`L`, `E`), `3L`
/// bytes, patches of `L` bytes x `E` features, one token (the preset's PAC body);
/// for TRACE (`L`, `E`, `G`, `tk` tokens), `L` bytes, patches of `G` x `E` with
/// positions, `tk / 4` tokens; for PatchTST, likewise without positions and `tk / 2`
/// tokens; the reference's soft gates ([`AdaptiveKind::default_for`]).
fn se_on(b: &BackboneConfig) -> Result<BackboneConfig, String> {
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
            SeConfig {
                context: t.context,
                patch: t.group,
                stride: 1,
                embed: t.embed,
                positions: true,
                newest_init: false,
                tokens,
                adaptive: Adaptive::Off,
                body: SeBody::Trace(TraceConfig {
                    context: tokens * u16::from(t.group),
                    ..t
                }),
            }
        }
        BackboneConfig::PatchTst(t) => {
            let tokens = (t.tokens() / 2).max(2) as u16;
            SeConfig {
                context: t.context,
                patch: t.group,
                stride: 1,
                embed: t.embed,
                positions: false,
                newest_init: false,
                tokens,
                adaptive: Adaptive::Off,
                body: SeBody::PatchTst(PatchTstConfig {
                    context: tokens * u16::from(t.group),
                    ..t
                }),
            }
        }
    };
    s.adaptive = AdaptiveKind::Soft.default_for(&s);
    s.validate()?;
    Ok(BackboneConfig::Se(s))
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
            SeBody::Trace(t) => BackboneConfig::Trace(TraceConfig {
                context: s.context,
                ..t
            }),
            SeBody::PatchTst(t) => BackboneConfig::PatchTst(PatchTstConfig {
                context: s.context,
                ..t
            }),
        },
        ref other => other.clone(),
    }
}

/// The body with `tokens` tokens (token bodies) or unchanged (PAC).
fn resize_body(body: SeBody, tokens: u16) -> Result<SeBody, String> {
    Ok(match body {
        SeBody::Pac(_) => {
            return Err("--tokens: an SE in front of PAC makes one token".into());
        }
        SeBody::Trace(t) => SeBody::Trace(TraceConfig {
            context: tokens * u16::from(t.group),
            ..t
        }),
        SeBody::PatchTst(t) => SeBody::PatchTst(PatchTstConfig {
            context: tokens * u16::from(t.group),
            ..t
        }),
    })
}

/// Sets the context bytes of a backbone (the SE's for an SE).
fn set_context(b: &mut BackboneConfig, l: u16) -> Result<(), String> {
    match b {
        BackboneConfig::Pac(p) => p.context = l,
        BackboneConfig::Trace(t) => t.context = l,
        BackboneConfig::PatchTst(t) => t.context = l,
        BackboneConfig::Se(s) => s.context = l,
    }
    b.validate()
}

/// Everything that defines the neural model of an archive.
#[derive(Debug, Clone, PartialEq)]
pub struct NeuralConfig {
    /// The network.
    pub backbone: BackboneConfig,
    /// B: the most streams a block is split into.
    pub streams: u32,
    /// The encoder gives each stream at least this many bytes (when the
    /// block is large enough), so small inputs use few streams and many
    /// training steps.
    pub min_stream_len: u32,
    /// The optimiser.
    pub adam: AdamConfig,
}

impl NeuralConfig {
    /// The configuration of a preset.
    pub fn preset(p: Preset) -> Self {
        let adam = AdamConfig {
            lr: 1e-3,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
        };
        match p {
            // Chosen by measurement (README, "Neural presets"): a short context
            // and a single FFN learn fastest online; a learning rate of 4e-3
            // beats the paper's 1e-3 at every size we measured.
            Preset::Fast => NeuralConfig {
                backbone: BackboneConfig::Pac(PacConfig {
                    context: 8,
                    embed: 16,
                    ffn: 256,
                    pairs: 1,
                    cache: false,
                }),
                streams: 64,
                min_stream_len: 2048,
                adam: AdamConfig { lr: 4e-3, ..adam },
            },
            Preset::Default => NeuralConfig {
                backbone: BackboneConfig::Pac(PacConfig {
                    context: 8,
                    embed: 16,
                    ffn: 512,
                    pairs: 1,
                    cache: false,
                }),
                streams: 32,
                min_stream_len: 2048,
                adam: AdamConfig { lr: 4e-3, ..adam },
            },
            Preset::Max => NeuralConfig {
                backbone: BackboneConfig::Pac(PacConfig {
                    context: 8,
                    embed: 32,
                    ffn: 1024,
                    pairs: 1,
                    cache: false,
                }),
                streams: 32,
                min_stream_len: 2048,
                adam: AdamConfig { lr: 4e-3, ..adam },
            },
            // `ultra`'s network reads the whole stream inside the mixer;
            // alone, the neural model uses `max`'s.
            Preset::Ultra => NeuralConfig::preset(Preset::Max),
            Preset::Hybrid => NeuralConfig {
                streams: 32,
                ..NeuralConfig::preset(Preset::Fast)
            },
            Preset::PaperPac => NeuralConfig {
                backbone: BackboneConfig::Pac(PacConfig::PAPER),
                streams: 512,
                min_stream_len: 1,
                adam: AdamConfig {
                    weight_decay: 1e-7,
                    ..adam
                },
            },
            Preset::PaperSepPac => NeuralConfig {
                backbone: BackboneConfig::Se(SeConfig {
                    context: 48,
                    patch: 16,
                    stride: 1,
                    embed: 16,
                    positions: false,
                    newest_init: false,
                    tokens: 1,
                    adaptive: Adaptive::Soft {
                        per_element: false,
                        keep_every: 8,
                        threshold: 0.5,
                        slope: 10.0,
                    },
                    body: SeBody::Pac(PacConfig {
                        pairs: 5,
                        ..PacConfig::PAPER
                    }),
                }),
                ..NeuralConfig::preset(Preset::PaperPac)
            },
            Preset::PaperTrace => NeuralConfig {
                backbone: BackboneConfig::Trace(TraceConfig::PAPER),
                streams: 512,
                min_stream_len: 1,
                adam,
            },
            Preset::PaperSepTrace => NeuralConfig {
                backbone: se_on(&BackboneConfig::Trace(TraceConfig::PAPER))
                    .expect("paper SEP+TRACE"),
                ..NeuralConfig::preset(Preset::PaperTrace)
            },
            Preset::PaperPatchTst => NeuralConfig {
                backbone: BackboneConfig::PatchTst(PatchTstConfig::PAPER),
                ..NeuralConfig::preset(Preset::PaperTrace)
            },
            Preset::PaperSepPatchTst => NeuralConfig {
                backbone: se_on(&BackboneConfig::PatchTst(PatchTstConfig::PAPER))
                    .expect("paper SEP+PatchTST"),
                ..NeuralConfig::preset(Preset::PaperTrace)
            },
        }
    }

    /// This configuration changed by experiment knobs (the command line's `--backbone`,
    /// `--se`, `--patch`, `--stride`, `--adaptive`). `preset` is the one `self` came
    /// from: a backbone switched with [`Knobs::backbone`] takes the paper's sizes after a
    /// paper preset and the CPU sizes of [`BackboneKind::cpu`] otherwise; `--se on`
    /// adds the paper's SE after a paper preset, and after a CPU preset the
    /// variant measured best there (PAC and TRACE: newest-patch map, no gate; PatchTST:
    /// as the paper). The other knobs then change that SE.
    pub fn with_knobs(&self, preset: Preset, knobs: &Knobs) -> Result<NeuralConfig, String> {
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
                return Err(
                    "--patch, --stride and --adaptive apply with the semantics enhancement (--se on)"
                        .into(),
                );
            };
            if let Some(p) = knobs.patch {
                let f = s.features();
                if p == 0 || !f.is_multiple_of(usize::from(p)) {
                    return Err(format!(
                        "--patch {p}: must divide the token width {f} (patch x embed)"
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
                    return Err("the sparsity applies to --adaptive hard".into());
                };
                *sparsity = v;
            }
            s.validate()?;
        }
        if let Some(l) = knobs.context {
            set_context(&mut c.backbone, l)?;
        }
        c.backbone.validate()?;
        Ok(c)
    }

    /// Bytes of context.
    pub fn context(&self) -> usize {
        self.backbone.context()
    }

    /// Model memory for a block coded with `streams` streams.
    pub fn memory_bytes(&self, streams: usize) -> u64 {
        self.backbone.memory_bytes(streams)
    }

    /// Serialised `params` (doc/FORMAT.md section 4.4).
    pub(crate) fn to_params(&self) -> Vec<u8> {
        let bb = self.backbone.to_bytes();
        let mut p = Vec::with_capacity(52 + bb.len());
        p.push(self.backbone.id());
        p.extend_from_slice(&[0, 0, 0]);
        p.extend_from_slice(&self.min_stream_len.to_le_bytes());
        for v in [
            self.adam.lr,
            self.adam.beta1,
            self.adam.beta2,
            self.adam.eps,
            self.adam.weight_decay,
        ] {
            p.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        p.extend_from_slice(&(bb.len() as u16).to_le_bytes());
        p.extend_from_slice(&bb);
        p
    }

    /// Parses `params`; `streams` and `context` come from the header.
    pub(crate) fn from_params(p: &[u8], streams: u32, context: u16) -> Result<Self, String> {
        if p.len() < 50 {
            return Err(format!(
                "neural params are {} bytes, at least 50 expected",
                p.len()
            ));
        }
        if p[1..4] != [0, 0, 0] {
            return Err("reserved bytes of the neural params are not 0".into());
        }
        let min_stream_len = u32::from_le_bytes(p[4..8].try_into().expect("4 bytes"));
        let f = |i: usize| {
            f64::from_bits(u64::from_le_bytes(
                p[8 + 8 * i..16 + 8 * i].try_into().expect("8 bytes"),
            ))
        };
        let adam = AdamConfig {
            lr: f(0),
            beta1: f(1),
            beta2: f(2),
            eps: f(3),
            weight_decay: f(4),
        };
        let ok = |x: f64, lo: f64, hi: f64| x.is_finite() && x >= lo && x <= hi;
        if !(ok(adam.lr, 0.0, 1.0)
            && ok(adam.beta1, 0.0, 1.0)
            && ok(adam.beta2, 0.0, 1.0)
            && ok(adam.eps, 0.0, 1.0)
            && ok(adam.weight_decay, 0.0, 1.0))
        {
            return Err("Adam hyperparameters out of range".into());
        }
        let bb_len = usize::from(u16::from_le_bytes([p[48], p[49]]));
        if p.len() != 50 + bb_len {
            return Err(format!(
                "backbone params are {} bytes, header says {bb_len}",
                p.len() - 50
            ));
        }
        let backbone = BackboneConfig::from_bytes(p[0], &p[50..])?;
        if backbone.context() != usize::from(context) {
            return Err(format!(
                "header context {context} differs from the backbone's {}",
                backbone.context()
            ));
        }
        if min_stream_len == 0 {
            return Err("min_stream_len is 0".into());
        }
        Ok(NeuralConfig {
            backbone,
            streams,
            min_stream_len,
            adam,
        })
    }

    /// One line for listings.
    pub fn describe(&self) -> String {
        format!(
            "neural: {}; B {}, min stream {} bytes; Adam lr {:e}, betas {}/{}, eps {:e}, weight decay {:e}",
            self.backbone.describe(),
            self.streams,
            self.min_stream_len,
            self.adam.lr,
            self.adam.beta1,
            self.adam.beta2,
            self.adam.eps,
            self.adam.weight_decay
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_reproduce_the_paper_pairs_and_validate() {
        let p = |x| NeuralConfig::preset(x);
        let on = Knobs {
            se: Some(true),
            ..Knobs::default()
        };
        let off = Knobs {
            se: Some(false),
            ..Knobs::default()
        };
        for (plain, sep) in [
            (Preset::PaperTrace, Preset::PaperSepTrace),
            (Preset::PaperPatchTst, Preset::PaperSepPatchTst),
        ] {
            assert_eq!(p(plain).with_knobs(plain, &on), Ok(p(sep)), "{plain:?}");
            assert_eq!(p(sep).with_knobs(sep, &off), Ok(p(plain)), "{sep:?}");
        }
        assert_eq!(
            p(Preset::PaperSepPac).with_knobs(Preset::PaperSepPac, &off),
            Ok(NeuralConfig {
                backbone: BackboneConfig::Pac(PacConfig {
                    pairs: 5,
                    ..PacConfig::PAPER
                }),
                ..p(Preset::PaperPac)
            })
        );
        let trace = Knobs {
            backbone: Some(BackboneKind::Trace),
            se: Some(true),
            stride: Some(2),
            adaptive: Some(AdaptiveKind::Hard),
            ..Knobs::default()
        };
        let c = p(Preset::Default)
            .with_knobs(Preset::Default, &trace)
            .unwrap();
        let BackboneConfig::Se(s) = c.backbone else {
            panic!("SE expected")
        };
        assert_eq!((s.stride, s.adaptive.name()), (2, "hard"));
        assert_eq!(BackboneKind::of(&c.backbone), BackboneKind::Trace);
        // After a CPU preset, --se on takes the variant measured best per body.
        for (kind, newest, gate) in [
            (BackboneKind::Pac, true, "off"),
            (BackboneKind::Trace, true, "off"),
            (BackboneKind::PatchTst, false, "soft"),
        ] {
            let k = Knobs {
                backbone: Some(kind),
                se: Some(true),
                ..Knobs::default()
            };
            let c = p(Preset::Default).with_knobs(Preset::Default, &k).unwrap();
            let BackboneConfig::Se(s) = c.backbone else {
                panic!("SE expected")
            };
            assert_eq!(
                (s.newest_init, s.adaptive.name()),
                (newest, gate),
                "{kind:?}"
            );
        }
        let patch = Knobs {
            patch: Some(4),
            ..Knobs::default()
        };
        assert!(
            p(Preset::Default)
                .with_knobs(Preset::Default, &patch)
                .is_err()
        );
        let bad_stride = Knobs {
            se: Some(true),
            stride: Some(9),
            ..Knobs::default()
        };
        let e = p(Preset::PaperTrace)
            .with_knobs(Preset::PaperTrace, &bad_stride)
            .unwrap_err();
        assert!(e.contains("stride"), "{e}");
        for kind in BackboneKind::ALL {
            for se in [false, true] {
                let k = Knobs {
                    backbone: Some(kind),
                    se: Some(se),
                    ..Knobs::default()
                };
                let c = p(Preset::Fast).with_knobs(Preset::Fast, &k).unwrap();
                assert_eq!(BackboneKind::of(&c.backbone), kind);
            }
        }
    }

    #[test]
    fn params_round_trip_and_validate() {
        for p in Preset::ALL {
            let c = NeuralConfig::preset(p);
            let back =
                NeuralConfig::from_params(&c.to_params(), c.streams, c.context() as u16).unwrap();
            assert_eq!(back, c, "{p:?}");
        }
        let c = NeuralConfig::preset(Preset::Default);
        let mut b = c.to_params();
        b[2] = 1;
        assert!(NeuralConfig::from_params(&b, 64, 16).is_err());
        assert!(NeuralConfig::from_params(&c.to_params(), 64, 15).is_err());
        let mut b = c.to_params();
        b[8..16].copy_from_slice(&f64::NAN.to_bits().to_le_bytes());
        assert!(NeuralConfig::from_params(&b, 64, 16).is_err());
        assert!(NeuralConfig::from_params(&b[..40], 64, 16).is_err());
    }
}
