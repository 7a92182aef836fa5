//! CM revisions 5 and 6's confidence inputs (doc/FORMAT.md 4.16.1 and
//! 4.17.1): they round trip and code deterministically on text, code,
//! binary data and detected kinds (which get none), and shrink real text
//! and code against revision 4.

use crate::common;
use common::{
    assert_text_and_code_shrink, config, mixed_text, round_trip, round_trip_each, text_test_inputs,
};

#[test]
fn revisions_5_and_6_round_trip_and_are_deterministic() {
    round_trip_each(&[5, 6], &text_test_inputs(7), true);
}

#[test]
fn revisions_5_and_6_round_trip_without_the_text_family() {
    let mut cfg = config(6);
    cfg.word = false;
    round_trip(&mixed_text(), &cfg);
    cfg.revision = 5;
    round_trip(&mixed_text(), &cfg);
}

#[test]
fn confidence_inputs_beat_revision_4_on_text_and_code() {
    // Real text of this repository (Markdown prose and Rust code):
    // revisions 5 and 6 must each code it smaller than revision 4 (their
    // only change so far is the confidence inputs).
    assert_text_and_code_shrink(&[(4, 5), (4, 6)]);
}
