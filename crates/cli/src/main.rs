//! The `sep` command: zstd-style compression and decompression of files and
//! pipes with the `sep` library.
//!
//! Exit codes: 0 success, 1 an input failed (bad archive, I/O error), 2 a
//! usage error. Errors are one line on stderr, prefixed `sep: `.

mod args;
mod bench;
mod limits;
mod lossy; // issue 21
mod lossy_bench; // issue 21: sep bench --lossy
mod memory;
mod output;
mod progress;
mod signals;

use anyhow::{Context, Result, anyhow, bail};
use args::Args;
use clap::{CommandFactory, FromArgMatches};
use output::Output;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

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
    if let Some(code) = bench::dispatch(&argv) {
        return code;
    }
    let version: &'static str = Box::leak(
        format!(
            "{} (archive format {})",
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
    match run(&args, verbosity) {
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

/// `-1` .. `-9` become `--level=N`, `--fast` `--level=1`, `--best`
/// `--level=9` (clap has no digit flags); after `--` nothing changes.
fn rewrite_levels(argv: Vec<OsString>) -> Vec<OsString> {
    let mut out = Vec::with_capacity(argv.len());
    let mut options_end = false;
    for (i, a) in argv.into_iter().enumerate() {
        if i > 0 && !options_end {
            if a == "--" {
                options_end = true;
            } else if let Some(s) = a.to_str() {
                let level = match s {
                    "--fast" => Some("1"),
                    "--best" => Some("9"),
                    _ => s
                        .strip_prefix('-')
                        .filter(|d| d.len() == 1 && matches!(d.as_bytes()[0], b'1'..=b'9')),
                };
                if let Some(n) = level {
                    out.push(format!("--level={n}").into());
                    continue;
                }
            }
        }
        out.push(a);
    }
    out
}

/// The model and preset of each level (see `args::AFTER_HELP`).
fn level_setting(level: u8) -> (&'static str, Option<&'static str>) {
    match level {
        1 => ("order2", None),
        2 | 3 => ("mix", Some("fast")),
        4..=6 => ("mix", Some("default")),
        _ => ("mix", Some("max")),
    }
}

/// Sets `-m` and `-p` from a level; a level with an explicit `-m` or `-p` is
/// a usage error (which would win is not obvious).
fn apply_level(mut args: Args, m: &clap::ArgMatches) -> Result<Args, String> {
    let Some(level) = args.level else {
        return Ok(args);
    };
    let given = |id: &str| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    if given("model") || given("preset") {
        return Err(format!(
            "-{level} sets the model and preset; leave out -m and -p (see sep --help)"
        ));
    }
    let (model, preset) = level_setting(level);
    args.model = model.into();
    args.preset = preset.map(String::from);
    Ok(args)
}

/// 0 with -q, else 1 plus the number of -v; the last of -q and -v wins (a
/// -v after -q counts from 1 again).
fn resolve_verbosity(m: &clap::ArgMatches) -> u8 {
    let given = |id: &str| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    let last_q = if given("quiet") {
        m.indices_of("quiet").and_then(|i| i.max())
    } else {
        None
    };
    let vs: Vec<usize> = if given("verbose") {
        m.indices_of("verbose")
            .map(|i| i.collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    // `-vv` is one index with a count of 2.
    let count = m.get_count("verbose").min(250);
    match last_q {
        Some(q) => match vs.iter().filter(|&&v| v > q).count() {
            0 => 0,
            n if n == vs.len() => 1 + count,
            n => 1 + n as u8,
        },
        None => 1 + count,
    }
}

/// Clap's error as one line, without its "error: " prefix, its tips and
/// its usage lines.
fn clap_error_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or("invalid arguments").trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    format!("{first} (see sep --help)")
}

/// An error and its causes, joined by ": ", leaving out a cause whose text
/// the previous one already shows (`sep::Error::Io` displays its source).
fn error_text(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let s = cause.to_string();
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

/// The model from `--model`, `--preset`, `--streams`, `--context` and the
/// experiment knobs (`--backbone`, `--se`, `--patch`, `--stride`, `--adaptive`).
fn choose_model(args: &Args) -> Result<sep::Model> {
    let mut preset = sep::Preset::Default;
    let mut model = match &args.preset {
        Some(name) => {
            preset = sep::Preset::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = sep::Preset::ALL.iter().map(|p| p.name()).collect();
                Usage(format!(
                    "unknown preset '{name}' (available: {})",
                    names.join(", ")
                ))
            })?;
            match args.model.as_str() {
                "mix" => sep::Model::mix_preset(preset),
                "neural" => sep::Model::preset(preset),
                other => {
                    return Err(Usage(format!(
                        "--preset applies to the mix and neural models, not '{other}'"
                    ))
                    .into());
                }
            }
        }
        None => sep::Model::from_name(&args.model).ok_or_else(|| {
            Usage(format!(
                "unknown model '{}' (available: {})",
                args.model,
                sep::Model::NAMES.join(", ")
            ))
        })?,
    };
    let knobs = sep::neural::Knobs {
        backbone: args
            .backbone
            .as_deref()
            .map(|n| sep::neural::BackboneKind::from_name(n).expect("clap checked the name")),
        se: args.se.as_deref().map(|v| v == "on"),
        patch: args.patch,
        stride: args.stride,
        adaptive: args
            .adaptive
            .as_deref()
            .map(|n| sep::neural::AdaptiveKind::from_name(n).expect("clap checked the name")),
        context: args.context,
        ..sep::neural::Knobs::default()
    };
    if args.streams.is_some() || knobs != sep::neural::Knobs::default() {
        let config = match &mut model {
            sep::Model::Neural(config) => config,
            sep::Model::Mix(sep::MixConfig {
                neural: Some(config),
                ..
            }) => config,
            _ => {
                return Err(Usage(
                    "--streams, --context, --backbone, --se, --patch, --stride and --adaptive apply to a model with a network (neural, or mix with the hybrid preset)"
                        .into(),
                )
                .into());
            }
        };
        if let Some(b) = args.streams {
            if !(1..=sep::format::MAX_STREAMS).contains(&b) {
                return Err(Usage(format!(
                    "--streams {b} is outside 1..={}",
                    sep::format::MAX_STREAMS
                ))
                .into());
            }
            config.streams = b;
        }
        *config = config
            .with_knobs(preset, &knobs)
            .map_err(|e| match args.context {
                Some(l) if e.contains("context") => Usage(format!("--context {l}: {e}")),
                _ => Usage(e),
            })?;
    }
    Ok(model)
}

/// `sep info FILE...` is `sep -l -v FILE...`; `sep help` is `sep --help`
/// (`sep ./help` and `sep -- help` still name a file).
fn rewrite_subcommands(mut argv: Vec<OsString>) -> Vec<OsString> {
    if argv.get(1).is_some_and(|a| a == "info") {
        argv[1] = "-l".into();
        argv.insert(2, "-v".into());
    }
    if argv.get(1).is_some_and(|a| a == "help") {
        argv[1] = "--help".into();
    }
    argv
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Compress,
    Decompress,
    Test,
    List,
}

/// Runs every input; `Ok(false)` when at least one failed.
fn run(args: &Args, verbosity: u8) -> Result<bool> {
    let mode = if args.list {
        Mode::List
    } else if args.test {
        Mode::Test
    } else if args.decompress {
        Mode::Decompress
    } else {
        Mode::Compress
    };
    let model = choose_model(args)?;
    let mut inputs: Vec<PathBuf> = args.files.clone();
    if inputs.is_empty() {
        inputs.push(PathBuf::from("-"));
    }
    let mut all_ok = true;
    if args.recursive {
        let mut expanded = Vec::new();
        for input in inputs {
            if !is_stdin(&input) && input.is_dir() {
                if let Err(e) = walk(&input, mode, &args.suffix, &mut expanded) {
                    eprintln!("sep: {}: {}", input.display(), error_text(&e));
                    all_ok = false;
                }
            } else {
                expanded.push(input);
            }
        }
        inputs = expanded;
    }
    if args.output.is_some() && inputs.len() > 1 {
        return Err(Usage("-o can only be used with a single input".into()).into());
    }
    if args.output.is_some() && args.stdout {
        return Err(Usage("-o and -c cannot be used together".into()).into());
    }
    if args.suffix.is_empty() {
        return Err(Usage("the suffix must not be empty".into()).into());
    }
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    // Issue 14 item 7: more threads than the library uses is clamped with a note.
    if threads > sep::MAX_THREADS && !args.quiet {
        eprintln!(
            "sep: -T {threads} is more than {0}; using {0}",
            sep::MAX_THREADS
        );
    }
    let threads = threads.min(sep::MAX_THREADS);
    let ctx = Ctx {
        args,
        mode,
        model,
        threads,
        verbosity,
        totals: Default::default(),
    };
    lossy::check_usage(&ctx)?;
    if mode == Mode::List && verbosity < 2 {
        ctx.list_header()?;
    }
    for input in &inputs {
        if let Err(e) = ctx.process(input) {
            if is_broken_pipe(&e) {
                signals::die_of_broken_pipe();
            }
            eprintln!("sep: {}: {}", display_name(input), error_text(&e));
            all_ok = false;
        }
    }
    let (files, raw, archive) = ctx.totals.get();
    if files > 1 && verbosity >= 1 && matches!(mode, Mode::Compress | Mode::Decompress) {
        let (from, to) = if mode == Mode::Compress {
            (raw, archive)
        } else {
            (archive, raw)
        };
        eprintln!(
            "sep: {files} files, {from} => {to} bytes{}",
            ratio_text(raw, archive)
        );
    }
    if ctx.verbosity() >= 2
        && let Some(peak) = memory::peak_rss()
    {
        eprintln!(
            "sep: peak memory {} ({} KiB resident)",
            human_bytes(peak),
            peak / 1024
        );
    }
    Ok(all_ok)
}

/// The model and preset that wrote an archive with header `h` ("mix/max",
/// "order2", "neural/paper-pac"), found by building the header each known
/// setting writes for the same block size; "mix (custom)" and the like when
/// none matches (knobs such as --context).
fn model_label(h: &sep::format::Header) -> String {
    let mut candidates: Vec<(String, sep::Model)> = Vec::new();
    for name in ["order2", "store"] {
        if let Some(m) = sep::Model::from_name(name) {
            candidates.push((name.into(), m));
        }
    }
    for p in sep::Preset::ALL {
        candidates.push((format!("mix/{}", p.name()), sep::Model::mix_preset(p)));
        candidates.push((format!("neural/{}", p.name()), sep::Model::preset(p)));
    }
    for (label, model) in candidates {
        let options = sep::Options {
            model,
            block_size: Some(h.block_size),
            seed: h.seed,
            content_length: h.content_length,
            // The block size of a short input is its length, often under
            // the minimum a caller may ask for.
            small_blocks: true,
            ..sep::Options::default()
        };
        if let Ok((c, _)) = options.header()
            && (c.model_id, c.streams, c.context, &c.params)
                == (h.model_id, h.streams, h.context, &h.params)
        {
            return label;
        }
    }
    let family = match h.model_id {
        0 => "store",
        1 => "order2",
        2 => "neural",
        3 => "mix",
        _ => "unknown",
    };
    format!("{family} (custom)")
}

/// `name` without `suffix`, when it ends with it and something that is not
/// a folder separator comes before; on the raw bytes of the name, so that
/// names that are not UTF-8 keep every byte.
fn strip_suffix(name: &std::ffi::OsStr, suffix: &str) -> Option<OsString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        let stem = name.as_bytes().strip_suffix(suffix.as_bytes())?;
        (!stem.is_empty() && !stem.ends_with(b"/")).then(|| OsString::from_vec(stem.to_vec()))
    }
    #[cfg(not(unix))]
    {
        let stem = name.to_str()?.strip_suffix(suffix)?;
        (!stem.is_empty() && !stem.ends_with(['/', '\\'])).then(|| stem.into())
    }
}

