//! CM revision 32's text change (doc/FORMAT.md 4.43.1): word-prediction
//! contexts (the word that followed the last two words, the word that
//! followed the last word the time before, the sentence's first word with
//! the word so far) and an APM stage keyed by the last word and the
//! current word so far. Revision 32 round trips and codes
//! deterministically on prose with repeated word pairs, text, code,
//! binary noise, empty and one-byte inputs and inputs whose header lies,
//! and codes generated prose of real English words smaller than revision
//! 30.

use crate::common;
use common::{
    coded_len, config, noise, round_trip_each, round_trip_text_behind_lying_headers,
    successor_prose, text_test_inputs,
};

#[test]
fn revision_32_round_trips_and_is_deterministic() {
    let mut inputs = text_test_inputs(47);
    inputs.push(successor_prose(12_000, 5));
    inputs.push(noise(5_000, 9));
    inputs.push(Vec::new());
    inputs.push(b"a".to_vec());
    inputs.push(b"the cat the cat the dog, the cat.\nThe".to_vec());
    round_trip_each(&[32], &inputs, true);
}

#[test]
fn revision_32_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(32, successor_prose);
}

#[test]
fn revision_32_beats_30_on_prose() {
    let data = successor_prose(40_000, 3);
    let a = coded_len(&data, &config(30));
    let b = coded_len(&data, &config(32));
    eprintln!(
        "{} bytes of generated prose: revision 30 {a}, 32 {b}",
        data.len()
    );
    assert!(b < a, "revision 32 {b} bytes, revision 30 {a}");
}
