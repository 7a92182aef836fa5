//! Issue 14 through the real binary: thread counts, output, work and memory limits,
//! and the decoder's strictness, as a user meets them.

use assert_cmd::Command;
use predicates::prelude::*;

fn sep() -> Command {
    let mut c = Command::cargo_bin("sep").expect("binary built");
    c.args(["-m", "order2"]);
    c
}

fn text(n: usize) -> Vec<u8> {
    b"It was the best of times, it was the worst of times; "
        .iter()
        .cycle()
        .take(n)
        .copied()
        .collect()
}

#[test]
fn huge_thread_counts_are_clamped_with_a_note() {
    let data = text(100_000);
    for t in ["100000000", "18446744073709551615", "257"] {
        let archive = sep()
            .args(["-c", "-B", "16K", "-T", t])
            .write_stdin(data.clone())
            .assert()
            .success()
            .stderr(predicate::str::contains(format!(
                "-T {t} is more than 256; using 256"
            )))
            .get_output()
            .stdout
            .clone();
        let back = sep()
            .args(["-d", "-c", "-T", t, "-q"])
            .write_stdin(archive)
            .assert()
            .success()
            .stderr("")
            .get_output()
            .stdout
            .clone();
        assert_eq!(back, data, "-T {t}");
    }
    // One past usize is not a number of threads: a usage error.
    sep()
        .args(["-c", "-T", "18446744073709551616"])
        .write_stdin(data)
        .assert()
        .code(2);
}
