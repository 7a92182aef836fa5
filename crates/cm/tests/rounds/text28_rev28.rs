//! CM revision 28's text change (doc/FORMAT.md 4.39.2): two mixer
//! weight-set selectors by the position in the current word (with the
//! class of the byte before the word and the partial byte; with the match
//! length, the expected bit and the bit position). Revision 28 round trips
//! and codes deterministically on text, code, binary data, empty and
//! one-byte inputs and inputs whose header lies, and codes real English
//! text (this repository's README and FORMAT excerpts) smaller than
//! revision 26.

use crate::common;
use common::{
    coded_len, config, round_trip_each, round_trip_text_behind_lying_headers, text_test_inputs,
};

/// `len` bytes (or fewer) of real English text: the README and FORMAT
/// excerpts of tests/data, repeated from the start with the line number
/// `seed` first.
fn english(len: usize, seed: u64) -> Vec<u8> {
    let readme = include_bytes!("../data/readme.md");
    let format = include_bytes!("../data/format.md");
    let text: Vec<u8> = readme.iter().chain(format.iter()).copied().collect();
    let start = text
        .split(|&b| b == b'\n')
        .take(seed as usize % 50)
        .map(|l| l.len() + 1)
        .sum::<usize>()
        .min(text.len());
    text[start..].iter().copied().take(len).collect()
}

#[test]
fn revision_28_round_trips_and_is_deterministic() {
    let mut inputs = text_test_inputs(41);
    inputs.push(english(20_000, 3));
    round_trip_each(&[28], &inputs, true);
}

#[test]
fn revision_28_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(28, english);
}

#[test]
fn revision_28_beats_26_on_english_text() {
    let data = english(52_000, 0);
    let a = coded_len(&data, &config(26));
    let b = coded_len(&data, &config(28));
    eprintln!(
        "{} bytes of README and FORMAT text: revision 26 {a}, 28 {b}",
        data.len()
    );
    assert!(b < a, "revision 28 {b} bytes, revision 26 {a}");
}
