//! The results as tables, for the terminal and as Markdown: compressed sizes
//! per file and compressor ([`sizes`], the smallest per file marked), then
//! one line per compressor with its totals ([`summary`]).
//!
//! Both are a [`Grid`] of cells that renders as aligned text
//! ([`Grid::text`], best cells marked `*`) or as a Markdown table
//! ([`Grid::markdown`], best cells in bold).

use super::row::{Row, totals};

/// A table of text cells; the first `left` columns are left-aligned, the
/// rest right-aligned.
#[derive(Debug, Clone, Default)]
pub struct Grid {
    left: usize,
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

#[derive(Debug, Clone)]
struct Cell {
    text: String,
    best: bool,
}

impl Cell {
    fn new(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            best: false,
        }
    }
}

impl Grid {
    /// Aligned plain text.
    pub fn text(&self) -> String {
        let cols = self.header.len();
        let mut width = vec![0; cols];
        let mark = |c: &Cell| if c.best { "*" } else { " " };
        for (i, h) in self.header.iter().enumerate() {
            width[i] = h.chars().count();
        }
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                width[i] = width[i].max(c.text.chars().count());
            }
        }
        let mut out = String::new();
        let mut line = |cells: Vec<(String, &str)>| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, (t, m))| {
                    if i < self.left {
                        format!("{t:<w$}", w = width[i])
                    } else {
                        format!("{t:>w$}{m}", w = width[i])
                    }
                })
                .collect();
            out.push_str(parts.join("  ").trim_end());
            out.push('\n');
        };
        line(self.header.iter().map(|h| (h.clone(), " ")).collect());
        for r in &self.rows {
            line(r.iter().map(|c| (c.text.clone(), mark(c))).collect());
        }
        out
    }

    /// A Markdown table.
    pub fn markdown(&self) -> String {
        let mut out = format!("| {} |\n", self.header.join(" | "));
        let align: Vec<&str> = (0..self.header.len())
            .map(|i| if i < self.left { "---" } else { "---:" })
            .collect();
        out.push_str(&format!("|{}|\n", align.join("|")));
        for r in &self.rows {
            let cells: Vec<String> = r
                .iter()
                .map(|c| {
                    if c.best {
                        format!("**{}**", c.text)
                    } else {
                        c.text.clone()
                    }
                })
                .collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }
}

/// Compressed bytes per file (rows) and compressor (columns), the smallest
/// of each row marked, then the totals and ratios.
pub fn sizes(rows: &[Row]) -> Grid {
    let labels: Vec<String> = totals(rows).into_iter().map(|t| t.label).collect();
    let mut files: Vec<(&str, u64)> = Vec::new();
    for r in rows {
        if !files.iter().any(|(f, _)| *f == r.file) {
            files.push((&r.file, r.bytes));
        }
    }
    let mut grid = Grid {
        left: 1,
        header: ["file", "bytes"]
            .into_iter()
            .map(String::from)
            .chain(labels.iter().cloned())
            .collect(),
        rows: Vec::new(),
    };
    let find = |file: &str, label: &str| rows.iter().find(|r| r.file == file && r.label == label);
    let sizes_row = |name: String, bytes: u64, sizes: Vec<Option<u64>>| -> Vec<Cell> {
        let best = sizes.iter().flatten().min().copied();
        let mut cells = vec![Cell::new(name), Cell::new(thousands(bytes))];
        cells.extend(sizes.iter().map(|s| Cell {
            text: s.map_or("-".into(), thousands),
            best: s.is_some() && *s == best && sizes.len() > 1,
        }));
        cells
    };
    for (file, bytes) in &files {
        let sizes = labels
            .iter()
            .map(|l| find(file, l).and_then(|r| r.compressed_bytes))
            .collect();
        grid.rows.push(sizes_row(file.to_string(), *bytes, sizes));
    }
    let t = totals(rows);
    let raw = files.iter().map(|(_, b)| b).sum();
    grid.rows.push(sizes_row(
        "total".into(),
        raw,
        t.iter().map(|r| r.compressed_bytes).collect(),
    ));
    let mut ratio = vec![Cell::new("ratio"), Cell::new("")];
    ratio.extend(t.iter().map(|r| Cell::new(fixed(r.ratio(), 3))));
    grid.rows.push(ratio);
    grid
}

/// One line per compressor: setting, totals, ratio, speeds (wall and CPU),
/// peak memory and the round-trip check.
pub fn summary(rows: &[Row]) -> Grid {
    let header = [
        "compressor",
        "setting",
        "compressed",
        "ratio",
        "comp MB/s",
        "comp MB/s cpu",
        "decomp MB/s",
        "decomp MB/s cpu",
        "comp RSS MiB",
        "decomp RSS MiB",
        "verified",
    ];
    let mib = |k: Option<u64>| k.map_or("-".into(), |k| fixed(k as f64 / 1024.0, 1));
    let t = totals(rows);
    let best_ratio = t.iter().map(Row::ratio).fold(f64::NAN, f64::max);
    let rows = t
        .iter()
        .map(|r| {
            vec![
                Cell::new(r.label.clone()),
                Cell::new(r.setting.clone()),
                Cell::new(r.compressed_bytes.map_or("-".into(), thousands)),
                Cell {
                    text: fixed(r.ratio(), 3),
                    best: r.ratio() == best_ratio && t.len() > 1,
                },
                Cell::new(speed(r.compress_mbps())),
                Cell::new(speed(super::row::mbps(r.bytes, r.compress.cpu_s))),
                Cell::new(speed(r.decompress_mbps())),
                Cell::new(speed(super::row::mbps(r.bytes, r.decompress.cpu_s))),
                Cell::new(mib(r.compress.peak_rss_kb)),
                Cell::new(mib(r.decompress.peak_rss_kb)),
                Cell::new(if r.verified { "yes" } else { "NO" }),
            ]
        })
        .collect();
    Grid {
        left: 2,
        header: header.into_iter().map(String::from).collect(),
        rows,
    }
}

