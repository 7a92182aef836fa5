//! CM revision 22's learning-speed change (doc/FORMAT.md 4.33.3): the
//! configured families' mixer and APM stages learn faster at the start of
//! a block. Revision 22 round trips and codes deterministically on text,
//! code, binary data, empty and one-byte inputs and inputs whose header
//! lies, and codes small text and code inputs smaller than revision 20.

use crate::common;
use common::{
    config, recurring_sentences, round_trip, round_trip_each, round_trip_text_behind_lying_headers,
    text_test_inputs,
};

#[test]
fn revision_22_round_trips_text_code_and_hard_cases() {
    round_trip_each(&[22], &text_test_inputs(22), true);
    let words = [
        "the", "model", "learns", "fast", "when", "a", "file", "is", "small", "and", "every",
        "byte", "counts",
    ];
    round_trip_text_behind_lying_headers(22, |len, seed| {
        recurring_sentences(&words, seed as u32, 4, 6, len)
    });
}

/// Small files are where the change pays: the frozen inputs' first 4,000
/// and 16,000 bytes (Markdown prose, Rust code, this format's text) code
/// smaller at revision 22 than at 20.
#[test]
fn revision_22_codes_small_text_and_code_smaller_than_20() {
    let readme = include_bytes!("../data/readme.md");
    let code = include_bytes!("../data/cm-mod.rs.txt");
    let format = include_bytes!("../data/format.md");
    let (mut old, mut new) = (0, 0);
    for data in [&readme[..], &code[..], &format[..]] {
        for len in [4_000, 16_000] {
            let d = &data[..len.min(data.len())];
            let a = round_trip(d, &config(20)).len();
            let b = round_trip(d, &config(22)).len();
            eprintln!("{} bytes: revision 20 {a}, 22 {b}", d.len());
            old += a;
            new += b;
        }
    }
    eprintln!("in all: revision 20 {old}, 22 {new}");
    assert!(new < old, "revision 22 {new} bytes, revision 20 {old}");
}
