//! `sep --lossy` (issue 21) as a user runs it: raw and .npy float arrays,
//! `-d` without options, `-l`, `-t --against`, and bad input.

mod common;

use common::sep;
use predicates::prelude::*;
use std::fs;
use std::path::Path;

/// A smooth 3-D field of `f32` with a block of -1e10 fill values and a NaN.
fn field(shape: [usize; 3]) -> Vec<f32> {
    let n = shape.iter().product::<usize>();
    (0..n)
        .map(|i| {
            let x = (i % shape[2]) as f32;
            let y = ((i / shape[2]) % shape[1]) as f32;
            let z = (i / (shape[1] * shape[2])) as f32;
            if i % 97 == 5 && i < n / 3 {
                -1e10
            } else if i == n / 2 {
                f32::NAN
            } else {
                10.0 * (x * 0.1).sin()
                    + 5.0 * (y * 0.07).cos()
                    + z
                    + 0.001 * ((i * 7919) % 13) as f32
            }
        })
        .collect()
}

fn raw(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn values(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn within(orig: &[f32], got: &[f32], bound: f64) {
    assert_eq!(orig.len(), got.len());
    for (i, (&a, &b)) in orig.iter().zip(got).enumerate() {
        if a.is_nan() || a == -1e10 {
            assert_eq!(a.to_bits(), b.to_bits(), "special at {i}");
        } else {
            assert!(
                (f64::from(a) - f64::from(b)).abs() <= bound,
                "{i}: {a} -> {b}"
            );
        }
    }
}

fn write(dir: &Path, name: &str, data: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    fs::write(&p, data).unwrap();
    p
}

#[test]
fn raw_array_round_trip_list_and_test_against() {
    let dir = tempfile::tempdir().unwrap();
    let v = field([4, 30, 50]);
    let data = raw(&v);
    let p = write(dir.path(), "t.f32", &data);
    sep()
        .args([
            "--lossy", "abs=0.01", "--dtype", "f32", "--shape", "4x30x50",
        ])
        .arg(&p)
        .assert()
        .success();
    let a = dir.path().join("t.f32.sep");
    let archive = fs::read(&a).unwrap();
    assert!(archive.len() < data.len() / 3, "{}", archive.len());
    sep().arg("-l").arg(&a).assert().success().stdout(
        predicate::str::contains("abs=0.01")
            .and(predicate::str::contains("f32 4x30x50"))
            .and(predicate::str::contains("fill -1e10")),
    );
    let orig = write(dir.path(), "orig.f32", &data);
    fs::remove_file(&p).unwrap();
    sep().arg("-d").arg(&a).assert().success();
    within(&v, &values(&fs::read(&p).unwrap()), 0.01);
    sep()
        .arg("-t")
        .arg(&a)
        .arg("--against")
        .arg(&orig)
        .assert()
        .success()
        .stderr(predicate::str::contains("OK (max error").and(predicate::str::contains("PSNR")));
    // A different original is caught.
    let mut other = v.clone();
    other[10] += 1.0;
    let other = write(dir.path(), "other.f32", &raw(&other));
    sep()
        .arg("-t")
        .arg(&a)
        .arg("--against")
        .arg(&other)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("BOUND EXCEEDED"));
}

#[test]
fn fast_level_round_trips_within_the_bound_and_lists_as_fast() {
    let dir = tempfile::tempdir().unwrap();
    let v = field([4, 30, 50]);
    let data = raw(&v);
    let p = write(dir.path(), "t.f32", &data);
    for level in ["fast", "default"] {
        sep()
            .args([
                "-f",
                "--lossy",
                "abs=0.01",
                "--lossy-level",
                level,
                "--dtype",
                "f32",
                "--shape",
                "4x30x50",
            ])
            .arg(&p)
            .assert()
            .success();
        let a = dir.path().join("t.f32.sep");
        let archive = fs::read(&a).unwrap();
        assert!(archive.len() < data.len() / 3, "{level}: {}", archive.len());
        assert_eq!(
            archive[5],
            if level == "fast" { 3 } else { 1 },
            "coder byte"
        );
        let listed = sep().arg("-l").arg(&a).assert().success();
        let out = String::from_utf8_lossy(&listed.get_output().stdout).into_owned();
        assert_eq!(out.contains("/fast "), level == "fast", "{out}");
        let back = dir.path().join("back.f32");
        sep()
            .arg("-d")
            .arg(&a)
            .arg("-o")
            .arg(&back)
            .arg("-f")
            .assert()
            .success();
        within(&v, &values(&fs::read(&back).unwrap()), 0.01);
        fs::remove_file(&a).unwrap();
    }
}

#[test]
fn npy_round_trip_restores_the_header_and_rel_mode_holds() {
    let dir = tempfile::tempdir().unwrap();
    let v = field([3, 20, 40]);
    let npy = sep::lossy::npy::write(sep::lossy::Dtype::F32, &[3, 20, 40], &raw(&v));
    let p = write(dir.path(), "a.npy", &npy);
    sep()
        .args(["--lossy", "rel=1e-3"])
        .arg(&p)
        .assert()
        .success();
    fs::remove_file(&p).unwrap();
    sep()
        .arg("-d")
        .arg(dir.path().join("a.npy.sep"))
        .assert()
        .success();
    let back = fs::read(&p).unwrap();
    let h = sep::lossy::npy::parse(&npy).unwrap().header.len();
    assert_eq!(back[..h], npy[..h]);
    let valid: Vec<f64> = v
        .iter()
        .filter(|x| x.is_finite() && **x != -1e10)
        .map(|&x| f64::from(x))
        .collect();
    let range = valid.iter().cloned().fold(f64::MIN, f64::max)
        - valid.iter().cloned().fold(f64::MAX, f64::min);
    within(&v, &values(&back[h..]), 1e-3 * range);
}

#[test]
fn psnr_and_ratio_modes_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let v: Vec<f32> = field([2, 40, 60])
        .into_iter()
        .map(|x| if x.is_finite() && x != -1e10 { x } else { 0.0 })
        .collect();
    let data = raw(&v);
    let p = write(dir.path(), "p.f32", &data);
    sep()
        .args([
            "--lossy", "psnr=60", "--dtype", "f32", "--shape", "2x40x60", "-o",
        ])
        .arg(dir.path().join("p.sep"))
        .arg(&p)
        .assert()
        .success();
    sep()
        .arg("-t")
        .arg(dir.path().join("p.sep"))
        .arg("--against")
        .arg(&p)
        .assert()
        .success();
    let stats = sep::lossy::compare(
        sep::lossy::Dtype::F32,
        &data,
        &sep::lossy::decompress(&fs::read(dir.path().join("p.sep")).unwrap(), u64::MAX).unwrap(),
        &[],
    )
    .unwrap();
    assert!(stats.psnr >= 60.0, "{}", stats.psnr);
    sep()
        .args([
            "--lossy", "ratio=10", "--dtype", "f32", "--shape", "2x40x60", "-o",
        ])
        .arg(dir.path().join("r.sep"))
        .arg(&p)
        .assert()
        .success();
    let ratio = data.len() as f64 / fs::read(dir.path().join("r.sep")).unwrap().len() as f64;
    assert!((ratio / 10.0 - 1.0).abs() <= 0.05, "ratio {ratio}");
}

