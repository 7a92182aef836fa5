//! Context-mixing parameters (`cm_params`, doc/FORMAT.md section 4.10).

use super::{ParamError, fixed, flag};
use sep_cm::{CmConfig, LstmConfig};

/// `cm_params` of `c` (12 bytes: `orders, word, sparse, record, long,
/// match_min, match2_min, table_bits, match_bits, selectors, apms, image`).
/// The revision is not among them: it is the mix params' `cm_revision`.
pub fn write_cm(c: &CmConfig) -> Vec<u8> {
    vec![
        c.orders,
        u8::from(c.word),
        u8::from(c.sparse),
        u8::from(c.record),
        c.long,
        c.match_min,
        c.match2_min,
        c.table_bits,
        c.match_bits,
        c.selectors,
        c.apms,
        u8::from(c.image),
    ]
}

/// Parses `cm_params` for CM revision `revision` and validates the result.
pub fn read_cm(b: &[u8], revision: u8) -> Result<CmConfig, ParamError> {
    let b = fixed::<12>("CM parameters", b)?;
    let c = CmConfig {
        orders: b[0],
        word: flag("CM flag word", b[1])?,
        sparse: flag("CM flag sparse", b[2])?,
        record: flag("CM flag record", b[3])?,
        long: b[4],
        match_min: b[5],
        match2_min: b[6],
        table_bits: b[7],
        match_bits: b[8],
        selectors: b[9],
        apms: b[10],
        image: flag("CM flag image", b[11])?,
        revision,
    };
    c.validate()?;
    Ok(c)
}

/// The serial network's parameters (8 bytes, doc/FORMAT.md section 4.13):
/// `kind` (1: LSTM; 2: LSTM with a decaying rate, 4.13.1; 3: kind 2 with
/// delayed weights, 4.13.2; 4: kind 3 with no selector and a quiet start,
/// 4.13.3), `cells`, `horizon`, `lr` (u16, little-endian), `delay` (0
/// unless kind 3 or 4), 2 reserved zero bytes.
pub fn write_serial(c: &LstmConfig) -> Vec<u8> {
    let lr = c.lr.to_le_bytes();
    vec![c.kind, c.cells, c.horizon, lr[0], lr[1], c.delay, 0, 0]
}

/// Parses and validates the serial network's parameters.
pub fn read_serial(b: &[u8]) -> Result<LstmConfig, ParamError> {
    let b = fixed::<8>("serial network parameters", b)?;
    if !(1..=4).contains(&b[0]) {
        return Err(ParamError::Unknown {
            field: "serial network kind",
            value: b[0].into(),
            known: "1 (LSTM), 2 (decaying rate), 3 (delayed weights), 4 (no selector, quiet start)",
        });
    }
    super::reserved(
        "serial network bytes 6..7",
        u64::from(super::u32_at(b, 4) >> 16),
    )?;
    let c = LstmConfig {
        kind: b[0],
        cells: b[1],
        horizon: b[2],
        lr: super::u16_at(b, 3),
        delay: b[5],
    };
    c.validate()?;
    Ok(c)
}
