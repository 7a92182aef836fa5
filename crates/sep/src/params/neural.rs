//! The neural model's `params` (doc/FORMAT.md section 4.4).

use super::{ParamError, at_least, read_backbone, reserved, u16_at, u32_at, write_backbone};
use crate::neural::{AdamConfig, NeuralConfig};

/// The neural `params` of `c` (doc/FORMAT.md section 4.4).
pub fn write_neural(c: &NeuralConfig) -> Vec<u8> {
    let bb = write_backbone(&c.backbone);
    let mut p = Vec::with_capacity(50 + bb.len());
    p.push(c.backbone.id());
    p.extend_from_slice(&[0, 0, 0]);
    p.extend_from_slice(&c.min_stream_len.to_le_bytes());
    for v in [
        c.adam.lr,
        c.adam.beta1,
        c.adam.beta2,
        c.adam.eps,
        c.adam.weight_decay,
    ] {
        p.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    p.extend_from_slice(&(bb.len() as u16).to_le_bytes());
    p.extend_from_slice(&bb);
    p
}

/// Parses the neural `params`; `streams` and `context` come from the header.
pub fn read_neural(p: &[u8], streams: u32, context: u16) -> Result<NeuralConfig, ParamError> {
    at_least("neural params", p, 50)?;
    reserved("neural params bytes 1..3", u64::from(u32_at(p, 0) >> 8))?;
    let min_stream_len = u32_at(p, 4);
    // lr, beta1, beta2, eps, weight_decay: f64 bits, each in 0..=1.
    let mut v = [0f64; 5];
    for (i, field) in ["lr", "beta1", "beta2", "eps", "weight_decay"]
        .into_iter()
        .enumerate()
    {
        let bits = u64::from_le_bytes(p[8 + 8 * i..16 + 8 * i].try_into().expect("8 bytes"));
        v[i] = f64::from_bits(bits);
        if !(v[i].is_finite() && (0.0..=1.0).contains(&v[i])) {
            return Err(ParamError::Adam { field, bits });
        }
    }
    let [lr, beta1, beta2, eps, weight_decay] = v;
    let adam = AdamConfig {
        lr,
        beta1,
        beta2,
        eps,
        weight_decay,
    };
    let bb_len = usize::from(u16_at(p, 48));
    if p.len() != 50 + bb_len {
        return Err(ParamError::LengthField {
            field: "backbone_len",
            declared: bb_len,
            found: p.len() - 50,
        });
    }
    let backbone = read_backbone(p[0], &p[50..])?;
    if backbone.context() != usize::from(context) {
        return Err(ParamError::Mismatch {
            field: "header context",
            found: context.into(),
            why: format!("the backbone's is {}", backbone.context()),
        });
    }
    if min_stream_len == 0 {
        return Err(ParamError::Zero {
            field: "min_stream_len",
        });
    }
    Ok(NeuralConfig {
        backbone,
        streams,
        min_stream_len,
        adam,
    })
}
