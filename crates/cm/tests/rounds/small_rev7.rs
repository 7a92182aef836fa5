//! CM revision 7's spreadsheet cell family and bi-level family
//! (doc/FORMAT.md 4.18.4): a generated BIFF stream and a generated fax-like
//! bitmap round-trip at revisions 7 and 8 and code smaller than at
//! revision 5; a stream that only starts like BIFF (a lying header) and a
//! bitmap whose rows the early row detector finds round-trip too.

use crate::common;
use common::{config, fax, noise, round_trip, round_trip_each, xorshift32};

/// A BIFF2 stream like a questionnaire's: a BOF record, then per row one
/// cell per column, an INTEGER (type 2) answer code whose distribution
/// depends on the column, or, for skipped questions, a BOOLERR (type 5)
/// `#N/A` when the answer two columns to the left was 9.
fn biff(rows: u16, cols: u16) -> Vec<u8> {
    let mut out = vec![9, 0, 4, 0, 2, 0, 16, 0];
    let mut rnd = xorshift32(0x2545_F491);
    for row in 1..=rows {
        let mut answers = Vec::new();
        for col in 0..cols {
            let skip = col >= 2 && answers[col as usize - 2] == 9;
            let answer = if skip {
                0
            } else {
                // Each column has its own few likely codes.
                let r = rnd();
                let k = u16::from(r.is_multiple_of(4)) + u16::from(r.is_multiple_of(16));
                (col * 7 + k * 3) % 10
            };
            answers.push(answer);
            let (ty, value) = if skip {
                (5u8, [0, 1])
            } else {
                (2, answer.to_le_bytes())
            };
            out.extend([ty, 0, 9, 0]);
            out.extend(row.to_le_bytes());
            out.extend(col.to_le_bytes());
            out.extend([0, 3, 3]);
            out.extend(value);
        }
    }
    out.extend([0x0A, 0, 0, 0]);
    out
}

#[test]
fn revision_7_codes_a_spreadsheet_smaller_than_revision_5() {
    let data = biff(120, 40);
    let r5 = round_trip(&data, &config(5)).len();
    let r7 = round_trip(&data, &config(7)).len();
    let r8 = round_trip(&data, &config(8)).len();
    assert!(r7 * 100 < r5 * 95, "revision 7 {r7} vs revision 5 {r5}");
    assert!(r8 * 100 < r5 * 95, "revision 8 {r8} vs revision 5 {r5}");
}

#[test]
fn a_stream_that_only_starts_like_biff_round_trips() {
    // A BOF record, then noise: record lengths and types are garbage.
    let mut data = vec![9, 0, 4, 0, 2, 0, 16, 0];
    data.extend(noise(20_000, 7));
    // Cells whose lengths lie (0 and 0xFFFF), then a truncated record.
    data.extend([2, 0, 0, 0, 2, 0, 0xFF, 0xFF, 1, 2, 3]);
    data.extend(&biff(10, 10)[8..]);
    data.extend([2, 0, 9]);
    round_trip_each(&[7, 8], &[&data], false);
}

#[test]
fn revision_7_codes_a_fax_smaller_than_revision_5() {
    // 40 blank rows, then the streaks: the row detector of revision 7 sees
    // the rows before the record detector does.
    let mut data = vec![0u8; 40 * 96];
    data.extend(fax(96, 900));
    let r5 = round_trip(&data, &config(5)).len();
    let r7 = round_trip(&data, &config(7)).len();
    let r8 = round_trip(&data, &config(8)).len();
    assert!(r7 * 100 < r5 * 97, "revision 7 {r7} vs revision 5 {r5}");
    assert!(r8 * 100 < r5 * 97, "revision 8 {r8} vs revision 5 {r5}");
}

#[test]
fn mostly_zero_data_without_rows_round_trips() {
    // 70% zero bytes, the rest noise: the row detector must not take it for
    // a bitmap, and whatever it decides must decode.
    let data: Vec<u8> = noise(90_000, 11)
        .into_iter()
        .enumerate()
        .map(|(i, b)| if i % 10 < 7 { 0 } else { b | 1 })
        .collect();
    round_trip_each(&[7, 8], &[&data], false);
}
