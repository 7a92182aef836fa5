//! `sep bench --lossy` (issue 21): sep's lossy mode against SZ3 (`pysz`) and
//! ZFP fixed-accuracy (`zfpy`), both from PyPI, at the same absolute bound:
//! ratio, max error and PSNR over the valid values (fill values, NaN and
//! infinities left out), compress and decompress speed, and a
//! rate-distortion plot (bits per value against PSNR) per file.
//!
//! ```text
//! sep bench --lossy FILE... [--set LIST] [--bounds rel=1e-3,rel=1e-4] [--level fast] [--out DIR] [--python PY]
//! ```
//!
//! Per file it also prints the rate-distortion margins ([`rd_margins`]): sep's
//! PSNR minus each peer's at the same bits per value, interpolated along the
//! other's curve, flagged `BELOW` where sep's curve lies under a peer's.
//!
//! A file's dtype and shape come from its `.npy` header or its name
//! (`NAME.DxHxW.f32`, `NAME.f64` for a series). sep runs in this process;
//! the peers run in `python3` with the script [`PEER_SCRIPT`]. A peer that
//! is not installed is reported as such and the rest still runs.

use sep::lossy::{self as sl, Dtype, Mode};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The Python side: reads the array, runs SZ3 (ABS) and ZFP (tolerance) at
/// the bound, prints `tool bytes max_error psnr compress_s decompress_s`.
pub const PEER_SCRIPT: &str = r#"
import sys, time, numpy as np
path, dtype, shape, bound, skip = sys.argv[1], sys.argv[2], tuple(int(d) for d in sys.argv[3].split('x')), float(sys.argv[4]), int(sys.argv[5])
fills = [float(f) for f in sys.argv[6:]]
x = np.fromfile(path, dtype=np.float32 if dtype == 'f32' else np.float64, offset=skip).reshape(shape)
valid = np.isfinite(x)
for f in fills:
    valid &= (x != np.array(f, dtype=x.dtype))
xv = x[valid].astype(np.float64)
rng = xv.max() - xv.min() if xv.size else 0.0
def stats(name, size, y, tc, td):
    yv = y[valid].astype(np.float64)
    err = np.abs(xv - yv)
    mx = float(np.nanmax(np.where(np.isnan(err), np.inf, err))) if err.size else 0.0
    mse = float((err ** 2).mean()) if err.size else 0.0
    psnr = 20 * np.log10(rng) - 10 * np.log10(mse) if mse > 0 else float('inf')
    print(f"{name} {size} {mx:.9e} {psnr:.4f} {tc:.6f} {td:.6f}", flush=True)
try:
    import pysz
    c = pysz.szConfig(); c.errorBoundMode = pysz.szErrorBoundMode.ABS; c.absErrorBound = bound
    t = time.perf_counter(); comp, _ = pysz.sz.compress(np.ascontiguousarray(x), c); tc = time.perf_counter() - t
    t = time.perf_counter(); y, _ = pysz.sz.decompress(comp, x.dtype, x.shape); td = time.perf_counter() - t
    stats("sz3", comp.nbytes, y, tc, td)
except Exception as e:
    print("sz3 unavailable", str(e).replace('\n', ' '), flush=True)
try:
    import zfpy
    t = time.perf_counter(); comp = zfpy.compress_numpy(np.ascontiguousarray(x), tolerance=bound); tc = time.perf_counter() - t
    t = time.perf_counter(); y = zfpy.decompress_numpy(comp); td = time.perf_counter() - t
    stats("zfp", len(comp), y, tc, td)
except Exception as e:
    print("zfp unavailable", str(e).replace('\n', ' '), flush=True)
"#;

struct Opts {
    files: Vec<PathBuf>,
    bounds: Vec<Mode>,
    out: Option<PathBuf>,
    python: String,
    fast: bool,
}