#[test]
fn bad_input_is_one_line_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = raw(&field([2, 10, 10]));
    let p = write(dir.path(), "b.f32", &data);
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["--lossy", "abs=1", "--dtype", "f32", "--shape", "2x10x11"],
            1,
            "shape 2x10x11 of f32 needs 880 bytes, the input has 800",
        ),
        (
            &["--lossy", "abs=1", "--dtype", "f16", "--shape", "2x10x10"],
            2,
            "unknown dtype 'f16'",
        ),
        (
            &["--lossy", "abs=0", "--dtype", "f32", "--shape", "2x10x10"],
            2,
            "above 0",
        ),
        (
            &["--lossy", "abs=-1", "--dtype", "f32", "--shape", "2x10x10"],
            2,
            "above 0",
        ),
        (
            &["--lossy", "rel=NaN", "--dtype", "f32", "--shape", "2x10x10"],
            2,
            "above 0",
        ),
        (&["--lossy", "abs=1"], 1, "needs --dtype"),
        (
            &["--lossy", "abs=1", "--dtype", "f32", "--shape", "2x0x10"],
            2,
            "--shape",
        ),
        (&["--dtype", "f32"], 2, "need --lossy"),
        (&["--lossy-level", "fast"], 2, "need --lossy"),
        (
            &[
                "--lossy",
                "abs=1",
                "--lossy-level",
                "quick",
                "--dtype",
                "f32",
                "--shape",
                "2x10x10",
            ],
            2,
            "--lossy-level 'quick'",
        ),
    ];
    for (args, code, msg) in cases {
        let out = sep()
            .args(*args)
            .arg(&p)
            .assert()
            .code(*code)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert_eq!(fs::read(&p).unwrap(), data);
        assert!(
            !dir.path().join("b.f32.sep").exists(),
            "{args:?} wrote output"
        );
    }
    // An .npy whose header lies about its length.
    let mut npy = sep::lossy::npy::write(sep::lossy::Dtype::F32, &[2, 10, 10], &data);
    npy.truncate(npy.len() - 4);
    let q = write(dir.path(), "lie.npy", &npy);
    sep()
        .args(["--lossy", "abs=1"])
        .arg(&q)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad .npy file: header says 200 values",
        ));
    assert!(!dir.path().join("lie.npy.sep").exists());
}

