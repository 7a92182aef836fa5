//! CM revision 40 on URL lists, code and markup (doc/FORMAT.md 4.51.2,
//! issue 18): the line and field family (`models/line40.rs`). Revision 40
//! round trips and codes deterministically on generated URL lists, C-like
//! and HTML-like inputs, text, noise, empty and one-byte inputs and text
//! behind lying headers, and codes a generated URL list smaller than
//! revision 38.

use crate::common;
use common::{
    c_like, coded_len, config, noise, round_trip, round_trip_each,
    round_trip_text_behind_lying_headers, text_test_inputs, xorshift32,
};

/// A list of `lines` URLs, one a line, varied by `seed`: hosts recur,
/// paths have a few segments of words and numbers, some have a query.
fn url_list(lines: usize, seed: u32) -> Vec<u8> {
    let hosts = [
        "www.example.com",
        "ftp.mirror.net",
        "news.site.org:8080",
        "shop.store.co.uk",
        "209.143.244.16",
        "members.home.net",
        "docs.server.edu",
    ];
    let words = [
        "index", "cgi-bin", "archive", "products", "users", "download", "msg", "images", "forum",
        "show",
    ];
    let ends = [".html", ".htm", ".cgi", ".php", "/", ".gif"];
    let mut next = xorshift32(seed.wrapping_mul(2_654_435_761) | 1);
    let mut s = String::new();
    for _ in 0..lines {
        let x = next();
        let host = hosts[x as usize % hosts.len()];
        s.push_str(&format!("http://{host}"));
        // Each host has its own first segment most of the time.
        let first = if x >> 8 & 3 != 0 {
            words[(host.len() * 7) % words.len()]
        } else {
            words[(x >> 12) as usize % words.len()]
        };
        s.push_str(&format!("/{first}"));
        for k in 0..(x >> 16 & 3) {
            let y = next();
            if y & 1 == 0 {
                s.push_str(&format!("/{}", words[(y >> 4) as usize % words.len()]));
            } else {
                s.push_str(&format!("/{}_{}", y >> 20, k));
            }
        }
        let y = next();
        s.push_str(&format!(
            "/{}{}",
            y % 100_000,
            ends[(y >> 24) as usize % ends.len()]
        ));
        if y >> 20 & 7 == 0 {
            s.push_str(&format!("?id={}&page={}", y >> 8 & 0xFFF, y & 15));
        }
        s.push('\n');
    }
    s.into_bytes()
}

/// A small HTML-like page of `rows` table rows, varied by `seed`.
fn html_like(rows: usize, seed: u32) -> Vec<u8> {
    let words = ["alpha", "beta", "release", "notes", "download", "mirror"];
    let mut s = String::from("<html><head><title>Index</title></head>\n<body><table>\n");
    let mut next = xorshift32(seed | 1);
    for k in 0..rows {
        let x = next();
        let w = words[(x >> 16) as usize % words.len()];
        s.push_str(&format!(
            "  <tr><td class=\"name\"><a href=\"http://host/{w}/{k}.html\">{w} {k}</a></td><td>{}</td></tr>\n",
            x >> 20
        ));
    }
    s.push_str("</body></html>\n");
    s.into_bytes()
}

#[test]
fn revision_40_round_trips_urls_code_markup_and_is_deterministic() {
    round_trip_each(&[40], &text_test_inputs(40), false);
    let mut inputs = vec![url_list(300, 1)];
    inputs.push(c_like(150, 2, "\t"));
    inputs.push(html_like(60, 3));
    // A line without a newline that never ends, slashes and separators
    // only, blanks only, and URLs after noise.
    inputs.push(vec![b'a'; 5_000]);
    inputs.push(b"///?&=;: ".repeat(400));
    inputs.push(vec![b' '; 3_000]);
    let mut mixed = noise(2_000, 7);
    mixed.extend(url_list(50, 4));
    inputs.push(mixed);
    inputs.push(Vec::new());
    inputs.push(b"/".to_vec());
    inputs.push(b"\n".to_vec());
    round_trip_each(&[40], &inputs, true);
}

#[test]
fn revision_40_round_trips_lying_headers_and_few_inputs() {
    round_trip_text_behind_lying_headers(40, |len, seed| {
        let mut u = url_list(len / 40 + 1, seed as u32);
        u.truncate(len);
        u
    });
    let mut lean = common::lean_config(40);
    lean.word = true;
    round_trip(&url_list(100, 9), &lean);
}

/// A generated URL list of 24 KB: revision 40's line and field contexts
/// code it at least 0.3% smaller than revision 38 (measured 3,739 ->
/// 3,721 bytes, -0.48%; the generated list is far more regular than a
/// real one, where the gain is 2%: FORMAT 4.51.2).
#[test]
fn revision_40_codes_urls_smaller_than_38() {
    let d = url_list(600, 5);
    let old = coded_len(&d, &config(38));
    let new = coded_len(&d, &config(40));
    eprintln!("{} bytes: revision 38 {old}, 40 {new}", d.len());
    assert!(
        new + old * 3 / 1000 <= old,
        "revision 40 {new} bytes, revision 38 {old}"
    );
}

/// Generated C-like and HTML-like inputs: revision 40 codes them in at
/// most revision 38's bytes plus 0.2%.
#[test]
fn revision_40_codes_code_and_markup_no_larger_than_38() {
    for d in [c_like(400, 11, "\t"), html_like(150, 12)] {
        let old = coded_len(&d, &config(38));
        let new = coded_len(&d, &config(40));
        eprintln!("{} bytes: revision 38 {old}, 40 {new}", d.len());
        assert!(
            new <= old + old / 500,
            "revision 40 {new} bytes, revision 38 {old}"
        );
    }
}
