//! What a user types and reads: one-line usage errors, help, levels,
//! recursion, the one-line list, verbosity, messages for empty and slow
//! inputs, a terminal on standard input.

mod common;

use common::{files_in, sep, sep_path, text};
use predicates::prelude::*;
use std::fs;

#[test]
fn clap_errors_are_one_sep_line_with_exit_2() {
    for args in [&["--bogus"][..], &["-T", "x"][..], &["--level", "12"][..]] {
        let out = sep()
            .args(args)
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let msg = String::from_utf8_lossy(&out);
        assert_eq!(msg.lines().count(), 1, "{msg}");
        assert!(msg.starts_with("sep: "), "{msg}");
    }
}

#[test]
fn help_subcommand_and_files_named_help() {
    let out = sep()
        .arg("help")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let help = String::from_utf8_lossy(&out);
    assert!(help.contains("Usage:"), "{help}");
    assert!(
        help.contains("sep bench") && help.contains("sep info"),
        "{help}"
    );
    assert!(help.contains("-9"), "levels table: {help}");
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("help"), text(2000)).unwrap();
    sep()
        .current_dir(dir.path())
        .args(["-q", "-1", "./help"])
        .assert()
        .success();
    assert!(dir.path().join("help.sep").exists());
    fs::remove_file(dir.path().join("help.sep")).unwrap();
    sep()
        .current_dir(dir.path())
        .args(["-q", "-1", "--", "help"])
        .assert()
        .success();
    assert!(dir.path().join("help.sep").exists());
}

#[test]
fn short_help_has_no_backticks() {
    for flag in ["-h", "--help"] {
        let out = sep()
            .arg(flag)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let help = String::from_utf8_lossy(&out);
        assert!(!help.contains('`'), "{help}");
    }
}

#[test]
fn version_names_the_archive_format() {
    sep()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::contains("archive format 3"));
}

#[test]
fn empty_input_prints_no_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty");
    fs::write(&p, b"").unwrap();
    let out = sep().arg(&p).assert().success().get_output().stderr.clone();
    let msg = String::from_utf8_lossy(&out);
    assert!(msg.contains(": 0 => "), "{msg}");
    assert!(
        !msg.contains("ratio") && !msg.contains('%') && !msg.contains("inf"),
        "{msg}"
    );
}

#[test]
fn slow_speeds_keep_their_digits() {
    // A small input with the default model: well under 1 MB/s here.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a");
    fs::write(&p, text(20_000)).unwrap();
    let out = sep()
        .args(["-T1"])
        .arg(&p)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let msg = String::from_utf8_lossy(&out);
    // Under 1 MB/s the unit is KB/s or B/s, so the digits never read 0.00.
    let words: Vec<&str> = msg.split_whitespace().collect();
    let i = words
        .iter()
        .position(|w| w.ends_with("B/s") || w.ends_with("B/s,"))
        .unwrap_or_else(|| panic!("a speed: {msg}"));
    let value: f64 = words[i - 1].parse().unwrap();
    assert!(value >= 1.0, "{msg}");
    assert!(!msg.contains(" 0.00 "), "{msg}");
}

#[test]
fn terminal_on_stdin_is_refused() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("note: script(1) not installed; pty case skipped");
        return;
    }
    for args in ["-d", "-t", ""] {
        let out = std::process::Command::new("timeout")
            .args(["20", "script", "-qec"])
            .arg(format!("{} {args}", sep_path().display()))
            .arg("/dev/null")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let msg = String::from_utf8_lossy(&out.stdout);
        assert!(
            msg.contains("stdin is a console, aborting"),
            "{args}: {msg}"
        );
        assert_eq!(out.status.code(), Some(1), "{args}: {msg}");
    }
}

