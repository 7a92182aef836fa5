//! Models as the archive names them, and how each one codes a block.
//!
//! [`Model`] is what a user chooses; [`ModelConfig`] is the fully resolved
//! choice that goes into the header (section 4 of doc/FORMAT.md) and is
//! rebuilt from it by the decoder.

use crate::engine;
use crate::error::{Error, Result};
use crate::format::{Header, MAX_MODEL_MEMORY, ORDER2_MAX_TABLE_BITS};
use crate::limits::{CM_BYTE_WORK, ORDER2_BYTE_WORK, SETUP_BYTE_WORK};
use crate::mix::MixConfig;
use crate::neural::NeuralConfig;
use crate::pipeline::Cancel;
use crate::preset::Preset;
use sep_cm::{Order2, Order2Params};
use sep_coder::{Decoder as RangeDecoder, Encoder as RangeEncoder};

/// Bytes order2 codes between two looks at the cancel flag (about 10 ms).
const CANCEL_CHECK_BYTES: usize = 1 << 16;

/// The model a user asks for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Model {
    /// No model: blocks are stored as they are (`model_id` 0).
    Store,
    /// The fast order-2 context-mixing model (`model_id` 1).
    Order2,
    /// A neural network trained online (`model_id` 2).
    Neural(NeuralConfig),
    /// Context mixing, with or without a network's prediction mixed in
    /// (`model_id` 3).
    Mix(MixConfig),
}

impl Default for Model {
    /// The mixed model's `default` preset.
    fn default() -> Self {
        Model::Mix(MixConfig::preset(Preset::Default).expect("default preset"))
    }
}

impl Model {
    /// Command-line names of the model kinds.
    pub const NAMES: [&'static str; 4] = ["mix", "neural", "order2", "store"];

    /// The name used on the command line and in listings.
    pub fn name(&self) -> &'static str {
        match self {
            Model::Store => "store",
            Model::Order2 => "order2",
            Model::Neural(_) => "neural",
            Model::Mix(_) => "mix",
        }
    }

    /// The model with this command-line name (`mix` and `neural` with their
    /// `default` presets).
    pub fn from_name(name: &str) -> Option<Model> {
        match name {
            "store" => Some(Model::Store),
            "order2" => Some(Model::Order2),
            "neural" => Some(Model::Neural(NeuralConfig::preset(Preset::Default))),
            "mix" => Some(Model::default()),
            _ => None,
        }
    }

    /// The neural-only model of a preset.
    pub fn preset(p: Preset) -> Model {
        Model::Neural(NeuralConfig::preset(p))
    }

    /// The mixed model of a preset (`fast`, `default`, `max`), or the
    /// neural-only model for the paper's presets.
    pub fn mix_preset(p: Preset) -> Model {
        MixConfig::preset(p).map_or_else(|| Model::preset(p), Model::Mix)
    }

    /// The block size used when the user gives none.
    pub(crate) fn default_block_size(&self) -> u32 {
        16 << 20
    }

    /// Resolves the choice for blocks of `block_size` bytes.
    pub(crate) fn configure(&self, block_size: u32) -> ModelConfig {
        match self {
            Model::Store => ModelConfig::Store,
            Model::Order2 => ModelConfig::Order2(Order2Params::for_block_len(block_size.into())),
            Model::Neural(c) => ModelConfig::Neural(c.clone()),
            Model::Mix(c) => ModelConfig::Mix(c.for_block_len(block_size)),
        }
    }
}

/// A model with every hyperparameter fixed, as stored in the header.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelConfig {
    /// `model_id` 0.
    Store,
    /// `model_id` 1.
    Order2(Order2Params),
    /// `model_id` 2.
    Neural(NeuralConfig),
    /// `model_id` 3.
    Mix(MixConfig),
}

impl ModelConfig {
    /// `model_id`.
    pub fn id(&self) -> u16 {
        match self {
            ModelConfig::Store => 0,
            ModelConfig::Order2(_) => 1,
            ModelConfig::Neural(_) => 2,
            ModelConfig::Mix(_) => 3,
        }
    }

