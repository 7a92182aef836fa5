//! Backbone parameters (`backbone_params`, doc/FORMAT.md sections 4.5-4.8).

use super::{ParamError, at_least, fixed, reserved, u16_at};
use sep_model::{
    Adaptive, BackboneConfig, PacConfig, PatchTstConfig, SeBody, SeConfig, TokenShape, TraceConfig,
};

/// Length of the SE's fixed part, before its body's parameters (section 4.8).
const SE_FIXED_LEN: usize = 28;

/// `backbone_params` of `config` (its id, [`BackboneConfig::id`], goes in the
/// `backbone` field beside them).
pub fn write_backbone(config: &BackboneConfig) -> Vec<u8> {
    match config {
        BackboneConfig::Pac(c) => write_pac(c),
        BackboneConfig::Trace(c) => write_trace(c),
        BackboneConfig::PatchTst(c) => write_patchtst(c),
        BackboneConfig::Se(c) => write_se(c),
    }
}

/// Parses and validates the `backbone_params` of backbone `id`.
pub fn read_backbone(id: u8, b: &[u8]) -> Result<BackboneConfig, ParamError> {
    match id {
        1 => read_pac(b).map(BackboneConfig::Pac),
        2 => read_trace(b).map(BackboneConfig::Trace),
        3 => read_patchtst(b).map(BackboneConfig::PatchTst),
        4 => read_se(b).map(BackboneConfig::Se),
        other => Err(ParamError::Unknown {
            field: "backbone id",
            value: other.into(),
            known: "1 (PAC), 2 (TRACE), 3 (PatchTST) or 4 (SE)",
        }),
    }
}

/// Section 4.5: `context u16, embed u16, ffn u16, pairs u8, flags u8`.
fn write_pac(c: &PacConfig) -> Vec<u8> {
    let mut b = Vec::with_capacity(8);
    b.extend_from_slice(&c.context.to_le_bytes());
    b.extend_from_slice(&c.embed.to_le_bytes());
    b.extend_from_slice(&c.ffn.to_le_bytes());
    b.push(c.pairs);
    b.push(u8::from(c.cache));
    b
}

fn read_pac(b: &[u8]) -> Result<PacConfig, ParamError> {
    let b = fixed::<8>("PAC parameters", b)?;
    let flags = b[7];
    reserved("PAC flags bits 1..7", u64::from(flags & !1))?;
    let c = PacConfig {
        context: u16_at(b, 0),
        embed: u16_at(b, 2),
        ffn: u16_at(b, 4),
        pairs: b[6],
        cache: flags & 1 == 1,
    };
    c.validate()?;
    Ok(c)
}

/// Sections 4.6 and 4.7: `context u16, embed u16, group u8, heads u8, ffn u16,
/// passes (TRACE) or layers (PatchTST) u8, reserved u8`.
fn write_tokens(shape: &TokenShape, depth: u8) -> Vec<u8> {
    let mut b = Vec::with_capacity(10);
    b.extend_from_slice(&shape.context.to_le_bytes());
    b.extend_from_slice(&shape.embed.to_le_bytes());
    b.push(shape.group);
    b.push(shape.heads);
    b.extend_from_slice(&shape.ffn.to_le_bytes());
    b.push(depth);
    b.push(0);
    b
}

fn write_trace(c: &TraceConfig) -> Vec<u8> {
    write_tokens(&c.shape, c.passes)
}

fn write_patchtst(c: &PatchTstConfig) -> Vec<u8> {
    write_tokens(&c.shape, c.layers)
}

fn read_trace(b: &[u8]) -> Result<TraceConfig, ParamError> {
    let (shape, passes) = read_tokens("TRACE parameters", "TRACE byte 9", b)?;
    let c = TraceConfig { shape, passes };
    c.validate()?;
    Ok(c)
}

fn read_patchtst(b: &[u8]) -> Result<PatchTstConfig, ParamError> {
    let (shape, layers) = read_tokens("PatchTST parameters", "PatchTST byte 9", b)?;
    let c = PatchTstConfig { shape, layers };
    c.validate()?;
    Ok(c)
}

/// The 10 bytes shared by TRACE and PatchTST (doc/FORMAT.md 4.6-4.7): the token shape
/// and, in byte 8, the depth field (`passes` or `layers`).
fn read_tokens(
    what: &'static str,
    byte9: &'static str,
    b: &[u8],
) -> Result<(TokenShape, u8), ParamError> {
    let b = fixed::<10>(what, b)?;
    reserved(byte9, b[9].into())?;
    let shape = TokenShape {
        context: u16_at(b, 0),
        embed: u16_at(b, 2),
        group: b[4],
        heads: b[5],
        ffn: u16_at(b, 6),
    };
    Ok((shape, b[8]))
}

