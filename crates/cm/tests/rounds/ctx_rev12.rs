//! CM revision 12's second input per hashed context (doc/FORMAT.md
//! 4.23.3): revision 12 round trips and codes deterministically on text,
//! code, binary data and detected kinds (a lying header switches to a
//! kind's families, which have no second inputs), and the inputs pay on
//! real text and code against revision 10.

use crate::common;
use common::{
    coded_len, config, lean_config, mixed_text, round_trip, round_trip_each, text_test_inputs,
    wav_header,
};

#[test]
fn revision_12_round_trips_and_is_deterministic() {
    round_trip_each(&[12], &text_test_inputs(23), true);
}

#[test]
fn revision_12_round_trips_with_few_inputs_and_lying_headers() {
    round_trip(&mixed_text(), &lean_config(12));
    // A WAV header that promises far more samples than follow, then text:
    // the detector installs the audio families mid-block.
    let mut lying = wav_header(2, 16, 44_100, 1_000_000);
    lying.extend(mixed_text());
    round_trip(&lying, &config(12));
    // A truncated header.
    round_trip(&lying[..30], &config(12));
}

#[test]
fn revision_12_beats_10_on_text_and_code() {
    let readme = include_bytes!("../data/readme.md");
    let code = include_bytes!("../data/cm-mod.rs.txt");
    for data in [&readme[..readme.len().min(20_000)], &code[..20_000]] {
        let a = coded_len(data, &config(10));
        let b = coded_len(data, &config(12));
        eprintln!("{} bytes: revision 10 {a}, 12 {b}", data.len());
        assert!(b < a, "revision 12 {b} bytes, revision 10 {a}");
    }
}
