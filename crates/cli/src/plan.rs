//! The plan stage of the command: parsed flags resolved into what to do (the
//! mode), with which model and options, on which inputs; then the plan runs
//! ([`crate::execute`]).

use crate::args::Args;
use crate::execute::*;
use crate::report::*;
use crate::{Usage, error_text};
use anyhow::{Result, anyhow};
use std::path::{Path, PathBuf};

/// The model from `--model`, `--preset`, `--streams`, `--context` and the
/// experiment knobs (`--backbone`, `--se`, `--patch`, `--stride`, `--adaptive`).
pub(crate) fn choose_model(args: &Args) -> Result<sep::Model> {
    let mut preset = sep::Preset::Default;
    let mut model = match &args.preset {
        Some(name) => {
            preset = sep::Preset::from_name(name).ok_or_else(|| {
                let names: Vec<&str> = sep::Preset::ALL.iter().map(|p| p.name()).collect();
                Usage(format!(
                    "unknown preset '{name}' (available: {})",
                    names.join(", ")
                ))
            })?;
            match args.model.as_str() {
                "mix" => sep::Model::mix_preset(preset),
                "neural" => sep::Model::preset(preset),
                other => {
                    return Err(Usage(format!(
                        "--preset applies to the mix and neural models, not '{other}'"
                    ))
                    .into());
                }
            }
        }
        None => sep::Model::from_name(&args.model).ok_or_else(|| {
            Usage(format!(
                "unknown model '{}' (available: {})",
                args.model,
                sep::Model::NAMES.join(", ")
            ))
        })?,
    };
    let knobs = sep::neural::Knobs {
        backbone: args
            .backbone
            .as_deref()
            .map(|n| sep::neural::BackboneKind::from_name(n).expect("clap checked the name")),
        se: args.se.as_deref().map(|v| v == "on"),
        patch: args.patch,
        stride: args.stride,
        adaptive: args
            .adaptive
            .as_deref()
            .map(|n| sep::neural::AdaptiveKind::from_name(n).expect("clap checked the name")),
        context: args.context,
        ..sep::neural::Knobs::default()
    };
    if args.streams.is_some() || knobs != sep::neural::Knobs::default() {
        let config = match &mut model {
            sep::Model::Neural(config) => config,
            sep::Model::Mix(sep::MixConfig {
                neural: Some(config),
                ..
            }) => config,
            _ => {
                return Err(Usage(
                    "--streams, --context, --backbone, --se, --patch, --stride and --adaptive apply to a model with a network (neural, or mix with the hybrid preset)"
                        .into(),
                )
                .into());
            }
        };
        if let Some(b) = args.streams {
            if !(1..=sep::format::MAX_STREAMS).contains(&b) {
                return Err(Usage(format!(
                    "--streams {b} is outside 1..={}",
                    sep::format::MAX_STREAMS
                ))
                .into());
            }
            config.streams = b;
        }
        *config = config
            .with_knobs(preset, &knobs)
            .map_err(|e| {
                use sep::neural::Knob;
                Usage(match e.knob {
                    Some(Knob::Context) => {
                        format!("--context {}: {}", knobs.context.unwrap_or(0), e.why)
                    }
                    Some(Knob::Patch) => format!("--patch {}", e.why),
                    Some(Knob::SeKnobs) => {
                        "--patch, --stride and --adaptive apply with the semantics enhancement (--se on)".into()
                    }
                    // Knobs the command line does not set: the library's words.
                    _ => e.to_string(),
                })
            })?;
    }
    Ok(model)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Compress,
    Decompress,
    Test,
    List,
}

/// What a command line asks for, resolved: the mode, the model, the thread
/// count and the inputs (directories expanded with `-r`), checked for usage
/// errors before any input is touched.
pub(crate) struct Plan<'a> {
    /// The parsed flags (outputs, suffix, force, keep, limits, ...).
    pub(crate) args: &'a Args,
    /// Compress, decompress, test or list.
    pub(crate) mode: Mode,
    /// The model for compression.
    pub(crate) model: sep::Model,
    /// Coding threads (0 resolved to the cores, clamped to the library's most).
    pub(crate) threads: usize,
    /// -q .. -vv.
    pub(crate) verbosity: u8,
    /// The inputs, in order (`-` for standard input).
    pub(crate) inputs: Vec<PathBuf>,
    /// Whether expanding a directory failed (its error already printed).
    pub(crate) walk_failed: bool,
    /// The prior of --prior (issue 20), loaded once for every input.
    pub(crate) prior: Option<sep::Prior>,
}

