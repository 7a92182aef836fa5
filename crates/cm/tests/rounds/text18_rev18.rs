//! CM revision 18's text change (doc/FORMAT.md 4.29.1): the direct tables
//! of the revision-16 text family sized by the block, its inputs starting
//! at weight 0. Revision 18 round trips and codes deterministically on
//! text, code, binary data, empty and one-byte inputs and inputs whose
//! header lies, and codes small generated text (where revision 16's new
//! inputs cost bytes) and real text and code smaller than revision 16.

use crate::common;
use common::{
    coded_len, config, round_trip, round_trip_each, round_trip_text_behind_lying_headers,
    text_test_inputs,
};

/// Generated C-like source: functions of statements over a few names,
/// seeded (`len` bytes or a few more): the kind of small file where the
/// revision-16 inputs were noise before their slots had counts.
fn source(len: usize, seed: u64) -> Vec<u8> {
    const NAMES: [&str; 12] = [
        "count", "buffer", "length", "index", "result", "node", "value", "table", "next", "size",
        "flags", "state",
    ];
    const TYPES: [&str; 4] = ["int", "char *", "unsigned", "struct item *"];
    let mut next = common::xorshift64(seed | 1);
    let mut out = String::new();
    let mut f = 0;
    while out.len() < len {
        let t = TYPES[(next() % 4) as usize];
        out.push_str(&format!("{t}\nfunc_{f}(int {})\n{{\n", NAMES[f % 12]));
        f += 1;
        for _ in 0..3 + next() % 8 {
            let a = NAMES[(next() % 12) as usize];
            let b = NAMES[(next() % 12) as usize];
            match next() % 5 {
                0 => out.push_str(&format!("    if ({a} > {b})\n        {a} = {b};\n")),
                1 => out.push_str(&format!("    for ({a} = 0; {a} < {b}; {a}++)\n")),
                2 => out.push_str(&format!("    {a} += {b} * {};\n", next() % 100)),
                3 => out.push_str(&format!("    /* the {a} of the {b} */\n")),
                _ => out.push_str(&format!("    return {a};\n")),
            }
        }
        out.push_str("}\n\n");
    }
    out.into_bytes()
}

#[test]
fn revision_18_round_trips_and_is_deterministic() {
    let mut inputs = text_test_inputs(29);
    inputs.push(source(20_000, 5));
    round_trip_each(&[18], &inputs, true);
}

#[test]
fn revision_18_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(18, source);
}

#[test]
fn revision_18_beats_16_on_small_generated_source() {
    for (len, seed) in [(4_000, 7), (12_000, 17)] {
        let data = source(len, seed);
        let a = coded_len(&data, &config(16));
        let b = coded_len(&data, &config(18));
        eprintln!("{} bytes of source: revision 16 {a}, 18 {b}", data.len());
        assert!(b < a, "revision 18 {b} bytes, revision 16 {a}");
    }
}

#[test]
fn revision_18_beats_16_on_text_and_code() {
    // At the test configuration's `table_bits` 18 revision 18's direct
    // tables have 2^10 buckets (revision 16's 2^19): compare with the
    // table a preset gives a block of this size (`table_bits` 27, capped
    // at 25 for 40 KB: 2^17 buckets). (At `table_bits` 22, 2^14 buckets,
    // the README loses: 11,749 -> 11,796 bytes.)
    let readme = include_bytes!("../data/readme.md");
    let code = include_bytes!("../data/cm-mod.rs.txt");
    for data in [&readme[..readme.len().min(40_000)], &code[..]] {
        let mut old = config(16);
        old.table_bits = 27;
        let mut new = config(18);
        new.table_bits = 27;
        let a = round_trip(data, &old).len();
        let b = round_trip(data, &new).len();
        eprintln!("{} bytes: revision 16 {a}, 18 {b}", data.len());
        assert!(b < a, "revision 18 {b} bytes, revision 16 {a}");
    }
}
