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
    coded_len, config, noise, readme_words, round_trip_each, round_trip_text_behind_lying_headers,
    text_test_inputs,
};

/// About `len` bytes of prose from a small grammar: each word is drawn
/// (by an LCG seeded with `seed`) among the few words that may follow the
/// last one (pairs recur, with varying successors), in sentences of 4 to
/// 15 words that start with a capital and end with `. `, `, ` inside.
fn prose(len: usize, seed: u64) -> Vec<u8> {
    let w = readme_words();
    let mut x = seed.wrapping_mul(6_364_136_223_846_793_005) | 1;
    let mut rand = move |n: usize| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize % n
    };
    // Every word's hash picks its three possible successors.
    let succ = |k: usize, r: usize| (k.wrapping_mul(2_654_435_761) >> 7).wrapping_add(r * 97) % 600;
    let mut out = String::new();
    let mut k = 0usize;
    while out.len() < len {
        let n = 4 + rand(12);
        for j in 0..n {
            k = succ(k, rand(3));
            let word = &w[k % w.len()];
            if j == 0 {
                let mut c = word.chars();
                if let Some(f) = c.next() {
                    out.push(f.to_ascii_uppercase());
                    out.push_str(c.as_str());
                }
            } else {
                out.push_str(word);
            }
            out.push_str(if j + 1 == n {
                ". "
            } else if rand(9) == 0 {
                ", "
            } else {
                " "
            });
        }
        if rand(5) == 0 {
            out.push('\n');
        }
    }
    out.into_bytes()
}

#[test]
fn revision_32_round_trips_and_is_deterministic() {
    let mut inputs = text_test_inputs(47);
    inputs.push(prose(12_000, 5));
    inputs.push(noise(5_000, 9));
    inputs.push(Vec::new());
    inputs.push(b"a".to_vec());
    inputs.push(b"the cat the cat the dog, the cat.\nThe".to_vec());
    round_trip_each(&[32], &inputs, true);
}

#[test]
fn revision_32_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(32, prose);
}

#[test]
fn revision_32_beats_30_on_prose() {
    let data = prose(40_000, 3);
    let a = coded_len(&data, &config(30));
    let b = coded_len(&data, &config(32));
    eprintln!(
        "{} bytes of generated prose: revision 30 {a}, 32 {b}",
        data.len()
    );
    assert!(b < a, "revision 32 {b} bytes, revision 30 {a}");
}
