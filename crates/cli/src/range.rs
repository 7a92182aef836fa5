//! Issue 22: `sep -d --range START:LEN`, a byte range of an archive's content,
//! decoding only the blocks that overlap it (`sep::Decoder::range`).

use crate::execute::{Ctx, display_name, is_stdin};
use crate::{limits, progress};
use anyhow::{Context, Result, anyhow, bail};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, IsTerminal, Write, copy};
use std::path::Path;
use std::time::Instant;

/// `--range START:LEN` or `START:` (to the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    /// First content byte.
    pub start: u64,
    /// Bytes from there; `None`: to the end of the content.
    pub len: Option<u64>,
}

/// Parses `START:LEN` or `START:`, each a byte count with an optional unit
/// (`1M:64K`, `1048576:`).
pub fn parse_range(s: &str) -> Result<ByteRange, String> {
    let Some((start, len)) = s.split_once(':') else {
        return Err(format!(
            "'{s}' is not a range (START:LEN or START:, e.g. 1M:64K)"
        ));
    };
    let start = crate::args::parse_bytes(start, "0, 4096, 1M")?;
    let len = if len.trim().is_empty() {
        None
    } else {
        Some(crate::args::parse_bytes(len, "1, 64K, 1M")?)
    };
    Ok(ByteRange { start, len })
}

impl Ctx<'_> {
    /// `sep -d --range`: the range of `input`'s content to the output.
    pub(crate) fn decompress_range(&self, input: &Path, range: ByteRange) -> Result<()> {
        if is_stdin(input) {
            bail!("--range needs an archive file it can seek in, not standard input");
        }
        let out_path = self.output_path(input)?;
        let file = File::open(input).map_err(|e| anyhow!(crate::report::io_message(&e)))?;
        let meta = file.metadata().ok();
        if meta.as_ref().is_some_and(|m| m.is_dir()) {
            bail!("is a directory (ignored)");
        }
        let start = Instant::now();
        let archive_len = meta.as_ref().map_or(0, |m| m.len());
        let (counted, read) = Counting::new(file);
        // A small buffer: the header walk seeks often, and each seek refills it.
        let mut dec = sep::Decoder::range(
            BufReader::with_capacity(8 << 10, counted),
            range.start,
            range.len,
        )
        .map_err(|e| anyhow!(e))?
        .with_threads(self.threads)
        .with_max_output(limits::max_output(
            self.args,
            out_path.is_none() && io::stdout().is_terminal(),
        ))
        .with_max_work(limits::max_work(self.args))
        .with_memory_limit(limits::memory(self.args));
        self.settings(input, dec.header());
        let mut out = self.open_output(input, out_path.as_deref())?;
        let bar = progress::Bar::start(self.show_progress(), None, dec.progress());
        let mut w = BufWriter::with_capacity(1 << 16, out.writer());
        let n_out = copy(&mut dec, &mut w).map_err(|e| anyhow!(sep::Error::from_io(e)))?;
        w.flush().context("write failed")?;
        drop(w);
        bar.finish();
        out.commit(meta.as_ref())?;
        if self.verbosity() >= 2 || (self.verbosity() == 1 && out_path.is_some()) {
            eprintln!(
                "{}: content bytes {}..{} ({n_out} bytes) from {} of its {archive_len} bytes, {:.2} s",
                display_name(input),
                range.start,
                range.start + n_out,
                read.get(),
                start.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }
}

/// A file that counts the bytes read from it (for the `-v` report).
struct Counting {
    file: File,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}

impl Counting {
    fn new(file: File) -> (Self, std::rc::Rc<std::cell::Cell<u64>>) {
        let read = std::rc::Rc::new(std::cell::Cell::new(0));
        (
            Counting {
                file,
                read: read.clone(),
            },
            read,
        )
    }
}

impl io::Read for Counting {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

impl io::Seek for Counting {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}
