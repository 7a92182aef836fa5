//! `sep bench` as a user runs it: real child processes on two tiny files.
//!
//! Peers are stand-ins written here (shell scripts named like the real
//! programs, first in `PATH`), so the tests neither need nor depend on the
//! compressors installed on the machine.

#![cfg(unix)]

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

const COLUMNS: [&str; 15] = [
    "file",
    "bytes",
    "compressor",
    "setting",
    "compressed_bytes",
    "ratio",
    "compress_s",
    "compress_cpu_s",
    "decompress_s",
    "decompress_cpu_s",
    "compress_MBps",
    "decompress_MBps",
    "peak_rss_compress_kb",
    "peak_rss_decompress_kb",
    "verified",
];

/// A work folder with two tiny files (`a.txt`, `b.bin`) and an empty `bin/`
/// for stand-in peers.
fn setup() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text: Vec<u8> = b"the quick brown fox jumps over the lazy dog. "
        .iter()
        .cycle()
        .take(6000)
        .copied()
        .collect();
    let binary: Vec<u8> = (0..4000u32).map(|i| (i * i % 251) as u8).collect();
    fs::write(dir.path().join("a.txt"), text).unwrap();
    fs::write(dir.path().join("b.bin"), binary).unwrap();
    fs::create_dir(dir.path().join("bin")).unwrap();
    dir
}

/// Puts an executable shell script `name` with `body` in `dir/bin`. The
/// script's last argument is the file to read; `$d` is set when `-d` is
/// among its arguments.
fn peer(dir: &Path, name: &str, body: &str) {
    let p = dir.join("bin").join(name);
    let script =
        format!("#!/bin/sh\nd=\nfor a; do last=$a; [ \"$a\" = -d ] && d=1; done\n{body}\n");
    fs::write(&p, script).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
}

/// `sep bench` run in `dir` with only `dir/bin` in `PATH`.
fn bench(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("sep").expect("binary built");
    c.current_dir(dir)
        .env("PATH", dir.join("bin"))
        .env_remove("SEP_CORPUS")
        .arg("bench");
    c
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<csv::StringRecord>) {
    let mut r = csv::Reader::from_path(path).expect("a CSV file");
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.expect("a well-formed record"))
        .collect();
    (header, rows)
}

fn num(r: &csv::StringRecord, col: &str) -> f64 {
    let i = COLUMNS.iter().position(|c| *c == col).unwrap();
    r[i].parse()
        .unwrap_or_else(|_| panic!("{col} = {:?} in {r:?}", &r[i]))
}

fn svg_texts(path: &Path) -> (usize, usize, Vec<String>) {
    let text = fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("the SVG is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let count = |tag: &str| {
        root.descendants()
            .filter(|n| n.tag_name().name() == tag)
            .count()
    };
    let texts = root
        .descendants()
        .filter(|n| n.tag_name().name() == "text")
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect();
    (count("circle"), count("polygon"), texts)
}

