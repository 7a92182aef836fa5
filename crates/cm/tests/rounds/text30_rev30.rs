//! CM revision 30's text change (doc/FORMAT.md 4.41.1): a mixer
//! weight-set selector and the final layer's weight sets keyed by the
//! markup region of the byte (XML tag, entity, URL, link target or text,
//! template, number, outside an XML document's `<text>`, line kind) with
//! the position in the word. Revision 30 round trips and codes
//! deterministically on wiki-like markup, text, code, binary noise, empty
//! and one-byte inputs and inputs whose header lies, and codes wiki-like
//! markup (real English words from tests/data in generated MediaWiki
//! pages) smaller than revision 28.

use crate::common;
use common::{
    coded_len, config, noise, readme_words, round_trip_each, round_trip_text_behind_lying_headers,
    text_test_inputs,
};

/// About `len` bytes of MediaWiki-like XML pages (a dump's page headers,
/// then text with links, templates, headings, list and table lines,
/// entities and numbers) made of real words, starting at word `seed`.
fn wiki(len: usize, seed: u64) -> Vec<u8> {
    let w = readme_words();
    let mut k = seed as usize % w.len();
    let mut next = || {
        k = (k + 1) % w.len();
        w[k].as_str()
    };
    let mut out = String::from("<mediawiki>\n");
    let mut page = 0u32;
    while out.len() < len {
        page += 1;
        let title = format!("{} {}", next(), next());
        out.push_str(&format!(
            "  <page>\n    <title>{title}</title>\n    <id>{}</id>\n    <revision>\n      \
             <id>{}</id>\n      <timestamp>2005-{:02}-{:02}T{:02}:14:07Z</timestamp>\n      \
             <contributor>\n        <username>{}</username>\n      </contributor>\n      \
             <text xml:space=\"preserve\">",
            page * 37 + 11,
            page * 9173 + 15_000,
            page % 12 + 1,
            page % 28 + 1,
            page % 24,
            next(),
        ));
        out.push_str(&format!(
            "{{{{Infobox {} | name = {title} | year = {} }}}}\n",
            next(),
            1900 + page * 7 % 100
        ));
        for line in 0..12u32 {
            match line % 6 {
                1 => out.push_str(&format!("== {} {} ==\n", next(), next())),
                3 => out.push_str(&format!(
                    "* [[{}]] &amp; [[{}|{}]]\n",
                    next(),
                    next(),
                    next()
                )),
                5 => out.push_str(&format!(
                    "|-\n| {} || {} || {}\n",
                    next(),
                    page * line,
                    next()
                )),
                _ => {
                    for j in 0..14u32 {
                        let word = next();
                        match (j + line + page) % 7 {
                            0 => out.push_str(&format!("[[{word}]] ")),
                            3 => out.push_str(&format!("[[{word}|{}]] ", next())),
                            5 => out.push_str(&format!("&quot;{word}&quot; ")),
                            _ => {
                                out.push_str(word);
                                out.push(' ');
                            }
                        }
                    }
                    out.push_str(&format!(
                        "in {} ([http://www.{}.org/{} {}]).\n",
                        1800 + (page * 13 + line) % 200,
                        next(),
                        next(),
                        next()
                    ));
                }
            }
        }
        out.push_str("</text>\n    </revision>\n  </page>\n");
    }
    out.into_bytes()
}

#[test]
fn revision_30_round_trips_and_is_deterministic() {
    let mut inputs = text_test_inputs(43);
    inputs.push(wiki(12_000, 5));
    inputs.push(noise(5_000, 7));
    // Markup cut in the middle of a tag, a link and an entity.
    inputs.push(b"<page><text xml:space=\"p\">a [[b|c &am".to_vec());
    inputs.push(b"if (a < b && c) x = y & 3;\n<".to_vec());
    round_trip_each(&[30], &inputs, true);
}

#[test]
fn revision_30_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(30, wiki);
}

#[test]
fn revision_30_beats_28_on_wiki_markup() {
    let data = wiki(48_000, 0);
    let a = coded_len(&data, &config(28));
    let b = coded_len(&data, &config(30));
    eprintln!(
        "{} bytes of generated wiki markup: revision 28 {a}, 30 {b}",
        data.len()
    );
    assert!(b < a, "revision 30 {b} bytes, revision 28 {a}");
}
