//! CM revisions 5 and 6's confidence inputs (doc/FORMAT.md 4.16.1 and
//! 4.17.1): they round trip and code deterministically on text, code,
//! binary data and detected kinds (which get none), and shrink real text
//! and code against revision 4.

mod common;
use common::{config, mixed_text, noise, round_trip, round_trip_each, soft_bmp};

#[test]
fn revisions_5_and_6_round_trip_and_are_deterministic() {
    let readme = include_bytes!("../../../README.md");
    let mut bin = noise(6_000, 7);
    bin.extend(&readme[..readme.len().min(4_000)]);
    let bmp = soft_bmp(48, 32);
    round_trip_each(
        &[5, 6],
        &[
            &mixed_text()[..],
            &readme[..readme.len().min(12_000)],
            &bin,
            &bmp,
            b"",
            b"x",
        ],
        true,
    );
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
    let readme = include_bytes!("../../../README.md");
    let code = include_bytes!("../src/cm/mod.rs");
    for data in [&readme[..readme.len().min(40_000)], &code[..]] {
        let v4 = round_trip(data, &config(4)).len();
        let v5 = round_trip(data, &config(5)).len();
        let v6 = round_trip(data, &config(6)).len();
        eprintln!("{} bytes: revision 4 {v4}, 5 {v5}, 6 {v6}", data.len());
        assert!(v5 < v4, "revision 5 {v5} bytes, revision 4 {v4}");
        assert!(v6 < v4, "revision 6 {v6} bytes, revision 4 {v4}");
    }
}