/// Appends the files under `dir` (sorted, recursively) that `mode` takes:
/// archives (ending in `suffix`) to decompress, test or list, the others to
/// compress. Symbolic links inside folders are skipped, as zstd -r does.
fn walk(dir: &Path, mode: Mode, suffix: &str, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| anyhow!(io_message(&e)))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            walk(&path, mode, suffix, out)?;
        } else if ft.is_file() {
            let is_archive = strip_suffix(path.as_os_str(), suffix).is_some();
            if is_archive == (mode != Mode::Compress) {
                out.push(path);
            }
        }
    }
    Ok(())
}

fn is_stdin(p: &Path) -> bool {
    p.as_os_str() == "-"
}

fn display_name(p: &Path) -> String {
    if is_stdin(p) {
        "(stdin)".into()
    } else {
        p.display().to_string()
    }
}

struct Ctx<'a> {
    args: &'a Args,
    mode: Mode,
    model: sep::Model,
    threads: usize,
    /// 0 quiet, 1 normal, 2 -v, 3 -vv.
    verbosity: u8,
    /// Files done, raw bytes and archive bytes, for the summary line.
    totals: std::cell::Cell<(u64, u64, u64)>,
}

/// An opened input: the reader, its length if known, and its metadata.
struct Input {
    reader: Box<dyn Read>,
    /// The length to declare in the header: only for regular files that do
    /// not lie about their size; the reader stops there.
    len: Option<u64>,
    meta: Option<std::fs::Metadata>,
    /// The open file, to see afterwards whether it changed while read.
    file: Option<File>,
}

