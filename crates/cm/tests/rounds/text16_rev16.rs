//! CM revision 16's text family (doc/FORMAT.md 4.27.1): direct contexts
//! with counted rates and the last word on the final probability.
//! Revision 16 round trips and codes deterministically on text, code,
//! binary data, detected kinds, empty and one-byte inputs and inputs whose
//! header lies, and codes generated English-like text and real text and
//! code smaller than revision 14.

use crate::common;
use common::{
    assert_text_and_code_shrink, coded_len, config, round_trip_each,
    round_trip_text_behind_lying_headers, text_test_inputs,
};

/// Generated English-like prose: sentences of words drawn from a small
/// vocabulary with a skewed, seeded choice, punctuation and line breaks
/// (`len` bytes or a few more).
fn prose(len: usize, seed: u64) -> Vec<u8> {
    const WORDS: [&str; 40] = [
        "the",
        "of",
        "and",
        "a",
        "to",
        "in",
        "is",
        "was",
        "that",
        "for",
        "it",
        "with",
        "as",
        "his",
        "on",
        "be",
        "at",
        "by",
        "had",
        "not",
        "they",
        "which",
        "her",
        "said",
        "there",
        "would",
        "little",
        "before",
        "morning",
        "window",
        "garden",
        "across",
        "because",
        "whispered",
        "remembered",
        "something",
        "children",
        "together",
        "afterwards",
        "nothing",
    ];
    let mut next = common::xorshift64(seed | 1);
    let mut out = String::new();
    let mut col = 0;
    while out.len() < len {
        let words = 4 + (next() % 9) as usize;
        for k in 0..words {
            // Skewed: small indices (common words) more often.
            let r = next();
            let i = ((r % 40) * ((r >> 8) % 40) / 40) as usize;
            let w = WORDS[i];
            if k == 0 {
                let mut c = w.chars();
                let first = c.next().unwrap().to_ascii_uppercase();
                out.push(first);
                out.push_str(c.as_str());
            } else {
                out.push_str(w);
            }
            col += w.len() + 1;
            if k + 1 < words {
                if next().is_multiple_of(11) {
                    out.push(',');
                }
                if col > 64 {
                    out.push('\n');
                    col = 0;
                } else {
                    out.push(' ');
                }
            }
        }
        out.push_str(if next().is_multiple_of(5) {
            "?\n"
        } else {
            ". "
        });
    }
    out.into_bytes()
}

#[test]
fn revision_16_round_trips_and_is_deterministic() {
    let mut inputs = text_test_inputs(23);
    inputs.push(prose(30_000, 5));
    round_trip_each(&[16], &inputs, true);
}

#[test]
fn revision_16_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(16, prose);
}

#[test]
fn revision_16_beats_14_on_generated_prose() {
    let data = prose(60_000, 7);
    let a = coded_len(&data, &config(14));
    let b = coded_len(&data, &config(16));
    eprintln!("{} bytes of prose: revision 14 {a}, 16 {b}", data.len());
    assert!(b < a, "revision 16 {b} bytes, revision 14 {a}");
}

#[test]
fn revision_16_beats_14_on_text_and_code() {
    assert_text_and_code_shrink(&[(14, 16)]);
}
