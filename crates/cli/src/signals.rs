//! What `sep` does on SIGINT, SIGTERM and SIGHUP (remove its temporary
//! outputs, then die of the signal as xz and gzip do, so that a shell sees
//! 130, 143 or 129), and on a broken pipe (die of SIGPIPE quietly, as xz and
//! zstd do: a shell sees 141).
//!
//! The signal handler itself only wakes a thread (signal-hook's iterator);
//! that thread removes every temporary file in the registry and re-raises the
//! signal with its default action. It works while the main thread is busy in
//! the encoder, which never looks at a flag.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Temporary outputs to remove if a signal ends the process.
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temps() -> MutexGuard<'static, Vec<PathBuf>> {
    TEMPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts the thread that handles SIGINT, SIGTERM and SIGHUP. Without it
/// (an error installing it is ignored) the signals keep their default action.
pub fn install() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        // A signal ignored when sep started (nohup, a background job of a
        // shell without job control) stays ignored.
        let ignored = ignored_at_start();
        let wanted: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
            .into_iter()
            .filter(|&s| ignored & (1u64 << (s - 1)) == 0)
            .collect();
        let Ok(mut signals) = signal_hook::iterator::Signals::new(wanted) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("sep-signals".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    // Held until the process is gone: no new temporary file
                    // is registered, none is renamed into place meanwhile.
                    let mut list = temps();
                    for p in list.drain(..) {
                        let _ = std::fs::remove_file(p);
                    }
                    let _ = signal_hook::low_level::emulate_default_handler(sig);
                    std::process::exit(128 + sig);
                }
            });
    }
}

/// The mask of signals this process ignores (bit `n - 1` for signal `n`),
/// from `SigIgn` of `/proc/self/status`; 0 where unknown.
fn ignored_at_start() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let hex = s.lines().find_map(|l| l.strip_prefix("SigIgn:"))?.trim();
            u64::from_str_radix(hex, 16).ok()
        })
        .unwrap_or(0)
}

/// Registers a temporary output to remove if a signal ends the process.
pub fn register(path: &Path) {
    temps().push(path.to_path_buf());
}

/// Runs `f` (which removes or renames the temporary file `path`) and takes
/// `path` out of the registry, with the registry locked so that the signal
/// thread waits until both are done.
pub fn release<T>(path: &Path, f: impl FnOnce() -> T) -> T {
    let mut list = temps();
    let r = f();
    list.retain(|p| p != path);
    r
}

/// Ends the process as a broken pipe does by default (killed by SIGPIPE, no
/// message); Rust ignores SIGPIPE, so sep sees the error first. Exits 141
/// where the signal cannot be raised.
pub fn die_of_broken_pipe() -> ! {
    #[cfg(unix)]
    {
        let _ = signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGPIPE);
    }
    std::process::exit(141)
}
