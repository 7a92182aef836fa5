//! Issue 20: `sep train` and `--prior`, driving the real binary.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

fn sep() -> Command {
    Command::cargo_bin("sep").expect("binary built")
}

/// Training samples (4 KiB pieces of calgary.paper1 in a folder) and a test
/// file (a piece of the same text the samples do not hold).
fn setup() -> (TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let text = fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/files/calgary.paper1"),
    )
    .unwrap();
    let samples = dir.path().join("samples");
    fs::create_dir(&samples).unwrap();
    for (i, chunk) in text[..40_960].chunks(4096).enumerate() {
        fs::write(samples.join(format!("s{i:02}.txt")), chunk).unwrap();
    }
    let file = dir.path().join("x.txt");
    fs::write(&file, &text[text.len() - 4096..]).unwrap();
    (dir, samples, file)
}

fn train(dir: &Path, samples: &Path, name: &str) -> PathBuf {
    let prior = dir.join(name);
    sep()
        .args(["train", "-p", "default", "-o"])
        .arg(&prior)
        .arg(samples)
        .assert()
        .success()
        .stderr(predicate::str::contains("10 samples").and(predicate::str::contains("id ")));
    prior
}

#[test]
fn train_compress_list_decompress() {
    let (dir, samples, file) = setup();
    let prior = train(dir.path(), &samples, "p.sepp");
    // Training is deterministic: the same samples give the same file.
    let again = train(dir.path(), &samples, "q.sepp");
    assert_eq!(fs::read(&prior).unwrap(), fs::read(&again).unwrap());
    let data = fs::read(&file).unwrap();
    // stdout of a successful `sep [--prior PRIOR] ARGS... PATH`.
    let run = |prior: Option<&Path>, args: &[&str], path: &Path| {
        let mut cmd = sep();
        if let Some(p) = prior {
            cmd.arg("--prior").arg(p);
        }
        let out = cmd.args(args).arg(path).assert().success();
        out.get_output().stdout.clone()
    };
    let with = run(Some(&prior), &["-q", "-c"], &file);
    let without = run(None, &["-p", "default", "-q", "-c"], &file);
    assert!(
        with.len() * 10 < without.len() * 9,
        "{} with the prior, {} without",
        with.len(),
        without.len()
    );
    // -T1 and -T2 write the same archive.
    let t2 = run(Some(&prior), &["-q", "-c", "-T2", "-B", "4K"], &file);
    let t1 = run(Some(&prior), &["-q", "-c", "-T1", "-B", "4K"], &file);
    assert_eq!(t1, t2);
    let archive = dir.path().join("x.txt.sep");
    fs::write(&archive, &with).unwrap();
    // -l shows the prior's id (the one sep train printed: its hash).
    let out = String::from_utf8(run(None, &["-l"], &archive)).unwrap();
    assert!(out.contains("prior "), "{out}");
    // -l -v: the id, and that the memory shown leaves the prior's out.
    let out = String::from_utf8(run(None, &["-l", "-v"], &archive)).unwrap();
    assert!(out.contains("  prior "), "{out}");
    assert!(out.contains("plus the prior's"), "{out}");
    // Decompress and test with the prior.
    let back = run(Some(&prior), &["-d", "-c"], &archive);
    assert_eq!(back, data);
    run(Some(&prior), &["-t"], &archive);
}

