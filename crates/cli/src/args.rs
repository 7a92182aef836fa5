//! Command-line arguments, in the style of zstd and xz.

use clap::{ArgAction, Parser};
use std::ffi::OsString;
use std::path::PathBuf;

/// sep: lossless compression with models that learn while they code.
///
/// Compresses each FILE to FILE.sep (or decompresses FILE.sep to FILE with
/// -d). With no FILE, or when FILE is -, reads standard input and writes
/// standard output.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "sep",
    version,
    about,
    max_term_width = 100,
    args_override_self = true,
    after_help = AFTER_HELP
)]
pub struct Args {
    /// Files to process (folders with -r); none or - means standard input.
    pub files: Vec<PathBuf>,

    /// Compress (the default).
    #[arg(short = 'z', long, conflicts_with_all = ["decompress", "test", "list"])]
    pub compress: bool,

    /// Decompress.
    #[arg(short = 'd', long, visible_alias = "uncompress")]
    pub decompress: bool,

    /// Decompress and verify archives without writing anything.
    #[arg(short = 't', long, conflicts_with_all = ["list"])]
    pub test: bool,

    /// List archives: one line each (with -v: header and blocks in detail;
    /// also sep info FILE).
    #[arg(short = 'l', long)]
    pub list: bool,

    /// Compression level 1-9 (also -1 .. -9; --fast is 1, --best is 9):
    /// picks the model and preset, see the table below.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=9))]
    pub level: Option<u8>,

    /// Compress or decompress the files in folders, recursively (symbolic
    /// links inside folders are skipped; -d takes only files ending in the
    /// suffix).
    #[arg(short = 'r', long)]
    pub recursive: bool,

    /// Write to standard output.
    #[arg(short = 'c', long = "stdout")]
    pub stdout: bool,

    /// Write to this file (only with a single input).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Keep input files (the default).
    #[arg(short = 'k', long, overrides_with = "rm")]
    pub keep: bool,

    /// Remove each input file after it was processed successfully.
    #[arg(long)]
    pub rm: bool,

    /// Overwrite existing outputs; allow compressed output to, and input
    /// typed on, a terminal.
    #[arg(short = 'f', long)]
    pub force: bool,

    /// Threads: blocks coded at once (0 = one per core; more than 256 is clamped
    /// to 256 with a note). The archive is the same for every value.
    #[arg(short = 'T', long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// Model: mix (context mixing, the default), neural (a network alone),
    /// order2 (fastest), store.
    #[arg(short = 'm', long, value_name = "NAME", default_value = "mix")]
    pub model: String,

    /// Preset: fast, default, max (context mixing), ultra (max with a serial LSTM
    /// in the mixer), hybrid (context mixing with a multi-stream network), or the paper's networks paper-pac, paper-sep-pac, paper-trace,
    /// paper-sep-trace, paper-patchtst, paper-sep-patchtst (these imply --model
    /// neural). With --model neural, fast/default/max/hybrid pick a network size.
    #[arg(short = 'p', long, value_name = "NAME")]
    pub preset: Option<String>,

