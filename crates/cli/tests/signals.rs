//! Signals and closed pipes: SIGINT, SIGTERM and SIGHUP leave no temporary
//! file and end sep as the signal does (a shell sees 130, 143, 129); a
//! reader that goes away ends sep quietly, as SIGPIPE ends xz and zstd.

mod common;

use common::{files_in, sep_path, text};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// Whether this test process ignores signal `number` (bit `number - 1` of
/// `SigIgn` in /proc/self/status): a test run under `nohup`, or started in
/// the background by a non-interactive shell, ignores SIGHUP or SIGINT, and
/// sep rightly keeps an ignored signal ignored.
fn ignored_here(number: i32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux has /proc");
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|m| u64::from_str_radix(m.trim(), 16).expect("SigIgn is hex"))
        .expect("/proc/self/status lists SigIgn");
    mask >> (number - 1) & 1 == 1
}

/// The words that start sep with `signal` at its default action: sep alone,
/// or through coreutils' `env --default-signal` when this process ignores
/// it (a child inherits an ignored signal, and so would sep).
fn sep_words(signal: &str, number: i32) -> Vec<String> {
    let sep = sep_path().display().to_string();
    if ignored_here(number) {
        vec!["env".into(), format!("--default-signal={signal}"), sep]
    } else {
        vec![sep]
    }
}

/// Starts a long compression (the default model on 1 MB, one thread), waits
/// for its temporary output, sends `signal`, and checks what is left.
fn interrupted_compression_leaves_nothing(signal: &str, number: i32) {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.txt");
    std::fs::write(&input, text(1 << 20)).unwrap();
    let words = sep_words(signal, number);
    let mut child = Command::new(&words[0])
        .args(&words[1..])
        .args(["-T1", "--no-progress"])
        .arg(&input)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(common::wait_for_temp(dir.path(), 30), "compression started");
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let t = std::time::Instant::now();
    let status = child.wait().unwrap();
    assert!(t.elapsed().as_secs() < 10, "sep ended promptly");
    assert_eq!(status.signal(), Some(number), "{status:?}");
    assert_eq!(files_in(dir.path()), ["big.txt"]);
    // What a shell reports: sep runs in the foreground of `sh -c`, and the
    // signal goes to sep (the shell's child).
    std::fs::remove_file(dir.path().join("big.txt.sep")).ok();
    let sh = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} -T1 --no-progress \"{}\" 2>/dev/null; echo $?",
            words
                .iter()
                .map(|w| format!("\"{w}\""))
                .collect::<Vec<_>>()
                .join(" "),
            input.display(),
        ))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(common::wait_for_temp(dir.path(), 30), "compression started");
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", sh.id()))
        .expect("Linux lists a process's children");
    let pid = children.split_whitespace().next().expect("sep runs");
    assert!(
        Command::new("kill")
            .args([&format!("-{signal}"), pid])
            .status()
            .unwrap()
            .success()
    );
    let out = sh.wait_with_output().unwrap();
    let code: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert_eq!(code, 128 + number);
    assert_eq!(files_in(dir.path()), ["big.txt"]);
}

#[test]
fn sigint_removes_the_temporary_output() {
    interrupted_compression_leaves_nothing("INT", 2);
}

#[test]
fn sigterm_removes_the_temporary_output() {
    interrupted_compression_leaves_nothing("TERM", 15);
}

#[test]
fn sighup_removes_the_temporary_output() {
    interrupted_compression_leaves_nothing("HUP", 1);
}

/// A signal ignored when sep starts (as `nohup` does for SIGHUP) stays
/// ignored: sep finishes its work.
#[test]
fn an_ignored_signal_stays_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("a.txt");
    std::fs::write(&input, text(300_000)).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "trap '' HUP; \"{}\" -q -T1 \"{}\" & pid=$!; \
             while ! ls -a \"{}\" | grep -q '\\.tmp$'; do sleep 0.05; done; \
             kill -HUP $pid; wait $pid; echo $?",
            sep_path().display(),
            input.display(),
            dir.path().display()
        ))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    assert_eq!(common::files_in(dir.path()), ["a.txt", "a.txt.sep"]);
}

#[test]
fn broken_pipe_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("a");
    std::fs::write(&input, text(2 << 20)).unwrap();
    common::sep()
        .args(["-q", "-m", "order2"])
        .arg(&input)
        .assert()
        .success();
    let mut child = Command::new(sep_path())
        .args(["-dc"])
        .arg(dir.path().join("a.sep"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Read;
        let mut out = child.stdout.take().unwrap();
        let mut first = [0u8; 100];
        out.read_exact(&mut first).unwrap();
        // `out` is closed here, like `head -c 100`.
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.signal(), Some(13), "{:?}", out.status);
}