    /// The user-facing model.
    pub fn model(&self) -> Model {
        match self {
            ModelConfig::Store => Model::Store,
            ModelConfig::Order2(_) => Model::Order2,
            ModelConfig::Neural(c) => Model::Neural(c.clone()),
            ModelConfig::Mix(c) => Model::Mix(c.clone()),
        }
    }

    /// `(streams, context, params)` for the header.
    pub(crate) fn header_fields(&self) -> (u32, u16, Vec<u8>) {
        match self {
            ModelConfig::Store => (1, 0, Vec::new()),
            ModelConfig::Order2(p) => (1, 2, vec![p.table_bits, 0, 0, 0]),
            ModelConfig::Neural(c) => (
                c.streams,
                c.context() as u16,
                crate::params::write_neural(c),
            ),
            ModelConfig::Mix(c) => {
                let (streams, context) = c.header_fields();
                (streams, context, crate::params::write_mix(c))
            }
        }
    }

    /// Rebuilds and validates the model of a header, and checks that a block of
    /// `block_size` bytes needs at most [`MAX_MODEL_MEMORY`] of model state, before
    /// anything is allocated (doc/FORMAT.md section 7).
    pub fn from_header(h: &Header) -> Result<ModelConfig> {
        let config = Self::parse_header(h)?;
        let memory = config.max_memory_bytes(h.block_size);
        if memory > MAX_MODEL_MEMORY {
            return Err(Error::LimitExceeded {
                what: "model memory (bytes)",
                value: memory,
                limit: MAX_MODEL_MEMORY,
            });
        }
        Ok(config)
    }

    fn parse_header(h: &Header) -> Result<ModelConfig> {
        let expect = |field: &'static str, value: u64, want: u64, why: &'static str| {
            if value == want {
                Ok(())
            } else {
                Err(Error::InvalidField { field, value, why })
            }
        };
        match h.model_id {
            0 => {
                expect("streams", h.streams.into(), 1, "must be 1 for model store")?;
                expect("context", h.context.into(), 0, "must be 0 for model store")?;
                expect(
                    "params_len",
                    h.params.len() as u64,
                    0,
                    "must be 0 for model store",
                )?;
                Ok(ModelConfig::Store)
            }
            1 => {
                expect("streams", h.streams.into(), 1, "must be 1 for model order2")?;
                expect("context", h.context.into(), 2, "must be 2 for model order2")?;
                expect(
                    "params_len",
                    h.params.len() as u64,
                    4,
                    "must be 4 for model order2",
                )?;
                let bits = h.params[0];
                if !(Order2Params::MIN_TABLE_BITS..=ORDER2_MAX_TABLE_BITS).contains(&bits) {
                    return Err(Error::InvalidField {
                        field: "table_bits",
                        value: bits.into(),
                        why: "must be in 12..=24",
                    });
                }
                let reserved = u32::from_le_bytes([h.params[1], h.params[2], h.params[3], 0]);
                if reserved != 0 {
                    return Err(Error::Reserved {
                        field: "reserved (order2 params)",
                        value: reserved.into(),
                    });
                }
                Ok(ModelConfig::Order2(Order2Params { table_bits: bits }))
            }
            2 => crate::params::read_neural(&h.params, h.streams, h.context)
                .map(ModelConfig::Neural)
                .map_err(|why| Error::InvalidModel { why }),
            3 => crate::params::read_mix(&h.params, h.streams, h.context)
                .map(ModelConfig::Mix)
                .map_err(|why| Error::InvalidModel { why }),
            id => Err(Error::UnknownModel(id)),
        }
    }

    /// Bytes of model state the coder of one block of `block_len` bytes holds.
    pub fn memory_bytes(&self, block_len: u64) -> u64 {
        match self {
            ModelConfig::Store => 0,
            ModelConfig::Order2(p) => p.memory_bytes(),
            ModelConfig::Neural(c) => c.memory_bytes(engine::stream_count(c, block_len as usize)),
            ModelConfig::Mix(c) => c.memory_bytes(block_len),
        }
    }

