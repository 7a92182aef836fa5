//! `sep bench`: sep's settings and the compressors users already know, side
//! by side on the same files: compressed size, ratio, compress and
//! decompress speed (wall and CPU), peak memory, and a verified round trip.
//!
//! ```text
//! sep bench --set bench --presets order2,fast --out bench/results
//! sep bench FILE... DIR... [--presets LIST] [--peers LIST] [-T N] [--repeat N]
//! ```
//!
//! Every compressor, sep included, runs as a child process and is measured
//! through `sep __measure` ([`measure`]), so all are timed the same way.
//! Results go to the terminal ([`table`]), a CSV ([`csv`]), an SVG plot of
//! ratio against speed ([`plot`]) and a Markdown report with both tables;
//! the files are rewritten after each input, so an interrupted run keeps
//! what it measured.
//!
//! The parts: [`args`] (options), [`inputs`] (files, folders, corpus sets),
//! [`tools`] and [`peers`] (what runs, with which flags), [`runner`] (one
//! compress + restore + compare), [`row`] (results and totals),
//! [`machine`] (what it ran on).

mod args;
mod csv;
mod inputs;
mod machine;
mod measure;
mod peers;
mod plot;
mod row;
mod runner;
mod table;
mod tools;

use anyhow::{Context, Result};
use args::BenchArgs;
use clap::Parser;
use row::{Row, Sample};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tools::Tool;

/// Runs `sep bench` or `sep __measure` when `argv` (the whole command line)
/// names one; `None` for every other command line.
pub fn dispatch(argv: &[OsString]) -> Option<ExitCode> {
    match argv.get(1)?.to_str()? {
        "bench" => Some(main(&argv[2..])),
        measure::SUBCOMMAND => Some(measure::main(&argv[2..])),
        _ => None,
    }
}

/// A problem with the options (exit code 2).
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

fn main(argv: &[OsString]) -> ExitCode {
    let full = std::iter::once(OsString::from("sep bench")).chain(argv.iter().cloned());
    let args = match BenchArgs::try_parse_from(full) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let command = std::iter::once("sep bench".to_string())
        .chain(argv.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ");
    match run(&args, &command) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) if e.is::<Usage>() => {
            eprintln!("sep bench: {e}");
            eprintln!("Try 'sep bench --help' for more information.");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("sep bench: {e:#}");
            ExitCode::from(1)
        }
    }
}

/// The sep settings of `--presets`, each twice with `--prior` (issue 20):
/// without a prior and with it.
fn sep_tools(names: &[String], threads: usize, prior: Option<&str>) -> Result<Vec<Tool>> {
    let mut chosen: Vec<String> = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let expanded = match n {
            "all" => tools::sep_settings(),
            "none" => vec![],
            _ => vec![n.to_string()],
        };
        for e in expanded {
            if !chosen.contains(&e) {
                chosen.push(e);
            }
        }
    }
    let priors: Vec<Option<&str>> = match prior {
        None => vec![None],
        Some(p) => vec![Some("none"), Some(p)],
    };
    let mut out = Vec::new();
    for n in &chosen {
        for p in &priors {
            out.push(tools::sep_tool(n, threads, *p).map_err(|e| Usage(e.to_string()))?);
        }
    }
    Ok(out)
}

/// The installed peers of `--peers`, with a note on stderr for each missing.
fn peer_tools(names: &[String], threads: usize, install: bool) -> Result<Vec<Tool>> {
    let mut chosen: Vec<&str> = Vec::new();
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        let expanded: Vec<&str> = match n {
            "all" => peers::NAMES.to_vec(),
            "none" => vec![],
            _ => match peers::NAMES.iter().find(|p| **p == n) {
                Some(p) => vec![*p],
                None => {
                    return Err(Usage(format!(
                        "unknown peer '{n}' (known: {}, all, none)",
                        peers::NAMES.join(", ")
                    ))
                    .into());
                }
            },
        };
        for e in expanded {
            if !chosen.contains(&e) {
                chosen.push(e);
            }
        }
    }
    let missing: Vec<&str> = chosen
        .iter()
        .copied()
        .filter(|p| peers::find(p).is_none())
        .collect();
    if install {
        peers::install(&missing).unwrap_or_else(|note| eprintln!("sep bench: note: {note}"));
    }
    let mut out = Vec::new();
    for p in chosen {
        if peers::find(p).is_some() {
            out.extend(peers::tool(p, threads));
        } else {
            eprintln!(
                "sep bench: note: {p} is not installed (not in PATH), skipped; \
                 install package {} or use --install-peers",
                peers::package(p)
            );
        }
    }
    Ok(out)
}

