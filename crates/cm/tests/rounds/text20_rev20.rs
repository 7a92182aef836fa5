//! CM revision 20's text change (doc/FORMAT.md 4.31.1): direct contexts
//! keyed by a wiki/markup parse state. Revision 20 round trips and codes
//! deterministically on text, code, binary data, generated wiki markup,
//! empty and one-byte inputs and inputs whose header lies, and codes
//! generated wiki markup smaller than revision 18.

use crate::common;
use common::{
    coded_len, config, round_trip_each, round_trip_text_behind_lying_headers, text_test_inputs,
};

/// Generated MediaWiki markup as in a Wikipedia dump (`len` bytes or a
/// few more), seeded: XML page headers, headings, prose with `[[links]]`
/// (some with `|` texts), `{{templates}}`, `&entities;`, lists, tables
/// and external links.
fn wiki(len: usize, seed: u64) -> Vec<u8> {
    const WORDS: [&str; 24] = [
        "the",
        "city",
        "river",
        "of",
        "state",
        "was",
        "founded",
        "in",
        "and",
        "population",
        "county",
        "people",
        "north",
        "a",
        "church",
        "war",
        "language",
        "is",
        "king",
        "by",
        "school",
        "with",
        "island",
        "from",
    ];
    const LINKS: [&str; 12] = [
        "United States",
        "France",
        "Roman Empire",
        "Latin language",
        "World War II",
        "London",
        "Catholic Church",
        "Pacific Ocean",
        "19th century",
        "New York City",
        "Germany",
        "Category:Cities",
    ];
    let mut next = common::xorshift64(seed | 1);
    let mut out = String::new();
    let mut page = 0;
    while out.len() < len {
        page += 1;
        let title = LINKS[(next() % 12) as usize];
        out.push_str(&format!(
            "  <page>\n    <title>{title} {page}</title>\n    <id>{}</id>\n    <revision>\n      <timestamp>2002-0{}-1{}T12:0{}:00Z</timestamp>\n      <text xml:space=\"preserve\">",
            1000 + page * 37,
            1 + next() % 9,
            next() % 10,
            next() % 10
        ));
        out.push_str(&format!(
            "{{{{Infobox {}|name={title}|size={}}}}}\n",
            WORDS[(next() % 24) as usize],
            next() % 5000
        ));
        for section in 0..2 + next() % 3 {
            out.push_str(&format!("\n== Section {section} ==\n"));
            for _ in 0..3 + next() % 5 {
                let w = (next() % 24) as usize;
                match next() % 7 {
                    0 => out.push_str(&format!("[[{}]] ", LINKS[(next() % 12) as usize])),
                    1 => out.push_str(&format!(
                        "[[{}|{}]] ",
                        LINKS[(next() % 12) as usize],
                        WORDS[w]
                    )),
                    2 => out.push_str(&format!("&quot;{}&quot; ", WORDS[w])),
                    3 => out.push_str(&format!("in {} ", 1800 + next() % 200)),
                    _ => {}
                }
                for _ in 0..4 + next() % 8 {
                    out.push_str(WORDS[(next() % 24) as usize]);
                    out.push(' ');
                }
                out.push_str(".\n");
            }
            out.push_str("* [[");
            out.push_str(LINKS[(next() % 12) as usize]);
            out.push_str("]]\n* [http://www.example.org/");
            out.push_str(WORDS[(next() % 24) as usize]);
            out.push_str(" site]\n{| class=&quot;wikitable&quot;\n");
            for _ in 0..2 + next() % 3 {
                out.push_str(&format!(
                    "|-\n| {} || {} || {}\n",
                    WORDS[(next() % 24) as usize],
                    next() % 1000,
                    LINKS[(next() % 12) as usize]
                ));
            }
            out.push_str("|}\n");
        }
        out.push_str("[[Category:Cities]]</text>\n    </revision>\n  </page>\n");
    }
    out.into_bytes()
}

#[test]
fn revision_20_round_trips_and_is_deterministic() {
    let mut inputs = text_test_inputs(31);
    inputs.push(wiki(20_000, 5));
    round_trip_each(&[20], &inputs, true);
}

#[test]
fn revision_20_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(20, wiki);
}

#[test]
fn revision_20_beats_18_on_wiki_markup() {
    for (len, seed) in [(30_000, 7), (60_000, 17)] {
        let data = wiki(len, seed);
        let mut old = config(18);
        old.table_bits = 22;
        let mut new = config(20);
        new.table_bits = 22;
        let a = coded_len(&data, &old);
        let b = coded_len(&data, &new);
        eprintln!(
            "{} bytes of wiki markup: revision 18 {a}, 20 {b}",
            data.len()
        );
        assert!(b < a, "revision 20 {b} bytes, revision 18 {a}");
    }
}