/// Resolves `args` into a [`Plan`]; a usage error when they contradict.
pub(crate) fn plan(args: &Args, verbosity: u8) -> Result<Plan<'_>> {
    let mode = if args.list {
        Mode::List
    } else if args.test {
        Mode::Test
    } else if args.decompress {
        Mode::Decompress
    } else {
        Mode::Compress
    };
    let mut model = choose_model(args)?;
    // Issue 20: --prior FILE, loaded once; its model unless -m/-p/-N chose one.
    let prior = match &args.prior {
        Some(p) if p.as_os_str() != "none" => {
            // builtin:text, builtin:code, builtin:records (a file of that
            // name is reached as ./builtin:text).
            let builtin = p.to_str().and_then(|n| {
                n.starts_with("builtin:")
                    .then(|| sep::Builtin::from_name(n))
                    .map(|b| {
                        b.ok_or_else(|| anyhow!("{n}: no such built-in prior (builtin:text, builtin:code, builtin:records)"))
                    })
            });
            let prior = match builtin {
                Some(b) => sep::Prior::builtin(b?),
                None => sep::Prior::from_file(p)
                    .map_err(|e| anyhow!("{}: {}", p.display(), error_text(&anyhow!(e))))?,
            };
            if args.preset.is_none() && args.model == "mix" {
                model = prior.model();
            }
            Some(prior)
        }
        _ => None,
    };
    let mut inputs: Vec<PathBuf> = args.files.clone();
    if inputs.is_empty() {
        inputs.push(PathBuf::from("-"));
    }
    let mut walk_failed = false;
    if args.recursive {
        let mut expanded = Vec::new();
        for input in inputs {
            if !is_stdin(&input) && input.is_dir() {
                if let Err(e) = walk(&input, mode, &args.suffix, &mut expanded) {
                    eprintln!("sep: {}: {}", input.display(), error_text(&e));
                    walk_failed = true;
                }
            } else {
                expanded.push(input);
            }
        }
        inputs = expanded;
    }
    if args.output.is_some() && inputs.len() > 1 {
        return Err(Usage("-o can only be used with a single input".into()).into());
    }
    if args.range.is_some() && (mode != Mode::Decompress || inputs.len() > 1 || args.rm) {
        return Err(Usage("--range needs -d and a single input, and not --rm".into()).into());
    }
    if args.output.is_some() && args.stdout {
        return Err(Usage("-o and -c cannot be used together".into()).into());
    }
    if args.suffix.is_empty() {
        return Err(Usage("the suffix must not be empty".into()).into());
    }
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    // Issue 14 item 7: more threads than the library uses is clamped with a note.
    if threads > sep::MAX_THREADS && !args.quiet {
        eprintln!(
            "sep: -T {threads} is more than {0}; using {0}",
            sep::MAX_THREADS
        );
    }
    Ok(Plan {
        args,
        mode,
        model,
        threads: threads.min(sep::MAX_THREADS),
        verbosity,
        inputs,
        walk_failed,
        prior,
    })
}

/// Appends the files under `dir` (sorted, recursively) that `mode` takes:
/// archives (ending in `suffix`) to decompress, test or list, the others to
/// compress. Symbolic links inside folders are skipped, as zstd -r does.
pub(crate) fn walk(dir: &Path, mode: Mode, suffix: &str, out: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| anyhow!(io_message(&e)))?
        .filter_map(|e| e.ok())
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            walk(&path, mode, suffix, out)?;
        } else if ft.is_file() {
            let is_archive = strip_suffix(path.as_os_str(), suffix).is_some();
            if is_archive == (mode != Mode::Compress) {
                out.push(path);
            }
        }
    }
    Ok(())
}
