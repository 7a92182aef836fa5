//! The mixed model's `params` (doc/FORMAT.md sections 4.9 and 4.13).

use super::{
    ParamError, at_least, read_cm, read_neural, read_serial, reserved, u16_at, write_cm,
    write_neural, write_serial,
};
use crate::MixConfig;

/// The mix `params` of `c` (doc/FORMAT.md section 4.9).
pub fn write_mix(c: &MixConfig) -> Vec<u8> {
    let flags = u8::from(c.neural.is_some()) | (u8::from(c.serial.is_some()) << 1);
    let mut p = vec![flags, c.cm.revision, 0, 0];
    p.extend_from_slice(&write_cm(&c.cm));
    if let Some(n) = &c.neural {
        p.extend_from_slice(&write_neural(n));
    }
    if let Some(s) = &c.serial {
        p.extend_from_slice(&write_serial(s));
    }
    p
}

/// Parses the mix `params`; `streams` and `context` come from the header.
pub fn read_mix(p: &[u8], streams: u32, context: u16) -> Result<MixConfig, ParamError> {
    at_least("mix params", p, 16)?;
    if p[0] > 2 {
        return Err(ParamError::Reserved {
            field: "mix flags (bits 0 and 1 exclusive, bits 2..7)",
            value: p[0].into(),
        });
    }
    reserved("mix params bytes 2..3", u64::from(u16_at(p, 2)))?;
    let cm = read_cm(&p[4..16], p[1])?;
    // Revision 3 is a model of its own; revision 4's families fill the
    // mixer's 32 inputs, leaving no room for a network's (section 4.15);
    // revisions 5 and 6 (64 inputs) take the serial network only, never a
    // stream-cutting parallel one (section 4.16).
    if (cm.revision == 3 || cm.revision == 4) && p[0] != 0 {
        return Err(ParamError::Mismatch {
            field: "mix flags",
            found: p[0].into(),
            why: format!("CM revision {} takes no network", cm.revision),
        });
    }
    if cm.revision >= 5 && p[0] == 1 {
        return Err(ParamError::Mismatch {
            field: "mix flags",
            found: p[0].into(),
            why: format!("CM revision {} takes only the serial network", cm.revision),
        });
    }
    let neural = if p[0] == 1 {
        Some(read_neural(&p[16..], streams, context)?)
    } else {
        let serial = if p[0] == 2 {
            Some(read_serial(&p[16..])?)
        } else if p.len() != 16 {
            return Err(ParamError::Length {
                what: "mix params without a network",
                found: p.len(),
                expected: 16,
                at_least: false,
            });
        } else {
            None
        };
        if streams != 1 {
            return Err(ParamError::Mismatch {
                field: "streams",
                found: streams.into(),
                why: "must be 1 without a network".into(),
            });
        }
        if context != 0 {
            return Err(ParamError::Mismatch {
                field: "context",
                found: context.into(),
                why: "must be 0 without a network".into(),
            });
        }
        return Ok(MixConfig {
            cm,
            neural: None,
            serial,
        });
    };
    Ok(MixConfig {
        cm,
        neural,
        serial: None,
    })
}
