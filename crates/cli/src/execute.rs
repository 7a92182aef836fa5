//! The execute stage of the command: a [`Plan`](crate::plan::Plan) run over its
//! inputs, one at a time: compress, decompress, test or list each, with the
//! outputs, permissions, progress and clean-up a zstd user expects.

use crate::args::Args;
use crate::output::Output;
use crate::plan::{Mode, Plan};
use crate::report::*;
use crate::{error_text, is_broken_pipe, limits, memory, progress, signals};
use anyhow::{Context, Result, anyhow, bail};
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs a plan over its inputs; `Ok(false)` when at least one failed.
pub(crate) fn run(plan: Plan<'_>) -> Result<bool> {
    let Plan {
        args,
        mode,
        model,
        threads,
        verbosity,
        inputs,
        walk_failed,
        prior,
    } = plan;
    let mut all_ok = !walk_failed;
    let ctx = Ctx {
        args,
        mode,
        model,
        threads,
        verbosity,
        totals: Default::default(),
        prior,
    };
    crate::lossy::check_usage(&ctx)?;
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

pub(crate) fn is_stdin(p: &Path) -> bool {
    p.as_os_str() == "-"
}

pub(crate) fn display_name(p: &Path) -> String {
    if is_stdin(p) {
        "(stdin)".into()
    } else {
        p.display().to_string()
    }
}

pub(crate) struct Ctx<'a> {
    pub(crate) args: &'a Args,
    pub(crate) mode: Mode,
    pub(crate) model: sep::Model,
    pub(crate) threads: usize,
    /// 0 quiet, 1 normal, 2 -v, 3 -vv.
    pub(crate) verbosity: u8,
    /// Files done, raw bytes and archive bytes, for the summary line.
    pub(crate) totals: std::cell::Cell<(u64, u64, u64)>,
    /// The prior of --prior (issue 20).
    pub(crate) prior: Option<sep::Prior>,
}

/// An opened input: the reader, its length if known, and its metadata.
pub(crate) struct Input {
    pub(crate) reader: Box<dyn Read>,
    /// The length to declare in the header: only for regular files that do
    /// not lie about their size; the reader stops there.
    pub(crate) len: Option<u64>,
    pub(crate) meta: Option<std::fs::Metadata>,
    /// The open file, to see afterwards whether it changed while read.
    pub(crate) file: Option<File>,
}