    /// Neural: backbone family: pac, trace, patchtst (CPU-sized; paper-sized after a
    /// paper-* preset).
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(sep::neural::BackboneKind::ALL.map(|k| k.name())))]
    pub backbone: Option<String>,

    /// Neural: semantics enhancement (SEP) in front of the backbone.
    #[arg(long, value_name = "on|off", value_parser = ["on", "off"])]
    pub se: Option<String>,

    /// SE: bytes per patch (P); the features per byte change so that a token keeps
    /// its width.
    #[arg(long, value_name = "P")]
    pub patch: Option<u8>,

    /// SE: bytes between patches (S, 1..=P).
    #[arg(long, value_name = "S")]
    pub stride: Option<u8>,

    /// SE: adaptive stride: soft (the reference code's gate), hard (the paper's
    /// threshold: low-scoring patches are skipped), off (fixed stride).
    #[arg(long, value_name = "MODE", value_parser = clap::builder::PossibleValuesParser::new(sep::neural::AdaptiveKind::ALL.map(|k| k.name())))]
    pub adaptive: Option<String>,

    /// Neural: the most streams (B) a block is split into.
    #[arg(long, value_name = "B")]
    pub streams: Option<u32>,

    /// Neural: bytes of context (L) the network sees.
    #[arg(long, value_name = "L")]
    pub context: Option<u16>,

    /// Code -T blocks at a time and write them all before reading more,
    /// instead of the pipeline (for measurements; same archive).
    #[arg(long)]
    pub no_pipeline: bool,

    /// Code every block as it is: no search for JPEG, deflate streams, PNG
    /// files, x86 code or 24/32-bit images to transform (segmented blocks,
    /// doc/FORMAT.md 8; for measuring what they buy).
    #[arg(long)]
    pub no_transforms: bool,

    /// Write a seek table after the archive (8 bytes per block plus 20; doc/FORMAT.md
    /// 12) so that sep -d --range finds its blocks at once. Decoders before it reject
    /// such archives.
    #[arg(long)]
    pub seek_table: bool,

    /// Archive format version to write: 3 (default, compact: about 45 bytes less per
    /// archive; doc/FORMAT.md 13) or 1 (fixed-width fields, read by every sep).
    #[arg(long, value_name = "N", default_value_t = sep::format::FORMAT_VERSION)]
    pub format_version: u8,

    /// Raw bytes per independent block, 4K..=1G, e.g. 4M, 16MiB, 65536.
    #[arg(short = 'B', long, value_name = "SIZE", value_parser = parse_size)]
    pub block_size: Option<u32>,

    /// Seed of the model's random initialisation (stored in the archive).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,

    /// Suffix of compressed files.
    #[arg(short = 'S', long, value_name = "SUFFIX", default_value = ".sep")]
    pub suffix: String,

    /// More messages: -v settings and peak memory, -vv also times (with -l:
    /// the detailed view). The last of -q and -v wins.
    #[arg(short = 'v', long, action = ArgAction::Count)]
    pub verbose: u8,

    /// Only errors. The last of -q and -v wins.
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// Never show a progress bar.
    #[arg(long)]
    pub no_progress: bool,

    /// Decompress at most SIZE bytes (e.g. 512M, 2G, none): an archive that declares
    /// more, or whose blocks add up to more, fails before that much is decoded.
    /// Default: none for files and pipes (where the disk or the reader bounds the
    /// output), 64M when writing to a terminal.
    #[arg(long, value_name = "SIZE", value_parser = crate::limits::parse_limit)]
    pub max_output: Option<crate::limits::Limit>,

    /// Decompress only archives whose estimated work is at most UNITS (about one
    /// multiply-add each, some 2.5e10 a second per core; suffixes K, M, G, T, P;
    /// none for no limit) plus 2^30 per archive byte. Default 128T (2^47, about 90
    /// minutes of one core): real archives stay within it; a tiny archive claiming
    /// years of work does not.
    #[arg(long, value_name = "UNITS", value_parser = crate::limits::parse_limit)]
    pub max_work: Option<crate::limits::Limit>,

    /// Memory limit, e.g. 512M, 2G, none (default: half of the machine's RAM). Decoding
    /// codes fewer blocks at once to stay within it, or refuses an archive that needs
    /// more for one block; compression picks a smaller preset of the same model (with a
    /// note) or fewer threads, or refuses.
    #[arg(short = 'M', long = "memory", value_name = "LIMIT", value_parser = crate::limits::parse_limit)]
    pub memory: Option<crate::limits::Limit>,

    /// With -d: only the content bytes START..START+LEN (or START: to the end), e.g.
    /// 1G:1M; reads only the blocks that overlap them (faster with --seek-table).
    #[arg(long, value_name = "START:LEN", value_parser = crate::range::parse_range)]
    pub range: Option<crate::range::ByteRange>,
    /// Compress, decompress, test or list with this prior (a file written
    /// by sep train; issue 20). Compressing uses the model it was trained for
    /// unless -m, -p or a level says otherwise (which must then match);
    /// decompressing an archive coded with a prior needs the same file.
    /// none: no prior.
    #[arg(long, value_name = "FILE")]
    pub prior: Option<PathBuf>,

    /// Issue 21: lossy compression of float arrays (crates/cli/src/lossy.rs).
    #[command(flatten)]
    pub lossy: crate::lossy::LossyArgs,
}

/// The text after the options in `--help`: levels, commands, special outputs.
pub const AFTER_HELP: &str = "\
Levels (-1 .. -9, --fast = -1, --best = -9; without one: -6):
  level  model, preset   compresses at (CPU)  bench set, 17.5 MB
  -1     order2          2.65 MB/s            ratio 2.51
  -2 -3  mix, fast       1.10 MB/s            ratio 3.33
  -4..6  mix, default    0.132 MB/s           ratio 4.34
  -7..9  mix, max        0.128 MB/s           ratio 4.35
  A level sets -m and -p; it cannot be combined with them.

Commands:
  sep bench FILE... DIR...   compare sep's modes with xz, zstd, ... (sep bench --help)
  sep info FILE...           the same as sep -l -v FILE...
  sep train -o P.sepp FILES  build a prior for small files like FILES (sep train --help)
  sep help                   this text

Outputs: an existing output that is not a regular file (/dev/null, a FIFO, a device),
also through a symbolic link, is written in place without -f. An existing symbolic
link to a regular file needs -f, which replaces the link, not its target (as zstd).
Exit codes: 0 success, 1 an input failed, 2 a usage error; killed by SIGINT, SIGTERM,
SIGHUP or SIGPIPE as other tools (a shell shows 130, 143, 129, 141), leaving no output.";