#[test]
fn corrupt_lossy_archive_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let data = raw(&field([2, 16, 16]));
    let p = write(dir.path(), "c.f32", &data);
    sep()
        .args([
            "--lossy",
            "abs=0.001",
            "--dtype",
            "f32",
            "--shape",
            "2x16x16",
        ])
        .arg(&p)
        .assert()
        .success();
    let a = dir.path().join("c.f32.sep");
    let mut archive = fs::read(&a).unwrap();
    let mid = archive.len() / 2;
    archive[mid] ^= 4;
    fs::write(&a, &archive).unwrap();
    fs::remove_file(&p).unwrap();
    sep()
        .arg("-d")
        .arg(&a)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("corrupt lossy archive"));
    assert!(!p.exists(), "partial output left behind");
    sep().arg("-t").arg(&a).assert().code(1);
}

#[test]
fn bench_lossy_measures_sep_and_reports_missing_peers() {
    let dir = tempfile::tempdir().unwrap();
    let v = field([2, 20, 30]);
    let p = write(dir.path(), "grid.2x20x30.f32", &raw(&v));
    let out = dir.path().join("out");
    sep()
        .args([
            "bench",
            "--lossy",
            "--bounds",
            "rel=1e-2,abs=0.001",
            "--python",
            "/nonexistent/python3",
            "--out",
        ])
        .arg(&out)
        .arg(&p)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("grid.2x20x30.f32")
                .and(predicate::str::contains("rel=0.01"))
                .and(predicate::str::contains("totals")),
        )
        .stderr(predicate::str::contains("cannot run /nonexistent/python3"));
    let csv = fs::read_to_string(out.join("lossy.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().filter(|l| l.contains(",sep,")).collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows.iter().all(|r| r.ends_with(",true")), "{csv}");
    let svg = fs::read_to_string(out.join("grid.2x20x30.f32.rd.svg")).unwrap();
    assert!(svg.contains("<polyline") && svg.contains("sep"));
    sep()
        .args(["bench", "--lossy", "--bounds", "rel=0"])
        .arg(&p)
        .assert()
        .code(2);
}

/// `--rm` as the lossless path does it (one shared check): the input goes once
/// its output is written, in both directions, but not when the output is not a
/// regular file (`-o /dev/null` would otherwise lose the data).
#[test]
fn rm_removes_the_input_only_after_a_real_output() {
    let dir = tempfile::tempdir().unwrap();
    let v = field([2, 20, 30]);
    let p = write(dir.path(), "r.f32", &raw(&v));
    let lossy = [
        "--lossy", "abs=0.01", "--dtype", "f32", "--shape", "2x20x30",
    ];
    sep()
        .args(lossy)
        .args(["--rm", "-f", "-o", "/dev/null"])
        .arg(&p)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not removed"));
    assert!(p.exists(), "input kept when the output is /dev/null");
    sep().args(lossy).arg("--rm").arg(&p).assert().success();
    let a = dir.path().join("r.f32.sep");
    assert!(!p.exists() && a.exists());
    sep().args(["-d", "--rm"]).arg(&a).assert().success();
    assert!(!a.exists());
    within(&v, &values(&fs::read(&p).unwrap()), 0.01);
}

/// `bench --lossy` compares the rate-distortion curves: a peer (a stand-in
/// script in place of python) that claims 200 dB at any bound puts sep's
/// curve BELOW it, one that claims 1 dB does not; `--level fast` runs the
/// fast setting, an unknown level is a usage error.
#[cfg(unix)]
#[test]
fn bench_lossy_prints_rate_distortion_margins() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let v = field([2, 20, 30]);
    let p = write(dir.path(), "grid.2x20x30.f32", &raw(&v));
    for (db, below) in [(200.0, true), (1.0, false)] {
        let py = dir.path().join(format!("peer{db}"));
        // Bits per value 0.1 to 30 cover sep's points at both bounds.
        fs::write(
            &py,
            format!(
                "#!/bin/sh\necho \"sz3 150 1e-3 {db} 0.01 0.01\"\necho \"sz3 90000 1e-3 {db} 0.01 0.01\"\n"
            ),
        )
        .unwrap();
        fs::set_permissions(&py, fs::Permissions::from_mode(0o755)).unwrap();
        let out = sep()
            .args([
                "bench",
                "--lossy",
                "--level",
                "fast",
                "--bounds",
                "rel=1e-2,rel=1e-4",
                "--python",
            ])
            .arg(&py)
            .arg(&p)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .find(|l| l.contains("rd margin over sz3"))
            .unwrap_or_else(|| panic!("{text}"));
        assert_eq!(line.ends_with("BELOW"), below, "{line}");
    }
    sep()
        .args(["bench", "--lossy", "--level", "slow"])
        .arg(&p)
        .assert()
        .code(2);
}

