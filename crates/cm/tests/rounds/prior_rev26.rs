//! Priors at CM revision 26 (issue 20, doc/FORMAT.md 4.37.3 and section
//! 11): a model restored from a revision-26 snapshot codes exactly as the
//! model that learned the samples in memory, decodes (also the empty and a
//! one-byte block, and text behind a lying header), codes exactly as a
//! revision-24 prior (revision 26 changes nothing a prior codes), and pays
//! against a fresh model; a larger prior table pays on samples that fill
//! the smaller one (the lever 4.37.3 measured, which lies in the prior
//! file's `table_bits` limit, not in the model).

use crate::common;

use sep_cm::{Cm, CmConfig, CmStream};

/// Small files of the kinds of `bench/priors.sh`: man-page source, C
/// headers, JSON records, URLs, with numbers and names that vary.
fn small_files(seed: u32, n: usize) -> Vec<u8> {
    let syllables = [
        "al", "ber", "de", "so", "ket", "buf", "vi", "pri", "or", "stre", "am", "ta", "ble", "rec",
        "fra", "ger", "qu", "sig", "nal", "han", "dle", "op", "ti", "on", "mo", "del", "ku", "ze",
        "wy", "pha", "ton", "ix",
    ];
    let mut next = common::xorshift32(seed.wrapping_mul(0x9E37_79B9) | 1);
    // Names of two to four syllables: a vocabulary of about a million,
    // most of them rare, so the samples crowd a small table.
    let name = |r: u32| {
        let k = 2 + (r >> 28) % 3;
        (0..k)
            .map(|i| syllables[((r >> (5 * i)) % 32) as usize])
            .collect::<String>()
    };
    let mut out = String::new();
    while out.len() < n {
        let r = next();
        let (a, b) = (name(r), name(next()));
        let v = (r >> 16) % 10_000;
        match next() % 5 {
            0 => out.push_str(&format!(
                ".TH {} 2 2024-0{}-1{}\n.SH NAME\n{a} \\- {b} the {a} of a {b}\n.SH SYNOPSIS\n.B #include <sys/{b}.h>\n.BI \"int {a}(int \" fd \", void *\" buf );\n",
                a.to_uppercase(),
                v % 9 + 1,
                v % 10
            )),
            1 => out.push_str(&format!(
                "#define {}_{} 0x{v:04x}\nstruct {a}_{b} {{\n\t__u32 {a};\n\t__u16 {b}_len;\n}};\n",
                a.to_uppercase(),
                b.to_uppercase()
            )),
            2 => out.push_str(&format!(
                "    {{\n      \"alpha_3\": \"{}\",\n      \"name\": \"{a} {b}\",\n      \"numeric\": \"{v}\"\n    }},\n",
                &b.to_uppercase()[..3]
            )),
            3 => out.push_str(&format!("http://www.{a}.com/{b}/{v}.html\n")),
            _ => out.push_str(&format!(
                "The {a} returns the {b} of the {a} ({v} bytes) to the caller.\n"
            )),
        }
    }
    out.truncate(n);
    out.into_bytes()
}

fn alone(c: &CmConfig, x: &[u8]) -> usize {
    let mut cm = Cm::new(c, false, x.len());
    let mut st = CmStream::new(0);
    common::code_after(&mut cm, &mut st, &[], x).len()
}

/// A revision-26 prior restores exactly, decodes, codes exactly as a
/// revision-24 prior, and makes a small file of its kind at least 40%
/// smaller than the model alone.
#[test]
fn revision_26_prior_pays_and_codes_as_24() {
    let history = small_files(1, 24_000);
    let x = small_files(2, 3000);
    let c26 = common::config(26);
    let with = common::prior_round_trip(&c26, &history, &x);
    let fresh = alone(&c26, &x);
    assert!(
        with.len() * 5 < fresh * 3,
        "{} bytes with the prior vs {fresh} alone",
        with.len()
    );
    assert_eq!(
        with,
        common::prior_round_trip(&common::config(24), &history, &x)
    );
}

/// The empty and a one-byte block, and text behind a lying WAV header,
/// after a revision-26 prior (full and lean configurations).
#[test]
fn revision_26_prior_round_trips_hard_cases() {
    let history = small_files(3, 8000);
    let mut lying = common::wav_header(2, 16, 44_100, 1 << 30);
    lying.extend(small_files(4, 1500));
    for c in [common::config(26), common::lean_config(26)] {
        for x in [&b""[..], b"x", &lying, &small_files(5, 700)] {
            common::prior_round_trip(&c, &history, x);
        }
    }
}

/// A larger prior table: samples that crowd a 2^16-byte table code a
/// file of their kind smaller with a 2^18-byte one (doc/FORMAT.md 4.37.3:
/// the prior file's `table_bits` limit, 24, is the lever it measured).
#[test]
fn a_larger_prior_table_pays() {
    let history = small_files(6, 60_000);
    let x = small_files(7, 4000);
    let small = CmConfig {
        table_bits: 16,
        ..common::config(26)
    };
    let large = CmConfig {
        table_bits: 18,
        ..common::config(26)
    };
    let (a, b) = (
        common::prior_round_trip(&small, &history, &x).len(),
        common::prior_round_trip(&large, &history, &x).len(),
    );
    assert!(b < a, "table 2^18: {b} bytes, 2^16: {a}");
}