#[test]
fn writes_a_csv_an_svg_and_a_table() {
    let dir = setup();
    let d = dir.path();
    peer(
        d,
        "xz",
        "echo \"$*\" >> \"$0.log\"; exec /bin/cat -- \"$last\"",
    );
    bench(d)
        .args([
            "a.txt",
            "b.bin",
            "--presets",
            "order2,store",
            "--peers",
            "xz",
        ])
        .args(["--out", "res", "--name", "tiny"])
        .assert()
        .success()
        .stdout(predicate::str::contains("sep order2"))
        .stdout(predicate::str::contains("xz"))
        .stderr(predicate::str::contains("verified"));

    let (header, rows) = read_csv(&d.join("res/tiny.csv"));
    assert_eq!(header, COLUMNS);
    // 2 files x 3 compressors, then a total per compressor.
    assert_eq!(rows.len(), 9);
    let sizes = [("a.txt", 6000.0), ("b.bin", 4000.0), ("TOTAL", 10000.0)];
    for r in &rows {
        let bytes = num(r, "bytes");
        let packed = num(r, "compressed_bytes");
        assert_eq!(bytes, sizes.iter().find(|s| s.0 == &r[0]).unwrap().1);
        assert!((num(r, "ratio") - bytes / packed).abs() < 1e-3, "{r:?}");
        for t in ["compress_s", "decompress_s"] {
            assert!(num(r, t) > 0.0, "{t} {r:?}");
        }
        let speed = bytes / 1e6 / num(r, "compress_s");
        assert!(
            (num(r, "compress_MBps") / speed - 1.0).abs() < 0.01,
            "{r:?}"
        );
        assert!(num(r, "peak_rss_compress_kb") > 100.0, "{r:?}");
        assert!(num(r, "peak_rss_decompress_kb") > 100.0, "{r:?}");
        assert_eq!(&r[14], "true");
        match (&r[2], &r[3]) {
            ("sep", "order2") => assert!(packed < bytes / 2.0, "{r:?}"),
            ("sep", "store") => assert!(packed > bytes, "{r:?}"),
            ("xz", "-9e") => assert_eq!(packed, bytes, "the stand-in copies"),
            other => panic!("unexpected compressor {other:?}"),
        }
    }
    let totals: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[0] == "TOTAL").collect();
    assert_eq!(totals.len(), 3);
    let order2: f64 = rows
        .iter()
        .filter(|r| &r[0] != "TOTAL" && &r[3] == "order2")
        .map(|r| num(r, "compressed_bytes"))
        .sum();
    assert_eq!(num(totals[0], "compressed_bytes"), order2);

    // One marker per compressor in each of the two panels: triangles (SVG
    // polygons) for sep, circles for peers; each labelled.
    let (circles, polygons, texts) = svg_texts(&d.join("res/tiny.svg"));
    assert_eq!(circles, 2);
    assert_eq!(polygons, 4);
    for label in ["sep order2", "sep store", "xz"] {
        assert_eq!(texts.iter().filter(|t| *t == label).count(), 2, "{texts:?}");
    }
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("sep bench: tiny (2 files"))
    );

    // The peer ran with its strongest setting and the benchmark's -T (1),
    // reading the file named last and writing standard output.
    let log = fs::read_to_string(d.join("bin/xz.log")).unwrap();
    let calls: Vec<&str> = log.lines().collect();
    assert_eq!(calls.len(), 4, "{log}");
    assert!(
        calls[0].starts_with("-9e -T1 -c ") && calls[0].ends_with("a.txt"),
        "{log}"
    );
    assert!(
        calls[1].starts_with("-d -c ") && calls[1].ends_with("archive.xz"),
        "{log}"
    );

    let md = fs::read_to_string(d.join("res/tiny.md")).unwrap();
    assert!(md.contains("![ratio vs speed](tiny.svg)"));
    assert!(md.contains("| a.txt | 6,000 |"), "{md}");
}

#[test]
fn a_missing_peer_is_skipped_with_a_note() {
    let dir = setup();
    let d = dir.path();
    peer(d, "bzip2", "exec /bin/cat -- \"$last\"");
    bench(d)
        .args(["a.txt", "--presets", "store", "--peers", "zstd,bzip2"])
        .assert()
        .success()
        .stderr(predicate::str::contains("zstd is not installed"))
        .stderr(predicate::str::contains("skipped"));
    // Without --out the results land in the current folder.
    let (_, rows) = read_csv(&d.join("sep-bench-files.csv"));
    let names: Vec<&str> = rows.iter().map(|r| r.get(2).unwrap()).collect();
    assert_eq!(names, ["sep", "bzip2", "sep", "bzip2"]);
    assert!(d.join("sep-bench-files.svg").exists());
}

#[test]
fn a_round_trip_mismatch_fails_loudly() {
    let dir = setup();
    let d = dir.path();
    // Restores one byte too many.
    peer(
        d,
        "brotli",
        "/bin/cat -- \"$last\"; [ -n \"$d\" ] && printf x; exit 0",
    );
    bench(d)
        .args(["a.txt", "--presets", "none", "--peers", "brotli", "-o", "."])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("ROUND TRIP MISMATCH"));
    let (_, rows) = read_csv(&d.join("files.csv"));
    assert_eq!(&rows[0][14], "false");
}

