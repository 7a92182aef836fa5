//! The results as CSV (RFC 4180): one row per file and compressor, then one
//! `TOTAL` row per compressor.
//!
//! Sizes in bytes, times in seconds (to the microsecond), speeds in MB/s (10^6 bytes of original
//! data per wall-clock second), memory in KiB; an empty cell is a value that
//! was not measured (the run failed).

use super::row::{Row, totals};
use std::fmt::Write;

/// The header, in column order.
pub const COLUMNS: [&str; 15] = [
    "file",
    "bytes",
    "compressor",
    "setting",
    "compressed_bytes",
    "ratio",
    "compress_s",
    "compress_cpu_s",
    "decompress_s",
    "decompress_cpu_s",
    "compress_MBps",
    "decompress_MBps",
    "peak_rss_compress_kb",
    "peak_rss_decompress_kb",
    "verified",
];

/// The CSV text of `rows` followed by their totals.
pub fn render(rows: &[Row]) -> String {
    let mut s = COLUMNS.join(",");
    s.push('\n');
    for r in rows.iter().chain(&totals(rows)) {
        let cells = [
            quote(&r.file),
            r.bytes.to_string(),
            quote(&r.compressor),
            quote(&r.setting),
            r.compressed_bytes.map_or(String::new(), |b| b.to_string()),
            num(r.ratio(), 4),
            num(r.compress.wall_s, 6),
            num(r.compress.cpu_s, 6),
            num(r.decompress.wall_s, 6),
            num(r.decompress.cpu_s, 6),
            num(r.compress_mbps(), 6),
            num(r.decompress_mbps(), 6),
            r.compress
                .peak_rss_kb
                .map_or(String::new(), |k| k.to_string()),
            r.decompress
                .peak_rss_kb
                .map_or(String::new(), |k| k.to_string()),
            r.verified.to_string(),
        ];
        let _ = writeln!(s, "{}", cells.join(","));
    }
    s
}

/// A number with `digits` decimals; empty when unknown.
fn num(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        String::new()
    }
}

/// A text cell, quoted when it holds a comma, a quote or a line break.
fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::super::row::tests::row;
    use super::*;

    #[test]
    fn rows_then_totals() {
        let rows = [
            row("a,b", "x", 1000, Some(500)),
            row("c", "x", 1000, Some(250)),
        ];
        let text = render(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0], COLUMNS.join(","));
        assert!(lines[1].starts_with("\"a,b\",1000,x,-1,500,2.0000,"));
        assert!(lines[3].starts_with("TOTAL,2000,x,-1,750,2.6667,2.000000,1.000000,"));
        assert!(lines[3].ends_with(",100,50,true"));
    }

    #[test]
    fn unknown_values_are_empty() {
        let text = render(&[row("a", "x", 1000, None)]);
        let line = text.lines().nth(1).unwrap();
        assert!(line.starts_with("a,1000,x,-1,,,"));
        assert!(line.ends_with(",false"));
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