#[test]
fn the_wrong_prior_or_none_is_one_line_and_nothing_written() {
    let (dir, samples, file) = setup();
    let prior = train(dir.path(), &samples, "p.sepp");
    let archive = dir.path().join("x.txt.sep");
    sep()
        .arg("--prior")
        .arg(&prior)
        .arg("-q")
        .arg(&file)
        .assert()
        .success();
    fs::remove_file(&file).unwrap();
    let one_line = |s: &[u8]| String::from_utf8_lossy(s).trim_end().lines().count() == 1;
    // Without the prior: exit 1, one line naming the id, no output file.
    let a = sep().arg("-d").arg(&archive).assert().code(1);
    let err = a.get_output().stderr.clone();
    assert!(one_line(&err), "{}", String::from_utf8_lossy(&err));
    assert!(String::from_utf8_lossy(&err).contains("needs prior"));
    assert!(!file.exists());
    // With another prior.
    let other_samples = dir.path().join("other");
    fs::create_dir(&other_samples).unwrap();
    fs::write(other_samples.join("o.txt"), b"other samples ".repeat(500)).unwrap();
    let other = dir.path().join("o.sepp");
    sep()
        .args(["train", "-q", "-p", "default", "-o"])
        .arg(&other)
        .arg(&other_samples)
        .assert()
        .success();
    sep()
        .arg("--prior")
        .arg(&other)
        .arg("-d")
        .arg(&archive)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("but prior"));
    assert!(!file.exists());
    // A prior for another preset than asked for.
    fs::write(&file, b"some text to compress ".repeat(300)).unwrap();
    sep()
        .arg("--prior")
        .arg(&prior)
        .args(["-p", "max", "-c"])
        .arg(&file)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("trained for"));
}

#[test]
fn bad_prior_files_are_one_line_errors() {
    let (dir, samples, file) = setup();
    let prior = train(dir.path(), &samples, "p.sepp");
    let good = fs::read(&prior).unwrap();
    let bad = dir.path().join("bad.sepp");
    let mut flipped = good.clone();
    let n = flipped.len();
    flipped[n / 2] ^= 1;
    for (bytes, why) in [
        (good[..good.len() / 3].to_vec(), "declares"),
        (flipped, "checksum"),
        (b"not a prior".to_vec(), "magic"),
        (Vec::new(), "magic"),
    ] {
        fs::write(&bad, &bytes).unwrap();
        for mode in [&["-k", "-f"][..], &["-d", "-f"][..]] {
            let a = sep()
                .arg("--prior")
                .arg(&bad)
                .args(mode)
                .arg(&file)
                .assert()
                .code(1);
            let err = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
            assert!(
                err.contains(why) && err.trim_end().lines().count() == 1,
                "{err}"
            );
        }
        assert!(!dir.path().join("x.txt.sep").exists());
    }
    sep()
        .arg("--prior")
        .arg(dir.path().join("missing.sepp"))
        .arg(&file)
        .assert()
        .code(1);
    assert!(!dir.path().join("x.txt.sep").exists());
}

#[test]
fn train_refuses_bad_uses() {
    let (dir, samples, _file) = setup();
    let out = dir.path().join("p.sepp");
    // No output named: a usage error.
    sep().args(["train"]).arg(&samples).assert().code(2);
    // Unknown preset, a network preset, nothing to learn.
    sep()
        .args(["train", "-p", "nope", "-o"])
        .arg(&out)
        .arg(&samples)
        .assert()
        .code(2);
    sep()
        .args(["train", "-p", "hybrid", "-o"])
        .arg(&out)
        .arg(&samples)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("without a network"));
    let empty = dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    sep()
        .args(["train", "-o"])
        .arg(&out)
        .arg(&empty)
        .assert()
        .code(1);
    assert!(!out.exists());
    // An existing output needs -f.
    train(dir.path(), &samples, "p.sepp");
    sep()
        .args(["train", "-p", "default", "-o"])
        .arg(&out)
        .arg(&samples)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already exists"));
}

