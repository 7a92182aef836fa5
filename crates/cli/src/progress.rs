//! A progress bar on stderr for long inputs, and a reader that advances it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{self, Read};

/// A bar for `len` input bytes (a spinner when unknown); hidden unless `show`.
pub fn bar(show: bool, len: Option<u64>) -> ProgressBar {
    if !show {
        // A hidden bar still counts bytes.
        return ProgressBar::with_draw_target(len, ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
    let style = match len {
        Some(_) => {
            ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
        }
        None => ProgressStyle::with_template("{spinner} {bytes} {bytes_per_sec}"),
    };
    bar.set_style(style.expect("valid template"));
    bar
}

/// Counts the bytes read through it on a progress bar.
pub struct Reader<'a, R: ?Sized> {
    inner: &'a mut R,
    bar: &'a ProgressBar,
}

impl<'a, R: Read + ?Sized> Reader<'a, R> {
    /// Wraps `inner`.
    pub fn new(inner: &'a mut R, bar: &'a ProgressBar) -> Self {
        Reader { inner, bar }
    }
}

impl<R: Read + ?Sized> Read for Reader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}