/// Parses a byte count: digits and an optional unit, `K`, `M`, `G`, `T` or `P`
/// (powers of 1024, also as `KB`/`KiB` and so on). `examples` goes into the
/// message for a missing number.
pub fn parse_bytes(s: &str, examples: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (examples: {examples})"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => {
            return Err(format!(
                "'{s}': unknown unit '{unit}' (use K, M, G, T or P)"
            ));
        }
    };
    n.checked_shl(shift)
        .filter(|&v| v >> shift == n)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Parses `65536`, `64K`, `4M`, `16MiB`, `1G` (powers of 1024) as a block
/// size, `sep::MIN_BLOCK_SIZE..=1G`.
pub fn parse_size(s: &str) -> Result<u32, String> {
    let v = parse_bytes(s, "65536, 64K, 16M")?;
    if v < u64::from(sep::MIN_BLOCK_SIZE) {
        return Err(format!(
            "'{s}' is below the minimum block size of {} bytes (4K): smaller blocks cannot pay for their headers",
            sep::MIN_BLOCK_SIZE
        ));
    }
    if v > 1 << 30 {
        return Err(format!("'{s}' is above the maximum block size, 1G"));
    }
    Ok(v as u32)
}

/// `-1` .. `-9` become `--level=N`, `--fast` `--level=1`, `--best`
/// `--level=9` (clap has no digit flags); after `--` nothing changes.
pub(crate) fn rewrite_levels(argv: Vec<OsString>) -> Vec<OsString> {
    let mut out = Vec::with_capacity(argv.len());
    let mut options_end = false;
    for (i, a) in argv.into_iter().enumerate() {
        if i > 0 && !options_end {
            if a == "--" {
                options_end = true;
            } else if let Some(s) = a.to_str() {
                let level = match s {
                    "--fast" => Some("1"),
                    "--best" => Some("9"),
                    _ => s
                        .strip_prefix('-')
                        .filter(|d| d.len() == 1 && matches!(d.as_bytes()[0], b'1'..=b'9')),
                };
                if let Some(n) = level {
                    out.push(format!("--level={n}").into());
                    continue;
                }
            }
        }
        out.push(a);
    }
    out
}

/// The model and preset of each level (see `args::AFTER_HELP`).
pub(crate) fn level_setting(level: u8) -> (&'static str, Option<&'static str>) {
    match level {
        1 => ("order2", None),
        2 | 3 => ("mix", Some("fast")),
        4..=6 => ("mix", Some("default")),
        _ => ("mix", Some("max")),
    }
}

/// Sets `-m` and `-p` from a level; a level with an explicit `-m` or `-p` is
/// a usage error (which would win is not obvious).
pub(crate) fn apply_level(mut args: Args, m: &clap::ArgMatches) -> Result<Args, String> {
    let Some(level) = args.level else {
        return Ok(args);
    };
    let given = |id: &str| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    if given("model") || given("preset") {
        return Err(format!(
            "-{level} sets the model and preset; leave out -m and -p (see sep --help)"
        ));
    }
    let (model, preset) = level_setting(level);
    args.model = model.into();
    args.preset = preset.map(String::from);
    Ok(args)
}

/// 0 with -q, else 1 plus the number of -v; the last of -q and -v wins (a
/// -v after -q counts from 1 again).
pub(crate) fn resolve_verbosity(m: &clap::ArgMatches) -> u8 {
    let given = |id: &str| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    let last_q = if given("quiet") {
        m.indices_of("quiet").and_then(|i| i.max())
    } else {
        None
    };
    let vs: Vec<usize> = if given("verbose") {
        m.indices_of("verbose")
            .map(|i| i.collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    // `-vv` is one index with a count of 2.
    let count = m.get_count("verbose").min(250);
    match last_q {
        Some(q) => match vs.iter().filter(|&&v| v > q).count() {
            0 => 0,
            n if n == vs.len() => 1 + count,
            n => 1 + n as u8,
        },
        None => 1 + count,
    }
}

/// Clap's error as one line, without its "error: " prefix, its tips and
/// its usage lines.
pub(crate) fn clap_error_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or("invalid arguments").trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    format!("{first} (see sep --help)")
}

/// `sep info FILE...` is `sep -l -v FILE...`; `sep help` is `sep --help`
/// (`sep ./help` and `sep -- help` still name a file).
pub(crate) fn rewrite_subcommands(mut argv: Vec<OsString>) -> Vec<OsString> {
    if argv.get(1).is_some_and(|a| a == "info") {
        argv[1] = "-l".into();
        argv.insert(2, "-v".into());
    }
    if argv.get(1).is_some_and(|a| a == "help") {
        argv[1] = "--help".into();
    }
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert!(parse_size("2G").is_err());
        assert!(parse_size("0").is_err());
        assert_eq!(parse_size("4K"), Ok(sep::MIN_BLOCK_SIZE));
        assert!(
            parse_size("4095")
                .unwrap_err()
                .contains("minimum block size of 4096")
        );
        assert!(parse_size("1").is_err());
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("M").is_err());
        assert!(parse_size("99999999999999999999").is_err());
    }
}
