//! The process's peak resident memory, which `sep -v` reports after its work.

/// The most memory this process has held resident so far (its peak RSS), in
/// bytes; `None` where the platform does not say.
///
/// On Linux this is `VmHWM` of `/proc/self/status`: `getrusage`'s
/// `ru_maxrss` would also count the parent's memory at the `fork` that
/// started sep (Linux carries the peak across `exec`), so a small sep started
/// by a large process would report the large one.
pub fn peak_rss() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        proc_kib("/proc/self/status", "VmHWM:")
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        use nix::sys::resource::{UsageWho, getrusage};
        let max_rss = getrusage(UsageWho::RUSAGE_SELF).ok()?.max_rss().max(0) as u64;
        // `ru_maxrss` is in KiB, except on Apple's systems (bytes).
        Some(if cfg!(target_vendor = "apple") {
            max_rss
        } else {
            max_rss * 1024
        })
    }
    #[cfg(not(unix))]
    None
}

/// CPU time (user plus system) this process has used so far, all threads,
/// in seconds; `None` where the platform does not say.
pub fn cpu_time() -> Option<f64> {
    #[cfg(unix)]
    {
        use nix::sys::resource::{UsageWho, getrusage};
        let u = getrusage(UsageWho::RUSAGE_SELF).ok()?;
        let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 * 1e-6;
        Some(secs(u.user_time()) + secs(u.system_time()))
    }
    #[cfg(not(unix))]
    None
}

/// The value of a `KEY:   N kB` line of a Linux `/proc` file (`/proc/meminfo`,
/// `/proc/self/status`), in bytes.
pub fn proc_kib(path: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix(key))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}
