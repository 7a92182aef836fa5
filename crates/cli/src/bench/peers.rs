//! The peer compressors users already know, at their strongest usual
//! settings, and how to find (or, on request, install) them.
//!
//! | peer   | compress                          | Debian package |
//! |--------|-----------------------------------|----------------|
//! | xz     | `xz -9e -T N -c FILE`             | xz-utils       |
//! | zstd   | `zstd --ultra -22 --long=27 -T N` | zstd           |
//! | bzip2  | `bzip2 -9 -c FILE`                | bzip2          |
//! | brotli | `brotli -q 11 -w 24 -c FILE`      | brotli         |
//! | zpaq   | `zpaq a ARCHIVE in -m5 -t N`      | zpaq           |
//!
//! `N` is the benchmark's `-T` (0: the program's own default). A peer missing
//! from `PATH` is skipped with a note; [`find`] never touches the system, and
//! only [`install`] (behind `--install-peers`) calls apt-get.

use super::tools::Tool;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every known peer, in table order.
pub const NAMES: [&str; 5] = ["xz", "zstd", "bzip2", "brotli", "zpaq"];

/// The Debian package that provides a peer.
pub fn package(name: &str) -> &str {
    match name {
        "xz" => "xz-utils",
        other => other,
    }
}

/// The peer `name` run with `threads` threads where it can use them, or
/// `None` for an unknown name.
pub fn tool(name: &str, threads: usize) -> Option<Tool> {
    let s = |v: &[&str]| -> Vec<String> { v.iter().map(|x| x.to_string()).collect() };
    let t = threads.to_string();
    Some(match name {
        "xz" => Tool::stdout(
            "xz",
            "-9e",
            s(&["-9e", &format!("-T{t}"), "-c"]),
            s(&["-d", "-c"]),
            ".xz",
        ),
        "zstd" => Tool::stdout(
            "zstd",
            "--ultra -22 --long=27",
            s(&["-q", "--ultra", "-22", "--long=27", &format!("-T{t}"), "-c"]),
            s(&["-q", "-d", "--long=27", "-c"]),
            ".zst",
        ),
        "bzip2" => Tool::stdout("bzip2", "-9", s(&["-9", "-c"]), s(&["-d", "-c"]), ".bz2"),
        "brotli" => Tool::stdout(
            "brotli",
            "-q 11 -w 24",
            s(&["-q", "11", "-w", "24", "-c"]),
            s(&["-d", "-c"]),
            ".br",
        ),
        "zpaq" => {
            let threads = if threads == 0 {
                vec![]
            } else {
                vec![format!("-t{t}")]
            };
            let mut c = s(&["-m5"]);
            c.extend(threads.iter().cloned());
            Tool::zpaq("-m5", c, threads)
        }
        _ => return None,
    })
}

/// The executable `name` resolves to in `PATH`, if any.
pub fn find(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Tries `apt-get install` for the packages of the missing peers; returns a
/// note for the user when that is not possible or fails.
pub fn install(missing: &[&str]) -> Result<(), String> {
    if missing.is_empty() {
        return Ok(());
    }
    let packages: Vec<&str> = missing.iter().map(|n| package(n)).collect();
    if find("apt-get").is_none() {
        return Err(format!(
            "no apt-get here; install {} by hand",
            packages.join(" ")
        ));
    }
    let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
    if ok(Command::new("apt-get").args(["update", "-qq"]))
        && ok(Command::new("apt-get")
            .args(["install", "-y", "-qq"])
            .args(&packages))
    {
        Ok(())
    } else {
        Err(format!(
            "apt-get install {} failed (it needs root)",
            packages.join(" ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_peer_has_a_tool() {
        for n in NAMES {
            let t = tool(n, 1).unwrap();
            assert_eq!(t.compressor, n);
            assert_eq!(t.label(), n);
        }
        assert!(tool("gzip", 1).is_none());
        assert_eq!(package("xz"), "xz-utils");
    }

    #[test]
    fn find_looks_in_path() {
        // `sh` is on every Unix PATH; a made-up name is on none.
        #[cfg(unix)]
        assert!(find("sh").is_some());
        assert!(find("sep-bench-no-such-program").is_none());
    }
}
