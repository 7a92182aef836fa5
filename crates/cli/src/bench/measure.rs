//! Measuring one command: wall time, CPU time (user + sys) and peak resident
//! memory of a child process.
//!
//! `getrusage(RUSAGE_CHILDREN)` reports the largest peak RSS among *all*
//! children a process has waited for, so the benchmark process cannot measure
//! its children one by one. Each measurement therefore runs through a fresh
//! intermediate process, the hidden subcommand
//!
//! ```text
//! sep __measure [--cwd DIR] [--stdout FILE] -- PROGRAM ARGS...
//! ```
//!
//! which starts PROGRAM once (standard input empty, standard output to FILE
//! or discarded, standard error inherited), waits for it, and prints one line
//! `wall_s user_s sys_s maxrss_kb exit_code` on its own standard output. Its
//! only child is PROGRAM, so its `RUSAGE_CHILDREN` is exactly PROGRAM's (and
//! of any process PROGRAM waited for). The wall time is taken around spawn and
//! wait, so it includes PROGRAM's start-up, as a user's stopwatch would.
//!
//! Start with [`measure`]; [`main`] is the intermediate's side.

use anyhow::{Context, Result, anyhow, bail};
use std::ffi::OsString;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

/// The hidden subcommand's name (`sep __measure`).
pub const SUBCOMMAND: &str = "__measure";

/// A command line to measure.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The program: a path, or a name looked up in `PATH`.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The folder it runs in (default: the benchmark's).
    pub cwd: Option<PathBuf>,
    /// Where its standard output goes (default: discarded).
    pub stdout: Option<PathBuf>,
    /// Environment variables set for it (sep's `SEP_STATS_FILE`).
    pub env: Vec<(&'static str, OsString)>,
}

/// What one run of a command cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Measured {
    /// Wall-clock seconds from spawn to exit.
    pub wall_s: f64,
    /// CPU seconds, user + system.
    pub cpu_s: f64,
    /// Peak resident set size in KiB.
    pub peak_rss_kb: u64,
}

/// Runs `inv` once through `sep __measure` and returns its cost; an error
/// (with the end of the command's standard error) if it did not exit with 0.
pub fn measure(inv: &Invocation) -> Result<Measured> {
    let exe = std::env::current_exe().context("cannot locate the sep executable")?;
    let mut cmd = Command::new(exe);
    cmd.arg(SUBCOMMAND);
    if let Some(d) = &inv.cwd {
        cmd.arg("--cwd").arg(d);
    }
    if let Some(o) = &inv.stdout {
        cmd.arg("--stdout").arg(o);
    }
    cmd.arg("--").arg(&inv.program).args(&inv.args);
    // Inherited by the program `sep __measure` starts.
    cmd.envs(inv.env.iter().map(|(k, v)| (k, v)));
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .context("cannot start `sep __measure`")?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<&str> = line.split_whitespace().collect();
    let program = inv.program.to_string_lossy();
    if !out.status.success() || fields.len() != 5 {
        bail!("could not run {program}: {}", tail(&stderr));
    }
    let num = |i: usize| -> Result<f64> {
        fields[i]
            .parse::<f64>()
            .map_err(|_| anyhow!("bad measurement line {line:?}"))
    };
    let exit = num(4)?;
    if exit != 0.0 {
        bail!("{program} exited with status {exit}: {}", tail(&stderr));
    }
    Ok(Measured {
        wall_s: num(0)?,
        cpu_s: num(1)? + num(2)?,
        peak_rss_kb: num(3)? as u64,
    })
}

/// The last few lines of a command's error output, on one line.
fn tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(3);
    match lines[start..].join(" | ") {
        s if s.is_empty() => "(no error output)".into(),
        s => s,
    }
}

/// `sep __measure ...`: `argv` is everything after the subcommand.
pub fn main(argv: &[OsString]) -> ExitCode {
    match run(argv) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sep {SUBCOMMAND}: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(argv: &[OsString]) -> Result<()> {
    let mut cwd = None;
    let mut stdout = None;
    let mut it = argv.iter();
    loop {
        let a = it.next().ok_or_else(|| anyhow!("missing `-- PROGRAM`"))?;
        match a.to_str() {
            Some("--") => break,
            Some("--cwd") => cwd = it.next().cloned(),
            Some("--stdout") => stdout = it.next().cloned(),
            _ => bail!("unexpected argument {a:?}"),
        }
    }
    let program = it.next().ok_or_else(|| anyhow!("missing PROGRAM"))?;
    let mut cmd = Command::new(program);
    cmd.args(it).stdin(Stdio::null());
    if let Some(d) = cwd {
        cmd.current_dir(d);
    }
    cmd.stdout(match stdout {
        Some(p) => Stdio::from(File::create(&p).with_context(|| format!("cannot create {p:?}"))?),
        None => Stdio::null(),
    });
    let start = Instant::now();
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {program:?}"))?;
    let wall = start.elapsed().as_secs_f64();
    let code = status.code().unwrap_or_else(|| 128 + signal(&status));
    let (user, sys, rss_kb) = children_usage()?;
    let mut o = std::io::stdout().lock();
    writeln!(o, "{wall:.6} {user:.6} {sys:.6} {rss_kb} {code}")?;
    Ok(())
}

#[cfg(unix)]
fn signal(status: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.signal().unwrap_or(0)
}

#[cfg(not(unix))]
fn signal(_: &std::process::ExitStatus) -> i32 {
    0
}

/// User and system seconds and peak RSS (KiB) of the waited-for children.
#[cfg(unix)]
fn children_usage() -> Result<(f64, f64, u64)> {
    use nix::sys::resource::{UsageWho, getrusage};
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).context("getrusage failed")?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
    // Linux and the BSDs report ru_maxrss in KiB, macOS in bytes.
    let rss = u.max_rss().max(0) as u64;
    let rss_kb = if cfg!(target_os = "macos") {
        rss / 1024
    } else {
        rss
    };
    Ok((secs(u.user_time()), secs(u.system_time()), rss_kb))
}

/// Without `getrusage`, CPU time and memory read as zero.
#[cfg(not(unix))]
fn children_usage() -> Result<(f64, f64, u64)> {
    Ok((0.0, 0.0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\n\nb\nc\nd\n"), "b | c | d");
        assert_eq!(tail(""), "(no error output)");
    }
}
