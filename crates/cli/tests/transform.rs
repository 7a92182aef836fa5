//! `sep -l -v` on archives with segmented blocks (issue 17): each block's
//! segments and transforms are listed, and the files round-trip through the
//! real binary.

use assert_cmd::Command;
use predicates::prelude::*;
use std::path::PathBuf;
use tempfile::TempDir;

fn sep() -> Command {
    Command::cargo_bin("sep").expect("binary built")
}

fn golden_input(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/golden/inputs")
        .join(name)
}

#[test]
fn list_verbose_shows_segments_and_transforms() {
    let dir = TempDir::new().unwrap();
    for (name, transform) in [
        ("fireworks.crop128x96.jpg", "jpeg"),
        ("grammar.lsp.gz", "deflate"),
        ("x86.text16k", "x86"),
        ("kodim23.crop32x24.png", "png-pixels"),
        // The same PNG with a broken signature: its IDAT run (transform 4).
        ("kodim23.crop32x24.png", "png"),
    ] {
        // A JPEG that starts the file goes to the JPEG family of CM
        // revision 5 when that is smaller (`jpeg_file_is_modelled`): text
        // before it keeps it a lepton segment.
        let mut bytes = std::fs::read(golden_input(name)).unwrap();
        if transform == "jpeg" {
            bytes.splice(0..0, b"some text before the image ".repeat(20));
        }
        let file = if transform == "png" {
            bytes[1] = b'p';
            "cut.png"
        } else {
            name
        };
        let input = dir.path().join(file);
        std::fs::write(&input, &bytes).unwrap();
        sep().arg(&input).assert().success();
        let archive = dir.path().join(format!("{file}.sep"));
        sep()
            .args(["-l", "-v"])
            .arg(&archive)
            .assert()
            .success()
            .stdout(predicate::str::contains("segmented"))
            .stdout(predicate::str::contains(format!(": {transform} ")));
        // Without -v, no block listing.
        sep()
            .arg("-l")
            .arg(&archive)
            .assert()
            .success()
            .stdout(predicate::str::contains("segmented").not());
        std::fs::remove_file(&input).unwrap();
        sep().arg("-d").arg(&archive).assert().success();
        assert_eq!(std::fs::read(&input).unwrap(), bytes);
    }
}

/// A JPEG file coded by `default` (CM revision 5, doc/FORMAT.md 4.16.4):
/// the JPEG family's plain block beats lepton's segment on this crop, so
/// the block is listed as modelled, and the file round-trips.
#[test]
fn jpeg_file_is_modelled() {
    let dir = TempDir::new().unwrap();
    let name = "fireworks.crop128x96.jpg";
    let input = dir.path().join(name);
    std::fs::copy(golden_input(name), &input).unwrap();
    sep().arg(&input).assert().success();
    let archive = dir.path().join(format!("{name}.sep"));
    sep()
        .args(["-l", "-v"])
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::str::contains("block 0: modelled, 3399 bytes"));
    std::fs::remove_file(&input).unwrap();
    sep().arg("-d").arg(&archive).assert().success();
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(golden_input(name)).unwrap()
    );
}

#[test]
fn list_verbose_shows_plain_blocks() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("g");
    std::fs::copy(golden_input("grammar.lsp"), &input).unwrap();
    sep().arg(&input).assert().success();
    sep()
        .args(["-l", "-v"])
        .arg(dir.path().join("g.sep"))
        .assert()
        .success()
        .stdout(predicate::str::contains("block 0: modelled, 3721 bytes"));
}

/// `sep -c -v` reports the time spent on detection and transforms, with the
/// blocks that were written segmented (issue 17).
#[test]
fn compress_verbose_reports_detection_and_transform_time() {
    let dir = TempDir::new().unwrap();
    for (name, segmented) in [("grammar.lsp.gz", "1 of 1"), ("grammar.lsp", "0 of 1")] {
        let input = dir.path().join(name);
        std::fs::copy(golden_input(name), &input).unwrap();
        sep()
            .args(["-v", "-T1"])
            .arg(&input)
            .assert()
            .success()
            .stderr(predicate::str::contains("transforms: detection "))
            .stderr(predicate::str::contains(format!(
                "({segmented} blocks segmented)"
            )))
            .stderr(predicate::str::contains("% of "));
        // --no-transforms: nothing to report.
        sep()
            .args(["-v", "-f", "--no-transforms"])
            .arg(&input)
            .assert()
            .success()
            .stderr(predicate::str::contains("transforms: detection").not());
    }
}

/// `sep -l -v`'s memory line counts what a segmented block adds (issue 17):
/// the model sized for the inflated content and preflate's re-creation, so
/// the same gzip file needs more to decode with its transform than without.
#[test]
fn list_memory_counts_segmented_blocks() {
    let dir = TempDir::new().unwrap();
    let input = dir.path().join("g.gz");
    std::fs::copy(golden_input("grammar.lsp.gz"), &input).unwrap();
    let memory = |flags: &[&str]| -> f64 {
        let archive = dir.path().join("g.gz.sep");
        sep()
            .args(["-f"])
            .args(flags)
            .arg(&input)
            .assert()
            .success();
        let out = sep()
            .args(["-l", "-v"])
            .arg(&archive)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("memory"))
            .unwrap_or_else(|| panic!("no memory line in {text}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        let scale = match words[2] {
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            _ => 1.0,
        };
        words[1].parse::<f64>().unwrap() * scale
    };
    let with = memory(&[]);
    let without = memory(&["--no-transforms"]);
    assert!(with > without, "{with} <= {without}");
}
