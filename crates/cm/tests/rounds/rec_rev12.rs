//! CM revision 12's spreadsheet family (doc/FORMAT.md 4.23.5): round trips
//! at revisions 10 and 12 of generated questionnaires (BIFF2 cells), of
//! streams whose BOF lies or whose records are cut, and that revision 12
//! codes a questionnaire with an identifier column and dependent answers
//! smaller than revision 10.

use crate::common;
use common::{coded_len, config, noise, round_trip_each};

/// One BIFF2 cell record: INTEGER (`Some(v)`) or BOOLERR (`None`, #N/A).
fn cell(out: &mut Vec<u8>, row: u16, col: u16, v: Option<u16>) {
    match v {
        Some(v) => {
            out.extend([2, 0, 9, 0]);
            out.extend(row.to_le_bytes());
            out.extend(col.to_le_bytes());
            out.extend([0, 3, 3]);
            out.extend(v.to_le_bytes());
        }
        None => {
            out.extend([5, 0, 9, 0]);
            out.extend(row.to_le_bytes());
            out.extend(col.to_le_bytes());
            out.extend([0, 3, 3, 0, 1]);
        }
    }
}

/// A BIFF2 questionnaire of `rows` rows and `cols` columns (at least 6):
/// column 0 numbers the respondents by group (`group * 100 + k`, groups
/// interleaved), column 1 is an age, column 2 an answer code, column 3 a
/// function of column 2 (not equal to it), column 4 missing unless column
/// 2 is odd, the others answer codes.
fn questionnaire(rows: u16, cols: u16, seed: u64) -> Vec<u8> {
    let mut out = vec![9, 0, 4, 0, 2, 0, 16, 0];
    let pick = noise(usize::from(rows) * usize::from(cols) + 1, seed);
    let mut next = [1u16, 200, 300, 500, 600, 800, 900, 1100];
    for r in 0..rows {
        let p = |c: u16| u16::from(pick[usize::from(r) * usize::from(cols) + usize::from(c)]);
        let answer = p(2) % 6 + 1;
        for c in 0..cols {
            let v = match c {
                0 => {
                    let g = usize::from(p(0)) % next.len();
                    next[g] += 1;
                    Some(next[g] - 1)
                }
                1 => Some(18 + p(1) % 50),
                2 => Some(answer),
                3 => Some([7, 3, 9, 1, 4, 2][usize::from(answer - 1)]),
                4 => (answer % 2 == 1).then_some(p(4) % 4 + 1),
                _ => Some(p(c) % 5 + 1),
            };
            cell(&mut out, r, c, v);
        }
    }
    out.extend([10, 0, 0, 0]);
    out
}

#[test]
fn revisions_10_and_12_round_trip_spreadsheets() {
    // A BOF record, then noise: the layout lies.
    let mut lying = questionnaire(0, 6, 1);
    lying.truncate(8);
    lying.extend(noise(3000, 2));
    // Cells, then a record cut in its value, then text.
    let mut cut = questionnaire(12, 8, 3);
    cut.truncate(cut.len() - 6);
    cut.extend(b"and then the file goes on as text, not as records at all".repeat(20));
    // Columns beyond the family's row (512 and more), values near 65535.
    let mut wide = vec![9, 0, 4, 0, 2, 0, 16, 0];
    for r in 0..6u16 {
        for c in 500..530u16 {
            cell(&mut wide, r, c, Some(65529 + (r + c) % 7));
        }
    }
    let inputs = [questionnaire(30, 12, 4), lying, cut, wide];
    round_trip_each(&[10, 12], &inputs, true);
}

#[test]
fn revision_12_codes_a_questionnaire_smaller() {
    let data = questionnaire(160, 10, 5);
    let r10 = coded_len(&data, &config(10));
    let r12 = coded_len(&data, &config(12));
    // Written: revision 10 959 bytes, revision 12 857 (11% smaller; the
    // family off gives revision 10's).
    assert!(
        r12 * 100 < r10 * 95,
        "revision 12 {r12} bytes, revision 10 {r10}"
    );
}
