//! The `sep` binary as a user runs it: real processes, real files.

use assert_cmd::Command;
use predicates::prelude::*;
use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// The binary with the fast order2 model (the neural default is tested in
/// `neural_default_and_presets`); a later `-m` on the line wins.
fn sep() -> Command {
    let mut c = Command::cargo_bin("sep").expect("binary built");
    c.args(["-m", "order2"]);
    c
}

/// A file of the test corpus kept in the repository (`tests/corpus`).
fn corpus_file(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus/files");
    fs::read(dir.join(name)).expect("a file of tests/corpus")
}

/// A temp folder holding `a.txt` (a real text).
fn setup() -> (TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let data = corpus_file("calgary.paper1");
    let path = dir.path().join("a.txt");
    fs::write(&path, &data).unwrap();
    (dir, path, data)
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn compress_then_decompress_a_file() {
    let (dir, path, data) = setup();
    sep()
        .arg(&path)
        .assert()
        .success()
        .stderr(predicate::str::contains("ratio"));
    let archive = dir.path().join("a.txt.sep");
    assert!(archive.exists());
    assert!(path.exists(), "input is kept by default");
    assert!(fs::metadata(&archive).unwrap().len() < data.len() as u64 / 2);
    fs::remove_file(&path).unwrap();
    sep().arg("-d").arg(&archive).assert().success();
    assert_eq!(fs::read(&path).unwrap(), data);
    assert_eq!(files_in(dir.path()), ["a.txt", "a.txt.sep"]);
}

#[test]
fn stdin_to_stdout_both_ways() {
    let (_dir, _path, data) = setup();
    let archive = sep()
        .arg("-q")
        .write_stdin(data.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(&archive[..4], &[0x8F, b'S', b'E', b'P']);
    let back = sep()
        .arg("-d")
        .write_stdin(archive.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(back, data);
    let back = sep()
        .args(["-d", "-"])
        .write_stdin(archive)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(back, data);
}

#[test]
fn stdout_flag_and_output_flag() {
    let (dir, path, data) = setup();
    let out = sep()
        .arg("-c")
        .arg(&path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(files_in(dir.path()), ["a.txt"], "-c writes no file");
    let named = dir.path().join("named.bin");
    sep().arg(&path).arg("-o").arg(&named).assert().success();
    assert_eq!(
        fs::read(&named).unwrap(),
        out,
        "same archive through -c and -o"
    );
    let restored = dir.path().join("restored");
    sep()
        .args(["-d", "-o"])
        .arg(&restored)
        .arg(&named)
        .assert()
        .success();
    assert_eq!(fs::read(&restored).unwrap(), data);
    sep()
        .args(["-d", "-c"])
        .arg(&named)
        .assert()
        .success()
        .stdout(predicate::eq(data));
}

#[test]
fn existing_output_needs_force() {
    let (dir, path, _) = setup();
    let archive = dir.path().join("a.txt.sep");
    fs::write(&archive, b"precious").unwrap();
    sep()
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(
        fs::read(&archive).unwrap(),
        b"precious",
        "not overwritten without -f"
    );
    sep().arg("-f").arg(&path).assert().success();
    assert_ne!(fs::read(&archive).unwrap(), b"precious");
    assert_eq!(
        files_in(dir.path()),
        ["a.txt", "a.txt.sep"],
        "no temporary file left"
    );
}

#[test]
fn corrupt_archives_fail_cleanly_leaving_nothing() {
    let (dir, path, _) = setup();
    sep().arg(&path).assert().success();
    let archive = dir.path().join("a.txt.sep");
    let good = fs::read(&archive).unwrap();
    fs::remove_file(&path).unwrap();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good[..good.len() / 2].to_vec(), "truncated"),
        (
            {
                let mut v = good.clone();
                v[200] ^= 4;
                v
            },
            "corrupt",
        ),
        (b"PK\x03\x04 not ours".to_vec(), "not a sep archive"),
        (
            {
                let mut v = good.clone();
                v[4] = 7;
                v
            },
            "unsupported format version 7",
        ),
        (Vec::new(), "empty"),
    ];
    for (bytes, msg) in cases {
        fs::write(&archive, &bytes).unwrap();
        sep()
            .arg("-d")
            .arg(&archive)
            .assert()
            .code(1)
            .stderr(predicate::str::contains(msg))
            .stderr(predicate::str::contains("panicked").not());
        assert_eq!(
            files_in(dir.path()),
            ["a.txt.sep"],
            "no output left behind for '{msg}'"
        );
        assert_eq!(fs::read(&archive).unwrap(), bytes, "input untouched");
        sep().arg("-t").arg(&archive).assert().code(1);
    }
}

#[test]
fn bad_paths_and_usage() {
    let (dir, path, _) = setup();
    sep()
        .arg(dir.path().join("missing"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("No such file"));
    sep()
        .arg(dir.path())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is a directory"));
    sep()
        .arg("-d")
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown suffix"));
    sep()
        .args(["--model", "nope"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown model"));
    sep().arg("--no-such-flag").assert().code(2);
    sep()
        .args(["-o", "x"])
        .arg(&path)
        .arg(&path)
        .assert()
        .code(2);
    sep().args(["-B", "0"]).arg(&path).assert().code(2);
    // One bad input among good ones: the good ones are done, exit 1.
    let other = dir.path().join("b.txt");
    fs::write(&other, b"hello").unwrap();
    sep()
        .arg(dir.path().join("missing"))
        .arg(&other)
        .assert()
        .code(1);
    assert!(dir.path().join("b.txt.sep").exists());
    // Compressing an archive again is refused without -f.
    sep()
        .arg(dir.path().join("b.txt.sep"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("suffix"));
    sep()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Usage"));
    sep().arg("--version").assert().success();
}

#[test]
fn unreadable_input_is_a_clear_error() {
    let (dir, path, _) = setup();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&path).is_ok() {
        eprintln!("running as a user who can read any file (root): permission case not observable");
        return;
    }
    sep()
        .arg(&path)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("Permission denied"));
    assert_eq!(files_in(dir.path()), ["a.txt"]);
}

#[test]
fn list_and_test() {
    let (dir, path, data) = setup();
    sep().args(["-B", "20K"]).arg(&path).assert().success();
    let archive = dir.path().join("a.txt.sep");
    sep()
        .args(["-l", "-v"])
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::str::contains("model           order2"))
        .stdout(predicate::str::contains(format!(
            "content         {} bytes",
            data.len()
        )))
        .stdout(predicate::str::contains(
            "blocks          3 (0 stored), block size 20480",
        ))
        .stdout(predicate::str::contains("memory"));
    Command::cargo_bin("sep")
        .unwrap()
        .arg("info")
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::str::contains("streams (B)"));
    sep()
        .arg("-t")
        .arg(&archive)
        .assert()
        .success()
        .stderr(predicate::str::contains("OK"));
    assert_eq!(files_in(dir.path()), ["a.txt", "a.txt.sep"]);
}

#[test]
fn rm_removes_input_only_on_success() {
    let (dir, path, data) = setup();
    sep().arg("--rm").arg(&path).assert().success();
    assert_eq!(files_in(dir.path()), ["a.txt.sep"]);
    sep()
        .args(["-d", "--rm"])
        .arg(dir.path().join("a.txt.sep"))
        .assert()
        .success();
    assert_eq!(files_in(dir.path()), ["a.txt"]);
    assert_eq!(fs::read(&path).unwrap(), data);
}

#[test]
fn threads_and_models_give_identical_archives_per_model() {
    let (dir, path, data) = setup();
    let run = |args: &[&str]| {
        sep()
            .args(args)
            .arg("-c")
            .arg(&path)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let t1 = run(&["-T1", "-B", "8K"]);
    let t2 = run(&["-T2", "-B", "8K"]);
    assert_eq!(t1, t2, "archive depends on -T");
    let stored = run(&["-m", "store"]);
    assert!(stored.len() > data.len());
    let again = dir.path().join("s.sep");
    fs::write(&again, &stored).unwrap();
    sep()
        .args(["-d", "-c"])
        .arg(&again)
        .assert()
        .success()
        .stdout(predicate::eq(data));
}

#[test]
fn permissions_and_mtime_follow_the_input() {
    let (dir, path, _) = setup();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    let old = filetime::FileTime::from_unix_time(1_000_000_000, 0);
    filetime::set_file_mtime(&path, old).unwrap();
    sep().arg(&path).assert().success();
    let meta = fs::metadata(dir.path().join("a.txt.sep")).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    assert_eq!(filetime::FileTime::from_last_modification_time(&meta), old);
}

#[test]
fn default_model_presets_and_neural_knobs() {
    let dir = tempfile::tempdir().unwrap();
    let data = corpus_file("cantrbry.xargs.1");
    let path = dir.path().join("x.txt");
    fs::write(&path, &data).unwrap();
    let plain = || Command::cargo_bin("sep").expect("binary built");
    // No flags: the mixed model's default preset, context mixing alone.
    plain().arg(&path).assert().success();
    let archive = dir.path().join("x.txt.sep");
    plain()
        .args(["-l", "-v"])
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::str::contains("mix: cm"))
        .stdout(predicate::str::contains("neural").not());
    plain()
        .args(["-d", "-c"])
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::eq(data.clone()));
    // The hybrid preset adds a network, recorded in the header.
    let hybrid = plain()
        .args(["-p", "hybrid", "-c"])
        .arg(&path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    plain()
        .args(["-l", "-v", "-"])
        .write_stdin(hybrid.clone())
        .assert()
        .success()
        .stdout(predicate::str::contains("mix: cm"))
        .stdout(predicate::str::contains("neural: pac"));
    plain()
        .args(["-d", "-c"])
        .write_stdin(hybrid)
        .assert()
        .success()
        .stdout(predicate::eq(data.clone()));
    // A preset with overrides, recorded in the header.
    let out = plain()
        .args([
            "-m",
            "neural",
            "--preset",
            "fast",
            "--streams",
            "3",
            "--context",
            "4",
            "-c",
        ])
        .arg(&path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    fs::write(&archive, &out).unwrap();
    plain()
        .args(["-l", "-v"])
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::str::contains("streams (B)     3"))
        .stdout(predicate::str::contains("context (L)     4"));
    plain()
        .args(["-d", "-c"])
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::eq(data));
    plain()
        .args(["--preset", "huge"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown preset"));
    plain()
        .args(["-m", "order2", "--preset", "fast"])
        .arg(&path)
        .assert()
        .code(2);
    plain()
        .args(["-m", "order2", "--streams", "4"])
        .arg(&path)
        .assert()
        .code(2);
    plain()
        .args(["-p", "hybrid", "--context", "300"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--context 300"));
    plain().args(["--streams", "0"]).arg(&path).assert().code(2);
}

#[test]
fn mix_fast_has_no_network() {
    let dir = tempfile::tempdir().unwrap();
    let data = corpus_file("cantrbry.grammar.lsp");
    let path = dir.path().join("g.lsp");
    fs::write(&path, &data).unwrap();
    let plain = || Command::cargo_bin("sep").expect("binary built");
    let out = plain()
        .args(["--preset", "fast", "-c"])
        .arg(&path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let archive = dir.path().join("g.sep");
    fs::write(&archive, &out).unwrap();
    plain()
        .args(["-l", "-v"])
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::str::contains("mix: cm"))
        .stdout(predicate::str::contains("neural").not());
    plain()
        .args(["-d", "-c"])
        .arg(&archive)
        .assert()
        .success()
        .stdout(predicate::eq(data));
    // Network knobs need a network.
    plain()
        .args(["--preset", "fast", "--streams", "4"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("network"));
}

#[test]
fn block_sizes_below_the_minimum_are_a_usage_error() {
    let (dir, path, _) = setup();
    for size in ["1", "4095", "1K"] {
        sep()
            .args(["-B", size])
            .arg(&path)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("minimum block size of 4096 bytes"));
    }
    assert!(!dir.path().join("a.txt.sep").exists(), "no output");
    // The minimum itself is accepted.
    sep().args(["-B", "4K", "-q"]).arg(&path).assert().success();
    assert!(dir.path().join("a.txt.sep").exists());
}

#[test]
fn an_input_that_fails_while_read_is_one_error_line_and_no_panic() {
    // Standard input opened on a folder: it opens, then every read fails.
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sep"))
        .args(["-m", "order2", "-c"])
        .stdin(fs::File::open(dir.path()).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty() || out.stdout.len() < 100);
}

/// `--no-transforms` (issue 17): a gzip file gets a segmented block by
/// default (its deflate stream inflated) and a plain one with the flag; both
/// archives decode to the original.
#[test]
fn no_transforms_flag_turns_segmented_blocks_off() {
    let dir = tempfile::tempdir().unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden/inputs");
    let data = fs::read(golden.join("grammar.lsp.gz")).unwrap();
    let input = dir.path().join("g.gz");
    fs::write(&input, &data).unwrap();
    let mut sizes = Vec::new();
    for (flag, kind) in [(None, "segmented"), (Some("--no-transforms"), "stored")] {
        let archive = dir.path().join(format!("{kind}.sep"));
        let mut c = sep();
        c.args(["-m", "mix", "-o"]).arg(&archive);
        if let Some(f) = flag {
            c.arg(f);
        }
        c.arg(&input).assert().success();
        let listing = sep().args(["-l", "-v"]).arg(&archive).output().unwrap();
        let text = String::from_utf8_lossy(&listing.stdout).into_owned();
        assert!(text.contains(kind), "{flag:?}: {text}");
        assert_eq!(text.contains("segmented"), flag.is_none(), "{text}");
        assert_eq!(text.contains("deflate"), flag.is_none(), "{text}");
        let out = sep().args(["-d", "-c"]).arg(&archive).output().unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout, data);
        sizes.push(fs::metadata(&archive).unwrap().len());
    }
    assert!(sizes[0] < sizes[1], "{sizes:?}");
}

/// Issue 19: `-p ultra` (max plus the serial LSTM inside the mixer) round
/// trips through the binary, gives the same archive for -T1 and -T2 (several
/// blocks), and lists its network.
#[test]
fn ultra_preset_round_trips_identically_for_any_threads() {
    let (dir, path, data) = setup();
    let run = |args: &[&str]| {
        sep()
            .args(["-m", "mix"])
            .args(args)
            .arg("-c")
            .arg(&path)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let t1 = run(&["-p", "ultra", "-T1", "-B", "16K"]);
    let t2 = run(&["-p", "ultra", "-T2", "-B", "16K"]);
    assert_eq!(t1, t2, "ultra archive depends on -T");
    // ultra is max plus the network; what the network is worth is checked in
    // sep's tests (`ultra_round_trips_within_its_own_cm`). One block at -T2 trains
    // the network (kind 3) on a second thread: the same archive as -T1.
    let whole = run(&["-p", "ultra", "-T1"]);
    assert_eq!(
        whole,
        run(&["-p", "ultra", "-T2"]),
        "ultra's one-block archive depends on -T"
    );
    for (name, archive) in [("u1.sep", &t1), ("u.sep", &whole)] {
        let a = dir.path().join(name);
        fs::write(&a, archive).unwrap();
        sep()
            .args(["-d", "-c"])
            .arg(&a)
            .assert()
            .success()
            .stdout(predicate::eq(data.clone()));
    }
    let a = dir.path().join("u.sep");
    sep()
        .args(["-l", "-v"])
        .arg(&a)
        .assert()
        .success()
        .stdout(predicate::str::contains("lstm (64 cells"));
}

/// `-p fast` and levels -2/-3 write CM revision 3 (doc/FORMAT.md section
/// 4.14): the same archive for -T1 and -T2 over several blocks, for `-p fast`
/// and `-2`, restored byte for byte, listed as `cm-fast`, and smaller than
/// order2 (`-1`).
#[test]
fn fast_preset_is_cm_revision_3_identical_for_any_threads() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = corpus_file("calgary.paper1");
    data.extend(corpus_file("cantrbry.grammar.lsp"));
    data.extend(corpus_file("calgary.obj1"));
    let path = dir.path().join("mixed");
    fs::write(&path, &data).unwrap();
    let bin = || Command::cargo_bin("sep").expect("binary built");
    let run = |args: &[&str]| {
        bin()
            .args(["-q", "-c"])
            .args(args)
            .arg(&path)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    let t1 = run(&["-p", "fast", "-T1", "-B", "16K"]);
    let t2 = run(&["-p", "fast", "-T2", "-B", "16K"]);
    assert_eq!(t1, t2, "fast archive depends on -T");
    assert_eq!(run(&["-2", "-T2", "-B", "16K"]), t1, "-2 is -p fast");
    let whole = run(&["-3", "-T1"]);
    let order2 = run(&["-1", "-T1"]);
    assert!(
        whole.len() * 10 < order2.len() * 9,
        "fast {} bytes, order2 {}",
        whole.len(),
        order2.len()
    );
    for archive in [&t1, &whole] {
        let a = dir.path().join("a.sep");
        fs::write(&a, archive).unwrap();
        bin()
            .args(["-l", "-v"])
            .arg(&a)
            .assert()
            .success()
            .stdout(predicate::str::contains("mix: cm-fast"));
        bin()
            .args(["-d", "-c"])
            .arg(&a)
            .assert()
            .success()
            .stdout(predicate::eq(data.clone()));
    }
}