/// The fast preset (CM revision 3) trains priors since stop 31: `sep train -p
/// fast` writes one, and `sep -p fast --prior` codes a file that decodes
/// only with it, to the same bytes.
#[test]
fn the_fast_preset_trains_and_uses_priors() {
    let (dir, samples, file) = setup();
    let prior = dir.path().join("fast.sepp");
    sep()
        .args(["train", "-q", "-p", "fast", "-o"])
        .arg(&prior)
        .arg(&samples)
        .assert()
        .success();
    assert!(prior.exists());
    let archive = dir.path().join("f.sep");
    sep()
        .args(["-q", "-p", "fast", "--prior"])
        .arg(&prior)
        .arg("-o")
        .arg(&archive)
        .arg(&file)
        .assert()
        .success();
    sep()
        .args(["-d", "-c", "--prior"])
        .arg(&prior)
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::eq(fs::read(&file).unwrap()));
    sep()
        .args(["-d", "-c"])
        .arg(&archive)
        .assert()
        .code(1)
        .stdout(predicate::str::is_empty());
}

/// `sep train --table-bits N` fixes a smaller context table: a smaller file
/// whose archives still round-trip; sizes outside 16..=24 are refused.
#[test]
fn train_table_bits_makes_a_smaller_prior() {
    let (dir, samples, file) = setup();
    let big = train(dir.path(), &samples, "big.sepp");
    let small = dir.path().join("small.sepp");
    sep()
        .args(["train", "-q", "--table-bits", "16", "-o"])
        .arg(&small)
        .arg(&samples)
        .assert()
        .success();
    let (b, s) = (fs::read(&big).unwrap(), fs::read(&small).unwrap());
    assert!(
        s.len() < b.len(),
        "{} bytes with 2^16, {} without",
        s.len(),
        b.len()
    );
    let archive = dir.path().join("x.sep");
    sep()
        .arg("--prior")
        .arg(&small)
        .args(["-q", "-o"])
        .arg(&archive)
        .arg(&file)
        .assert()
        .success();
    let out = sep()
        .arg("--prior")
        .arg(&small)
        .args(["-d", "-c", "-q"])
        .arg(&archive)
        .assert()
        .success();
    assert_eq!(out.get_output().stdout, fs::read(&file).unwrap());
    for bad in ["15", "25", "x"] {
        sep()
            .args(["train", "--table-bits", bad, "-o"])
            .arg(dir.path().join("bad.sepp"))
            .arg(&samples)
            .assert()
            .failure()
            .stderr(predicate::str::contains("table-bits"));
        assert!(!dir.path().join("bad.sepp").exists());
    }
}

/// A small file compressed without options gets the built-in prior of its
/// kind when that pays, decodes without options, and `sep -l` names it;
/// `--prior none` opts out; `--prior builtin:NAME` names one; -T1 and -T2
/// write the same archive.
#[test]
fn small_files_get_a_built_in_prior() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/files/cantrbry.xargs.1");
    let file = dir.path().join("xargs.1");
    fs::copy(&src, &file).unwrap();
    let data = fs::read(&file).unwrap();
    let stdout = |args: &[&str], path: &Path| {
        sep()
            .args(args)
            .arg(path)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let auto = stdout(&["-q", "-c"], &file);
    let none = stdout(&["-q", "-c", "--prior", "none"], &file);
    assert!(
        auto.len() < none.len(),
        "{} with, {} without",
        auto.len(),
        none.len()
    );
    assert_eq!(
        stdout(&["-q", "-c", "-T2"], &file),
        stdout(&["-q", "-c", "-T1"], &file)
    );
    let named = stdout(&["-q", "-c", "--prior", "builtin:text"], &file);
    assert_eq!(named, auto, "the automatic choice is the text prior");
    let archive = dir.path().join("a.sep");
    fs::write(&archive, &auto).unwrap();
    let listed = String::from_utf8(stdout(&["-l"], &archive)).unwrap();
    assert!(listed.contains("prior builtin:text"), "{listed}");
    assert_eq!(stdout(&["-d", "-c", "-q"], &archive), data);
    let plain = dir.path().join("b.sep");
    fs::write(&plain, &none).unwrap();
    let listed = String::from_utf8(stdout(&["-l"], &plain)).unwrap();
    assert!(!listed.contains("prior"), "{listed}");
    assert_eq!(stdout(&["-d", "-c", "-q"], &plain), data);
    // Written to a file, the archive is the same, and --rm removes the
    // input as after any compression.
    sep().args(["-q", "--rm"]).arg(&file).assert().success();
    assert_eq!(fs::read(dir.path().join("xargs.1.sep")).unwrap(), auto);
    assert!(!file.exists(), "the input is removed");
    fs::write(&file, &data).unwrap();
    sep()
        .args(["-q", "--prior", "builtin:nope", "-c"])
        .arg(&file)
        .assert()
        .code(1)
        .stderr(
            predicate::str::contains("no such built-in prior")
                .and(predicate::str::contains('\n').count(1)),
        );
}

