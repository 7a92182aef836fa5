//! `sep --lossy` (issue 21): error-bounded lossy compression of float
//! arrays, and the lossy side of `-d`, `-t` and `-l`.
//!
//! Lossy archives (doc/FORMAT.md section 9, format version 2) are told from
//! lossless ones by their header, so `sep -d`, `-t` and `-l` need no option.
//! The whole array is held in memory.

use crate::Usage;
use crate::execute::{Ctx, Input, display_name, is_stdin, open_input};
use crate::plan::Mode;
use crate::report::human_rate;
use anyhow::{Result, anyhow, bail};
use sep::lossy::{self as sl, Dtype};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The options of lossy compression.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Lossy compression of float arrays (issue 21)")]
pub struct LossyArgs {
    /// Compress a float array with a guaranteed error: abs=E (|x - x'| <= E),
    /// rel=E (E times the value range), psnr=DB (at least DB dB) or ratio=R
    /// (the best fidelity reaching ratio R). NaN, infinities and fill values
    /// stay exact. Input: raw little-endian values (with --dtype and --shape)
    /// or .npy.
    #[arg(long, value_name = "MODE=VALUE")]
    pub lossy: Option<String>,

    /// Element type of a raw array: f32 or f64.
    #[arg(long, value_name = "TYPE")]
    pub dtype: Option<String>,

    /// Shape of a raw array, slowest axis first, 1 to 4 sizes: 20x180x360.
    #[arg(long, value_name = "DxHxW")]
    pub shape: Option<String>,

    /// A fill value kept exactly and left out of the value range (fill
    /// values far outside the data are also found by themselves).
    #[arg(long, value_name = "V", allow_hyphen_values = true)]
    pub fill: Option<f64>,

    /// With -t on a lossy archive: the original, to report max error and PSNR.
    #[arg(long, value_name = "ORIGINAL")]
    pub against: Option<PathBuf>,

    /// With --lossy: default (context mixing of the codes) or fast (an
    /// adaptive multi-symbol coder, several times faster, a few percent
    /// larger). The same bound either way.
    #[arg(long, value_name = "LEVEL")]
    pub lossy_level: Option<String>,
}

/// Whether `--lossy-level` asks for the fast setting.
fn fast_level(level: Option<&str>) -> std::result::Result<bool, String> {
    match level {
        None | Some("default") => Ok(false),
        Some("fast") => Ok(true),
        Some(v) => Err(format!(
            "--lossy-level '{v}': unknown level (use default or fast)"
        )),
    }
}

/// Checks option combinations before any file is touched.
pub fn check_usage(ctx: &Ctx) -> Result<()> {
    let l = &ctx.args.lossy;
    if l.lossy.is_none()
        && ctx.mode == Mode::Compress
        && (l.dtype.is_some() || l.shape.is_some() || l.fill.is_some() || l.lossy_level.is_some())
    {
        return Err(Usage("--dtype, --shape, --fill and --lossy-level need --lossy".into()).into());
    }
    fast_level(l.lossy_level.as_deref()).map_err(Usage)?;
    if l.lossy.is_some() && ctx.mode != Mode::Compress {
        return Err(Usage("--lossy compresses; -d, -t and -l need no lossy options".into()).into());
    }
    if l.against.is_some() && ctx.mode != Mode::Test {
        return Err(Usage("--against goes with -t".into()).into());
    }
    if let Some(m) = &l.lossy {
        sl::Mode::parse(m).map_err(|e| Usage(e.to_string()))?;
    }
    if let Some(d) = &l.dtype {
        Dtype::parse(d).map_err(|e| Usage(e.to_string()))?;
    }
    if let Some(s) = &l.shape {
        parse_shape(s).map_err(Usage)?;
    }
    if let Some(f) = l.fill
        && f.is_nan()
    {
        return Err(Usage("--fill NaN: NaN is always kept exactly".into()).into());
    }
    Ok(())
}

