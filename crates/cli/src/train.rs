//! `sep train -o NAME.sepp [-p PRESET] FILES|DIRS...` (issue 20): builds a
//! prior, the state of a context-mixing model after it has learned the
//! samples, for `sep --prior NAME.sepp` (doc/FORMAT.md section 11).

use crate::output::Output;
use crate::{error_text, signals};
use anyhow::{Result, anyhow, bail};
use clap::Parser;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// sep train: build a prior from sample files, for small files like them.
///
/// The samples are learned in order: the files as given, each folder's
/// regular files in name order (recursively; symbolic links inside folders
/// are skipped). The prior holds the samples and the model state after them;
/// compress and decompress with `sep --prior NAME.sepp`.
#[derive(Debug, Parser)]
#[command(name = "sep train", max_term_width = 100)]
struct TrainArgs {
    /// Sample files and folders.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,

    /// The prior file to write (e.g. json.sepp).
    #[arg(short = 'o', long, value_name = "FILE", required = true)]
    output: PathBuf,

    /// Preset of the context-mixing model: fast, default or max (the archives
    /// coded with the prior use it).
    #[arg(short = 'p', long, value_name = "NAME", default_value = "default")]
    preset: String,

    /// The prior's context table: 2^N bytes, 16 to 24 (default: the size of
    /// a block as long as the samples, at most 24). Smaller tables make
    /// smaller priors that load and code faster, at some cost in ratio.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(16..=24))]
    table_bits: Option<u8>,

    /// The prior's match-model tables: 2^N entries, 10 to 22 (default: the
    /// size of a block as long as the samples). They hold a position per
    /// sample byte, so they dominate a small prior's file.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(10..=22))]
    match_bits: Option<u8>,

    /// The CM revision the prior's model codes with: 0 to 46 but 3 (default:
    /// the preset's, 3 for fast, 9 for default and 46 for max; revision 3
    /// is fast's own model and comes with `-p fast` only). The built-in
    /// priors pin revision 2 (crates/sep/priors).
    #[arg(long, value_name = "N", value_parser = ["0", "1", "2", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "20", "21", "22", "23", "24", "25", "26", "27", "28", "29", "30", "31", "32", "33", "34", "35", "36", "37", "38", "39", "40", "41", "42", "43", "44", "45", "46"])]
    revision: Option<String>,

    /// Write the prior packed (prior file version 2, deflated: about half
    /// the size, the same id; it loads slower). The built-in priors are
    /// plain, to load fast; only the replaced ones kept for old archives are
    /// packed.
    #[arg(long)]
    pack: bool,

    /// Overwrite an existing output.
    #[arg(short = 'f', long)]
    force: bool,

    /// Only errors.
    #[arg(short = 'q', long)]
    quiet: bool,
}

/// Runs `sep train` with the arguments after `train`.
pub(crate) fn main(args: &[OsString]) -> ExitCode {
    let argv = std::iter::once(OsString::from("sep train")).chain(args.iter().cloned());
    let args = match TrainArgs::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) if e.use_stderr() => {
            eprintln!("sep train: {}", crate::args::clap_error_line(&e));
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let Some(preset) = sep::Preset::from_name(&args.preset) else {
        eprintln!(
            "sep train: unknown preset '{}' (priors: fast, default, max)",
            args.preset
        );
        return ExitCode::from(2);
    };
    signals::install();
    match train(&args, preset) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sep train: {}", error_text(&e));
            ExitCode::from(1)
        }
    }
}

/// Adds `path` (a file, or a folder walked in name order) to `out`.
fn collect(path: &Path, top: bool, out: &mut Vec<PathBuf>) -> Result<()> {
    let meta = if top {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    }
    .map_err(|e| anyhow!("{}: {}", path.display(), crate::report::io_message(&e)))?;
    if meta.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| anyhow!("{}: {}", path.display(), crate::report::io_message(&e)))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for e in entries {
            collect(&e, false, out)?;
        }
    } else if meta.is_file() {
        out.push(path.to_path_buf());
    } else if top {
        bail!("{}: not a regular file or folder", path.display());
    }
    Ok(())
}

fn train(args: &TrainArgs, preset: sep::Preset) -> Result<()> {
    let start = Instant::now();
    let mut files = Vec::new();
    for p in &args.inputs {
        collect(p, true, &mut files)?;
    }
    let mut samples = Vec::with_capacity(files.len());
    let mut total = 0u64;
    for f in &files {
        let len = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        total += len;
        if total > u64::from(sep::prior::MAX_PRIOR_HISTORY) {
            bail!(
                "the samples pass {} bytes, the most a prior holds; give fewer",
                sep::prior::MAX_PRIOR_HISTORY
            );
        }
        let data = std::fs::read(f)
            .map_err(|e| anyhow!("{}: {}", f.display(), crate::report::io_message(&e)))?;
        samples.push(data);
    }
    let refs: Vec<&[u8]> = samples.iter().map(Vec::as_slice).collect();
    let mut model = sep::Model::mix_preset(preset);
    if let (Some(r), sep::Model::Mix(m)) = (&args.revision, &mut model) {
        m.cm.revision = r.parse().expect("one of 0 to 46 but 3");
    }
    let bytes = sep::Prior::train_sized(&model, &refs, args.table_bits, args.match_bits)
        .map_err(|e| anyhow!(e))?;
    let bytes = if args.pack {
        sep::Prior::pack(&bytes).map_err(|e| anyhow!(e))?
    } else {
        bytes
    };
    let prior = sep::Prior::from_bytes(&bytes).map_err(|e| anyhow!(e))?;
    let mut out = Output::file(&args.output, args.force)?;
    out.writer()
        .write_all(&bytes)
        .map_err(|e| anyhow!("write failed: {e}"))?;
    out.commit(None)?;
    if !args.quiet {
        eprintln!(
            "sep train: {}: {} samples, {} bytes learned, prior {} bytes, id {} ({:.2} s)",
            args.output.display(),
            files.len(),
            prior.history_len(),
            bytes.len(),
            prior.id_hex(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
