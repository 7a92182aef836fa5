//! Damaged archives through the `sep` binary: exit code 1 with a one-line error and
//! no output file, or (a flip that cannot change the content) exit 0 with exactly the
//! original; never a panic, a hang or a wrong output. The archives are the golden ones
//! (`tests/golden/v1`), one per model kind, each of several blocks; every truncation
//! point and every bit flip is swept through the library in
//! `crates/sep/tests/corruption.rs`, a sample of them here.

use assert_cmd::Command;
use std::fs;
use std::path::PathBuf;
use std::time::Duration;

fn golden() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

/// `(archive, original)` of a golden archive, the original found through MANIFEST.tsv.
fn golden_pair(archive: &str) -> (Vec<u8>, Vec<u8>) {
    let manifest = fs::read_to_string(golden().join("v1/MANIFEST.tsv")).expect("manifest");
    let input = manifest
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|row| row[0] == archive)
        .unwrap_or_else(|| panic!("{archive} is not in MANIFEST.tsv"))[1];
    (
        fs::read(golden().join("v1").join(archive)).expect("archive"),
        fs::read(golden().join("inputs").join(input)).expect("input"),
    )
}

/// The damaged copies of `archive`: `(what, bytes, may_be_harmless)`.
fn damage(archive: &[u8]) -> Vec<(String, Vec<u8>, bool)> {
    let n = archive.len();
    let mut cases = Vec::new();
    let header_len = sep::read_header(&mut &archive[..])
        .expect("header")
        .to_bytes()
        .len();
    for len in [
        0,
        2,
        4,
        20,
        header_len - 1,
        header_len + 5,
        header_len + 17,
        n / 2,
        n - 25,
        n - 1,
    ] {
        cases.push((
            format!("truncated to {len}"),
            archive[..len].to_vec(),
            false,
        ));
    }
    // Flips spread over the archive, the header and the end record included.
    for k in 0..12 {
        let byte = (k * (n - 1)) / 11;
        let bit = k % 8;
        let mut v = archive.to_vec();
        v[byte] ^= 1 << bit;
        cases.push((format!("bit {bit} of byte {byte} flipped"), v, true));
    }
    cases
}

#[test]
fn damaged_archives_exit_1_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged.sep");
    let out = dir.path().join("out");
    for name in [
        "store.blocks-1000.sep",
        "order2.blocks-1000.sep",
        "pac.blocks-1000.sep",
        "mix.blocks-1000.sep",
        "mix-pac.blocks-1000.sep",
        "ultra.blocks-1000.sep",
        "concatenated.sep",
    ] {
        let (archive, original) = golden_pair(name);
        let (mut failed, mut harmless) = (0, 0);
        for (what, bytes, may_be_harmless) in damage(&archive) {
            fs::write(&damaged, &bytes).unwrap();
            let run = Command::cargo_bin("sep")
                .expect("binary built")
                .args(["-d", "-f", "-o"])
                .arg(&out)
                .arg(&damaged)
                .timeout(Duration::from_secs(120))
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&run.stderr);
            assert!(
                !stderr.contains("panicked"),
                "{name}, {what}: a panic: {stderr}"
            );
            let code = run.status.code();
            match code {
                Some(1) => {
                    assert!(!out.exists(), "{name}, {what}: output left behind");
                    assert_eq!(
                        stderr.trim_end().lines().count(),
                        1,
                        "{name}, {what}: not one line: {stderr}"
                    );
                    failed += 1;
                }
                Some(0) if may_be_harmless => {
                    assert!(
                        fs::read(&out).unwrap() == original,
                        "{name}, {what}: exit 0 with wrong content"
                    );
                    fs::remove_file(&out).unwrap();
                    harmless += 1;
                }
                other => panic!("{name}, {what}: exit {other:?}: {stderr}"),
            }
            // Testing (-t) agrees with decoding.
            let test = Command::cargo_bin("sep")
                .expect("binary built")
                .arg("-t")
                .arg(&damaged)
                .timeout(Duration::from_secs(120))
                .output()
                .unwrap();
            assert_eq!(test.status.code(), code, "{name}, {what}: sep -t");
        }
        eprintln!("{name}: {failed} damaged copies exit 1, {harmless} decode exactly");
        assert!(harmless <= 2, "{name}: {harmless} flips without effect");
    }
}