    /// Bytes of model state the decoder of any block of up to `block_size` bytes
    /// may hold: as [`memory_bytes`](Self::memory_bytes), with a network built for
    /// the most streams a block may record (`min(streams, block_size)`), whatever
    /// stream count the encoder would pick.
    pub fn max_memory_bytes(&self, block_size: u32) -> u64 {
        let block = u64::from(block_size);
        let most = |c: &NeuralConfig| c.memory_bytes(c.streams.min(block_size) as usize);
        match self {
            ModelConfig::Store | ModelConfig::Order2(_) => self.memory_bytes(block),
            ModelConfig::Neural(c) => most(c),
            ModelConfig::Mix(c) => {
                MixConfig {
                    neural: None,
                    ..c.clone()
                }
                .memory_bytes(block)
                    + c.neural.as_ref().map_or(0, most)
            }
        }
    }

    /// Estimated work to decode one block of `raw_len` bytes coded in
    /// `streams` streams, in work units (see [`crate::limits`]): `(set-up,
    /// coding)`. Set-up is the model state the block allocates and initialises
    /// ([`SETUP_BYTE_WORK`](crate::limits::SETUP_BYTE_WORK) per byte); coding is, per byte, a constant for
    /// order2 and context mixing, and for a network three forward passes (the
    /// forward, and a backward of twice its cost) plus, per step, the Adam
    /// update and activations: every float of its state once. The decoder
    /// bounds the sum over an archive (doc/FORMAT.md section 7).
    pub fn block_work(&self, raw_len: u64, streams: u64) -> (u64, u64) {
        let net = |c: &NeuralConfig| {
            let s = streams.clamp(1, raw_len.max(1));
            let memory = c.memory_bytes(s as usize);
            let steps = raw_len.div_ceil(s);
            (
                memory.saturating_mul(SETUP_BYTE_WORK),
                raw_len
                    .saturating_mul(c.backbone.forward_macs().saturating_mul(3))
                    .saturating_add(steps.saturating_mul(memory / 4)),
            )
        };
        match self {
            ModelConfig::Store => (0, raw_len),
            ModelConfig::Order2(p) => (
                p.memory_bytes() * SETUP_BYTE_WORK,
                raw_len.saturating_mul(ORDER2_BYTE_WORK),
            ),
            ModelConfig::Neural(c) => net(c),
            ModelConfig::Mix(c) => {
                let (t, m) = c.cm.effective_bits(raw_len as usize);
                let cm = sep_cm::CmConfig {
                    table_bits: t,
                    match_bits: m,
                    ..c.cm
                };
                let (setup, coding) = c.neural.as_ref().map_or((0, 0), net);
                (
                    setup.saturating_add(cm.memory_bytes() * SETUP_BYTE_WORK),
                    coding.saturating_add(raw_len.saturating_mul(CM_BYTE_WORK)),
                )
            }
        }
    }

    /// The most set-up work one block of an archive with blocks of `block_size`
    /// bytes and up to `streams` streams may need: [`block_work`](Self::block_work)
    /// of a full block with the most streams it may record.
    pub fn max_setup_work(&self, block_size: u32, streams: u32) -> u64 {
        let n = u64::from(block_size);
        self.block_work(n, u64::from(streams).min(n)).0
    }

    /// A short description of the hyperparameters, for listings.
    pub fn describe(&self) -> String {
        match self {
            ModelConfig::Store => "store".into(),
            ModelConfig::Order2(p) => format!("order2 (table_bits {})", p.table_bits),
            ModelConfig::Neural(c) => c.describe(),
            ModelConfig::Mix(c) => c.describe(),
        }
    }

    /// [`encode_block`](Self::encode_block), with `prior` when there is one
    /// (a mix model it was trained for: the block continues its samples).
    pub(crate) fn encode_block_with(
        &self,
        prior: Option<&crate::Prior>,
        seed: u64,
        raw: &mut [u8],
        cancel: &Cancel,
    ) -> Option<Vec<Vec<u8>>> {
        match (self, prior) {
            (ModelConfig::Mix(_), Some(p)) => Some(vec![engine::encode_prior(p, raw, cancel)]),
            _ => self.encode_block(seed, raw, cancel),
        }
    }

