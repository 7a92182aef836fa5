//! A progress bar on stderr driven by the bytes the models have coded
//! ([`sep::Progress`]), not by bytes read (reading runs ahead of coding by
//! whole blocks), and a reader that counts the bytes it passes on.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{self, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a job runs before its bar appears: short jobs show none.
const DELAY: Duration = Duration::from_secs(1);
/// How often the bar takes the coded count and redraws.
const TICK: Duration = Duration::from_millis(200);

/// Whether to show a bar: on a terminal only, unless `--no-progress` or `-q`.
pub fn wanted(no_progress: bool, verbosity: u8, stderr_is_terminal: bool) -> bool {
    !no_progress && verbosity >= 1 && stderr_is_terminal
}

/// A bar for `total` content bytes (a spinner when unknown), fed from a
/// [`sep::Progress`] by its own thread, so that it moves while the main
/// thread is busy inside the encoder or decoder. It appears after a second.
pub struct Bar {
    bar: ProgressBar,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Bar {
    /// Starts the bar, or an inert one unless `show`.
    pub fn start(show: bool, total: Option<u64>, progress: sep::Progress) -> Bar {
        let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::hidden());
        let stop = Arc::new(AtomicBool::new(false));
        if !show {
            return Bar {
                bar,
                stop,
                thread: None,
            };
        }
        let style = match total {
            Some(_) => ProgressStyle::with_template(
                "{bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            ),
            None => ProgressStyle::with_template("{spinner} {bytes} {bytes_per_sec} {elapsed}"),
        };
        bar.set_style(style.expect("valid template"));
        let (b, s) = (bar.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("sep-progress".into())
            .spawn(move || {
                let started = Instant::now();
                let mut visible = false;
                while !s.load(Ordering::Relaxed) {
                    b.set_position(progress.bytes());
                    if !visible && started.elapsed() >= DELAY {
                        b.set_draw_target(ProgressDrawTarget::stderr());
                        b.enable_steady_tick(TICK);
                        visible = true;
                    }
                    std::thread::sleep(TICK / 2);
                }
            })
            .ok();
        Bar { bar, stop, thread }
    }

    /// Stops and erases the bar.
    pub fn finish(mut self) {
        self.stop_thread();
        self.bar.finish_and_clear();
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        // On an error path: erase the bar before the message is printed.
        self.stop_thread();
        self.bar.finish_and_clear();
    }
}

/// Counts the bytes read through it.
pub struct Counted<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Counted<R> {
    /// Wraps `inner`; the count is readable through the returned handle.
    pub fn new(inner: R) -> (Self, Arc<AtomicU64>) {
        let count = Arc::new(AtomicU64::new(0));
        (
            Counted {
                inner,
                count: count.clone(),
            },
            count,
        )
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_only_on_a_terminal_and_not_quiet() {
        assert!(wanted(false, 1, true));
        assert!(!wanted(false, 1, false));
        assert!(!wanted(true, 1, true));
        assert!(!wanted(false, 0, true));
    }
}
