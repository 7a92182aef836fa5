//! The neural model (`model_id` 2): its configuration, presets and header form.

use sep_model::{BackboneConfig, PacConfig};
use sep_nn::AdamConfig;

/// Named neural configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Smallest network: fastest neural mode.
    Fast,
    /// The balance of ratio and speed used by `sep FILE`.
    Default,
    /// The largest network worth its time on a CPU.
    Max,
    /// The paper's PAC configuration (B = 512, L = 16, E = 16, F = 4096, 4 pairs).
    PaperPac,
}

impl Preset {
    /// Every preset, for listings.
    pub const ALL: [Preset; 4] = [Preset::Fast, Preset::Default, Preset::Max, Preset::PaperPac];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Fast => "fast",
            Preset::Default => "default",
            Preset::Max => "max",
            Preset::PaperPac => "paper-pac",
        }
    }

    /// The preset with this command-line name.
    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name)
    }
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
                adam,
            },
            Preset::Default => NeuralConfig {
                backbone: BackboneConfig::Pac(PacConfig {
                    context: 16,
                    embed: 16,
                    ffn: 512,
                    pairs: 1,
                    cache: false,
                }),
                streams: 64,
                min_stream_len: 2048,
                adam,
            },
            Preset::Max => NeuralConfig {
                backbone: BackboneConfig::Pac(PacConfig {
                    context: 16,
                    embed: 16,
                    ffn: 1024,
                    pairs: 2,
                    cache: true,
                }),
                streams: 64,
                min_stream_len: 2048,
                adam,
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
        }
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
