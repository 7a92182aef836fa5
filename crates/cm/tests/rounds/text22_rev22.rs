//! CM revision 22's text change (doc/FORMAT.md 4.33.1): direct contexts of
//! English morphology (word stems and suffix classes). Revision 22 round
//! trips and codes deterministically on text, code, binary data,
//! generated English prose, empty and one-byte inputs and inputs whose
//! header lies, and codes generated English prose smaller than revision 20.

use crate::common;
use common::{
    coded_len, config, round_trip_each, round_trip_text_behind_lying_headers, text_test_inputs,
};

/// Generated English prose (`len` bytes or a few more), seeded: sentences
/// of a small grammar whose words are stems with inflections and
/// derivations (`-s`, `-ed`, `-ing`, `-ly`, `-ness`, `-ful`, `-ous`,
/// `-tion`...), function words, capitals and punctuation, in paragraphs.
fn prose(len: usize, seed: u64) -> Vec<u8> {
    const NOUNS: [&str; 12] = [
        "river", "king", "farmer", "garden", "letter", "market", "sailor", "church", "forest",
        "teacher", "window", "soldier",
    ];
    const NOUN_SUFFIXES: [&str; 4] = ["", "s", "", "'s"];
    const VERBS: [&str; 10] = [
        "walk", "open", "watch", "call", "turn", "remember", "answer", "follow", "visit", "kill",
    ];
    const VERB_SUFFIXES: [&str; 5] = ["ed", "s", "ing", "ed", ""];
    const ADJECTIVES: [&str; 8] = [
        "care", "danger", "hope", "joy", "fame", "power", "mass", "grace",
    ];
    const ADJ_SUFFIXES: [&str; 4] = ["ful", "ous", "less", "ful"];
    const ADVERBS: [&str; 6] = ["quick", "slow", "sudden", "quiet", "near", "bright"];
    const DETERMINERS: [&str; 6] = ["the", "a", "his", "their", "that", "every"];
    const PREPOSITIONS: [&str; 6] = ["of", "in", "with", "from", "to", "by"];
    const CONJUNCTIONS: [&str; 4] = ["and", "but", "while", "because"];
    let mut rng = common::xorshift64(seed | 1);
    let mut next = move |n: usize| (rng() >> 16) as usize % n;
    let mut out = String::new();
    while out.len() < len {
        for _ in 0..3 + next(5) {
            let mut sentence = String::new();
            for clause in 0..1 + next(2) {
                if clause > 0 {
                    sentence.push_str(if next(2) == 0 { ", " } else { " " });
                    sentence.push_str(CONJUNCTIONS[next(4)]);
                    sentence.push(' ');
                }
                sentence.push_str(DETERMINERS[next(6)]);
                sentence.push(' ');
                if next(2) == 0 {
                    sentence.push_str(ADJECTIVES[next(8)]);
                    sentence.push_str(ADJ_SUFFIXES[next(4)]);
                    sentence.push(' ');
                }
                sentence.push_str(NOUNS[next(12)]);
                sentence.push_str(NOUN_SUFFIXES[next(4)]);
                sentence.push(' ');
                if next(3) == 0 {
                    sentence.push_str(ADVERBS[next(6)]);
                    sentence.push_str("ly ");
                }
                let verb = VERBS[next(10)];
                match VERB_SUFFIXES[next(5)] {
                    "ing" => {
                        sentence.push_str(["was ", "is ", "were "][next(3)]);
                        sentence.push_str(verb);
                        sentence.push_str("ing");
                    }
                    suffix => {
                        sentence.push_str(verb);
                        sentence.push_str(suffix);
                    }
                }
                sentence.push(' ');
                sentence.push_str(DETERMINERS[next(6)]);
                sentence.push(' ');
                sentence.push_str(NOUNS[next(12)]);
                if next(2) == 0 {
                    sentence.push(' ');
                    sentence.push_str(PREPOSITIONS[next(6)]);
                    sentence.push_str(" the ");
                    sentence.push_str(ADJECTIVES[next(8)]);
                    sentence.push_str(["ness", "fulness", "", "s"][next(4)]);
                }
            }
            let mut chars = sentence.chars();
            if let Some(c) = chars.next() {
                out.push(c.to_ascii_uppercase());
                out.push_str(chars.as_str());
            }
            out.push_str([". ", ". ", "; ", "! "][next(4)]);
        }
        out.push_str("\n\n");
    }
    out.into_bytes()
}

#[test]
fn revision_22_round_trips_and_is_deterministic() {
    let mut inputs = text_test_inputs(37);
    inputs.push(prose(20_000, 5));
    round_trip_each(&[22], &inputs, true);
}

#[test]
fn revision_22_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(22, prose);
}

#[test]
fn revision_22_beats_20_on_english_prose() {
    for (len, seed) in [(30_000, 7), (60_000, 17)] {
        let data = prose(len, seed);
        let mut old = config(20);
        old.table_bits = 22;
        let mut new = config(22);
        new.table_bits = 22;
        let a = coded_len(&data, &old);
        let b = coded_len(&data, &new);
        eprintln!(
            "{} bytes of English prose: revision 20 {a}, 22 {b}",
            data.len()
        );
        assert!(b < a, "revision 22 {b} bytes, revision 20 {a}");
    }
}
