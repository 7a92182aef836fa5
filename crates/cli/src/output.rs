//! Outputs that appear only when complete: a file is written to a temporary
//! file in the destination's folder and renamed over the destination on
//! success, so a failure (or SIGINT, SIGTERM, SIGHUP: see `signals`) never
//! leaves a partial output behind.
//!
//! Like zstd, an existing output that is not a regular file (a character or
//! block device such as `/dev/null`, a FIFO, a socket), also through a
//! symbolic link, is written in place, without `-f`, and never replaced. An
//! existing symbolic link to a regular file needs `-f`, which replaces the
//! link itself (its target is left untouched), as zstd does.

use crate::signals;
use anyhow::{Context, Result, anyhow, bail};
use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// A temporary file registered for removal on signals; removed when dropped.
pub struct Temp {
    file: Option<NamedTempFile>,
    path: PathBuf,
}

impl Temp {
    fn file(&mut self) -> &mut NamedTempFile {
        self.file
            .as_mut()
            .expect("present until persisted or dropped")
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if let Some(f) = self.file.take() {
            signals::release(&self.path, || drop(f));
        }
    }
}

/// Standard output, or a file being written.
pub enum Output {
    /// Standard output.
    Stdout(io::Stdout),
    /// An existing special file (device, FIFO, socket) written in place.
    InPlace(File),
    /// A temporary file that becomes `dest` on [`Output::commit`].
    File {
        /// The file being written.
        temp: Temp,
        /// Where it goes.
        dest: PathBuf,
        /// Whether an existing `dest` may be replaced.
        force: bool,
    },
}

/// "Permission denied" rather than "Permission denied (os error 13) at path
/// /dir/.x.a1b2.tmp": errors name the output the user asked for.
fn plain(e: &io::Error) -> String {
    let s = e.to_string();
    let end = [" (os error", " at path "]
        .iter()
        .filter_map(|m| s.find(m))
        .min()
        .unwrap_or(s.len());
    s[..end].to_string()
}

impl Output {
    /// Standard output.
    pub fn stdout() -> Self {
        Output::Stdout(io::stdout())
    }

    /// A new file at `dest`; fails if it exists and `force` is off, unless it
    /// is a special file, which is written in place.
    pub fn file(dest: &Path, force: bool) -> Result<Self> {
        if let Ok(meta) = std::fs::metadata(dest)
            && !meta.is_file()
            && !meta.is_dir()
        {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(dest)
                .map_err(|e| anyhow!("cannot write to {}: {}", dest.display(), plain(&e)))?;
            return Ok(Output::InPlace(f));
        }
        if let Ok(meta) = std::fs::symlink_metadata(dest) {
            if std::fs::metadata(dest).is_ok_and(|m| m.is_dir()) || meta.is_dir() {
                bail!("output {} is a directory", dest.display());
            }
            if !force {
                bail!(
                    "output {} already exists (use -f to overwrite)",
                    dest.display()
                );
            }
        }
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut prefix = OsString::from(".");
        prefix.push(dest.file_name().unwrap_or_default());
        prefix.push(".");
        let file = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|e| anyhow!("cannot create {}: {}", dest.display(), plain(&e)))?;
        let path = file.path().to_path_buf();
        signals::register(&path);
        Ok(Output::File {
            temp: Temp {
                file: Some(file),
                path,
            },
            dest: dest.to_path_buf(),
            force,
        })
    }

    /// Where to write.
    pub fn writer(&mut self) -> &mut dyn Write {
        match self {
            Output::Stdout(s) => s,
            Output::InPlace(f) => f,
            Output::File { temp, .. } => temp.file().as_file_mut(),
        }
    }

    /// Makes the output visible: copies the input's owner (where permitted),
    /// permissions and times onto the open file (as gzip and zstd do), syncs,
    /// and renames into place.
    pub fn commit(self, input_meta: Option<&Metadata>) -> Result<()> {
        match self {
            Output::Stdout(mut s) => s.flush().context("write to standard output failed"),
            Output::InPlace(mut f) => f.flush().context("write failed"),
            Output::File {
                mut temp,
                dest,
                force,
            } => {
                if let Some(meta) = input_meta.filter(|m| m.is_file()) {
                    // Best effort, as zstd: a file system without owners,
                    // permissions or times still gets its data.
                    copy_attributes(temp.file().as_file(), meta);
                } else {
                    // No input file to copy from (standard input, sep train):
                    // the mode a new file gets, not the temporary file's 0600.
                    default_mode(temp.file().as_file());
                }
                temp.file()
                    .as_file()
                    .sync_all()
                    .with_context(|| format!("could not sync {}", dest.display()))?;
                let path = temp.path.clone();
                let file = temp.file.take().expect("present until persisted");
                let result = signals::release(&path, || {
                    if force {
                        file.persist(&dest)
                    } else {
                        file.persist_noclobber(&dest)
                    }
                });
                result.map_err(|e| {
                    if e.error.kind() == io::ErrorKind::AlreadyExists {
                        anyhow!(
                            "output {} already exists (use -f to overwrite)",
                            dest.display()
                        )
                    } else {
                        anyhow!("cannot create {}: {}", dest.display(), plain(&e.error))
                    }
                })?;
                Ok(())
            }
        }
    }
}