/// -1 .. -9, --fast and --best pick the documented model and preset: the
/// archive is the one -m/-p gives.
#[test]
fn levels_map_onto_presets() {
    let data = text(30_000);
    let with = |args: &[&str]| {
        sep()
            .args(["-q", "-c", "-T1"])
            .args(args)
            .write_stdin(data.clone())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let order2 = with(&["-m", "order2"]);
    let fast = with(&["-p", "fast"]);
    let default = with(&[]);
    let max = with(&["-p", "max"]);
    assert_eq!(with(&["-1"]), order2);
    assert_eq!(with(&["--fast"]), order2);
    assert_eq!(with(&["-2"]), fast);
    assert_eq!(with(&["-3"]), fast);
    assert_eq!(with(&["-6"]), default);
    assert_eq!(with(&["-7"]), max);
    assert_eq!(with(&["-9"]), max);
    assert_eq!(with(&["--best"]), max);
    assert_eq!(with(&["--level", "4"]), default);
    assert_ne!(order2, fast);
    sep()
        .args(["-9", "-m", "order2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("-9 sets the model"));
}

#[test]
fn recursive_compress_and_decompress_with_summary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("d");
    fs::create_dir_all(root.join("sub")).unwrap();
    let (a, b) = (text(5000), text(7000));
    fs::write(root.join("a"), &a).unwrap();
    fs::write(root.join("sub/b"), &b).unwrap();
    std::os::unix::fs::symlink(root.join("a"), root.join("link")).unwrap();
    let out = sep()
        .args(["-1", "-r"])
        .arg(&root)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let msg = String::from_utf8_lossy(&out);
    assert!(msg.contains("sep: 2 files, 12000 => "), "{msg}");
    assert_eq!(files_in(&root), ["a", "a.sep", "link", "sub"]);
    assert_eq!(files_in(&root.join("sub")), ["b", "b.sep"]);
    // Without -r a folder is an error.
    sep().arg(&root).assert().code(1);
    fs::remove_file(root.join("a")).unwrap();
    fs::remove_file(root.join("sub/b")).unwrap();
    sep().args(["-q", "-d", "-r"]).arg(&root).assert().success();
    assert_eq!(fs::read(root.join("a")).unwrap(), a);
    assert_eq!(fs::read(root.join("sub/b")).unwrap(), b);
}

#[test]
fn list_is_one_line_per_archive_and_detailed_with_v() {
    let dir = tempfile::tempdir().unwrap();
    for (name, level) in [("x", "-1"), ("y", "-2")] {
        fs::write(dir.path().join(name), text(4000)).unwrap();
        sep()
            .args(["-q", level])
            .arg(dir.path().join(name))
            .assert()
            .success();
    }
    let out = sep()
        .arg("-l")
        .arg(dir.path().join("x.sep"))
        .arg(dir.path().join("y.sep"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let list = String::from_utf8_lossy(&out);
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 3, "{list}");
    assert!(lines[0].contains("Compressed") && lines[0].contains("Model"));
    assert!(
        lines[1].contains("order2") && lines[1].contains("x.sep"),
        "{list}"
    );
    assert!(
        lines[2].contains("mix/fast") && lines[2].contains("y.sep"),
        "{list}"
    );
    assert!(lines[1].contains(" 4000 "), "{list}");
    sep()
        .args(["-l", "-v"])
        .arg(dir.path().join("x.sep"))
        .assert()
        .success()
        .stdout(predicate::str::contains("checksum").and(predicate::str::contains("seed")));
    sep()
        .arg("info")
        .arg(dir.path().join("x.sep"))
        .assert()
        .success()
        .stdout(predicate::str::contains("checksum"));
}

#[test]
fn quiet_and_verbose_last_one_wins() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a");
    fs::write(&p, text(3000)).unwrap();
    let run = |args: &[&str]| {
        let out = sep()
            .args(["-1", "-f"])
            .args(args)
            .arg(&p)
            .assert()
            .success()
            .get_output()
            .stderr
            .clone();
        String::from_utf8_lossy(&out).into_owned()
    };
    assert_eq!(run(&["-v", "-q"]), "");
    let v = run(&["-q", "-v"]);
    assert!(v.contains("=>") && v.contains("peak memory"), "{v}");
    let vv = run(&["-vv"]);
    assert!(vv.contains("CPU"), "-vv adds times: {vv}");
    assert!(!v.contains("CPU"), "{v}");
    let normal = run(&[]);
    assert!(
        normal.contains("=>") && !normal.contains("peak memory"),
        "{normal}"
    );
}
