//! CM revision 32's spreadsheet family (doc/FORMAT.md 4.43.3): column
//! histograms of whole cells and a final refinement from the expected
//! byte. A generated BIFF2 workbook-like stream (INTEGER, NUMBER, LABEL
//! and BOOLERR cells in a full grid), a stream that only starts like BIFF
//! (a lying header, lying and truncated records) and tiny inputs round trip
//! at revisions 30 and 32 (the grid twice at 32: deterministic); revision 32 codes the
//! grid smaller than revision 30.

use crate::common;
use common::{config, noise, round_trip, round_trip_each, xorshift32};

/// A BIFF2 stream like a questionnaire's table: a BOF record, then per row
/// one cell per column: an ID (INTEGER, the row's own number, not in
/// order), answer codes (INTEGER) with a distribution of their own per
/// column, a NUMBER (8-byte float) column, a LABEL column and, for skipped
/// questions, BOOLERR `#NULL!` cells; an EOF record at the end.
fn workbook(rows: u16, cols: u16) -> Vec<u8> {
    let mut out = vec![9, 0, 4, 0, 2, 0, 16, 0];
    let mut rnd = xorshift32(0x2545_F491);
    for row in 0..rows {
        for col in 0..cols {
            let r = rnd();
            let mut cell = |ty: u8, value: &[u8]| {
                out.extend([ty, 0, 7 + value.len() as u8, 0]);
                out.extend(row.to_le_bytes());
                out.extend(col.to_le_bytes());
                out.extend([0, 3, 3]);
                out.extend(value);
            };
            match col {
                0 => cell(2, &(100 * (row % 5) + row / 5).to_le_bytes()),
                5 => cell(3, &f64::from(r % 1000).to_le_bytes()),
                9 => cell(4, &[2, b'Q', b'0' + (r % 3) as u8]),
                _ if r.is_multiple_of(7) => cell(5, &[0, 1]),
                _ => {
                    // Each column has a few likely codes.
                    let k = u16::from(r.is_multiple_of(4)) + u16::from(r.is_multiple_of(16));
                    cell(2, &((col * 7 + k * 3) % 10).to_le_bytes());
                }
            }
        }
    }
    out.extend([0x0A, 0, 0, 0]);
    out
}

#[test]
fn revision_32_round_trips_spreadsheets_and_tiny_inputs() {
    let grid = workbook(30, 24);
    // A BOF record, then noise: record lengths and types are garbage.
    let mut lying = vec![9, 0, 4, 0, 2, 0, 16, 0];
    lying.extend(noise(6_000, 7));
    // Cells whose lengths lie (0 and 0xFFFF), then a truncated record.
    lying.extend([2, 0, 0, 0, 2, 0, 0xFF, 0xFF, 1, 2, 3]);
    lying.extend(&workbook(6, 12)[8..]);
    lying.extend([2, 0, 9]);
    // Cells cut short: the grid with its last record truncated; a column
    // past the histograms' range.
    let truncated = grid[..grid.len() - 7].to_vec();
    let mut far = workbook(4, 4);
    far.extend([2, 0, 9, 0, 1, 0, 0x00, 0x40, 0, 3, 3, 5, 0]);
    let cases: Vec<Vec<u8>> = vec![
        grid,
        lying,
        truncated,
        far,
        Vec::new(),
        vec![9],
        vec![9, 0, 4, 0],
    ];
    round_trip_each(&[30, 32], &cases, false);
    // Deterministic: the grid codes the same twice.
    round_trip_each(&[32], &cases[..1], true);
}

/// Revision 32 pays on a workbook-like grid: smaller than revision 30.
#[test]
fn revision_32_beats_30_on_a_grid() {
    let data = workbook(60, 40);
    let r30 = round_trip(&data, &config(30)).len();
    let r32 = round_trip(&data, &config(32)).len();
    assert!(
        r32 * 100 < r30 * 98,
        "revision 32 {r32} vs revision 30 {r30}"
    );
}