/// The body's parameters in its backbone's form.
fn write_body(body: &SeBody) -> Vec<u8> {
    match body {
        SeBody::Pac(c) => write_pac(c),
        SeBody::Trace(c) => write_trace(c),
        SeBody::PatchTst(c) => write_patchtst(c),
    }
}

/// Section 4.8: 28 fixed bytes, then the body's parameters.
fn write_se(c: &SeConfig) -> Vec<u8> {
    let body = write_body(&c.body);
    // (mask, keep_every, threshold, slope, sparsity) as stored.
    let (mask, keep_every, threshold, slope, sparsity) = match c.adaptive {
        Adaptive::Off => (0, 0, 0.0, 0.0, 0.0),
        Adaptive::Soft {
            per_element,
            keep_every,
            threshold,
            slope,
        } => (u8::from(per_element), keep_every, threshold, slope, 0.0),
        Adaptive::Hard {
            keep_every,
            threshold,
            sparsity,
        } => (0, keep_every, threshold, 0.0, sparsity),
    };
    let mut b = Vec::with_capacity(SE_FIXED_LEN + body.len());
    b.extend_from_slice(&c.context.to_le_bytes());
    b.push(c.patch);
    b.push(c.stride);
    b.extend_from_slice(&c.embed.to_le_bytes());
    b.extend_from_slice(&c.tokens.to_le_bytes());
    b.push(u8::from(c.positions) | (u8::from(c.newest_init) << 1));
    b.push(c.adaptive.code());
    b.push(mask);
    b.push(keep_every);
    for v in [threshold, slope, sparsity] {
        b.extend_from_slice(&f32::to_le_bytes(v));
    }
    b.push(c.body.id());
    b.push(0);
    b.extend_from_slice(&(body.len() as u16).to_le_bytes());
    b.extend_from_slice(&body);
    b
}

fn read_se(b: &[u8]) -> Result<SeConfig, ParamError> {
    at_least("SE parameters", b, SE_FIXED_LEN)?;
    let f32_at = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let flags = b[8];
    reserved("SE flags bits 2..7", u64::from(flags & !3))?;
    reserved("SE byte 25", b[25].into())?;
    let (mode, mask, keep_every) = (b[9], b[10], b[11]);
    let (threshold, slope, sparsity) = (f32_at(12), f32_at(16), f32_at(20));
    let unused = |field: &'static str, value: u64| -> Result<(), ParamError> {
        if value == 0 {
            Ok(())
        } else {
            Err(ParamError::Unused { field, mode, value })
        }
    };
    let adaptive = match mode {
        0 => {
            unused("mask", mask.into())?;
            unused("keep_every", keep_every.into())?;
            unused("threshold", threshold.to_bits().into())?;
            unused("slope", slope.to_bits().into())?;
            unused("sparsity", sparsity.to_bits().into())?;
            Adaptive::Off
        }
        1 => {
            if mask > 1 {
                return Err(ParamError::Unknown {
                    field: "SE mask",
                    value: mask.into(),
                    known: "0 (per patch) or 1 (per element)",
                });
            }
            unused("sparsity", sparsity.to_bits().into())?;
            Adaptive::Soft {
                per_element: mask == 1,
                keep_every,
                threshold,
                slope,
            }
        }
        2 => {
            unused("mask", mask.into())?;
            unused("slope", slope.to_bits().into())?;
            Adaptive::Hard {
                keep_every,
                threshold,
                sparsity,
            }
        }
        other => {
            return Err(ParamError::Unknown {
                field: "SE adaptive mode",
                value: other.into(),
                known: "0 (off), 1 (soft) or 2 (hard)",
            });
        }
    };
    let body_len = usize::from(u16_at(b, 26));
    if b.len() != SE_FIXED_LEN + body_len {
        return Err(ParamError::LengthField {
            field: "SE body_len",
            declared: body_len,
            found: b.len() - SE_FIXED_LEN,
        });
    }
    let body_bytes = &b[SE_FIXED_LEN..];
    let body = match b[24] {
        1 => SeBody::Pac(read_pac(body_bytes)?),
        2 => SeBody::Trace(read_trace(body_bytes)?),
        3 => SeBody::PatchTst(read_patchtst(body_bytes)?),
        other => {
            return Err(ParamError::Unknown {
                field: "SE body backbone id",
                value: other.into(),
                known: "1 (PAC), 2 (TRACE) or 3 (PatchTST)",
            });
        }
    };
    let c = SeConfig {
        context: u16_at(b, 0),
        patch: b[2],
        stride: b[3],
        embed: u16_at(b, 4),
        tokens: u16_at(b, 6),
        positions: flags & 1 == 1,
        newest_init: flags & 2 == 2,
        adaptive,
        body,
    };
    c.validate()?;
    Ok(c)
}