fn parse_shape(s: &str) -> std::result::Result<Vec<usize>, String> {
    let dims: std::result::Result<Vec<usize>, _> = s.split(['x', 'X']).map(str::parse).collect();
    match dims {
        Ok(d) if (1..=4).contains(&d.len()) && !d.contains(&0) => Ok(d),
        _ => Err(format!(
            "--shape '{s}': expected 1 to 4 sizes above 0 joined by x, e.g. 20x180x360"
        )),
    }
}

/// Whether the file starts like a lossy archive (standard input is never
/// taken for one).
fn file_is_lossy(input: &Path) -> bool {
    if is_stdin(input) {
        return false;
    }
    let mut head = [0u8; 5];
    std::fs::File::open(input)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && sl::is_lossy(&head)
}

/// The whole input, and the opened input itself (for `--rm`'s check that it
/// did not change while read).
fn read_all(input: &Path) -> Result<(Vec<u8>, Input)> {
    let mut inp = open_input(input)?;
    let mut v = Vec::new();
    inp.reader
        .read_to_end(&mut v)
        .map_err(|e| anyhow!("read failed: {e}"))?;
    Ok((v, inp))
}

/// Handles `input` when it is lossy work; `None` leaves it to the lossless
/// path.
pub fn process(ctx: &Ctx, input: &Path) -> Option<Result<()>> {
    match ctx.mode {
        Mode::Compress if ctx.args.lossy.lossy.is_some() => Some(compress(ctx, input)),
        Mode::Decompress if file_is_lossy(input) => Some(decompress(ctx, input)),
        Mode::Test if file_is_lossy(input) => Some(test(ctx, input)),
        Mode::Test if ctx.args.lossy.against.is_some() => {
            Some(Err(anyhow!("--against: not a lossy archive")))
        }
        Mode::List if file_is_lossy(input) => Some(list(ctx, input)),
        _ => None,
    }
}

fn compress(ctx: &Ctx, input: &Path) -> Result<()> {
    let l = &ctx.args.lossy;
    let mode = sl::Mode::parse(l.lossy.as_deref().unwrap_or_default()).map_err(|e| anyhow!(e))?;
    let opts = sl::Options {
        mode,
        fill: l.fill,
        predictor: None,
        fast: fast_level(l.lossy_level.as_deref()).map_err(|e| anyhow!(e))?,
        ..sl::Options::default()
    };
    let start = Instant::now();
    let (data, inp) = read_all(input)?;
    let archive =
        if sl::npy::is_npy(&data) {
            if l.dtype.is_some() || l.shape.is_some() {
                bail!("an .npy file gives its own dtype and shape: leave out --dtype and --shape");
            }
            sl::compress_npy(&data, &opts)
        } else {
            let dtype =
                Dtype::parse(l.dtype.as_deref().ok_or_else(|| {
                    anyhow!("a raw array needs --dtype f32|f64 and --shape DxHxW")
                })?)
                .map_err(|e| anyhow!(e))?;
            let shape =
                parse_shape(l.shape.as_deref().ok_or_else(|| {
                    anyhow!("a raw array needs --dtype f32|f64 and --shape DxHxW")
                })?)
                .map_err(|e| anyhow!(e))?;
            sl::compress_raw(&data, dtype, &shape, &opts)
        }
        .map_err(|e| anyhow!(e))?;
    let out_path = ctx.output_path(input)?;
    let sizes = (data.len() as u64, archive.len() as u64);
    deliver(
        ctx,
        input,
        out_path.as_deref(),
        &inp,
        &archive,
        sizes,
        start,
    )
}

/// Writes `bytes` to the output of `input` (`out_path`, or standard output),
/// with the input's mode and times as the lossless path sets them, reports
/// `(raw, archive)` sizes, and removes the input with `--rm`.
fn deliver(
    ctx: &Ctx,
    input: &Path,
    out_path: Option<&Path>,
    inp: &Input,
    bytes: &[u8],
    (raw, archive): (u64, u64),
    start: Instant,
) -> Result<()> {
    let mut out = ctx.open_output(input, out_path)?;
    out.writer()
        .write_all(bytes)
        .map_err(|e| anyhow!("write failed: {e}"))?;
    out.commit(inp.meta.as_ref())?;
    ctx.report(input, out_path, raw, archive, raw, start);
    ctx.remove_input(input, out_path, inp)
}