/// sep's time on detection and transforms (issue 17), one line per file
/// and sep setting, then a total per setting; `None` when no row has it.
/// The share is detection plus transforms over the compression's CPU time
/// (user + sys of the whole process, as in the other tables).
pub fn transforms(rows: &[Row]) -> Option<Grid> {
    let header = [
        "file",
        "setting",
        "segmented blocks",
        "comp cpu s",
        "detect ms",
        "transforms ms",
        "coding transformed s",
        "detect+transforms % cpu",
    ];
    let t = totals(rows);
    let lines: Vec<Vec<Cell>> = rows
        .iter()
        .chain(&t)
        .filter_map(|r| {
            let x = r.transform_time?;
            Some(vec![
                Cell::new(r.file.clone()),
                Cell::new(r.setting.clone()),
                Cell::new(format!("{}/{}", x.segmented_blocks, x.blocks)),
                Cell::new(fixed(r.compress.cpu_s, 2)),
                Cell::new(fixed(x.detect_s * 1e3, 2)),
                Cell::new(fixed(x.transforms_s * 1e3, 2)),
                Cell::new(fixed(x.segmented_coding_s, 3)),
                Cell::new(fixed(
                    100.0 * (x.detect_s + x.transforms_s) / r.compress.cpu_s,
                    2,
                )),
            ])
        })
        .collect();
    (!lines.is_empty()).then(|| Grid {
        left: 2,
        header: header.into_iter().map(String::from).collect(),
        rows: lines,
    })
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut groups = Vec::new();
    let mut end = digits.len();
    while end > 3 {
        groups.push(&digits[end - 3..end]);
        end -= 3;
    }
    groups.push(&digits[..end]);
    groups.reverse();
    groups.join(",")
}

/// A speed with three significant digits (at most four decimals): `123`,
/// `12.3`, `1.23`, `0.123`, `0.0123`; `-` when unknown.
pub fn speed(x: f64) -> String {
    let digits = match x.abs() {
        a if a >= 99.95 => 0,
        a if a >= 9.995 => 1,
        a if a >= 0.9995 => 2,
        a if a >= 0.09995 => 3,
        _ => 4,
    };
    fixed(x, digits)
}

/// A number with `digits` decimals, `-` when unknown.
fn fixed(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "-".into()
    }
}

#[cfg(test)]
mod tests {
    use super::super::row::tests::row;
    use super::*;

    #[test]
    fn groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(13_472_740), "13,472,740");
    }

    #[test]
    fn speeds_keep_three_digits() {
        let got: Vec<String> = [1234.5, 12.34, 1.234, 0.1234, 0.01234, 0.0001, f64::NAN]
            .into_iter()
            .map(speed)
            .collect();
        assert_eq!(
            got,
            ["1234", "12.3", "1.23", "0.123", "0.0123", "0.0001", "-"]
        );
        assert_eq!(speed(9.999), "10.0");
    }

    #[test]
    fn sizes_mark_the_smallest() {
        let rows = [
            row("a", "x", 1000, Some(500)),
            row("a", "y", 1000, Some(400)),
            row("b", "x", 2000, Some(100)),
            row("b", "y", 2000, None),
        ];
        let md = sizes(&rows).markdown();
        assert!(md.contains("| a | 1,000 | 500 | **400** |"), "{md}");
        assert!(md.contains("| b | 2,000 | **100** | - |"), "{md}");
        assert!(md.contains("| total | 3,000 | **600** | - |"), "{md}");
        assert!(md.contains("| ratio |  | 5.000 | - |"), "{md}");
        let text = sizes(&rows).text();
        assert!(text.contains("400*"), "{text}");
    }

    #[test]
    fn transform_times_per_file_and_total() {
        use super::super::row::TransformTime;
        let mut a = row("a", "sep default", 1000, Some(500));
        let t = TransformTime::parse("0.001 0.002 0.25 0.4 1 1").unwrap();
        a.transform_time = Some(t);
        let mut b = row("b", "sep default", 1000, Some(500));
        b.transform_time = Some(TransformTime::parse("0.003 0 0 0.4 2 0").unwrap());
        let peer = row("a", "xz", 1000, Some(600));
        assert!(transforms(std::slice::from_ref(&peer)).is_none());
        let text = transforms(&[a, b, peer]).unwrap().text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        // 3 ms of 0.5 s CPU: 0.60%; the total sums both files.
        assert!(lines[1].starts_with("a "), "{text}");
        assert!(lines[1].contains("1/1"), "{text}");
        assert!(lines[1].ends_with("0.60"), "{text}");
        assert!(lines[3].starts_with("TOTAL"), "{text}");
        assert!(lines[3].contains("1/3"), "{text}");
        assert!(lines[3].contains("4.00"), "{text}");
        assert!(lines[3].ends_with("0.60"), "{text}");
        assert!(TransformTime::parse("1 2 3").is_none());
    }

    #[test]
    fn summary_has_a_line_per_compressor() {
        let rows = [row("a", "x", 1_000_000, Some(500_000))];
        let text = summary(&rows).text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[1].starts_with("x "), "{text}");
        assert!(lines[1].contains("2.000"), "{text}");
        assert!(lines[1].ends_with("yes"), "{text}");
    }
}