#[test]
fn a_failing_compressor_is_reported_and_the_rest_measured() {
    let dir = setup();
    let d = dir.path();
    peer(d, "zpaq", "echo 'zpaq: out of luck' >&2; exit 3");
    bench(d)
        .args(["a.txt", "--presets", "store", "--peers", "zpaq", "-o", "."])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("FAILED: zpaq on a.txt"))
        .stderr(predicate::str::contains("out of luck"));
    let (_, rows) = read_csv(&d.join("files.csv"));
    let zpaq = rows.iter().find(|r| &r[2] == "zpaq").unwrap();
    assert_eq!(&zpaq[4], "", "no size for a failed run");
    assert_eq!(&zpaq[14], "false");
    let store = rows.iter().find(|r| &r[2] == "sep").unwrap();
    assert_eq!(&store[14], "true");
}

#[test]
fn sets_come_from_the_corpus_folder() {
    let dir = setup();
    let d = dir.path();
    let corpus: PathBuf = d.join("corpus");
    fs::create_dir_all(corpus.join("sets")).unwrap();
    fs::create_dir_all(corpus.join("files")).unwrap();
    fs::copy(d.join("b.bin"), corpus.join("files/b.bin")).unwrap();
    fs::write(corpus.join("sets/mini.txt"), "b.bin\n").unwrap();
    bench(d)
        .args(["--set", "mini", "--corpus"])
        .arg(&corpus)
        .args(["--presets", "store", "--peers", "none", "-q", "-o", "out"])
        .args(["--repeat", "2", "-T", "2"])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    let (_, rows) = read_csv(&d.join("out/mini.csv"));
    assert_eq!(&rows[0][0], "b.bin");
}

#[test]
fn bad_options_are_usage_errors() {
    let dir = setup();
    let d = dir.path();
    bench(d)
        .args(["a.txt", "--presets", "turbo"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown sep setting 'turbo'"))
        .stderr(predicate::str::contains("order2"))
        .stderr(predicate::str::contains("fast"));
    bench(d)
        .args(["a.txt", "--peers", "gzip"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown peer 'gzip'"));
    bench(d)
        .args(["a.txt", "--presets", "none", "--peers", "none"])
        .assert()
        .code(2);
    bench(d)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to measure"));
    bench(d).arg("--help").assert().success();
}

/// sep's rows carry its time on detection and transforms (issue 17): a
/// table on stdout and in the Markdown report, with the segmented blocks.
#[test]
fn sep_reports_detection_and_transform_time() {
    let dir = setup();
    let d = dir.path();
    let gz =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/inputs/grammar.lsp.gz");
    fs::copy(gz, d.join("g.gz")).unwrap();
    let out = bench(d)
        .args(["g.gz", "a.txt", "--presets", "default", "--peers", "none"])
        .args(["-o", "r", "--name", "t"])
        .assert()
        .success()
        .stderr(predicate::str::contains("detection+transforms"))
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let table = text
        .split("sep: detection and transforms")
        .nth(1)
        .unwrap_or_else(|| panic!("no transform table in {text}"));
    let line = |file: &str| {
        table
            .lines()
            .find(|l| l.starts_with(file))
            .unwrap_or_else(|| panic!("no {file} in {table}"))
            .to_string()
    };
    assert!(line("g.gz ").contains(" 1/1 "), "{table}");
    assert!(line("a.txt ").contains(" 0/1 "), "{table}");
    assert!(line("TOTAL ").contains(" 1/2 "), "{table}");
    let md = fs::read_to_string(d.join("r/t.md")).unwrap();
    assert!(md.contains("segment detection and transforms"), "{md}");
    assert!(md.contains("| g.gz | default | 1/1 |"), "{md}");
}