/// The automatic choice writes the archive it coded (issue 20: the input is
/// coded once with the built-in prior and once without, not a third time):
/// `-vv` names the model and reports the archive's size,
/// `SEP_STATS_FILE` gets the coding's line, and an input no prior helps
/// (noise) is the archive of `--prior none`.
#[test]
fn the_automatic_choice_writes_the_archive_it_coded() {
    let dir = tempfile::tempdir().unwrap();
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/files/cantrbry.xargs.1");
    let file = dir.path().join("xargs.1");
    fs::copy(&src, &file).unwrap();
    let stats = dir.path().join("stats.txt");
    let out = sep()
        .args(["-vv", "-k"])
        .env("SEP_STATS_FILE", &stats)
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    let archive = fs::read(dir.path().join("xargs.1.sep")).unwrap();
    assert!(err.contains("model "), "{err}");
    assert!(err.contains(&archive.len().to_string()), "{err}");
    let line = fs::read_to_string(&stats).unwrap();
    assert_eq!(line.lines().count(), 1, "{line}");
    assert_eq!(
        line.split_whitespace().nth(4),
        Some("1"),
        "one block: {line}"
    );
    let with = sep()
        .args(["-q", "-c", "--prior", "builtin:text"])
        .arg(&file)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(archive, with);
    // Noise: no prior pays, the archive is the one without.
    let mut x = 7u32;
    let noise: Vec<u8> = (0..3000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let n = dir.path().join("noise.bin");
    fs::write(&n, &noise).unwrap();
    let code = |args: &[&str]| {
        sep()
            .args(args)
            .arg(&n)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let auto = code(&["-q", "-c"]);
    assert_eq!(auto, code(&["-q", "-c", "--prior", "none"]));
    assert_eq!(
        sep()
            .args(["-d", "-c", "-q"])
            .write_stdin(auto)
            .assert()
            .success()
            .get_output()
            .stdout,
        noise
    );
}

/// `sep train --pack` writes a packed prior (version 2): smaller, the same
/// id, and archives coded with either decode with the other.
#[test]
fn train_pack_writes_the_same_prior_smaller() {
    let (dir, samples, file) = setup();
    let plain = train(dir.path(), &samples, "plain.sepp");
    let packed = dir.path().join("packed.sepp");
    sep()
        .args(["train", "--pack", "-p", "default", "-o"])
        .arg(&packed)
        .arg(&samples)
        .assert()
        .success();
    let (a, b) = (fs::read(&plain).unwrap(), fs::read(&packed).unwrap());
    assert_eq!(b[4], 2, "prior_version 2");
    assert!(b.len() < a.len(), "{} vs {}", b.len(), a.len());
    let coded = |prior: &Path| {
        sep()
            .args(["-q", "-c", "--prior"])
            .arg(prior)
            .arg(&file)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let archive = coded(&plain);
    assert_eq!(archive, coded(&packed), "the same prior, the same archive");
    sep()
        .args(["-q", "-d", "-c", "--prior"])
        .arg(&packed)
        .write_stdin(archive)
        .assert()
        .success()
        .stdout(fs::read(&file).unwrap());
}