impl Input {
    /// Whether the file changed (size or modification time) since opened.
    pub(crate) fn changed(&self) -> bool {
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
pub(crate) fn size_may_lie(path: &Path, meta: &std::fs::Metadata) -> bool {
    if !meta.is_file() || meta.len() == 0 {
        return true;
    }
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    real.starts_with("/proc") || real.starts_with("/sys")
}

pub(crate) fn open_input(path: &Path) -> Result<Input> {
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
pub(crate) fn refuse_console_stdin(mode: Mode, force: bool, stdin_is_terminal: bool) -> bool {
    stdin_is_terminal && !(mode == Mode::Compress && force)
}

impl Ctx<'_> {
    pub(crate) fn verbosity(&self) -> u8 {
        self.verbosity
    }

    pub(crate) fn process(&self, input: &Path) -> Result<()> {
        if is_stdin(input)
            && refuse_console_stdin(self.mode, self.args.force, io::stdin().is_terminal())
        {
            bail!("stdin is a console, aborting (give a FILE, or pipe data in)");
        }
        if let Some(r) = crate::lossy::process(self, input) {
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
    pub(crate) fn output_path(&self, input: &Path) -> Result<Option<PathBuf>> {
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

    pub(crate) fn open_output(&self, input: &Path, path: Option<&Path>) -> Result<Output> {
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

    pub(crate) fn compress(&self, input: &Path) -> Result<()> {
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
            transforms: !self.args.no_transforms,
            seek_table: self.args.seek_table,
            prior: self.prior.clone(),
            format_version: self.args.format_version,
        };
        // Issue 14 item 5: a smaller preset or fewer threads within -M/--memory.
        if let Some(note) = limits::fit_compression(&mut options, limits::memory(self.args))
            .map_err(|e| anyhow!(e))?
            && self.verbosity() >= 1
        {
            eprintln!("sep: {}: {note}", display_name(input));
        }
        let start = Instant::now();
        // Issue 20: a small file given no --prior gets a built-in prior when
        // that makes the archive smaller (--prior none opts out).
        let auto = sep::prior::builtin::AUTO_MAX_LEN as u64;
        if let (None, Some(n @ 1..)) = (&self.args.prior, inp.len)
            && n <= auto
        {
            let mut data = Vec::with_capacity(n as usize);
            inp.reader
                .read_to_end(&mut data)
                .map_err(|e| anyhow!(sep::Error::from_io(e)))?;
            // The archive chosen is written as it is: the input is coded
            // once with the built-in prior and once without, never again.
            // (Bytes other than the length announced: the encoder below
            // reports the mismatch as for any input.)
            if data.len() as u64 == n {
                return self.write_chosen(
                    input,
                    out_path.as_deref(),
                    &inp,
                    out,
                    &data,
                    &options,
                    start,
                );
            }
            inp.reader = Box::new(io::Cursor::new(data));
        }
        let mut enc = sep::Encoder::new(BufWriter::with_capacity(1 << 16, out.writer()), &options)
            .map_err(|e| anyhow!(e))?;
        self.settings(input, enc.header());
        let stats = enc.stats();
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
        // Issue 17: the time spent on detection and transforms.
        if self.verbosity() >= 2 && options.transforms {
            eprintln!("{}: {}", display_name(input), transform_time_text(&stats));
        }
        write_stats_file(&stats);
        self.remove_input(input, out_path.as_deref(), &inp)
    }

    /// Writes the archive [`sep::prior::builtin::choose`] makes of a small
    /// input `data` (issue 20): with a built-in prior when that is smaller,
    /// reported, counted and the input removed as for any archive.
    #[allow(clippy::too_many_arguments)]
    fn write_chosen(
        &self,
        input: &Path,
        out_path: Option<&Path>,
        inp: &Input,
        mut out: Output,
        data: &[u8],
        options: &sep::Options,
        start: Instant,
    ) -> Result<()> {
        let chosen = sep::prior::builtin::choose(data, options).map_err(|e| anyhow!(e))?;
        self.settings(input, &chosen.header);
        {
            let mut w = BufWriter::with_capacity(1 << 16, out.writer());
            w.write_all(&chosen.archive).context("write failed")?;
            w.flush().context("write failed")?;
        }
        out.commit(inp.meta.as_ref())?;
        let n_in = data.len() as u64;
        if inp.changed() {
            let dest =
                out_path.map_or_else(|| "the output".to_string(), |p| p.display().to_string());
            bail!("changed while being read; {dest} holds the {n_in} bytes read; input kept");
        }
        let n_out = chosen.archive.len() as u64;
        self.report(input, out_path, n_in, n_out, n_in, start);
        if self.verbosity() >= 2 && options.transforms {
            eprintln!(
                "{}: {}",
                display_name(input),
                transform_time_text(&chosen.stats)
            );
        }
        write_stats_file(&chosen.stats);
        self.remove_input(input, out_path, inp)
    }

    pub(crate) fn decompress(&self, input: &Path) -> Result<()> {
        if let Some(range) = self.args.range {
            return self.decompress_range(input, range); // issue 22
        }
        let out_path = self.output_path(input)?;
        let mut inp = open_input(input)?;
        let start = Instant::now();
        let (counted, read) = progress::Counted::new(&mut inp.reader);
        let mut dec = sep::Decoder::new(counted)
            .map_err(|e| anyhow!(e))?
            .with_prior(self.prior.clone())
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

    pub(crate) fn test(&self, input: &Path) -> Result<()> {
        let mut inp = open_input(input)?;
        let start = Instant::now();
        let mut dec = sep::Decoder::new(&mut inp.reader)
            .map_err(|e| anyhow!(e))?
            .with_prior(self.prior.clone())
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

    pub(crate) fn show_progress(&self) -> bool {
        progress::wanted(
            self.args.no_progress,
            self.verbosity(),
            io::stderr().is_terminal(),
        )
    }

    /// With -v: the model, block size and threads, before the work starts.
    pub(crate) fn settings(&self, input: &Path, h: &sep::format::Header) {
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

    pub(crate) fn report(
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

    pub(crate) fn remove_input(&self, input: &Path, out: Option<&Path>, inp: &Input) -> Result<()> {
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
pub(crate) fn copy<R: Read + ?Sized, W: Write + ?Sized>(r: &mut R, w: &mut W) -> io::Result<u64> {
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

pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// What `sep` itself holds resident besides models and blocks (code, stacks,
/// I/O buffers): about 4 MiB measured on Linux x86-64 (`sep -v` storing an
/// empty input). `sep -l` adds it to the decoder's estimate.
pub(crate) const PROGRAM_MEMORY: u64 = 4 << 20;

/// `name` without `suffix`, when it ends with it and something that is not
/// a folder separator comes before; on the raw bytes of the name, so that
/// names that are not UTF-8 keep every byte.
pub(crate) fn strip_suffix(name: &std::ffi::OsStr, suffix: &str) -> Option<OsString> {
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