impl Input {
    /// Whether the file changed (size or modification time) since opened.
    fn changed(&self) -> bool {
        match (&self.file, &self.meta) {
            (Some(f), Some(before)) => match f.metadata() {
                Ok(now) => {
                    now.len() != before.len() || now.modified().ok() != before.modified().ok()
                }
                Err(_) => true,
            },
            _ => false,
        }
    }
}

/// Whether a file's size cannot be trusted: empty regular files (procfs
/// reports 0 for files that have content) and everything under /proc and
/// /sys (sysfs reports 4096). Those are read to the end as streams.
fn size_may_lie(path: &Path, meta: &std::fs::Metadata) -> bool {
    if !meta.is_file() || meta.len() == 0 {
        return true;
    }
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    real.starts_with("/proc") || real.starts_with("/sys")
}

fn open_input(path: &Path) -> Result<Input> {
    if is_stdin(path) {
        return Ok(Input {
            reader: Box::new(io::stdin().lock()),
            len: None,
            meta: None,
            file: None,
        });
    }
    let file = File::open(path).map_err(|e| anyhow!(io_message(&e)))?;
    let meta = file.metadata().map_err(|e| anyhow!(io_message(&e)))?;
    if meta.is_dir() {
        bail!("is a directory (ignored)");
    }
    let len = (!size_may_lie(path, &meta)).then_some(meta.len());
    let watch = file.try_clone().ok();
    let buffered = BufReader::with_capacity(1 << 16, file);
    let reader: Box<dyn Read> = match len {
        // Bytes appended after opening are not the declared content: the
        // change is reported afterwards (see `Input::changed`).
        Some(n) => Box::new(buffered.take(n)),
        None => Box::new(buffered),
    };
    Ok(Input {
        reader,
        len,
        meta: Some(meta),
        file: watch,
    })
}

