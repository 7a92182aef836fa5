//! The `sep` command: zstd-style compression and decompression of files and
//! pipes with the `sep` library.
//!
//! Exit codes: 0 success, 1 an input failed (bad archive, I/O error), 2 a
//! usage error. Errors are one line on stderr, prefixed `sep: `.

#![forbid(unsafe_code)]

mod args;
mod bench;
mod execute;
mod limits;
mod list;
mod lossy; // issue 21
mod lossy_bench; // issue 21: sep bench --lossy
mod memory;
mod output;
mod plan;
mod progress;
mod range; // issue 22: sep -d --range
mod report;
mod signals;
mod train; // issue 20: sep train

use args::{
    Args, apply_level, clap_error_line, resolve_verbosity, rewrite_levels, rewrite_subcommands,
};
use clap::{CommandFactory, FromArgMatches};
use std::ffi::OsString;
use std::io;
use std::process::ExitCode;

/// A usage problem found after parsing (exit code 2).
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|a| a == "bench") && argv.iter().any(|a| a == "--lossy") {
        return lossy_bench::main(&argv[2..]); // issue 21
    }
    if argv.get(1).is_some_and(|a| a == "train") {
        return train::main(&argv[2..]); // issue 20
    }
    if let Some(code) = bench::dispatch(&argv) {
        return code;
    }
    let version: &'static str = Box::leak(
        format!(
            "{} (archive format {}; reads 1 and 3, and lossy archives of format 2)",
            env!("CARGO_PKG_VERSION"),
            sep::format::FORMAT_VERSION
        )
        .into_boxed_str(),
    );
    let parsed = Args::command()
        .version(version)
        .try_get_matches_from(rewrite_levels(rewrite_subcommands(argv)))
        .and_then(|m| Args::from_arg_matches(&m).map(|a| (a, m)));
    let (args, matches) = match parsed {
        Ok(p) => p,
        Err(e) if e.use_stderr() => {
            eprintln!("sep: {}", clap_error_line(&e));
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help and --version: their text, on standard output.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let args = match apply_level(args, &matches) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("sep: {e}");
            return ExitCode::from(2);
        }
    };
    let verbosity = resolve_verbosity(&matches);
    signals::install();
    let outcome = plan::plan(&args, verbosity).and_then(execute::run);
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) if e.is::<Usage>() => {
            eprintln!("sep: {e}");
            ExitCode::from(2)
        }
        Err(e) => {
            if is_broken_pipe(&e) {
                signals::die_of_broken_pipe();
            }
            eprintln!("sep: {}", error_text(&e));
            ExitCode::from(1)
        }
    }
}

/// An error and its causes, joined by ": ", leaving out a cause whose text
/// the previous one already shows (`sep::Error::Io` displays its source).
fn error_text(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let s = match cause.downcast_ref::<sep::Error>() {
            // The library names its own setter; a user of the tool needs the flag.
            Some(e) => e.message_naming_limit(|l| limits::flag_of(l).to_string()),
            None => cause.to_string(),
        };
        if parts.last().is_some_and(|p| p.contains(&s)) {
            continue;
        }
        parts.push(s);
    }
    parts.join(": ")
}

/// Whether the error comes from writing to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<sep::Error>().is_some_and(
                |s| matches!(s, sep::Error::Io(io) if io.kind() == io::ErrorKind::BrokenPipe),
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::*;
    use crate::execute::*;
    use crate::plan::*;
    use crate::report::*;

    #[test]
    fn console_stdin_decision() {
        assert!(refuse_console_stdin(Mode::Decompress, true, true));
        assert!(refuse_console_stdin(Mode::Test, false, true));
        assert!(refuse_console_stdin(Mode::Compress, false, true));
        assert!(!refuse_console_stdin(Mode::Compress, true, true));
        assert!(!refuse_console_stdin(Mode::Decompress, false, false));
    }

    #[test]
    fn rates_and_ratios() {
        assert_eq!(human_rate(2_500_000, 1.0), "2.50 MB/s");
        assert_eq!(human_rate(2_500, 1.0), "2.50 KB/s");
        assert_eq!(human_rate(250, 1.0), "250 B/s");
        assert_eq!(ratio_text(0, 82), "");
        assert_eq!(ratio_text(100, 50), ", ratio 2.000 (50.00%)");
    }

    #[test]
    fn level_flags_are_rewritten_before_double_dash_only() {
        let v = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            rewrite_levels(v(&["sep", "-9", "--fast", "-12", "--", "-3"])),
            v(&["sep", "--level=9", "--level=1", "-12", "--", "-3"])
        );
        assert_eq!(level_setting(1), ("order2", None));
        assert_eq!(level_setting(6), ("mix", Some("default")));
        assert_eq!(level_setting(9), ("mix", Some("max")));
    }

    #[test]
    fn suffix_stripping_keeps_raw_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let n = std::ffi::OsStr::from_bytes(b"caf\xe9.sep");
        assert_eq!(
            strip_suffix(n, ".sep").unwrap().as_bytes(),
            b"caf\xe9".as_slice()
        );
        assert!(strip_suffix(std::ffi::OsStr::new("dir/.sep"), ".sep").is_none());
        assert!(strip_suffix(std::ffi::OsStr::new(".sep"), ".sep").is_none());
    }
}