/// Where the results go.
struct Outputs {
    csv: PathBuf,
    svg: PathBuf,
    md: PathBuf,
}

impl Outputs {
    fn new(out: Option<&Path>, name: &str) -> Result<Outputs> {
        let (dir, stem) = match out {
            Some(d) => {
                std::fs::create_dir_all(d)
                    .with_context(|| format!("cannot create {}", d.display()))?;
                (d.to_path_buf(), name.to_string())
            }
            None => (PathBuf::from("."), format!("sep-bench-{name}")),
        };
        Ok(Outputs {
            csv: dir.join(format!("{stem}.csv")),
            svg: dir.join(format!("{stem}.svg")),
            md: dir.join(format!("{stem}.md")),
        })
    }
}

/// What the report says about the run.
struct RunInfo {
    name: String,
    command: String,
    machine: String,
    date: String,
    load_start: Option<f64>,
    threads: usize,
    repeat: u32,
}

fn run(args: &BenchArgs, command: &str) -> Result<bool> {
    if args.inputs.is_empty() && args.set.is_none() {
        return Err(Usage("nothing to measure: name files, a folder or --set".into()).into());
    }
    let mut tools = sep_tools(&args.presets, args.threads, args.prior.as_deref())?;
    tools.extend(peer_tools(&args.peers, args.threads, args.install_peers)?);
    if tools.is_empty() {
        return Err(Usage("no compressor to measure (see --presets and --peers)".into()).into());
    }
    let inputs = inputs::collect(&args.inputs, args.set.as_deref(), args.corpus.as_deref())?;
    let name = args.name.clone().unwrap_or_else(|| default_name(args));
    let outputs = Outputs::new(args.out.as_deref(), &name)?;
    let ctx = RunInfo {
        name,
        command: command.to_string(),
        machine: machine::describe(),
        date: machine::today(),
        load_start: machine::load(),
        threads: args.threads,
        repeat: args.repeat,
    };
    let total_bytes: u64 = inputs.iter().map(|i| i.bytes).sum();
    if !args.quiet {
        eprintln!(
            "sep bench: {} file(s), {} bytes; {}; on {}, load {}",
            inputs.len(),
            table::thousands(total_bytes),
            tools.iter().map(Tool::label).collect::<Vec<_>>().join(", "),
            ctx.machine,
            load_text(ctx.load_start),
        );
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut failures = 0;
    let runs = inputs.len() * tools.len();
    for input in &inputs {
        for tool in &tools {
            let row = match runner::run(tool, &input.path, &input.name, input.bytes, args.repeat) {
                Ok(row) => row,
                Err(e) => {
                    eprintln!(
                        "sep bench: FAILED: {} on {}: {e:#}",
                        tool.label(),
                        input.name
                    );
                    failed_row(tool, &input.name, input.bytes)
                }
            };
            if !row.verified {
                failures += 1;
                if row.compressed_bytes.is_some() {
                    eprintln!(
                        "sep bench: FAILED: {} on {}: ROUND TRIP MISMATCH, the restored bytes differ from the original",
                        tool.label(),
                        input.name
                    );
                }
            }
            if !args.quiet {
                eprintln!("[{:>3}/{runs}] {}", rows.len() + 1, progress_line(&row));
            }
            rows.push(row);
        }
        write_outputs(&outputs, &rows, &ctx)?;
    }
    println!("{}", table::sizes(&rows).text());
    println!("{}", table::summary(&rows).text());
    if let Some(t) = table::transforms(&rows) {
        println!("sep: detection and transforms (issue 17)\n{}", t.text());
    }
    if !args.quiet {
        eprintln!(
            "sep bench: wrote {}, {}, {} (load {} at the end)",
            outputs.csv.display(),
            outputs.svg.display(),
            outputs.md.display(),
            load_text(machine::load())
        );
    }
    if failures > 0 {
        eprintln!("sep bench: {failures} measurement(s) FAILED (see above)");
    }
    Ok(failures == 0)
}

/// The set's name, else the single folder's, else `files`.
fn default_name(args: &BenchArgs) -> String {
    if let Some(s) = &args.set {
        return s.clone();
    }
    match args.inputs.as_slice() {
        [one] if one.is_dir() => one
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "files".into()),
        _ => "files".into(),
    }
}