/// Whether to refuse reading from standard input because it is a terminal
/// (as zstd: "stdin is a console, aborting"); `-f` lets one type the data
/// to compress.
fn refuse_console_stdin(mode: Mode, force: bool, stdin_is_terminal: bool) -> bool {
    stdin_is_terminal && !(mode == Mode::Compress && force)
}

/// `sep -l -v` (issue 17): every block with its type and, for a segmented
/// block, its segments (doc/FORMAT.md section 8).
fn list_segments(input: &Path) -> Result<()> {
    let inp = open_input(input)?;
    let blocks = sep::segment::list_blocks(inp.reader).map_err(|e| anyhow!(e))?;
    let mut o = io::stdout().lock();
    writeln!(o, "  blocks:")?;
    for b in &blocks {
        let kind = match b.block_type {
            sep::format::BlockType::Stored => "stored",
            sep::format::BlockType::Modelled => "modelled",
            sep::format::BlockType::Segmented => "segmented",
            sep::format::BlockType::End => "end",
        };
        writeln!(
            o,
            "    archive {} block {}: {kind}, {} bytes -> {} bytes{}",
            b.archive,
            b.index,
            b.raw_len,
            b.payload_len,
            if b.segments.is_empty() {
                String::new()
            } else {
                format!(", {} segments", b.segments.len())
            }
        )?;
        let mut at = 0u64;
        for s in &b.segments {
            writeln!(
                o,
                "      at {at:>10}: {:<7} {:>10} bytes -> {:>10} to the model + {:>8} reconstruction",
                s.kind.name(),
                s.raw_len,
                s.inner_len,
                s.extra_len
            )?;
            at += u64::from(s.raw_len);
        }
    }
    Ok(())
}

