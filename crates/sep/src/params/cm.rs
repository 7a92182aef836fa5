//! Context-mixing parameters (`cm_params`, doc/FORMAT.md section 4.10).

use super::{ParamError, fixed, flag};
use sep_cm::CmConfig;

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
