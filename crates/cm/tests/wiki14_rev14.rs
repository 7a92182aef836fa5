//! CM revision 14's wiki family (doc/FORMAT.md 4.25.4;
//! `models/wiki14.rs`): it round trips at revision 14 on generated
//! Wikipedia-dump text (XML header fields, links with labels, templates,
//! escaped references), the empty input, one byte and lying headers, and
//! codes that text smaller than revision 12.

mod common;
use common::{config, noise, round_trip, round_trip_each};

/// Generated pages of a Wikipedia XML dump: header lines with increasing
/// ids and timestamps, then wiki text with links (some with labels),
/// templates, emphasis, escaped references and tables.
fn wiki_dump(len: usize) -> Vec<u8> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: usize| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 33) as usize % n
    };
    // A vocabulary of 600 words of two to four syllables, chosen
    // Zipf-like.
    let syllables = [
        "an", "ar", "chi", "sm", "po", "li", "ti", "cal", "phi", "lo", "so", "phy", "sta", "te",
        "mo", "ve", "ment", "ri", "ver", "ci", "ty", "go", "vern", "cen", "tu", "ry", "un", "der",
        "ka", "zo", "mi", "ne", "ra", "tion", "al", "ist",
    ];
    let vocab: Vec<String> = (0..600)
        .map(|_| {
            (0..2 + next(3))
                .map(|_| syllables[next(syllables.len())])
                .collect()
        })
        .collect();
    let word = move |r: usize| vocab[r * r / 600].clone();
    let mut out = Vec::with_capacity(len + 4096);
    let mut id = 279;
    while out.len() < len {
        id += 1 + next(3);
        let title = word(next(600));
        out.extend(
            format!(
                "  <page>\n    <title>{title}</title>\n    <id>{id}</id>\n    <revision>\n      \
                 <id>{}</id>\n      <timestamp>2006-0{}-{:02}T{:02}:{:02}:{:02}Z</timestamp>\n      \
                 <text xml:space=\"preserve\">",
                15_898_000 + id * 7,
                1 + next(9),
                1 + next(28),
                next(24),
                next(60),
                next(60)
            )
            .as_bytes(),
        );
        for k in 0..40 + next(40) {
            let w = word(next(600));
            match next(12) {
                0 => out.extend(format!("[[{w}]] ").as_bytes()),
                1..=5 => {
                    let t = word(next(600));
                    out.extend(format!("[[{t} {w}|{t} {w}s]] ").as_bytes());
                }
                6 => out.extend(format!("{{{{cite|{w}={}}}}} ", next(2000)).as_bytes()),
                7 => out
                    .extend(format!("&lt;ref&gt;{w} {}&lt;/ref&gt; ", 1900 + next(100)).as_bytes()),
                8 => out.extend(format!("'''{w}''' ").as_bytes()),
                _ => out.extend(format!("{w} ").as_bytes()),
            }
            if k % 13 == 12 {
                out.extend(
                    b".\n\n== History ==\n{| class=\"wikitable\"\n| a || b\n|-\n| 1 || 2\n|}\n",
                );
            }
        }
        out.extend(b"</text>\n    </revision>\n  </page>\n");
    }
    out.truncate(len);
    out
}

#[test]
fn revision_14_round_trips_wiki_text_and_edge_cases() {
    let wiki = wiki_dump(20_000);
    // Lying headers: an XML field line without its end, unbalanced
    // brackets, an entity cut short, a label longer than its target.
    let lying = b"<id>12345678901234567890123456789012345678901234\n<timestamp\n[[a|bcdefghij]]]] {{x|{{y}}}}}} &lt;ref &amp &lt;/ref&gt;&gt;&gt;\n<id>9</id>\n[[[[|||]]".repeat(40);
    let mut bin = noise(3_000, 5);
    bin.extend(&wiki[..4_000]);
    round_trip_each(
        &[12, 14],
        &[&wiki[..], &lying[..], &bin[..], b"", b"x"],
        true,
    );
}

#[test]
fn revision_14_beats_revision_12_on_wiki_text() {
    let wiki = wiki_dump(100_000);
    let v12 = round_trip(&wiki, &config(12)).len();
    let v14 = round_trip(&wiki, &config(14)).len();
    eprintln!("{} bytes: revision 12 {v12}, 14 {v14}", wiki.len());
    assert!(v14 < v12, "revision 14 {v14} bytes, revision 12 {v12}");
}
