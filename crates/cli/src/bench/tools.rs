//! The compressors a benchmark compares: sep settings and peer programs, and
//! the command lines that compress a file and restore it.
//!
//! A [`Tool`] is one compressor at one setting; [`Tool::plan`] turns it and
//! an input file into the two [`Invocation`]s to measure. sep runs as a child
//! process of the same executable, exactly like the peers, so every
//! compressor is timed and its memory measured the same way.
//!
//! ```text
//! sep settings: store, order2 (-m NAME) and every neural preset (-p NAME)
//! ```

use super::measure::Invocation;
use anyhow::{Context, Result, bail};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// One compressor at one setting.
#[derive(Debug, Clone)]
pub struct Tool {
    /// `sep`, or the peer's program name (`xz`, ...).
    pub compressor: String,
    /// The setting: a sep model or preset name, or the peer's level flags.
    pub setting: String,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    /// A program that reads the file named last on its command line and
    /// writes the result to standard output.
    Stdout {
        program: OsString,
        compress: Vec<String>,
        decompress: Vec<String>,
        suffix: &'static str,
    },
    /// zpaq: archives files found in a folder, extracts into a folder.
    Zpaq {
        compress: Vec<String>,
        decompress: Vec<String>,
    },
}

/// The commands of one measurement and where their results land.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Compresses the input into `archive`.
    pub compress: Invocation,
    /// Restores `archive` into `restored`.
    pub decompress: Invocation,
    /// The compressed file.
    pub archive: PathBuf,
    /// The restored file.
    pub restored: PathBuf,
    /// For sep: the file its compression appends its [`sep::EncodeStats`]
    /// to (`SEP_STATS_FILE`, see [`super::row::TransformTime`]).
    pub stats: Option<PathBuf>,
}

impl Tool {
    /// `sep order2`, `xz`: the name in tables and on the plot.
    pub fn label(&self) -> String {
        if self.compressor == "sep" {
            format!("sep {}", self.setting)
        } else {
            self.compressor.clone()
        }
    }

    /// A peer that reads a file and writes standard output.
    pub(super) fn stdout(
        name: &str,
        setting: &str,
        compress: Vec<String>,
        decompress: Vec<String>,
        suffix: &'static str,
    ) -> Tool {
        Tool {
            compressor: name.into(),
            setting: setting.into(),
            kind: Kind::Stdout {
                program: name.into(),
                compress,
                decompress,
                suffix,
            },
        }
    }

    /// zpaq, with its compress and extract options.
    pub(super) fn zpaq(setting: &str, compress: Vec<String>, decompress: Vec<String>) -> Tool {
        Tool {
            compressor: "zpaq".into(),
            setting: setting.into(),
            kind: Kind::Zpaq {
                compress,
                decompress,
            },
        }
    }

    /// The commands that compress `input` and restore it, using the empty
    /// folder `work` for every file they write.
    pub fn plan(&self, input: &Path, work: &Path) -> Result<Plan> {
        match &self.kind {
            Kind::Stdout {
                program,
                compress,
                decompress,
                suffix,
            } => {
                let archive = work.join(format!("archive{suffix}"));
                let restored = work.join("restored");
                let stats = (self.compressor == "sep").then(|| work.join("stats"));
                let with = |opts: &[String], file: &Path| -> Vec<OsString> {
                    let mut v: Vec<OsString> = opts.iter().map(OsString::from).collect();
                    v.push(file.into());
                    v
                };
                Ok(Plan {
                    compress: Invocation {
                        program: program.clone(),
                        args: with(compress, input),
                        cwd: None,
                        stdout: Some(archive.clone()),
                        env: stats
                            .iter()
                            .map(|p| ("SEP_STATS_FILE", p.clone().into()))
                            .collect(),
                    },
                    decompress: Invocation {
                        program: program.clone(),
                        args: with(decompress, &archive),
                        cwd: None,
                        stdout: Some(restored.clone()),
                        env: Vec::new(),
                    },
                    archive,
                    restored,
                    stats,
                })
            }
            Kind::Zpaq {
                compress,
                decompress,
            } => {
                // zpaq stores the name it was given; a short fixed one keeps
                // the archive independent of the corpus file's name.
                let src = work.join("c");
                let dst = work.join("d");
                for d in [&src, &dst] {
                    std::fs::create_dir(d).with_context(|| format!("cannot create {d:?}"))?;
                }
                std::fs::copy(input, src.join("in"))
                    .with_context(|| format!("cannot copy {} to {src:?}", input.display()))?;
                let archive = work.join("archive.zpaq");
                let mut c: Vec<OsString> = vec!["a".into(), archive.clone().into(), "in".into()];
                c.extend(compress.iter().map(OsString::from));
                let mut d: Vec<OsString> = vec!["x".into(), archive.clone().into()];
                d.extend(decompress.iter().map(OsString::from));
                Ok(Plan {
                    compress: Invocation {
                        program: "zpaq".into(),
                        args: c,
                        cwd: Some(src),
                        stdout: None,
                        env: Vec::new(),
                    },
                    decompress: Invocation {
                        program: "zpaq".into(),
                        args: d,
                        cwd: Some(dst.clone()),
                        stdout: None,
                        env: Vec::new(),
                    },
                    archive,
                    restored: dst.join("in"),
                    stats: None,
                })
            }
        }
    }
}