/// "No such file or directory" rather than "No such file or directory (os error 2)".
fn io_message(e: &io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

impl Ctx<'_> {
    fn verbosity(&self) -> u8 {
        self.verbosity
    }

    fn process(&self, input: &Path) -> Result<()> {
        if is_stdin(input)
            && refuse_console_stdin(self.mode, self.args.force, io::stdin().is_terminal())
        {
            bail!("stdin is a console, aborting (give a FILE, or pipe data in)");
        }
        if let Some(r) = lossy::process(self, input) {
            return r;
        }
        match self.mode {
            Mode::List => self.list(input),
            Mode::Test => self.test(input),
            Mode::Compress => self.compress(input),
            Mode::Decompress => self.decompress(input),
        }
    }

    /// Where the output goes: `None` for standard output.
    fn output_path(&self, input: &Path) -> Result<Option<PathBuf>> {
        if self.args.stdout {
            return Ok(None);
        }
        if let Some(o) = &self.args.output {
            return Ok((!is_stdin(o)).then(|| o.clone()));
        }
        if is_stdin(input) {
            return Ok(None);
        }
        match self.mode {
            Mode::Compress => {
                if strip_suffix(input.as_os_str(), &self.args.suffix).is_some() && !self.args.force
                {
                    bail!(
                        "already has suffix {} (ignored; use -f to compress it anyway)",
                        self.args.suffix
                    );
                }
                let mut out = input.as_os_str().to_owned();
                out.push(&self.args.suffix);
                Ok(Some(out.into()))
            }
            _ => match strip_suffix(input.as_os_str(), &self.args.suffix) {
                Some(stem) => Ok(Some(PathBuf::from(stem))),
                _ => bail!(
                    "unknown suffix, expected {} (use -o or -c to name the output)",
                    self.args.suffix
                ),
            },
        }
    }

    fn open_output(&self, input: &Path, path: Option<&Path>) -> Result<Output> {
        match path {
            None => {
                if self.mode == Mode::Compress && io::stdout().is_terminal() && !self.args.force {
                    bail!(
                        "refusing to write compressed data to a terminal (use -f to force, or -o FILE)"
                    );
                }
                Ok(Output::stdout())
            }
            Some(p) => {
                if !is_stdin(input) && same_file(input, p) {
                    bail!("input and output are the same file");
                }
                Output::file(p, self.args.force)
            }
        }
    }

    fn compress(&self, input: &Path) -> Result<()> {
        let out_path = self.output_path(input)?;
        let mut inp = open_input(input)?;
        let mut out = self.open_output(input, out_path.as_deref())?;
        let mut options = sep::Options {
            model: self.model.clone(),
            block_size: self.args.block_size,
            small_blocks: false,
            threads: self.threads,
            pipeline: !self.args.no_pipeline,
            seed: self.args.seed,
            content_length: inp.len,
        };
        // Issue 14 item 5: a smaller preset or fewer threads within -M/--memory.
        if let Some(note) = limits::fit_compression(&mut options, limits::memory(self.args))
            .map_err(|e| anyhow!(e))?
            && self.verbosity() >= 1
        {
            eprintln!("sep: {}: {note}", display_name(input));
        }
        let start = Instant::now();
        let mut enc = sep::Encoder::new(BufWriter::with_capacity(1 << 16, out.writer()), &options)
            .map_err(|e| anyhow!(e))?;
        self.settings(input, enc.header());
        let bar = progress::Bar::start(self.show_progress(), inp.len, enc.progress());
        if let Err(e) = copy(&mut inp.reader, &mut enc) {
            // Reading failed (or the encoder did): give the archive up on
            // purpose (a plain drop trips the library's debug assertion).
            drop(enc.abandon());
            return Err(anyhow!(sep::Error::from_io(e)));
        }
        let n_in = enc.bytes_in();
        let (mut w, n_out) = enc.finish_counted().map_err(|e| anyhow!(e))?;
        w.flush().context("write failed")?;
        drop(w);
        bar.finish();
        out.commit(inp.meta.as_ref())?;
        if inp.changed() {
            let dest = out_path
                .as_deref()
                .map_or_else(|| "the output".to_string(), |p| p.display().to_string());
            bail!("changed while being read; {dest} holds the {n_in} bytes read; input kept");
        }
        self.report(input, out_path.as_deref(), n_in, n_out, n_in, start);
        self.remove_input(input, out_path.as_deref(), &inp)
    }

    fn decompress(&self, input: &Path) -> Result<()> {
        let out_path = self.output_path(input)?;
        let mut inp = open_input(input)?;
        let start = Instant::now();
        let (counted, read) = progress::Counted::new(&mut inp.reader);
        let mut dec = sep::Decoder::new(counted)
            .map_err(|e| anyhow!(e))?
            .with_threads(self.threads)
            .with_pipeline(!self.args.no_pipeline)
            .with_max_output(limits::max_output(
                self.args,
                out_path.is_none() && io::stdout().is_terminal(),
            ))
            .with_max_work(limits::max_work(self.args))
            .with_memory_limit(limits::memory(self.args));
        self.settings(input, dec.header());
        let mut out = self.open_output(input, out_path.as_deref())?;
        let bar = progress::Bar::start(
            self.show_progress(),
            dec.header().content_length,
            dec.progress(),
        );
        let mut w = BufWriter::with_capacity(1 << 16, out.writer());
        let n_out = copy(&mut dec, &mut w).map_err(|e| anyhow!(sep::Error::from_io(e)))?;
        w.flush().context("write failed")?;
        drop(w);
        bar.finish();
        let n_in = read.load(std::sync::atomic::Ordering::Relaxed);
        out.commit(inp.meta.as_ref())?;
        self.report(input, out_path.as_deref(), n_out, n_in, n_out, start);
        self.remove_input(input, out_path.as_deref(), &inp)
    }

    fn test(&self, input: &Path) -> Result<()> {
        let mut inp = open_input(input)?;
        let start = Instant::now();
        let mut dec = sep::Decoder::new(&mut inp.reader)
            .map_err(|e| anyhow!(e))?
            .with_threads(self.threads)
            .with_pipeline(!self.args.no_pipeline)
            .with_max_output(limits::max_output(self.args, false))
            .with_max_work(limits::max_work(self.args))
            .with_memory_limit(limits::memory(self.args));
        self.settings(input, dec.header());
        let bar = progress::Bar::start(
            self.show_progress(),
            dec.header().content_length,
            dec.progress(),
        );
        let n = copy(&mut dec, &mut io::sink()).map_err(|e| anyhow!(sep::Error::from_io(e)))?;
        bar.finish();
        if self.verbosity() >= 1 {
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "{}: OK ({} bytes, {})",
                display_name(input),
                n,
                human_rate(n, secs)
            );
        }
        Ok(())
    }

    /// The column titles of the one-line `-l` view.
    fn list_header(&self) -> Result<()> {
        writeln!(
            io::stdout().lock(),
            "{:>6} {:>14} {:>14} {:>8}  {:<16} Filename",
            "Blocks",
            "Compressed",
            "Uncompressed",
            "Ratio",
            "Model"
        )?;
        Ok(())
    }

    fn list(&self, input: &Path) -> Result<()> {
        let inp = open_input(input)?;
        let infos = sep::inspect(inp.reader).map_err(|e| anyhow!(e))?;
        let mut o = io::stdout().lock();
        if self.verbosity() < 2 {
            for info in &infos {
                let ratio = if info.content_length == 0 {
                    "-".to_string()
                } else {
                    format!(
                        "{:.3}",
                        info.content_length as f64 / info.archive_bytes.max(1) as f64
                    )
                };
                writeln!(
                    o,
                    "{:>6} {:>14} {:>14} {:>8}  {:<16} {}",
                    info.blocks,
                    info.archive_bytes,
                    info.content_length,
                    ratio,
                    model_label(&info.header),
                    display_name(input)
                )?;
            }
            return Ok(());
        }
        for (i, info) in infos.iter().enumerate() {
            let h = &info.header;
            let name = display_name(input);
            if infos.len() > 1 {
                writeln!(o, "{name} (archive {} of {})", i + 1, infos.len())?;
            } else {
                writeln!(o, "{name}")?;
            }
            let ratio = info.content_length as f64 / info.archive_bytes.max(1) as f64;
            writeln!(o, "  format version  {}", sep::format::FORMAT_VERSION)?;
            writeln!(
                o,
                "  model           {} (model_id {})",
                info.model.describe(),
                h.model_id
            )?;
            writeln!(
                o,
                "  content         {} bytes{}",
                info.content_length,
                if h.content_length.is_some() {
                    ""
                } else {
                    " (length not in header: streamed)"
                }
            )?;
            writeln!(
                o,
                "  archive         {} bytes, ratio {:.3}",
                info.archive_bytes, ratio
            )?;
            writeln!(
                o,
                "  blocks          {} ({} stored), block size {}",
                info.blocks, info.stored_blocks, h.block_size
            )?;
            writeln!(o, "  streams (B)     {}", h.streams)?;
            writeln!(o, "  context (L)     {}", h.context)?;
            writeln!(o, "  seed            {}", h.seed)?;
            let (one, all) = (
                PROGRAM_MEMORY + info.decoder_memory(1),
                PROGRAM_MEMORY + info.decoder_memory(self.threads),
            );
            if all == one {
                writeln!(o, "  memory          {} to decode", human_bytes(one))?;
            } else {
                writeln!(
                    o,
                    "  memory          {} to decode with -T1, {} with -T{}",
                    human_bytes(one),
                    human_bytes(all),
                    self.threads
                )?;
            }
            writeln!(o, "  checksum        xxh3-64 {:016x}", info.content_check)?;
        }
        drop(o);
        // Issue 17: with -v, each block's segments and transforms.
        if self.args.verbose > 0 && !is_stdin(input) {
            list_segments(input)?;
        }
        Ok(())
    }

    fn show_progress(&self) -> bool {
        progress::wanted(
            self.args.no_progress,
            self.verbosity(),
            io::stderr().is_terminal(),
        )
    }

    /// With -v: the model, block size and threads, before the work starts.
    fn settings(&self, input: &Path, h: &sep::format::Header) {
        if self.verbosity() >= 2 {
            eprintln!(
                "{}: model {}, block size {}, {} thread{}{}",
                display_name(input),
                model_label(h),
                h.block_size,
                self.threads,
                if self.threads == 1 { "" } else { "s" },
                h.content_length
                    .map_or_else(String::new, |n| format!(", {n} bytes of content")),
            );
        }
    }

    fn report(
        &self,
        input: &Path,
        out: Option<&Path>,
        raw: u64,
        archive: u64,
        speed_bytes: u64,
        start: Instant,
    ) {
        let (files, r, a) = self.totals.get();
        self.totals.set((files + 1, r + raw, a + archive));
        let to_file = out.is_some();
        if self.verbosity() >= 3 {
            eprintln!(
                "{}: {:.3} s wall, {} CPU",
                display_name(input),
                start.elapsed().as_secs_f64(),
                memory::cpu_time().map_or_else(|| "unknown".into(), |t| format!("{t:.3} s")),
            );
        }
        if self.verbosity() >= 2 || (self.verbosity() == 1 && to_file) {
            let secs = start.elapsed().as_secs_f64();
            let dest = out.map_or_else(|| "(stdout)".to_string(), |p| p.display().to_string());
            let (from, to) = if self.mode == Mode::Compress {
                (raw, archive)
            } else {
                (archive, raw)
            };
            eprintln!(
                "{}: {from} => {to} bytes{}, {} => {dest}",
                display_name(input),
                ratio_text(raw, archive),
                human_rate(speed_bytes, secs),
            );
        }
    }

    fn remove_input(&self, input: &Path, out: Option<&Path>, inp: &Input) -> Result<()> {
        if self.args.rm && !self.args.keep && out.is_some() && !is_stdin(input) {
            if inp.changed() {
                bail!("changed while being read; not removed");
            }
            if let Some(o) = out
                && !std::fs::metadata(o).is_ok_and(|m| m.is_file())
            {
                bail!(
                    "not removed: the output {} is not a regular file",
                    o.display()
                );
            }
            std::fs::remove_file(input).with_context(|| "could not remove the input")?;
        }
        Ok(())
    }
}

