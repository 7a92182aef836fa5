//! CM revision 12's bi-level family (doc/FORMAT.md 4.23.6): round trips of
//! bitmaps, of data that looks like one and then is not, of truncated
//! pages; and the family pays on a page of the corpus' fax.

mod common;

use common::{coded_len, config, fax, noise, round_trip_each};

/// Rows `y0..y0 + h` of the corpus' calgary.pic (a 1728 x 2376 bi-level
/// fax, rows of 216 bytes), if the corpus is present; else a generated page
/// of text: lines of 8 x 12 glyphs drawn from 24 random ones.
fn page(y0: usize, h: usize) -> Vec<u8> {
    const WIDTH: usize = 216;
    if let Ok(data) = std::fs::read("/work/shared/corpus/files/calgary.pic")
        && data.len() == WIDTH * 2376
    {
        return data[y0 * WIDTH..(y0 + h) * WIDTH].to_vec();
    }
    let glyphs = noise(24 * 12, 77);
    let pick = noise(WIDTH * h, 78);
    let mut out = vec![0u8; WIDTH * h];
    for y in 0..h {
        let (line, row) = (y / 16, y % 16);
        if row >= 12 {
            continue;
        }
        for x in 8..WIDTH - 8 {
            let g = usize::from(pick[line * WIDTH + x]) % 24;
            out[y * WIDTH + x] = glyphs[g * 12 + row] & 0x7E;
        }
    }
    out
}

#[test]
fn revision_12_round_trips_bitmaps_and_impostors() {
    // A bitmap that turns into noise after its rows were detected.
    let mut lying = fax(64, 200);
    lying.extend(noise(3000, 3));
    // A PBM header whose size lies, then a short bitmap.
    let mut pbm = b"P4\n1728 2376\n".to_vec();
    pbm.extend(fax(216, 40));
    // A page cut in the middle of a row.
    let mut cut = page(500, 80);
    cut.truncate(cut.len() - 77);
    // Narrow rows: the templates' windows reach past the row's ends.
    let inputs = [fax(64, 300), fax(16, 400), lying, pbm, cut, vec![0u8; 5000]];
    round_trip_each(&[12], &inputs, false);
}

#[test]
fn revision_12_codes_a_bitmap_smaller_than_revision_10() {
    let data = page(400, 300);
    let r10 = coded_len(&data, &config(10));
    let r12 = coded_len(&data, &config(12));
    assert!(
        r12 * 1000 < r10 * 990,
        "revision 12 {r12} bytes, revision 10 {r10}"
    );
}
