//! Which files a benchmark measures: files and folders from the command line
//! and corpus sets (`--set bench` = the files listed in
//! `CORPUS/sets/bench.txt`, found in `CORPUS/files/`).
//!
//! The corpus folder is `--corpus DIR`, else `$SEP_CORPUS`, else the first
//! `shared/corpus` found beside the current folder or the executable or one
//! of their parents, which is `../shared/corpus` seen from this repository.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// One file to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// Its name in the results.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
}

/// The files of `paths` (a folder stands for the files directly in it, in
/// name order, hidden ones skipped) followed by those of the set `set`.
pub fn collect(paths: &[PathBuf], set: Option<&str>, corpus: Option<&Path>) -> Result<Vec<Input>> {
    let mut files: Vec<PathBuf> = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("{}", p.display()))?;
        if meta.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("cannot list {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && !is_hidden(f))
                .collect();
            inside.sort();
            files.extend(inside);
        } else {
            files.push(p.clone());
        }
    }
    if let Some(set) = set {
        files.extend(set_files(set, corpus)?);
    }
    if files.is_empty() {
        bail!("nothing to measure: name files, a folder or --set");
    }
    let base = |p: &Path| {
        p.file_name()
            .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
    };
    let mut inputs = Vec::new();
    for p in &files {
        let unique = files.iter().filter(|q| base(q) == base(p)).count() == 1;
        let meta = std::fs::metadata(p).with_context(|| format!("{}", p.display()))?;
        inputs.push(Input {
            name: if unique {
                base(p)
            } else {
                p.display().to_string()
            },
            path: p.clone(),
            bytes: meta.len(),
        });
    }
    Ok(inputs)
}

fn is_hidden(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// The files listed in `CORPUS/sets/SET.txt`.
fn set_files(set: &str, corpus: Option<&Path>) -> Result<Vec<PathBuf>> {
    let corpus = match corpus {
        Some(c) => c.to_path_buf(),
        None => find_corpus().with_context(|| {
            format!("--set {set}: no corpus found (set SEP_CORPUS or use --corpus DIR; looked for shared/corpus above the current folder and the executable)")
        })?,
    };
    let list = corpus.join("sets").join(format!("{set}.txt"));
    let text = std::fs::read_to_string(&list).with_context(|| {
        let known: Vec<String> = std::fs::read_dir(corpus.join("sets"))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter_map(|e| {
                        e.file_name()
                            .to_string_lossy()
                            .strip_suffix(".txt")
                            .map(String::from)
                    })
                    .collect()
            })
            .unwrap_or_default();
        format!(
            "--set {set}: cannot read {} (sets: {})",
            list.display(),
            known.join(", ")
        )
    })?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| corpus.join("files").join(l))
        .collect())
}

/// `$SEP_CORPUS`, or the nearest `shared/corpus` above the current folder
/// or the executable.
fn find_corpus() -> Option<PathBuf> {
    if let Some(c) = std::env::var_os("SEP_CORPUS") {
        return Some(PathBuf::from(c));
    }
    let starts = [
        std::env::current_dir().ok(),
        std::env::current_exe()
            .ok()
            .and_then(|e| e.canonicalize().ok()),
    ];
    starts
        .iter()
        .flatten()
        .flat_map(|s| s.ancestors())
        .map(|a| a.join("shared").join("corpus"))
        .find(|c| c.join("sets").is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_sets_and_names() {
        let d = tempfile::tempdir().unwrap();
        let corpus = d.path().join("corpus");
        std::fs::create_dir_all(corpus.join("sets")).unwrap();
        std::fs::create_dir_all(corpus.join("files")).unwrap();
        std::fs::write(corpus.join("files/a"), b"12345").unwrap();
        std::fs::write(corpus.join("files/.hidden"), b"").unwrap();
        std::fs::write(corpus.join("sets/tiny.txt"), "# comment\na\n\n").unwrap();
        let other = d.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("b"), b"xy").unwrap();
        std::fs::write(other.join("a"), b"z").unwrap();

        let got = collect(std::slice::from_ref(&other), Some("tiny"), Some(&corpus)).unwrap();
        let names: Vec<&str> = got.iter().map(|i| i.name.as_str()).collect();
        // Two files are named `a`: they keep their paths.
        assert_eq!(names[1], "b");
        assert!(names[0].ends_with("other/a") && names[2].ends_with("files/a"));
        assert_eq!(got[2].bytes, 5);

        let hidden_skipped = collect(&[corpus.join("files")], None, None).unwrap();
        assert_eq!(hidden_skipped.len(), 1);
        assert!(collect(&[], Some("nope"), Some(&corpus)).is_err());
        assert!(collect(&[], None, None).is_err());
    }
}
