//! CM revision 10's deeper word, structure and indirect contexts
//! (doc/FORMAT.md 4.21.7; `models/words10.rs`): they round trip and code
//! deterministically at revisions 9 and 10 on text, code, markup, UTF-8,
//! binary data and a detected kind, and shrink real text against
//! revision 8.

mod common;
use common::{config, mixed_text, noise, round_trip, soft_bmp};

#[test]
fn revisions_9_and_10_round_trip_and_are_deterministic() {
    let readme = include_bytes!("../../../README.md");
    let code = include_bytes!("../src/models/words10.rs");
    let html = include_bytes!("../../../tests/corpus/files/snappy.html");
    let utf8 = "维基百科是一个自由内容的网络百科全书，「{{模板|名称=值}}」。\n".repeat(25);
    let mut bin = noise(2_000, 10);
    bin.extend(&readme[..readme.len().min(2_000)]);
    let bmp = soft_bmp(40, 24);
    for revision in [9, 10] {
        for data in [
            &mixed_text()[..],
            &readme[..readme.len().min(3_000)],
            &code[..code.len().min(3_000)],
            &html[..3_000],
            utf8.as_bytes(),
            &bin,
            &bmp,
            b"",
            b"x",
        ] {
            let a = round_trip(data, &config(revision));
            let b = round_trip(data, &config(revision));
            assert_eq!(a, b, "revision {revision} is not deterministic");
        }
    }
}

#[test]
fn revision_10_beats_revision_8_on_text() {
    let format = include_bytes!("../../../doc/FORMAT.md");
    let start = format.len() / 3;
    let text = &format[start..start + 24_000];
    let v8 = round_trip(text, &config(8)).len();
    let v10 = round_trip(text, &config(10)).len();
    eprintln!("{} bytes: revision 8 {v8}, 10 {v10}", text.len());
    assert!(v10 < v8, "revision 10 {v10} bytes, revision 8 {v8}");
}