/// The permission bits to give an output whose input had `mode`: setuid is
/// dropped unless the output has the input's owner, setgid unless it has
/// the input's group (a setuid program must never change hands).
pub fn output_mode(mode: u32, owner_kept: bool, group_kept: bool) -> u32 {
    let mut m = mode & 0o7777;
    if !owner_kept {
        m &= !0o6000;
    }
    if !group_kept {
        m &= !0o2000;
    }
    m
}

/// Gives `f` the mode `open(2)` gives a new file: 0666 without the process's
/// umask (read from /proc/self/status; 022 where that is unavailable).
fn default_mode(f: &File) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let umask = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Umask:"))
                    .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            })
            .unwrap_or(0o022);
        let _ = f.set_permissions(std::fs::Permissions::from_mode(0o666 & !umask));
    }
    #[cfg(not(unix))]
    let _ = f;
}

/// Owner and group first (where permitted), then the mode (without
/// setuid/setgid when the owner could not be kept), then the access and
/// modification times: all on the open file, never by path.
fn copy_attributes(f: &File, meta: &Metadata) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let (uid, gid) = (meta.uid(), meta.gid());
        if std::os::unix::fs::fchown(f, Some(uid), Some(gid)).is_err() {
            // An ordinary user may still give the file a group they are in.
            let _ = std::os::unix::fs::fchown(f, None, Some(gid));
        }
        let (owner_kept, group_kept) = match f.metadata() {
            Ok(now) => (now.uid() == uid, now.gid() == gid),
            Err(_) => (false, false),
        };
        let mode = output_mode(meta.mode(), owner_kept, group_kept);
        let _ = f.set_permissions(std::fs::Permissions::from_mode(mode));
    }
    #[cfg(not(unix))]
    {
        let _ = f.set_permissions(meta.permissions());
    }
    let mut times = std::fs::FileTimes::new();
    if let Ok(t) = meta.modified() {
        times = times.set_modified(t);
    }
    if let Ok(t) = meta.accessed() {
        times = times.set_accessed(t);
    }
    let _ = f.set_times(times);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setuid_and_setgid_need_the_owner_and_group() {
        assert_eq!(output_mode(0o106755, true, true), 0o6755);
        assert_eq!(output_mode(0o6755, false, true), 0o755);
        assert_eq!(output_mode(0o6755, false, false), 0o755);
        assert_eq!(output_mode(0o6755, true, false), 0o4755);
        assert_eq!(output_mode(0o1644, false, false), 0o1644);
    }
}