fn decode(ctx: &Ctx, archive: &[u8], to_terminal: bool) -> Result<Vec<u8>> {
    let limit = crate::limits::max_output(ctx.args, to_terminal).unwrap_or(u64::MAX);
    sl::decompress(archive, limit).map_err(|e| anyhow!(e))
}

fn decompress(ctx: &Ctx, input: &Path) -> Result<()> {
    let start = Instant::now();
    let (archive, inp) = read_all(input)?;
    let out_path = ctx.output_path(input)?;
    let terminal = out_path.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout());
    let data = decode(ctx, &archive, terminal)?;
    let sizes = (data.len() as u64, archive.len() as u64);
    deliver(ctx, input, out_path.as_deref(), &inp, &data, sizes, start)
}

fn test(ctx: &Ctx, input: &Path) -> Result<()> {
    let start = Instant::now();
    let (archive, _) = read_all(input)?;
    let info = sl::inspect(&archive).map_err(|e| anyhow!(e))?;
    let data = decode(ctx, &archive, false)?;
    let secs = start.elapsed().as_secs_f64();
    if let Some(orig_path) = &ctx.args.lossy.against {
        let orig = std::fs::read(orig_path)
            .map_err(|e| anyhow!("--against {}: {e}", orig_path.display()))?;
        let s = sl::compare(info.dtype, &orig, &data, &info.fills)
            .map_err(|e| anyhow!("--against {}: {e}", orig_path.display()))?;
        let ok = s.max_error <= info.bound && s.specials_exact;
        eprintln!(
            "{}: {} (max error {:.6e}, bound {:.6e}, PSNR {:.2} dB, {} valid values, special values {})",
            display_name(input),
            if ok { "OK" } else { "BOUND EXCEEDED" },
            s.max_error,
            info.bound,
            s.psnr,
            s.valid,
            if s.specials_exact { "exact" } else { "changed" }
        );
        if !ok {
            bail!("the restored array is not within the bound of --against");
        }
    } else if ctx.verbosity() >= 1 {
        eprintln!(
            "{}: OK ({} bytes, {})",
            display_name(input),
            data.len(),
            human_rate(data.len() as u64, secs)
        );
    }
    Ok(())
}

fn list(_ctx: &Ctx, input: &Path) -> Result<()> {
    let (archive, _) = read_all(input)?;
    let info = sl::inspect(&archive).map_err(|e| anyhow!(e))?;
    let shape: Vec<String> = info.shape.iter().map(|d| d.to_string()).collect();
    let fills: Vec<String> = info
        .fills
        .iter()
        .map(|&f| format!("{:e}", info.dtype.from_bits(f)))
        .collect();
    writeln!(
        std::io::stdout().lock(),
        "{:>6} {:>14} {:>14} {:>8}  {:<16} {}  [{}, bound {:.6e}, {} {}{}{}{}]",
        "-",
        archive.len(),
        info.output_len,
        format!(
            "{:.3}",
            info.output_len as f64 / archive.len().max(1) as f64
        ),
        format!(
            "lossy/{}{}",
            info.predictor.name(),
            if sl::model::tables(info.revision) {
                "/fast"
            } else {
                ""
            }
        ),
        display_name(input),
        info.mode.describe(),
        info.bound,
        info.dtype.name(),
        shape.join("x"),
        if info.container.is_empty() {
            ""
        } else {
            ", .npy"
        },
        if fills.is_empty() {
            String::new()
        } else {
            format!(", fill {}", fills.join(" "))
        },
        match info.grid {
            Some((o, g)) => format!(", grid {g:e} + {o:e}"),
            None => String::new(),
        }
    )?;
    Ok(())
}
