//! Issue 22: `sep --seek-table` and `sep -d --range START:LEN` through the real
//! binary: slices of the full decode, to stdout and to a file, with and
//! without a seek table, and the one-line errors.

mod common;

use common::{files_in, sep, text};
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};

/// `data` compressed with order2 in 4 KiB blocks, with or without a table.
fn archive(dir: &Path, name: &str, data: &[u8], table: bool) -> PathBuf {
    let src = dir.join(format!("{name}.src"));
    fs::write(&src, data).unwrap();
    let out = dir.join(name);
    let mut cmd = sep();
    cmd.args(["-q", "-m", "order2", "-B", "4K", "-o"])
        .arg(&out)
        .arg(&src);
    if table {
        cmd.arg("--seek-table");
    }
    cmd.assert().success();
    fs::remove_file(&src).unwrap();
    out
}

#[test]
fn seek_table_adds_8_bytes_per_block_and_decodes() {
    let dir = tempfile::tempdir().unwrap();
    let data = text(30_000);
    let plain = archive(dir.path(), "plain.sep", &data, false);
    let tabled = archive(dir.path(), "tabled.sep", &data, true);
    let (p, t) = (
        fs::metadata(&plain).unwrap().len(),
        fs::metadata(&tabled).unwrap().len(),
    );
    assert_eq!(t, p + 20 + 8 * 30_000u64.div_ceil(4096));
    let out = sep().arg("-dc").arg(&tabled).assert().success();
    assert_eq!(out.get_output().stdout, data);
    sep().arg("-t").arg(&tabled).assert().success();
    let table = 20 + 8 * 30_000u64.div_ceil(4096);
    sep()
        .args(["-l", "-v"])
        .arg(&tabled)
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "seek table      {table} bytes"
        )));
    sep()
        .args(["-l", "-v"])
        .arg(&plain)
        .assert()
        .success()
        .stdout(predicate::str::contains("seek table").not());
}

#[test]
fn range_gives_slices_of_the_content_with_and_without_a_table() {
    let dir = tempfile::tempdir().unwrap();
    let data = text(50_000);
    let n = data.len();
    for table in [false, true] {
        let a = archive(dir.path(), &format!("t{table}.sep"), &data, table);
        for (arg, from, to) in [
            ("0:1", 0, 1),
            ("4095:2", 4095, 4097),
            ("4K:4K", 4096, 8192),
            ("1000:20000", 1000, 21000),
            ("12345:", 12345, n),
            ("0:", 0, n),
            ("50000:0", n, n),
            ("50000:", n, n),
            ("7000:0", 7000, 7000),
        ] {
            let out = sep()
                .args(["-d", "-c", "--range", arg])
                .arg(&a)
                .assert()
                .success();
            assert!(
                out.get_output().stdout == data[from..to],
                "--range {arg}, table {table}"
            );
        }
        // To a file with -o, and reported with -v.
        let part = dir.path().join(format!("part{table}"));
        sep()
            .args(["-d", "-v", "--range", "40000:5000", "-o"])
            .arg(&part)
            .arg(&a)
            .assert()
            .success()
            .stderr(predicate::str::contains("content bytes 40000..45000"));
        assert_eq!(fs::read(&part).unwrap(), &data[40000..45000]);
    }
}

#[test]
fn range_errors_are_one_line_and_leave_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let data = text(10_000);
    let a = archive(dir.path(), "a.sep", &data, true);
    let before = files_in(dir.path());
    for arg in ["10000:1", "9999:2", "10001:", "20K:1"] {
        sep()
            .args(["-d", "--range", arg, "-o"])
            .arg(dir.path().join("out"))
            .arg(&a)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "past the end of the content (10000 bytes)",
            ))
            .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    }
    assert_eq!(files_in(dir.path()), before, "no output was left");
    // Usage: not a range, not with compression, not several inputs, not --rm.
    for args in [
        &["-d", "--range", "12"][..],
        &["-d", "--range", "x:1"],
        &["--range", "0:1"],
        &["-d", "--rm", "--range", "0:1"],
    ] {
        sep()
            .args(args)
            .arg(&a)
            .assert()
            .code(2)
            .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    }
    sep()
        .args(["-d", "-c", "--range", "0:1"])
        .arg(&a)
        .arg(&a)
        .assert()
        .code(2);
    // Standard input cannot seek.
    sep()
        .args(["-d", "-c", "--range", "0:1"])
        .write_stdin(fs::read(&a).unwrap())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not standard input"));
    // A damaged table: the sequential decoder says so in one line.
    let mut bytes = fs::read(&a).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 4;
    let bad = dir.path().join("bad.sep");
    fs::write(&bad, &bytes).unwrap();
    sep()
        .arg("-dc")
        .arg(&bad)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("seek table"))
        .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    assert!(a.exists());
}
