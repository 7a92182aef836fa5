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

/// A decompression bomb stops at `--max-output` with one line, exit 1, and no output
/// file; within the limit, or with `none`, it decodes.
#[test]
fn max_output_refuses_a_bomb_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let zeros = vec![0u8; 1 << 20];
    let src = dir.path().join("z");
    std::fs::write(&src, &zeros).unwrap();
    sep()
        .args(["-q", "-B", "256K"])
        .arg(&src)
        .assert()
        .success();
    std::fs::remove_file(&src).unwrap();
    let archive = dir.path().join("z.sep");
    assert!(std::fs::metadata(&archive).unwrap().len() < 1000);
    sep()
        .args(["-d", "--max-output", "512K"])
        .arg(&archive)
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains(
                "output (content bytes) would be 1048576, over the limit of 524288; raise --max-output",
            )
            .and(predicate::str::contains("\n").count(1)),
        );
    assert!(!src.exists(), "no partial output");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["z.sep"], "no temporary file left");
    // A streamed archive (no length in the header) stops at the block that crosses.
    let streamed = sep()
        .args(["-q", "-c", "-B", "256K"])
        .write_stdin(zeros.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = sep()
        .args(["-d", "-c", "--max-output", "600K"])
        .write_stdin(streamed)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("over the limit of 614400"))
        .get_output()
        .stdout
        .clone();
    assert_eq!(
        out.len(),
        512 << 10,
        "the blocks within the limit, not one byte more"
    );
    for limit in ["1M", "none"] {
        sep()
            .args(["-d", "-f", "--max-output", limit])
            .arg(&archive)
            .assert()
            .success();
        assert_eq!(std::fs::read(&src).unwrap(), zeros);
    }
    sep()
        .args(["-t", "--max-output", "1K"])
        .arg(&archive)
        .assert()
        .code(1);
    sep()
        .args(["-d", "--max-output", "12Q"])
        .arg(&archive)
        .assert()
        .code(2);
}

/// 1 MiB of zeros coded by context mixing in about a hundred bytes is more work than
/// those bytes justify: `--max-work 0` refuses it with one line naming the option, the
/// default allows it.
#[test]
fn max_work_refuses_with_one_line_and_the_default_allows_real_archives() {
    let zeros = vec![0u8; 1 << 20];
    let archive = sep()
        .args(["-q", "-c", "-m", "mix", "-p", "fast"])
        .write_stdin(zeros.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(archive.len() < 200, "{}", archive.len());
    for mode in ["-d", "-t"] {
        sep()
            .args([mode, "-c", "--max-work", "0"])
            .write_stdin(archive.clone())
            .assert()
            .code(1)
            .stdout("")
            .stderr(
                predicate::str::contains("decoding work")
                    .and(predicate::str::contains("raise --max-work"))
                    .and(predicate::str::contains("\n").count(1)),
            );
    }
    let out = sep()
        .args(["-d", "-c"])
        .write_stdin(archive.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(out, zeros);
    sep()
        .args(["-t", "--max-work", "none"])
        .write_stdin(archive)
        .assert()
        .success();
}

/// `-M`: decompression refuses an archive whose one block needs more than the limit, in
/// one line naming need and option; compression with a preset too large for it takes a
/// smaller one with a note (same content back), or refuses when none fits.
#[test]
fn memory_limit_picks_a_smaller_preset_or_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let data = text(50_000);
    let src = dir.path().join("t");
    std::fs::write(&src, &data).unwrap();
    // max (CM revision 10) with 16 MiB blocks needs more than 600 MiB
    // (revision 8: about 760), default (revision 9) less (revision 7: about
    // 429), counting the worst case of transforms.
    let out = sep()
        .args([
            "-m", "mix", "-p", "max", "-B", "16M", "-T1", "-M", "600M", "-c",
        ])
        .arg(&src)
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "more than the limit of 600.0 MiB (-M/--memory); using the mix preset",
        ))
        .get_output()
        .stdout
        .clone();
    let archive = dir.path().join("t.sep");
    std::fs::write(&archive, &out).unwrap();
    let listed = sep()
        .args(["-l", "-v"])
        .arg(&archive)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let listed = String::from_utf8(listed).unwrap();
    assert!(
        listed.contains("table_bits 26") || listed.contains("2^26"),
        "{listed}"
    );
    let back = sep()
        .args(["-d", "-c"])
        .arg(&archive)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(back, data);
    sep()
        .args(["-m", "mix", "-p", "max", "-B", "16M", "-M", "8M", "-c"])
        .arg(&src)
        .assert()
        .code(1)
        .stdout("")
        .stderr(predicate::str::contains("no smaller preset of it fits"));
    sep()
        .args(["-d", "-c", "-M", "16M"])
        .arg(&archive)
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            predicate::str::contains("decoder memory")
                .and(predicate::str::contains("raise --memory"))
                .and(predicate::str::contains("\n").count(1)),
        );
    sep()
        .args(["-d", "-c", "-M", "none"])
        .arg(&archive)
        .assert()
        .success();
}
