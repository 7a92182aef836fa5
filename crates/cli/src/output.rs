//! Outputs that appear only when complete: a file is written to a temporary
//! file in the destination's folder and renamed over the destination on
//! success, so a failure never leaves a partial output behind.

use anyhow::{Context, Result, bail};
use std::fs::Metadata;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// Standard output, or a file being written.
pub enum Output {
    /// Standard output.
    Stdout(io::Stdout),
    /// A temporary file that becomes `dest` on [`Output::commit`].
    File {
        /// The file being written.
        temp: NamedTempFile,
        /// Where it goes.
        dest: PathBuf,
        /// Whether an existing `dest` may be replaced.
        force: bool,
    },
}

impl Output {
    /// Standard output.
    pub fn stdout() -> Self {
        Output::Stdout(io::stdout())
    }

    /// A new file at `dest`; fails if it exists and `force` is off.
    pub fn file(dest: &Path, force: bool) -> Result<Self> {
        if let Ok(meta) = std::fs::symlink_metadata(dest) {
            if meta.is_dir() {
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
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(&dir)
            .with_context(|| format!("cannot create a file in {}", dir.display()))?;
        Ok(Output::File {
            temp,
            dest: dest.to_path_buf(),
            force,
        })
    }

    /// Where to write.
    pub fn writer(&mut self) -> &mut dyn Write {
        match self {
            Output::Stdout(s) => s,
            Output::File { temp, .. } => temp.as_file_mut(),
        }
    }

    /// Makes the output visible: copies the input's permissions and
    /// modification time (as zstd does), syncs, and renames into place.
    pub fn commit(self, input_meta: Option<&Metadata>) -> Result<()> {
        match self {
            Output::Stdout(mut s) => s.flush().context("write to standard output failed"),
            Output::File { temp, dest, force } => {
                if let Some(meta) = input_meta.filter(|m| m.is_file()) {
                    // Best effort, as zstd: a file system without permissions
                    // or times still gets its data.
                    let _ = std::fs::set_permissions(temp.path(), meta.permissions());
                    let _ = filetime::set_file_mtime(
                        temp.path(),
                        filetime::FileTime::from_last_modification_time(meta),
                    );
                }
                temp.as_file()
                    .sync_all()
                    .context("could not sync the output")?;
                let result = if force {
                    temp.persist(&dest)
                } else {
                    temp.persist_noclobber(&dest)
                };
                result.map_err(|e| {
                    if e.error.kind() == io::ErrorKind::AlreadyExists {
                        anyhow::anyhow!(
                            "output {} already exists (use -f to overwrite)",
                            dest.display()
                        )
                    } else {
                        anyhow::anyhow!("cannot create {}: {}", dest.display(), e.error)
                    }
                })?;
                Ok(())
            }
        }
    }
}
