//! One measurement: a compressor compresses a file and restores it, `repeat`
//! times each, and the restored bytes are compared with the original.
//!
//! Times are the best (smallest) of the repeats, wall and CPU separately;
//! peak memory is the largest. Every run starts from a clean folder state
//! (the archive, or the restored file, is removed first), because zpaq adds
//! to an existing archive and refuses to overwrite an extracted file.

use super::measure::{Measured, measure};
use super::row::{Row, Sample, TransformTime};
use super::tools::Tool;
use anyhow::{Context, Result, bail};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// Measures `tool` on `input` (`bytes` long, named `file` in the results).
///
/// A run that fails (the program exits non-zero) is an error; a round trip
/// that restores different bytes is a row with `verified: false`.
pub fn run(tool: &Tool, input: &Path, file: &str, bytes: u64, repeat: u32) -> Result<Row> {
    let work = tempfile::Builder::new()
        .prefix("sep-bench-")
        .tempdir()
        .context("cannot create a temporary folder")?;
    let plan = tool.plan(input, work.path())?;
    let mut compress = Best::default();
    let mut size = None;
    let mut transform_time: Option<TransformTime> = None;
    for _ in 0..repeat.max(1) {
        remove(&plan.archive)?;
        if let Some(p) = &plan.stats {
            remove(p)?;
        }
        compress.add(measure(&plan.compress).context("compress")?);
        if let Some(p) = &plan.stats {
            let t = read_transform_time(p)?;
            transform_time = Some(transform_time.map_or(t, |b| b.best(t)));
        }
        let n = std::fs::metadata(&plan.archive)
            .with_context(|| format!("no archive at {:?}", plan.archive))?
            .len();
        if size.is_some_and(|s| s != n) {
            bail!(
                "compressed size changed between repeats ({} then {n})",
                size.unwrap_or(0)
            );
        }
        size = Some(n);
    }
    let mut decompress = Best::default();
    for _ in 0..repeat.max(1) {
        remove(&plan.restored)?;
        decompress.add(measure(&plan.decompress).context("decompress")?);
    }
    let verified = same_contents(input, &plan.restored)?;
    Ok(Row {
        file: file.into(),
        bytes,
        compressor: tool.compressor.clone(),
        setting: tool.setting.clone(),
        label: tool.label(),
        compressed_bytes: size,
        compress: compress.sample(),
        decompress: decompress.sample(),
        verified,
        transform_time,
    })
}

/// The one line of [`sep::EncodeStats`] a sep compression wrote to `path`.
fn read_transform_time(path: &Path) -> Result<TransformTime> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("sep wrote no statistics to {}", path.display()))?;
    TransformTime::parse(&text)
        .with_context(|| format!("bad statistics line {text:?} in {}", path.display()))
}

/// Best of several runs: least times, largest memory.
#[derive(Debug, Default)]
struct Best(Option<Sample>);

impl Best {
    fn add(&mut self, m: Measured) {
        self.0 = Some(match self.0 {
            None => Sample {
                wall_s: m.wall_s,
                cpu_s: m.cpu_s,
                peak_rss_kb: Some(m.peak_rss_kb),
            },
            Some(s) => Sample {
                wall_s: s.wall_s.min(m.wall_s),
                cpu_s: s.cpu_s.min(m.cpu_s),
                peak_rss_kb: s.peak_rss_kb.max(Some(m.peak_rss_kb)),
            },
        });
    }

    fn sample(&self) -> Sample {
        self.0.unwrap_or(Sample::UNKNOWN)
    }
}

fn remove(p: &Path) -> Result<()> {
    match std::fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {p:?}"))
        }
        _ => Ok(()),
    }
}

/// Whether two files hold the same bytes; a missing second file is `false`.
pub fn same_contents(a: &Path, b: &Path) -> Result<bool> {
    let open = |p: &Path| File::open(p).map(|f| BufReader::with_capacity(1 << 16, f));
    let mut x = open(a).with_context(|| format!("cannot read {}", a.display()))?;
    let Ok(mut y) = open(b) else {
        return Ok(false);
    };
    let (mut bx, mut by) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = read_full(&mut x, &mut bx)?;
        let m = read_full(&mut y, &mut by)?;
        if n != m || bx[..n] != by[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Fills `buf` unless the end comes first; returns the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_contents() {
        let d = tempfile::tempdir().unwrap();
        let w = |n: &str, b: &[u8]| {
            let p = d.path().join(n);
            std::fs::write(&p, b).unwrap();
            p
        };
        let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7) as u8).collect();
        let mut other = big.clone();
        other[150_000] ^= 1;
        let (a, b, c, e) = (w("a", &big), w("b", &big), w("c", &other), w("e", b""));
        assert!(same_contents(&a, &b).unwrap());
        assert!(!same_contents(&a, &c).unwrap());
        assert!(!same_contents(&a, &e).unwrap());
        assert!(!same_contents(&a, &d.path().join("missing")).unwrap());
        assert!(same_contents(&e, &e).unwrap());
    }

    #[test]
    fn best_takes_least_time_and_most_memory() {
        let mut b = Best::default();
        assert!(b.sample().wall_s.is_nan());
        b.add(Measured {
            wall_s: 2.0,
            cpu_s: 1.0,
            peak_rss_kb: 10,
        });
        b.add(Measured {
            wall_s: 1.0,
            cpu_s: 1.5,
            peak_rss_kb: 20,
        });
        let s = b.sample();
        assert_eq!((s.wall_s, s.cpu_s, s.peak_rss_kb), (1.0, 1.0, Some(20)));
    }
}