fn failed_row(tool: &Tool, file: &str, bytes: u64) -> Row {
    Row {
        file: file.into(),
        bytes,
        compressor: tool.compressor.clone(),
        setting: tool.setting.clone(),
        label: tool.label(),
        compressed_bytes: None,
        compress: Sample::UNKNOWN,
        decompress: Sample::UNKNOWN,
        verified: false,
        transform_time: None,
    }
}

fn progress_line(r: &Row) -> String {
    let mib = |k: Option<u64>| k.map_or(f64::NAN, |k| k as f64 / 1024.0);
    let transforms = r.transform_time.map_or_else(String::new, |t| {
        format!(
            ", detection+transforms {:.2} ms",
            (t.detect_s + t.transforms_s) * 1e3
        )
    });
    format!(
        "{}  {}: {} -> {} bytes, ratio {:.3}, compress {} MB/s, decompress {} MB/s, RSS {:.1}/{:.1} MiB{transforms}, {}",
        r.file,
        r.label,
        table::thousands(r.bytes),
        r.compressed_bytes.map_or("-".into(), table::thousands),
        r.ratio(),
        table::speed(r.compress_mbps()),
        table::speed(r.decompress_mbps()),
        mib(r.compress.peak_rss_kb),
        mib(r.decompress.peak_rss_kb),
        if r.verified { "verified" } else { "FAILED" }
    )
}

fn load_text(l: Option<f64>) -> String {
    l.map_or("unknown".into(), |l| format!("{l:.2}"))
}

/// Writes the CSV, the SVG and the Markdown report of the rows so far.
fn write_outputs(o: &Outputs, rows: &[Row], ctx: &RunInfo) -> Result<()> {
    let write = |p: &Path, text: &str| {
        std::fs::write(p, text).with_context(|| format!("cannot write {}", p.display()))
    };
    write(&o.csv, &csv::render(rows))?;
    let files = rows
        .iter()
        .map(|r| r.file.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let bytes: u64 = row::totals(rows).first().map_or(0, |t| t.bytes);
    let title = format!(
        "sep bench: {} ({} files, {:.1} MB, -T{}), {}, {}",
        ctx.name,
        files,
        bytes as f64 / 1e6,
        ctx.threads,
        ctx.machine,
        ctx.date
    );
    plot::write(&o.svg, rows, &title)?;
    write(&o.md, &report(o, rows, ctx))
}

/// The Markdown report: how it was measured, the plot, both tables.
fn report(o: &Outputs, rows: &[Row], ctx: &RunInfo) -> String {
    let svg_name = o
        .svg
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let peer_flags: Vec<String> = row::totals(rows)
        .iter()
        .filter(|t| t.compressor != "sep")
        .map(|t| format!("{} {}", t.compressor, t.setting))
        .collect();
    format!(
        "# sep bench: {name}\n\n\
         Measured {date} on {machine} with `{command}` (sep {version}, -T{threads}, \
         best of {repeat}); load average {ls} at the start, {le} when this file was \
         written.\n\n\
         ![ratio vs speed]({svg_name})\n\n\
         Compressed bytes (smallest per file in bold):\n\n{sizes}\n\
         Totals over the set:\n\n{summary}\n{transforms}\
         Speeds are MB/s (10^6 bytes) of original data, over wall-clock time and over \
         CPU time (user + sys); RSS is the peak resident memory of the compressor's \
         process; verified means the restored bytes equal the original. Every \
         compressor ran as a child process measured the same way. Peers: {peers}.\n",
        name = ctx.name,
        date = ctx.date,
        machine = ctx.machine,
        command = ctx.command,
        version = env!("CARGO_PKG_VERSION"),
        threads = ctx.threads,
        repeat = ctx.repeat,
        ls = load_text(ctx.load_start),
        le = load_text(machine::load()),
        sizes = table::sizes(rows).markdown(),
        summary = table::summary(rows).markdown(),
        transforms = table::transforms(rows).map_or_else(String::new, |t| {
            format!(
                "sep's time on segment detection and transforms (the share is of the \
                 compression's CPU time):\n\n{}\n",
                t.markdown()
            )
        }),
        peers = if peer_flags.is_empty() {
            "none".into()
        } else {
            peer_flags.join(", ")
        },
    )
}
