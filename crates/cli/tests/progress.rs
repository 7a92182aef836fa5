//! The progress bar: on a terminal (a pty from script(1)) it follows the
//! bytes coded, compressing and decompressing; elsewhere it is never drawn.

mod common;

use common::{sep, sep_path, text};
use std::fs;

/// Runs `sep ARGS` with stdin, stdout and stderr on a pty; returns what
/// the terminal showed, or `None` without script(1) or timeout(1).
fn on_a_terminal(args: &str) -> Option<String> {
    let out = std::process::Command::new("timeout")
        .args(["120", "script", "-qfec"])
        .arg(format!("{} {args}", sep_path().display()))
        .arg("/dev/null")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let screen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "sep {args}: {screen}");
    Some(screen)
}

/// The "done/total" positions the bar drew, in order.
fn positions(screen: &str) -> Vec<String> {
    screen
        .split(['\r', '\n'])
        .filter(|l| l.contains(" eta "))
        .filter_map(|l| {
            l.split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .find(|w| w[1].contains('/') && !w[1].ends_with("/s"))
                .map(|w| format!("{} {}", w[0].trim_start_matches(['█', '░']), w[1]))
        })
        .collect()
}

#[test]
fn bar_follows_coded_bytes_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("a.txt");
    fs::write(&input, text(600_000)).unwrap();
    // `-4` (the default preset): coding must take more than the bar's first
    // second, which `-2` (CM revision 3) no longer does on 600 KB.
    let Some(screen) = on_a_terminal(&format!("-4 -T1 -f {}", input.display())) else {
        eprintln!("note: script(1) not available; terminal case skipped");
        return;
    };
    let pos = positions(&screen);
    let mut distinct = pos.clone();
    distinct.dedup();
    // Reading the 600 KB takes milliseconds: a bar fed by bytes read would
    // show the total at once and stay there.
    assert!(distinct.len() >= 3, "positions: {pos:?}\n{screen}");
    assert!(!pos[0].starts_with("585.94 KiB"), "first: {pos:?}");
    let Some(screen) = on_a_terminal(&format!("-d -T1 -f {}.sep", input.display())) else {
        return;
    };
    let pos = positions(&screen);
    assert!(pos.len() >= 2, "decompression shows the bar: {screen}");
}

#[test]
fn no_bar_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("a.txt");
    fs::write(&input, text(300_000)).unwrap();
    let out = sep()
        .args(["-2", "-T1"])
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let msg = String::from_utf8_lossy(&out);
    assert!(!msg.contains("eta") && !msg.contains('\r'), "{msg}");
    assert_eq!(msg.lines().count(), 1, "{msg}");
}