/// `io::copy` with a large buffer.
fn copy<R: Read + ?Sized, W: Write + ?Sized>(r: &mut R, w: &mut W) -> io::Result<u64> {
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        w.write_all(&buf[..n])?;
        total += n as u64;
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// What `sep` itself holds resident besides models and blocks (code, stacks,
/// I/O buffers): about 4 MiB measured on Linux x86-64 (`sep -v` storing an
/// empty input). `sep -l` adds it to the decoder's estimate.
const PROGRAM_MEMORY: u64 = 4 << 20;

/// ", ratio 3.120 (32.05%)"; nothing for empty content, which has no ratio.
fn ratio_text(raw: u64, archive: u64) -> String {
    if raw == 0 || archive == 0 {
        return String::new();
    }
    format!(
        ", ratio {:.3} ({:.2}%)",
        raw as f64 / archive as f64,
        100.0 * archive as f64 / raw as f64
    )
}

/// A speed with a unit that shows its digits: "12.3 MB/s", "45.6 KB/s",
/// "789 B/s" (decimal units, as the byte counts).
fn human_rate(bytes: u64, secs: f64) -> String {
    let r = bytes as f64 / secs.max(1e-9);
    if r >= 1e6 {
        format!("{:.2} MB/s", r / 1e6)
    } else if r >= 1e3 {
        format!("{:.2} KB/s", r / 1e3)
    } else {
        format!("{r:.0} B/s")
    }
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