/// Every sep setting a user can pick: the models by name (`neural` is the
/// network alone, `-m neural`), then the presets, read from the library so
/// new ones appear here.
pub fn sep_settings() -> Vec<String> {
    let models = sep::Model::NAMES.iter().map(|m| m.to_string());
    let presets = sep::Preset::ALL.iter().map(|p| p.name().to_string());
    models.chain(presets).collect()
}

/// The sep tool for a setting name (`order2`, `store`, `fast`, ...) run with
/// `threads` threads (`-T`) and `prior` (issue 20): `None` as sep runs
/// without the option, `builtin` likewise but labelled, `none`, `builtin:NAME`
/// or a prior file passed as `--prior` (a file by its absolute path).
pub fn sep_tool(setting: &str, threads: usize, prior: Option<&str>) -> Result<Tool> {
    let flags: [&str; 2] = if sep::Preset::from_name(setting).is_some() {
        ["-p", setting]
    } else if sep::Model::from_name(setting).is_some() {
        ["-m", setting]
    } else {
        bail!(
            "unknown sep setting '{setting}' (available: {}, all, none)",
            sep_settings().join(", ")
        );
    };
    let exe = std::env::current_exe().context("cannot locate the sep executable")?;
    let t = threads.to_string();
    let common = ["-q", "--no-progress", "-c", "-T", &t];
    let mut compress: Vec<String> = common.iter().chain(&flags).map(|s| s.to_string()).collect();
    let mut decompress: Vec<String> = common
        .iter()
        .chain(&["-d"])
        .map(|s| s.to_string())
        .collect();
    let label = match prior {
        None => setting.to_string(),
        Some("builtin") => format!("{setting} +builtin"),
        Some(p) => {
            let arg = if p == "none" || p.starts_with("builtin:") {
                p.to_string()
            } else {
                let path = std::path::absolute(p)
                    .with_context(|| format!("--prior {p}: cannot resolve the path"))?;
                if !path.is_file() {
                    bail!("--prior {p}: no such prior file");
                }
                path.to_string_lossy().into_owned()
            };
            for v in [&mut compress, &mut decompress] {
                v.push("--prior".into());
                v.push(arg.clone());
            }
            if p == "none" {
                setting.to_string()
            } else {
                format!("{setting} +prior {p}")
            }
        }
    };
    Ok(Tool {
        compressor: "sep".into(),
        setting: label,
        kind: Kind::Stdout {
            program: exe.into(),
            compress,
            decompress,
            suffix: ".sep",
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_cover_models_and_presets() {
        let s = sep_settings();
        assert!(s.contains(&"order2".to_string()));
        assert!(s.contains(&"store".to_string()));
        assert!(s.contains(&"neural".to_string()));
        for p in sep::Preset::ALL {
            assert!(s.contains(&p.name().to_string()));
        }
        assert!(sep_tool("order2", 1, None).is_ok());
        assert!(sep_tool("neural", 1, None).is_ok());
        assert!(sep_tool("nope", 1, None).is_err());
        let with = sep_tool("default", 1, Some("builtin:text")).unwrap();
        assert_eq!(with.label(), "sep default +prior builtin:text");
        assert!(sep_tool("default", 1, Some("/no/such.sepp")).is_err());
    }

    #[test]
    fn zpaq_plan_works_in_folders() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("x");
        std::fs::write(&input, b"abc").unwrap();
        let work = dir.path().join("w");
        std::fs::create_dir(&work).unwrap();
        let t = Tool::zpaq("-m5", vec!["-m5".into()], vec![]);
        let p = t.plan(&input, &work).unwrap();
        assert_eq!(std::fs::read(work.join("c/in")).unwrap(), b"abc");
        assert_eq!(p.restored, work.join("d/in"));
        assert_eq!(p.compress.cwd.as_deref(), Some(work.join("c").as_path()));
        assert_eq!(p.decompress.args[0], "x");
    }
}
