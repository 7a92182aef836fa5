//! CM revision 46 on small code and markup (doc/FORMAT.md 4.57.2, issue
//! 18): the short-match family (`models/small46.rs`: what followed the
//! last occurrence of the last one, two and three bytes, as expected bytes
//! and contexts). Revisions 44 and 46 round trip generated C-like code,
//! HTML-like markup, text, noise, repeats, empty and one-byte inputs and
//! text behind lying headers; revision 46 is deterministic, codes
//! markup smaller than revision 44, and real code and noise no larger than
//! revision 44 plus a little.

use crate::common;
use common::{
    c_like, coded_len, config, noise, round_trip, round_trip_each,
    round_trip_text_behind_lying_headers, text_test_inputs, xorshift32,
};
use sep_cm::CmConfig;

/// HTML-like markup of `items` elements, varied by `seed`.
fn markup(items: usize, seed: u32) -> Vec<u8> {
    let tags = ["div", "span", "p", "li", "td", "a", "em"];
    let words = ["alpha", "beta", "notes", "download", "mirror", "index"];
    let mut next = xorshift32(seed.wrapping_mul(2_654_435_761) | 1);
    let mut s = String::from("<html><body>\n");
    for k in 0..items {
        let x = next();
        let t = tags[(x >> 4) as usize % tags.len()];
        let w = words[(x >> 12) as usize % words.len()];
        s.push_str(&format!("<{t} class=\"c{}\">{w} {k}</{t}>", x >> 20 & 7));
        if x & 3 == 0 {
            s.push('\n');
        }
    }
    s.push_str("</body></html>\n");
    s.into_bytes()
}

#[test]
fn revisions_44_and_46_round_trip_code_markup_and_text() {
    round_trip_each(&[46], &text_test_inputs(46)[..2], false);
    let mut inputs = vec![markup(200, 1), c_like(80, 2, "\t")];
    // Repeats of one, two and three bytes, a period that breaks, noise
    // followed by code, a candidate that runs to the end of the input.
    inputs.push(b"a".repeat(3_000));
    inputs.push(b"ab".repeat(1_500));
    inputs.push(b"abc".repeat(1_000));
    inputs.push(b"abcabdabeabf".repeat(300));
    let mut mixed = noise(1_000, 7);
    mixed.extend(c_like(40, 4, "    "));
    inputs.push(mixed);
    inputs.push(noise(3_000, 9));
    inputs.push(Vec::new());
    inputs.push(b"<".to_vec());
    inputs.push(vec![0]);
    round_trip_each(&[44, 46], &inputs, false);
    round_trip_each(&[46], &inputs[..2], true);
}

#[test]
fn revision_46_round_trips_lying_headers_and_a_lean_configuration() {
    round_trip_text_behind_lying_headers(46, |len, seed| {
        let mut c = c_like(len / 20 + 1, seed as u32, "\t");
        c.truncate(len);
        c
    });
    let mut lean = common::lean_config(46);
    lean.word = true;
    round_trip(&c_like(100, 9, "  "), &lean);
    round_trip(&markup(100, 9), &lean);
}

/// Generated HTML-like markup (45,441 bytes): revision 46 codes it at
/// least 1% smaller than revision 44 with the tests' 2^18-byte context
/// table and with 2^22 bytes (measured 2,442 -> 2,411 and 2,299 -> 2,254
/// bytes, FORMAT 4.57.2).
#[test]
fn revision_46_codes_markup_smaller_than_44() {
    let d = markup(1_500, 5);
    for bits in [18, 22] {
        let cfg = |revision| CmConfig {
            table_bits: bits,
            ..config(revision)
        };
        let old = coded_len(&d, &cfg(44));
        let new = coded_len(&d, &cfg(46));
        eprintln!(
            "{} bytes, table 2^{bits}: revision 44 {old}, 46 {new}",
            d.len()
        );
        assert!(
            new + old / 100 <= old,
            "table 2^{bits}: revision 46 {new} bytes, revision 44 {old}"
        );
    }
}

/// Real code of this repository (`data/cm-mod.rs.txt`, 41,743 bytes),
/// where the family gains nothing: revision 46 codes it in at most
/// revision 44's bytes plus 0.2% with a 2^22-byte table (measured 7,587
/// -> 7,596).
#[test]
fn revision_46_codes_real_code_no_larger_than_44() {
    let code = include_bytes!("../data/cm-mod.rs.txt");
    let cfg = |revision| CmConfig {
        table_bits: 22,
        ..config(revision)
    };
    let old = coded_len(code, &cfg(44));
    let new = coded_len(code, &cfg(46));
    eprintln!("{} bytes: revision 44 {old}, 46 {new}", code.len());
    assert!(
        new <= old + old / 500,
        "revision 46 {new} bytes, revision 44 {old}"
    );
}

/// Noise: nothing to predict; revision 46 codes it in at most revision
/// 44's bytes plus 0.3% (the new inputs start silent; measured 20,123 ->
/// 20,119).
#[test]
fn revision_46_codes_noise_no_larger_than_44() {
    let d = noise(20_000, 3);
    let old = coded_len(&d, &config(44));
    let new = coded_len(&d, &config(46));
    eprintln!("{} bytes: revision 44 {old}, 46 {new}", d.len());
    assert!(
        new <= old + old * 3 / 1000,
        "revision 46 {new} bytes, revision 44 {old}"
    );
}