    /// [`decode_block`](Self::decode_block), with `prior` when the archive
    /// names one (checked against the header before).
    pub(crate) fn decode_block_with(
        &self,
        prior: Option<&crate::Prior>,
        block: u64,
        seed: u64,
        streams: &[&[u8]],
        out: &mut [u8],
        cancel: &Cancel,
    ) -> Result<()> {
        match (self, prior) {
            (ModelConfig::Mix(_), Some(p)) => {
                let [stream] = streams else {
                    return Err(Error::InvalidField {
                        field: "stream_count",
                        value: streams.len() as u64,
                        why: "must be 1 with a prior",
                    });
                };
                engine::decode_prior(p, stream, out, cancel).map_err(|why| Error::StreamJunk {
                    block,
                    stream: 0,
                    why,
                })
            }
            _ => self.decode_block(block, seed, streams, out, cancel),
        }
    }

    /// Codes one block; `None` means the model cannot code it (store it).
    /// `raw` is left as it is. The result is garbage once `cancel` is set.
    pub(crate) fn encode_block(
        &self,
        seed: u64,
        raw: &mut [u8],
        cancel: &Cancel,
    ) -> Option<Vec<Vec<u8>>> {
        match self {
            ModelConfig::Store => None,
            ModelConfig::Neural(c) => {
                let streams = engine::stream_count(c, raw.len());
                Some(engine::encode_block(
                    Some(c),
                    None,
                    None,
                    seed,
                    raw,
                    streams,
                    cancel,
                ))
            }
            ModelConfig::Mix(c) => {
                let streams = c.stream_count(raw.len());
                Some(engine::encode_block(
                    c.neural.as_ref(),
                    Some(&c.cm),
                    c.serial.as_ref(),
                    seed,
                    raw,
                    streams,
                    cancel,
                ))
            }
            ModelConfig::Order2(p) => {
                let mut enc = RangeEncoder::with_capacity(raw.len() / 2);
                let mut model = Order2::new(p);
                for chunk in raw.chunks_mut(CANCEL_CHECK_BYTES) {
                    if cancel.is_set() {
                        break;
                    }
                    model.code(&mut enc, chunk);
                    cancel.advance(chunk.len() as u64);
                }
                Some(vec![enc.finish()])
            }
        }
    }

    /// Decodes one modelled block (number `block` of its archive) into `out`
    /// (its `raw_len` bytes), and checks that each stream ends as an encoder
    /// ends it (doc/FORMAT.md section 6). `out` is garbage once `cancel` is set.
    pub(crate) fn decode_block(
        &self,
        block: u64,
        seed: u64,
        streams: &[&[u8]],
        out: &mut [u8],
        cancel: &Cancel,
    ) -> Result<()> {
        match self {
            ModelConfig::Store => Err(Error::InvalidField {
                field: "block_type",
                value: 1,
                why: "model store has no modelled blocks",
            }),
            ModelConfig::Order2(p) => {
                let [stream] = streams else {
                    return Err(Error::InvalidField {
                        field: "stream_count",
                        value: streams.len() as u64,
                        why: "must be 1 for model order2",
                    });
                };
                let mut dec = RangeDecoder::new(stream);
                let mut model = Order2::new(p);
                for chunk in out.chunks_mut(CANCEL_CHECK_BYTES) {
                    if cancel.is_set() {
                        return Ok(());
                    }
                    model.code(&mut dec, chunk);
                    cancel.advance(chunk.len() as u64);
                }
                dec.check_finished().map_err(|why| Error::StreamJunk {
                    block,
                    stream: 0,
                    why,
                })
            }
            ModelConfig::Neural(c) => {
                if streams.len() > out.len() {
                    return Err(Error::InvalidField {
                        field: "stream_count",
                        value: streams.len() as u64,
                        why: "must not exceed raw_len",
                    });
                }
                engine::decode_block(Some(c), None, None, seed, streams, out, cancel)
                    .map_err(|(stream, why)| Error::StreamJunk { block, stream, why })
            }
            ModelConfig::Mix(c) => {
                if streams.len() > out.len() || (c.neural.is_none() && streams.len() != 1) {
                    return Err(Error::InvalidField {
                        field: "stream_count",
                        value: streams.len() as u64,
                        why: "must be 1 without a network, and at most raw_len",
                    });
                }
                engine::decode_block(
                    c.neural.as_ref(),
                    Some(&c.cm),
                    c.serial.as_ref(),
                    seed,
                    streams,
                    out,
                    cancel,
                )
                .map_err(|(stream, why)| Error::StreamJunk { block, stream, why })
            }
        }
    }
}
