//! The options of `sep bench`.

use clap::Parser;
use std::path::PathBuf;

/// sep bench: compressed size, ratio, speed and memory of sep settings and
/// peer compressors, side by side.
///
/// Every compressor runs as a child process on each file, compresses it,
/// restores it, and the restored bytes are compared with the original (a
/// mismatch fails the run). Prints a table and writes a CSV, an SVG plot of
/// ratio against speed and a Markdown report.
#[derive(Debug, Parser)]
#[command(name = "sep bench", max_term_width = 100)]
pub struct BenchArgs {
    /// Files to measure; a folder stands for the files directly in it.
    pub inputs: Vec<PathBuf>,

    /// A corpus set: quick, bench or full (CORPUS/sets/NAME.txt).
    #[arg(long, value_name = "NAME")]
    pub set: Option<String>,

    /// The corpus folder with sets/ and files/ [default: $SEP_CORPUS, or the
    /// nearest shared/corpus above the current folder or the executable].
    #[arg(long, value_name = "DIR")]
    pub corpus: Option<PathBuf>,

    /// sep settings, comma-separated: models (order2, store, mix, neural),
    /// presets (fast, default, max, hybrid, ...; an unknown name lists them),
    /// `none`, or `all` (the paper's presets too, sized for a GPU: hours on a
    /// CPU).
    #[arg(
        short = 'p',
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "order2,default"
    )]
    pub presets: Vec<String>,

    /// Peer compressors, comma-separated: xz, zstd, bzip2, brotli, zpaq,
    /// `all` or `none`. Peers missing from PATH are skipped with a note.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "all"
    )]
    pub peers: Vec<String>,

    /// Threads for sep (-T) and for the peers that take a thread count (xz,
    /// zstd, zpaq); 0 = each program's default.
    #[arg(short = 'T', long, value_name = "N", default_value_t = 1)]
    pub threads: usize,

    /// Runs of each measurement; the best (least) time counts.
    #[arg(short = 'r', long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,

    /// Folder for the results NAME.csv, NAME.svg and NAME.md [default: the
    /// current folder, files named sep-bench-NAME.*].
    #[arg(short = 'o', long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Name of the results [default: the set's name, else the folder's, else
    /// `files`].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Priors (issue 20): every sep setting runs twice, with --prior none and
    /// with this prior: a prior file, builtin:NAME (text, code, records), or
    /// `builtin` (sep's own choice of built-in prior for files up to 64 KiB,
    /// as when no --prior is given).
    #[arg(long, value_name = "FILE|builtin")]
    pub prior: Option<String>,

    /// Install missing peers with apt-get first (needs root).
    #[arg(long)]
    pub install_peers: bool,

    /// Only the final table and errors; no line per measurement.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}