fn parse(argv: &[OsString]) -> Result<Opts, String> {
    let mut o = Opts {
        files: Vec::new(),
        bounds: vec![Mode::Rel(1e-2), Mode::Rel(1e-3), Mode::Rel(1e-4)],
        out: None,
        python: "python3".into(),
        fast: false,
    };
    let mut it = argv.iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--lossy" => {}
            "--bounds" => {
                o.bounds = value("--bounds")?
                    .split(',')
                    .map(|m| sl::Mode::parse(m.trim()).map_err(|e| e.to_string()))
                    .collect::<Result<_, _>>()?;
            }
            "--out" => o.out = Some(PathBuf::from(value("--out")?)),
            "--python" => o.python = value("--python")?,
            "--level" => {
                o.fast = match value("--level")?.as_str() {
                    "fast" => true,
                    "default" => false,
                    l => return Err(format!("--level {l}: use default or fast")),
                }
            }
            "--set" => {
                let list = PathBuf::from(value("--set")?);
                let text = std::fs::read_to_string(&list)
                    .map_err(|e| format!("--set {}: {e}", list.display()))?;
                let files = list
                    .parent()
                    .and_then(Path::parent)
                    .map(|p| p.join("files"))
                    .unwrap_or_default();
                for l in text.lines().map(str::trim) {
                    if !l.is_empty() && !l.starts_with('#') {
                        o.files.push(files.join(l));
                    }
                }
            }
            s if s.starts_with('-') => {
                return Err(format!("sep bench --lossy: unknown option {s}"));
            }
            f => o.files.push(PathBuf::from(f)),
        }
    }
    if o.files.is_empty() {
        return Err("sep bench --lossy: no files (give FILE... or --set LIST)".into());
    }
    Ok(o)
}

/// dtype and shape of a raw array from its name: `NAME.DxHxW.f32`, or the
/// whole file as a series for a name ending in `.f32`/`.f64` (or starting
/// with `float32`/`float64`).
pub fn geometry_from_name(name: &str, len: usize) -> Option<(Dtype, Vec<usize>)> {
    let dtype = if name.ends_with(".f64") || name.starts_with("float64") {
        Dtype::F64
    } else if name.ends_with(".f32") || name.starts_with("float32") {
        Dtype::F32
    } else {
        return None;
    };
    let shape = name
        .split('.')
        .find(|p| p.contains('x') && p.split('x').all(|d| d.parse::<usize>().is_ok()))
        .map(|p| p.split('x').filter_map(|d| d.parse().ok()).collect())
        .unwrap_or_else(|| vec![len / dtype.size()]);
    Some((dtype, shape))
}

/// One measured point.
struct Point {
    tool: String,
    bound: String,
    bytes: u64,
    max_error: f64,
    psnr: f64,
    c_mbs: f64,
    d_mbs: f64,
    within: bool,
}

