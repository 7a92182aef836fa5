//! The backbone and semantics-enhancement flags of the `sep` binary: a round trip
//! through each backbone with SE and a hard gate, the choice recorded in the header,
//! and usage errors for knobs that do not apply.

use assert_cmd::Command;
use predicates::prelude::*;

fn sep() -> Command {
    Command::cargo_bin("sep").expect("binary built")
}

fn sample() -> Vec<u8> {
    b"Backbones and semantic patches, stride by stride. ".repeat(20)
}

#[test]
fn backbone_se_and_adaptive_flags_round_trip() {
    let data = sample();
    for (backbone, listed) in [
        ("pac", "+ pac"),
        ("trace", "+ trace"),
        ("patchtst", "+ patchtst"),
    ] {
        let archive = sep()
            .args(["-p", "hybrid", "--backbone", backbone, "--se", "on"])
            .args(["--adaptive", "hard"])
            .args(["--stride", "2", "--streams", "4", "-c"])
            .write_stdin(data.clone())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        sep()
            .args(["-l", "-v", "-"])
            .write_stdin(archive.clone())
            .assert()
            .success()
            .stdout(predicate::str::contains("stride 2"))
            .stdout(predicate::str::contains("adaptive hard"))
            .stdout(predicate::str::contains(listed));
        sep()
            .args(["-d", "-c"])
            .write_stdin(archive)
            .assert()
            .success()
            .stdout(predicate::eq(data.clone()));
    }
}

#[test]
fn knobs_that_do_not_apply_are_usage_errors() {
    for (args, message) in [
        (&["-p", "hybrid", "--patch", "4"][..], "--se on"),
        (
            &["-m", "neural", "--se", "on", "--stride", "99"][..],
            "stride 99",
        ),
        (
            &["-p", "hybrid", "--se", "on", "--patch", "7"][..],
            "--patch 7",
        ),
        // The default mix has no network to enhance.
        (&["--se", "on"][..], "with the hybrid preset"),
        (&["-m", "order2", "--se", "on"][..], "--backbone, --se"),
        (&["--adaptive", "sometimes"][..], "sometimes"),
        (&["--backbone", "lstm"][..], "lstm"),
    ] {
        sep()
            .args(args)
            .arg("-c")
            .write_stdin(sample())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(message));
    }
}
