//! CM revision 12's bi-level family (doc/FORMAT.md 4.23.6): round trips of
//! bitmaps, of data that looks like one and then is not, of truncated
//! pages; and the family pays on a page of the corpus' fax.

use crate::common;

use common::{coded_len, config, fax, noise, pic_page as page, round_trip_each};

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
