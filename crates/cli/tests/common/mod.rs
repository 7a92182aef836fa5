//! Helpers shared by the CLI test files that need no corpus: the binary,
//! generated text, and folder listings.
#![allow(dead_code)]

use assert_cmd::Command;
use std::fs;
use std::path::Path;

/// The binary as built by cargo.
pub fn sep() -> Command {
    Command::cargo_bin("sep").expect("binary built")
}

/// The binary's path, for `std::process::Command` (signals, pipes).
pub fn sep_path() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("sep")
}

/// `n` bytes of English-like text (words drawn by a fixed generator), which
/// the models compress well but not trivially.
pub fn text(n: usize) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "the",
        "of",
        "and",
        "a",
        "to",
        "in",
        "is",
        "you",
        "that",
        "it",
        "he",
        "was",
        "for",
        "on",
        "are",
        "as",
        "with",
        "his",
        "they",
        "at",
        "be",
        "this",
        "have",
        "from",
        "or",
        "one",
        "had",
        "by",
        "word",
        "but",
        "not",
        "what",
        "all",
        "were",
        "we",
        "when",
        "your",
        "can",
        "said",
        "there",
        "use",
        "an",
        "each",
        "which",
        "she",
        "do",
        "how",
        "their",
        "if",
        "will",
        "up",
        "other",
        "about",
        "out",
        "many",
        "then",
        "them",
        "these",
        "so",
        "some",
        "her",
        "would",
        "make",
        "like",
        "him",
        "into",
        "time",
        "has",
        "look",
        "two",
        "more",
        "compression",
        "archive",
        "model",
        "context",
        "mixing",
        "river",
        "mountain",
        "signal",
    ];
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut out = Vec::with_capacity(n + 16);
    let mut col = 0;
    while out.len() < n {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let w = WORDS[(state >> 33) as usize % WORDS.len()];
        out.extend_from_slice(w.as_bytes());
        col += w.len() + 1;
        if (state >> 20).is_multiple_of(13) {
            out.extend_from_slice(b". ");
        } else if col > 70 {
            out.push(b'\n');
            col = 0;
        } else {
            out.push(b' ');
        }
    }
    out.truncate(n);
    out
}

/// The names in a folder, sorted (lossy, for messages and comparisons).
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Waits up to `secs` for a file whose name starts with `.` and ends with
/// `.tmp` (an output being written) to appear in `dir`.
pub fn wait_for_temp(dir: &Path, secs: u64) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if files_in(dir)
            .iter()
            .any(|n| n.starts_with('.') && n.ends_with(".tmp"))
        {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}
