//! The `sep` command: zstd-style compression and decompression of files and
//! pipes with the `sep` library.
//!
//! Exit codes: 0 success, 1 an input failed (bad archive, I/O error), 2 a
//! usage error. Errors are one line on stderr, prefixed `sep: `.

mod args;
mod bench;
mod memory;
mod output;
mod progress;

use anyhow::{Context, Result, anyhow, bail};
use args::Args;
use clap::Parser;
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
    if let Some(code) = bench::dispatch(&argv) {
        return code;
    }
    let args = match Args::try_parse_from(rewrite_subcommands(argv)) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) if e.is::<Usage>() => {
            eprintln!("sep: {e}");
            eprintln!("Try 'sep --help' for more information.");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("sep: {e:#}");
            ExitCode::from(1)
        }
    }
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
    let knobs = sep::Knobs {
        backbone: args
            .backbone
            .as_deref()
            .map(|n| sep::BackboneKind::from_name(n).expect("clap checked the name")),
        se: args.se.as_deref().map(|v| v == "on"),
        patch: args.patch,
        stride: args.stride,
        adaptive: args
            .adaptive
            .as_deref()
            .map(|n| sep::AdaptiveKind::from_name(n).expect("clap checked the name")),
        context: args.context,
        ..sep::Knobs::default()
    };
    if args.streams.is_some() || knobs != sep::Knobs::default() {
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

/// `sep info FILE...` is `sep -l FILE...`.
fn rewrite_subcommands(mut argv: Vec<OsString>) -> Vec<OsString> {
    if argv.get(1).is_some_and(|a| a == "info") {
        argv[1] = "-l".into();
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
fn run(args: &Args) -> Result<bool> {
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
    let ctx = Ctx {
        args,
        mode,
        model,
        threads,
    };
    let mut all_ok = true;
    for input in &inputs {
        if let Err(e) = ctx.process(input) {
            eprintln!("sep: {}: {e:#}", display_name(input));
            all_ok = false;
        }
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
}

/// An opened input: the reader, its length if known, and its metadata.
struct Input {
    reader: Box<dyn Read>,
    len: Option<u64>,
    meta: Option<std::fs::Metadata>,
}

fn open_input(path: &Path) -> Result<Input> {
    if is_stdin(path) {
        return Ok(Input {
            reader: Box::new(io::stdin().lock()),
            len: None,
            meta: None,
        });
    }
    let meta = std::fs::metadata(path).map_err(|e| anyhow!(io_message(&e)))?;
    if meta.is_dir() {
        bail!("is a directory (ignored)");
    }
    let file = File::open(path).map_err(|e| anyhow!(io_message(&e)))?;
    let len = meta.is_file().then_some(meta.len());
    Ok(Input {
        reader: Box::new(BufReader::with_capacity(1 << 16, file)),
        len,
        meta: Some(meta),
    })
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
        if self.args.quiet {
            0
        } else {
            1 + self.args.verbose
        }
    }

    fn process(&self, input: &Path) -> Result<()> {
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
        let name = input.as_os_str().to_string_lossy();
        match self.mode {
            Mode::Compress => {
                if name.ends_with(&self.args.suffix) && !self.args.force {
                    bail!(
                        "already has suffix {} (ignored; use -f to compress it anyway)",
                        self.args.suffix
                    );
                }
                let mut out = input.as_os_str().to_owned();
                out.push(&self.args.suffix);
                Ok(Some(out.into()))
            }
            _ => match name.strip_suffix(&self.args.suffix) {
                Some(stem) if !stem.is_empty() && !stem.ends_with('/') => {
                    Ok(Some(PathBuf::from(stem)))
                }
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
        let options = sep::Options {
            model: self.model.clone(),
            block_size: self.args.block_size,
            threads: self.threads,
            pipeline: !self.args.no_pipeline,
            seed: self.args.seed,
            content_length: inp.len,
        };
        let start = Instant::now();
        let bar = progress::bar(self.show_progress(inp.len), inp.len);
        let mut enc = sep::Encoder::new(BufWriter::with_capacity(1 << 16, out.writer()), &options)
            .map_err(|e| anyhow!(e))?;
        copy(&mut progress::Reader::new(&mut inp.reader, &bar), &mut enc)
            .map_err(|e| anyhow!(sep::Error::from_io(e)))?;
        let n_in = enc.bytes_in();
        let (mut w, n_out) = enc.finish_counted().map_err(|e| anyhow!(e))?;
        w.flush().context("write failed")?;
        drop(w);
        bar.finish_and_clear();
        out.commit(inp.meta.as_ref())?;
        self.report(input, out_path.as_deref(), n_in, n_out, n_in, start);
        self.remove_input(input, out_path.as_deref())
    }

    fn decompress(&self, input: &Path) -> Result<()> {
        let out_path = self.output_path(input)?;
        let mut inp = open_input(input)?;
        let bar = progress::bar(self.show_progress(inp.len), inp.len);
        let start = Instant::now();
        let counted = progress::Reader::new(&mut inp.reader, &bar);
        let mut dec = sep::Decoder::new(counted)
            .map_err(|e| anyhow!(e))?
            .with_threads(self.threads)
            .with_pipeline(!self.args.no_pipeline);
        let mut out = self.open_output(input, out_path.as_deref())?;
        let mut w = BufWriter::with_capacity(1 << 16, out.writer());
        let n_out = copy(&mut dec, &mut w).map_err(|e| anyhow!(sep::Error::from_io(e)))?;
        w.flush().context("write failed")?;
        drop(w);
        bar.finish_and_clear();
        let n_in = bar.position();
        out.commit(inp.meta.as_ref())?;
        self.report(input, out_path.as_deref(), n_out, n_in, n_out, start);
        self.remove_input(input, out_path.as_deref())
    }

    fn test(&self, input: &Path) -> Result<()> {
        let mut inp = open_input(input)?;
        let bar = progress::bar(self.show_progress(inp.len), inp.len);
        let start = Instant::now();
        let mut dec = sep::Decoder::new(progress::Reader::new(&mut inp.reader, &bar))
            .map_err(|e| anyhow!(e))?
            .with_threads(self.threads)
            .with_pipeline(!self.args.no_pipeline);
        let n = copy(&mut dec, &mut io::sink()).map_err(|e| anyhow!(sep::Error::from_io(e)))?;
        bar.finish_and_clear();
        if self.verbosity() >= 1 {
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "{}: OK ({} bytes, {:.2} MB/s)",
                display_name(input),
                n,
                n as f64 / secs.max(1e-9) / 1e6
            );
        }
        Ok(())
    }

    fn list(&self, input: &Path) -> Result<()> {
        let inp = open_input(input)?;
        let infos = sep::inspect(inp.reader).map_err(|e| anyhow!(e))?;
        let mut o = io::stdout().lock();
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

    fn show_progress(&self, len: Option<u64>) -> bool {
        !self.args.no_progress
            && self.verbosity() >= 1
            && io::stderr().is_terminal()
            && len.is_none_or(|n| n > 4 << 20)
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
        let to_file = out.is_some();
        if self.verbosity() >= 2 || (self.verbosity() == 1 && to_file) {
            let secs = start.elapsed().as_secs_f64();
            let dest = out.map_or_else(|| "(stdout)".to_string(), |p| p.display().to_string());
            eprintln!(
                "{}: {} => {} bytes, ratio {:.3} ({:.2}%), {:.2} MB/s => {}",
                display_name(input),
                if self.mode == Mode::Compress {
                    raw
                } else {
                    archive
                },
                if self.mode == Mode::Compress {
                    archive
                } else {
                    raw
                },
                raw as f64 / archive.max(1) as f64,
                100.0 * archive as f64 / raw.max(1) as f64,
                speed_bytes as f64 / secs.max(1e-9) / 1e6,
                dest
            );
        }
    }

    fn remove_input(&self, input: &Path, out: Option<&Path>) -> Result<()> {
        if self.args.rm && !self.args.keep && out.is_some() && !is_stdin(input) {
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

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}
