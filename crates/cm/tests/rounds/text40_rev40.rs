//! CM revision 40 on text (doc/FORMAT.md 4.51.1): revision 40 round trips
//! and codes deterministically on text, markup, mixed binary and text,
//! empty and one-byte inputs and text behind lying headers. (Round 19's
//! text-mixer variants were measured and not kept, so revision 40 adds no
//! text model of its own here; these cases guard whatever revision 40
//! gains from the round's other changes.)

use crate::common;
use common::{noise, round_trip_each, round_trip_text_behind_lying_headers, text_test_inputs};

/// About `len` bytes of the frozen README sample, from an offset chosen by
/// `seed`, repeated as needed.
fn readme_text(len: usize, seed: u64) -> Vec<u8> {
    let readme = include_bytes!("../data/readme.md");
    readme
        .iter()
        .cycle()
        .skip((seed as usize * 991) % readme.len())
        .take(len)
        .copied()
        .collect()
}

#[test]
fn revision_40_round_trips_text_and_is_deterministic() {
    let mut inputs = text_test_inputs(40);
    let mut mixed = noise(3_000, 7);
    mixed.extend(readme_text(6_000, 3));
    mixed.extend(noise(2_000, 8));
    mixed.extend(readme_text(3_000, 4));
    inputs.push(mixed);
    inputs.push(Vec::new());
    inputs.push(b"e".to_vec());
    round_trip_each(&[40], &inputs, true);
}

#[test]
fn revision_40_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(40, readme_text);
}