/// Runs `sep bench --lossy`.
pub fn main(argv: &[OsString]) -> ExitCode {
    let o = match parse(argv) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sep: {e}");
            return ExitCode::from(2);
        }
    };
    let script = std::env::temp_dir().join(format!("sep-lossy-peers-{}.py", std::process::id()));
    if let Err(e) = std::fs::write(&script, PEER_SCRIPT) {
        eprintln!("sep: cannot write the peer script: {e}");
        return ExitCode::from(1);
    }
    let mut ok = true;
    let mut totals: std::collections::BTreeMap<(String, String), (u64, u64)> = Default::default();
    let mut csv = String::from(
        "file,bound,tool,bytes,ratio,bits_per_value,max_error,psnr,compress_mb_s,decompress_mb_s,within_bound\n",
    );
    println!(
        "{:<40} {:<10} {:<5} {:>10} {:>8} {:>11} {:>11} {:>7} {:>8} {:>8}",
        "file",
        "bound",
        "tool",
        "bytes",
        "ratio",
        "max error",
        "abs bound",
        "PSNR",
        "c MB/s",
        "d MB/s"
    );
    for file in &o.files {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match bench_file(&o, &script, file, &name) {
            Ok(points) => {
                let data_len = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
                let mut rd: Vec<(String, f64, f64)> = Vec::new();
                for p in &points {
                    let n = value_count(file, &name, data_len);
                    let bpv = p.bytes as f64 * 8.0 / n.max(1) as f64;
                    println!(
                        "{:<40} {:<10} {:<5} {:>10} {:>8.2} {:>11.4e} {:>11} {:>7.2} {:>8.1} {:>8.1}{}",
                        name,
                        p.bound,
                        p.tool,
                        p.bytes,
                        data_len as f64 / p.bytes.max(1) as f64,
                        p.max_error,
                        "",
                        p.psnr,
                        p.c_mbs,
                        p.d_mbs,
                        if p.within { "" } else { "  BOUND EXCEEDED" }
                    );
                    let _ = writeln!(
                        csv,
                        "{name},{},{},{},{:.4},{:.4},{:e},{:.4},{:.2},{:.2},{}",
                        p.bound,
                        p.tool,
                        p.bytes,
                        data_len as f64 / p.bytes.max(1) as f64,
                        bpv,
                        p.max_error,
                        p.psnr,
                        p.c_mbs,
                        p.d_mbs,
                        p.within
                    );
                    let t = totals.entry((p.bound.clone(), p.tool.clone())).or_default();
                    t.0 += p.bytes;
                    t.1 += data_len;
                    rd.push((p.tool.clone(), bpv, p.psnr));
                }
                for (peer, min, at) in rd_margins(&rd) {
                    println!(
                        "{:<40} rd margin over {peer}: {min:+.2} dB at {at:.3} bits per value{}",
                        name,
                        if min < 0.0 { "  BELOW" } else { "" }
                    );
                }
                if let Some(dir) = &o.out {
                    let _ = std::fs::create_dir_all(dir);
                    let _ = std::fs::write(dir.join(format!("{name}.rd.svg")), rd_svg(&name, &rd));
                }
            }
            Err(e) => {
                eprintln!("sep: {name}: {e}");
                ok = false;
            }
        }
    }
    let _ = std::fs::remove_file(&script);
    println!();
    println!("totals (bytes over all files; sep / peer at the same bound):");
    let bounds: Vec<String> = o.bounds.iter().map(|m| m.describe()).collect();
    for b in &bounds {
        let get = |t: &str| totals.get(&(b.clone(), t.to_string())).copied();
        if let Some((sep_b, raw)) = get("sep") {
            let mut line = format!(
                "  {b:<10} sep {sep_b} bytes, ratio {:.2}",
                raw as f64 / sep_b.max(1) as f64
            );
            for peer in ["sz3", "zfp"] {
                if let Some((pb, _)) = get(peer) {
                    let _ = write!(
                        line,
                        "; {peer} {pb} bytes, sep/{peer} = {:.3}",
                        sep_b as f64 / pb.max(1) as f64
                    );
                }
            }
            println!("{line}");
        }
    }
    if let Some(dir) = &o.out {
        let _ = std::fs::create_dir_all(dir);
        if let Err(e) = std::fs::write(dir.join("lossy.csv"), csv) {
            eprintln!("sep: {}: {e}", dir.display());
            ok = false;
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Number of values in a file.
fn value_count(file: &Path, name: &str, len: u64) -> u64 {
    if let Ok(b) = std::fs::read(file)
        && sl::npy::is_npy(&b)
        && let Ok(n) = sl::npy::parse(&b)
    {
        return n.shape.iter().product::<usize>() as u64;
    }
    let size = geometry_from_name(name, len as usize).map_or(4, |(d, _)| d.size());
    len / size as u64
}

fn bench_file(o: &Opts, script: &Path, file: &Path, name: &str) -> Result<Vec<Point>, String> {
    let data = std::fs::read(file).map_err(|e| e.to_string())?;
    let (dtype, shape, skip) = if sl::npy::is_npy(&data) {
        let n = sl::npy::parse(&data).map_err(|e| e.to_string())?;
        (n.dtype, n.shape, n.header.len())
    } else {
        let (d, s) = geometry_from_name(name, data.len())
            .ok_or("no dtype: name it NAME.DxHxW.f32 / .f64, or give an .npy")?;
        (d, s, 0)
    };
    let mut points = Vec::new();
    for &mode in &o.bounds {
        let opts = sl::Options {
            mode,
            fill: None,
            predictor: None,
            fast: o.fast,
            ..sl::Options::default()
        };
        let t = Instant::now();
        let archive = if skip > 0 {
            sl::compress_npy(&data, &opts)
        } else {
            sl::compress_raw(&data, dtype, &shape, &opts)
        }
        .map_err(|e| e.to_string())?;
        let tc = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let back = sl::decompress(&archive, u64::MAX).map_err(|e| e.to_string())?;
        let td = t.elapsed().as_secs_f64();
        let info = sl::inspect(&archive).map_err(|e| e.to_string())?;
        let s = sl::compare(dtype, &data, &back, &info.fills).map_err(|e| e.to_string())?;
        let mb = (data.len() - skip) as f64 / 1e6;
        points.push(Point {
            tool: "sep".into(),
            bound: mode.describe(),
            bytes: archive.len() as u64,
            max_error: s.max_error,
            psnr: s.psnr,
            c_mbs: mb / tc,
            d_mbs: mb / td,
            within: s.max_error <= info.bound && s.specials_exact,
        });
        let shape_s: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        let mut cmd = std::process::Command::new(&o.python);
        cmd.arg(script)
            .arg(file)
            .arg(dtype.name())
            .arg(shape_s.join("x"))
            .arg(format!("{:e}", info.bound))
            .arg(skip.to_string());
        for &f in &info.fills {
            cmd.arg(format!("{:e}", dtype.from_bits(f)));
        }
        match cmd.output() {
            Ok(out) => {
                for line in String::from_utf8_lossy(&out.stdout).lines() {
                    let f: Vec<&str> = line.split_whitespace().collect();
                    if f.len() == 6 && f[1] != "unavailable" {
                        let num = |i: usize| f[i].parse::<f64>().unwrap_or(f64::NAN);
                        points.push(Point {
                            tool: f[0].into(),
                            bound: mode.describe(),
                            bytes: num(1) as u64,
                            max_error: num(2),
                            psnr: num(3),
                            c_mbs: mb / num(4),
                            d_mbs: mb / num(5),
                            within: num(2) <= info.bound,
                        });
                    } else if !line.is_empty() {
                        eprintln!("sep: {name}: {line}");
                    }
                }
                if !out.status.success() {
                    eprintln!(
                        "sep: {name}: {} failed: {}",
                        o.python,
                        String::from_utf8_lossy(&out.stderr)
                            .lines()
                            .last()
                            .unwrap_or("")
                    );
                }
            }
            Err(e) => eprintln!("sep: {name}: cannot run {}: {e} (peers skipped)", o.python),
        }
    }
    Ok(points)
}

/// PSNR counted as at most 200 dB (a lossless point is infinite).
const PSNR_CAP: f64 = 200.0;

/// The PSNR of the curve `line` (sorted by bits per value) at `x`, linear
/// between its points; `None` outside its range.
fn curve_at(line: &[(f64, f64)], x: f64) -> Option<f64> {
    let first = line.first()?;
    let last = line.last()?;
    if x < first.0 || x > last.0 {
        return None;
    }
    for w in line.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if x >= x0 && x <= x1 {
            return Some(if x1 > x0 {
                y0 + (y1 - y0) * (x - x0) / (x1 - x0)
            } else {
                y0.max(y1)
            });
        }
    }
    Some(first.1)
}

/// Per peer: the smallest margin of sep's rate-distortion curve over the
/// peer's (sep's PSNR minus the peer's at the same bits per value, taken at
/// every point of either curve that lies within the other's range of bits
/// per value; PSNR capped at [`PSNR_CAP`]) and the bits per value where it
/// occurs. Peers with no overlap are left out.
pub fn rd_margins(pts: &[(String, f64, f64)]) -> Vec<(String, f64, f64)> {
    let line = |tool: &str| {
        let mut l: Vec<(f64, f64)> = pts
            .iter()
            .filter(|p| p.0 == tool && p.1.is_finite() && !p.2.is_nan())
            .map(|p| (p.1, p.2.min(PSNR_CAP)))
            .collect();
        l.sort_by(|a, b| a.0.total_cmp(&b.0));
        l
    };
    let sep = line("sep");
    let mut out = Vec::new();
    for peer in ["sz3", "zfp"] {
        let other = line(peer);
        let mut worst: Option<(f64, f64)> = None;
        let mut note = |m: f64, x: f64| {
            if worst.is_none_or(|(w, _)| m < w) {
                worst = Some((m, x));
            }
        };
        for &(x, y) in &other {
            if let Some(s) = curve_at(&sep, x) {
                note(s - y, x);
            }
        }
        for &(x, y) in &sep {
            if let Some(p) = curve_at(&other, x) {
                note(y - p, x);
            }
        }
        if let Some((m, x)) = worst {
            out.push((peer.to_string(), m, x));
        }
    }
    out
}

/// A small SVG: bits per value (x) against PSNR (y), one line per tool.
fn rd_svg(name: &str, pts: &[(String, f64, f64)]) -> String {
    let finite: Vec<&(String, f64, f64)> = pts
        .iter()
        .filter(|p| p.1.is_finite() && p.2.is_finite())
        .collect();
    let (w, h, m) = (640.0, 420.0, 50.0);
    let xmax = finite.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.1;
    let ymin = finite
        .iter()
        .map(|p| p.2)
        .fold(f64::INFINITY, f64::min)
        .min(1e9)
        - 5.0;
    let ymax = finite
        .iter()
        .map(|p| p.2)
        .fold(f64::NEG_INFINITY, f64::max)
        .max(ymin + 1.0)
        + 5.0;
    let sx = |x: f64| m + x / xmax * (w - 2.0 * m);
    let sy = |y: f64| h - m - (y - ymin) / (ymax - ymin) * (h - 2.0 * m);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{m}\" y=\"20\" font-size=\"14\">{name}: PSNR (dB) against bits per value</text>\n<line x1=\"{m}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n<line x1=\"{m}\" y1=\"{m}\" x2=\"{m}\" y2=\"{}\" stroke=\"black\"/>\n<text x=\"{}\" y=\"{}\" font-size=\"11\">{xmax:.2} bits</text>\n<text x=\"5\" y=\"{m}\" font-size=\"11\">{ymax:.0}</text>\n<text x=\"5\" y=\"{}\" font-size=\"11\">{ymin:.0}</text>\n",
        h - m,
        w - m,
        h - m,
        h - m,
        w - m - 40.0,
        h - m + 15.0,
        h - m
    );
    for (i, (tool, color)) in [("sep", "#d62728"), ("sz3", "#1f77b4"), ("zfp", "#2ca02c")]
        .iter()
        .enumerate()
    {
        let mut line: Vec<(f64, f64)> = finite
            .iter()
            .filter(|p| p.0 == *tool)
            .map(|p| (p.1, p.2))
            .collect();
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        if line.is_empty() {
            continue;
        }
        let path: Vec<String> = line
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
            path.join(" ")
        );
        for &(x, y) in &line {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>",
                sx(x),
                sy(y)
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"{color}\">{tool}</text>",
            w - m - 40.0,
            m + 15.0 * i as f64
        );
    }
    s.push_str("</svg>\n");
    s
}