/// A series stored with two decimals, at a bound below half of 0.01: `sep -l`
/// shows the grid it was coded on, and `sep -d` restores every value within
/// the bound (here to within a rounding of the grid).
#[test]
fn list_shows_the_value_grid_and_the_series_restores() {
    let dir = tempfile::tempdir().unwrap();
    let v: Vec<f64> = (0..3000)
        .map(|i| (1500.0 + 300.0 * (i as f64 * 0.013).sin()).round() / 100.0 + 0.0005)
        .collect();
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let p = write(dir.path(), "t.f64", &bytes);
    sep()
        .args(["--lossy", "abs=1e-4", "--dtype", "f64", "--shape", "3000"])
        .arg(&p)
        .assert()
        .success();
    let a = dir.path().join("t.f64.sep");
    sep()
        .arg("-l")
        .arg(&a)
        .assert()
        .success()
        .stdout(predicate::str::contains("grid 1e-2"));
    fs::remove_file(&p).unwrap();
    sep().arg("-d").arg(&a).assert().success();
    let back = fs::read(&p).unwrap();
    for (x, y) in v.iter().zip(back.chunks(8)) {
        let y = f64::from_le_bytes(y.try_into().unwrap());
        assert!((x - y).abs() <= 1e-9, "{x} {y}");
    }
}
